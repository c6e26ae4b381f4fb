"""Fixtures of the fileio tests: a small file tree, and backend registries left as found."""

import pytest

from runnerx.fileio import FileClient
from runnerx.fileio.backends import registry_utils


@pytest.fixture
def tree(tmp_path):
    """root/ a.py b.txt .hidden.py sub/{c.py, deep/d.txt, .e.py} .git/f.py empty/"""
    root = tmp_path / "root"
    for name in ("a.py", "b.txt", ".hidden.py", "sub/c.py", "sub/deep/d.txt", "sub/.e.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    (root / ".git").mkdir()
    (root / ".git/f.py").write_text("f")
    (root / "empty").mkdir()
    return root


@pytest.fixture
def restore_backends():
    """Leaves runnerx's backend registries (and FileClient's) as they were; the test starts
    with no FileClient cached."""
    saved = [
        (table, dict(table))
        for table in (
            registry_utils.backends,
            registry_utils.prefix_to_backends,
            registry_utils._instances,
            FileClient._backends,
            FileClient._prefix_to_backends,
            FileClient._instances,
        )
    ]
    FileClient._instances.clear()
    yield
    for table, content in saved:
        table.clear()
        table.update(content)
