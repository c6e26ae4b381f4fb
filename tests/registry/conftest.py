"""Fixtures for the registry tests."""

import sys
import textwrap

import pytest


@pytest.fixture
def write_module(tmp_path, monkeypatch):
    """Write Python modules under a fresh sys.path entry; forget them afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written = []

    def write(name: str, source: str = "") -> str:
        path = tmp_path.joinpath(*name.split("."))
        if "." in name:
            for depth in range(1, name.count(".") + 1):
                package = tmp_path.joinpath(*name.split(".")[:depth])
                package.mkdir(exist_ok=True)
                package.joinpath("__init__.py").touch()
        path.with_suffix(".py").write_text(textwrap.dedent(source))
        written.append(name)
        return name

    yield write
    tops = {name.split(".")[0] for name in written}
    for name in list(sys.modules):
        if name.split(".")[0] in tops:
            del sys.modules[name]
