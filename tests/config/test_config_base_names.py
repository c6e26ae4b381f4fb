"""A misspelt ``_base_`` (``_base = './x.py'``) is an error at its file and line, not a config
that silently inherits nothing."""

import re
import textwrap
import warnings
from pathlib import Path

import pytest
from mmengine.config import Config as MMConfig

from runnerx import Config
from runnerx.config import ConfigError

MISSPELT = ["_base", "__base__", "base_", "_bases_", "_base__"]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return write(tmp_path, "base.py", "model = dict(type='Net', depth=18)\n")


@pytest.mark.parametrize("name", MISSPELT)
@pytest.mark.parametrize(
    "value", ["'./base.py'", "['./base.py', './other.py']"], ids=["str", "list"]
)
def test_a_misspelt_base_in_python_is_refused_at_its_line(tmp_path, base, name, value):
    path = write(tmp_path, "child.py", f"# an experiment\n{name} = {value}\nlr = 0.1\n")
    message = f"{path}:2: '{name}' looks like a misspelt _base_: this config inherits nothing"
    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.fromfile(path)


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("child.yaml", "lr: 0.1\n_base: ./base.py\n", 2),
        ("child.yml", "lr: 0.1\n__base__:\n  - ./base.py\n", 2),
        ("child.json", '{\n  "lr": 0.1,\n  "base_": ["./base.py"]\n}\n', 3),
    ],
    ids=["yaml", "yaml-list", "json"],
)
def test_a_misspelt_base_in_yaml_or_json_is_refused_at_its_line(tmp_path, base, name, text, line):
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigError, match=re.escape(f"{path}:{line}: ") + "'.*' looks like a"):
        Config.fromfile(path)


@pytest.mark.parametrize(
    "text",
    [
        "_base_ = './base.py'\n_base = './base.py'\n",  # _base_ is set: the file does inherit
        "_base = 'resnet'\nbase_ = ['a', 'b']\n",  # not config paths
        "base = './base.py'\nbase_lr = 0.01\n_base_dir = './configs/x.py'\n",  # other names
    ],
    ids=["beside-a-real-base", "values-that-are-not-paths", "names-that-are-not-base"],
)
def test_names_that_only_resemble_base_load_as_in_mmengine(tmp_path, base, text):
    path = write(tmp_path, "child.py", text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = MMConfig.fromfile(path).to_dict()
    assert Config.fromfile(path).to_dict() == theirs


def test_the_read_base_style_is_not_checked(tmp_path, base):
    path = write(
        tmp_path,
        "child.py",
        """\
        from runnerx.config import read_base

        with read_base():
            from .base import *

        _base = './base.py'
        """,
    )
    cfg = Config.fromfile(path)
    assert cfg.model.depth == 18 and cfg._base == "./base.py"
