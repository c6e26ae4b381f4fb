"""A config that imports a package that is not installed says which file:line imports it,
that runnerx runs a config's imports as it reads it (MMEngine defers them), and what to do;
older mmdet configs' ``if '_base_':`` block is refused with ``with read_base():`` as the fix."""

import sys

import pytest

from runnerx import Config
from runnerx.config import ConfigError, ConfigParsingError

MISSING = "runnerx_test_absent_pkg"


def _assert_says_what_to_do(message: str, where: str, strings: str) -> None:
    assert message.startswith(f"{where}: the config raised ModuleNotFoundError: ")
    assert f"imports from the package '{MISSING}', which is not installed" in message
    assert "runnerx runs a config's imports when it reads the file" in message
    assert "MMEngine defers them" in message
    assert f"'{MISSING}' must be installed to load this config" in message
    assert f"replace the import by strings ({strings})" in message


def test_a_read_base_config_whose_base_imports_a_missing_package(tmp_path):
    (tmp_path / "_base_").mkdir()
    (tmp_path / "_base_" / "data.py").write_text(
        "from runnerx.hooks import IterTimerHook\n\n"
        f"from {MISSING}.datasets import (CenterCrop,\n    ImageNet)\n"
        "dataset_type = ImageNet\n"
    )
    (tmp_path / "exp.py").write_text(
        "from runnerx.config import read_base\n\nwith read_base():\n"
        "    from ._base_.data import *\n"
    )
    with pytest.raises(ConfigError) as caught:
        Config.fromfile(tmp_path / "exp.py")
    assert isinstance(caught.value, ModuleNotFoundError)  # the type MMEngine users catch
    _assert_says_what_to_do(
        str(caught.value),
        f"{tmp_path / '_base_' / 'data.py'}:3",
        f"type='{MISSING}.datasets.CenterCrop' in place of type=CenterCrop",
    )


def test_a_base_style_config_importing_a_missing_package(tmp_path):
    path = tmp_path / "exp.py"
    path.write_text(f"lr = 0.1\nimport {MISSING}.models as models\n")
    with pytest.raises(ConfigError) as caught:
        Config.fromfile(path)
    _assert_says_what_to_do(
        str(caught.value),
        f"{path}:2",
        f"type='{MISSING}.<module>.<Class>' in place of the imported class",
    )


def test_a_missing_module_of_an_installed_package_says_so(tmp_path):
    path = tmp_path / "exp.py"
    path.write_text("from torch.optim.no_such_module import SGD\n")
    with pytest.raises(ConfigError) as caught:
        Config.fromfile(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:1: the config raised ModuleNotFoundError")
    assert "'torch' is installed (" in message
    assert "has no module 'torch.optim.no_such_module'" in message
    assert "not installed" not in message


def test_a_missing_module_that_no_import_line_names_gets_no_install_hint(tmp_path):
    path = tmp_path / "exp.py"
    path.write_text(f"raise ModuleNotFoundError('gone', name={MISSING!r})\n")
    with pytest.raises(ConfigError) as caught:
        Config.fromfile(path)
    assert str(caught.value) == f"{path}:1: the config raised ModuleNotFoundError: gone"
    assert MISSING not in sys.modules


def test_the_old_if_base_block_is_refused_with_read_base_as_the_fix(tmp_path):
    (tmp_path / "base.py").write_text("lr = 0.1\n")
    path = tmp_path / "exp.py"
    path.write_text("if '_base_':\n    from .base import *\nfrom torch.optim import SGD\n")
    with pytest.raises(ConfigParsingError) as caught:
        Config.fromfile(path)
    assert str(caught.value) == (
        f"{path}:1: `if '_base_':` is the base-import block of older OpenMMLab configs, which "
        "MMEngine refuses too; replace it with `with read_base():` (and `from mmengine.config "
        "import read_base` above it); line 2, `from .base import *`, imports a base config "
        "from it"
    )
    path.write_text(
        "from mmengine.config import read_base\nwith read_base():\n    from .base import *\n"
        "from torch.optim import SGD\n"
    )
    assert Config.fromfile(path).to_dict() == {"lr": 0.1}
