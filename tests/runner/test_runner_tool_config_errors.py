"""tools/train.py, tools/test.py and tools/print_config.py given a config path that is wrong:
one line that names the file (and a close match beside it) and exit code 1, no traceback;
tools/print_config.py --save-path writes the config as OpenMMLab's print_config does."""

import json
import sys
from pathlib import Path

import pytest
import yaml

from runnerx import Config
from tests.tools import load_tool

ROOT = Path(__file__).parents[2]

print_config = load_tool("print_config")


@pytest.mark.parametrize(
    "tool, extra", [("train", []), ("test", ["work/epoch_1.pth"]), ("print_config", [])]
)
def test_a_missing_config_is_one_line_naming_a_close_match(run_in_repo, tool, extra):
    result = run_in_repo(
        [sys.executable, f"tools/{tool}.py", "configs/digits_convnett.py", *extra], timeout=60
    )
    missing = ROOT / "configs/digits_convnett.py"
    assert result.returncode == 1, result.stderr
    assert result.stderr == (
        f"tools/{tool}.py: config file not found: {missing} "
        "(did you mean configs/digits_convnet.py?)\n"
    )


def test_a_missing_base_config_and_a_folder_without_close_names(tmp_path):
    (tmp_path / "child.py").write_text("_base_ = './parent.py'\n")
    with pytest.raises(SystemExit, match=r"child\.py:1: base config './parent\.py' not found"):
        print_config.main([str(tmp_path / "child.py")])
    with pytest.raises(SystemExit) as error:
        print_config.main([str(tmp_path / "other.py")])
    assert str(error.value) == f"tools/print_config.py: config file not found: {tmp_path}/other.py"


@pytest.mark.parametrize("name", ["final.py", "final.json", "final.yaml"])
def test_save_path_writes_the_config_in_the_format_of_its_suffix(tmp_path, capsys, name):
    path = tmp_path / "made" / name
    options = ["--cfg-options", "train_cfg.max_epochs=1"]
    config = str(ROOT / "configs/digits_convnet.py")
    status = print_config.main([config, *options, "--save-path", str(path)])
    shown = capsys.readouterr().out
    assert status == 0
    assert shown.startswith("Config:\n") and shown.endswith(f"Config saving at {path}\n")
    if name.endswith(".json"):
        assert json.loads(path.read_text())["train_cfg"]["max_epochs"] == 1
    elif name.endswith(".yaml"):
        assert yaml.safe_load(path.read_text())["train_cfg"]["max_epochs"] == 1
    else:
        assert Config.fromfile(path).train_cfg.max_epochs == 1


def test_save_path_with_another_suffix_is_refused_before_anything_is_read(tmp_path, capsys):
    with pytest.raises(SystemExit) as error:
        print_config.main(
            [str(ROOT / "configs/nope.py"), "--save-path", str(tmp_path / "final.txt")]
        )
    assert error.value.code == 2
    assert "--save-path" in capsys.readouterr().err and not list(tmp_path.iterdir())
