"""MMEngine's pure-Python config style (``with read_base():``) is refused with one clear
message that names the file and line, and says which ``_base_`` line does the same."""

import textwrap

import pytest

from runnerx import Config
from runnerx.config import ConfigError

BASE = "optimizer = dict(type='SGD', lr=0.1)\n"


def write_pair(tmp_path, child: str):
    (tmp_path / "optimizer.py").write_text(BASE)
    path = tmp_path / "child.py"
    path.write_text(textwrap.dedent(child))
    return path


@pytest.mark.parametrize("package", ["mmengine.config", "runnerx.config"])
def test_with_read_base_is_refused_with_file_line_and_the_base_line_to_write(tmp_path, package):
    path = write_pair(
        tmp_path,
        f"""\
        from {package} import read_base

        with read_base():
            from .optimizer import *

        optimizer.update(lr=0.01)
        """,
    )
    with pytest.raises(ConfigError) as info:
        Config.fromfile(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: ")
    assert "with read_base()" in message and "not supported" in message
    assert "_base_ = ['./optimizer.py']" in message


def test_importing_read_base_alone_is_refused_at_the_import(tmp_path):
    path = write_pair(tmp_path, "a = 1\nfrom mmengine.config import read_base\n")
    with pytest.raises(ConfigError, match=f"^{path}:2: .*not supported"):
        Config.fromfile(path)


def test_relative_imports_of_parent_folders_map_to_base_paths(tmp_path):
    path = write_pair(
        tmp_path,
        """\
        from mmengine.config import read_base

        with read_base():
            from .._base_.models.resnet import *
            from ..._base_.default_runtime import *
        """,
    )
    with pytest.raises(ConfigError) as info:
        Config.fromfile(path)
    bases = "['../_base_/models/resnet.py', '../../_base_/default_runtime.py']"
    assert f"_base_ = {bases}" in str(info.value)


def test_read_base_from_runnerx_config_can_be_imported_but_refuses_to_run():
    from runnerx.config import read_base

    with pytest.raises(ConfigError, match="not supported"), read_base():
        pass


def test_a_python_config_that_only_imports_classes_still_loads(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text("from torch.optim import SGD\noptimizer = dict(type=SGD, lr=0.1)\n")
    assert Config.fromfile(path).optimizer.lr == 0.1
