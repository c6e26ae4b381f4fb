"""tools/train.py, tools/test.py and tools/print_config.py show an error in the user's config
as its message alone (file:line or the config key, and what to fix) with exit code 1; an
error whose traceback passes through the user's own code keeps it, as does any other error."""

import sys
import textwrap
from pathlib import Path

import pytest

from runnerx import MODELS, Config
from runnerx.config import ConfigError
from runnerx.config.error_report import config_error_text
from runnerx.runner.cli import call_tool
from tests.tools import load_tool

ROOT = Path(__file__).parents[2]
DIGITS = str(ROOT / "configs/digits_convnet.py")

USER_MODULE = """
from runnerx.model import BaseModel


class RaisingNet(BaseModel):
    def __init__(self, width=2):
        super().__init__()
        raise ValueError("width must be even")

    def forward(self, *args, **kwargs):
        return {}


def make_pipeline():
    raise KeyError("no such transform")
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A module of the user's, importable as ``cli_user_code``."""
    (tmp_path / "cli_user_code.py").write_text(textwrap.dedent(USER_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "cli_user_code", raising=False)
    import cli_user_code

    return cli_user_code


def _tool_exit(tool: str, argv: list[str], monkeypatch) -> str:
    monkeypatch.setattr(sys, "argv", [f"tools/{tool}.py", *argv])
    monkeypatch.setenv("LOCAL_RANK", "0")
    with pytest.raises(SystemExit) as caught:
        call_tool(load_tool(tool).main)
    return caught.value.code


def test_train_prints_a_config_line_that_raises_as_one_line(tmp_path, run_in_repo):
    config = tmp_path / "exp.py"
    config.write_text(f"_base_ = {DIGITS!r}\ntrain_cfg = dict(max_epochs=epochs)\n")
    job = run_in_repo([sys.executable, "tools/train.py", str(config)], timeout=60)
    assert job.returncode == 1
    assert job.stderr == (
        f"tools/train.py: {config}:2: the config raised NameError: name 'epochs' is not defined\n"
    )


def test_an_option_that_cannot_merge_and_a_syntax_error_are_their_message(tmp_path, monkeypatch):
    argv = [DIGITS, "--cfg-options", "optim_wrapper.optimizer.lr.value=1"]
    assert _tool_exit("print_config", argv, monkeypatch) == (
        "tools/print_config.py: --cfg-options optim_wrapper.optimizer.lr.value=1: "
        "optim_wrapper.optimizer.lr is a float (0.1), so nothing can be set below it; did you "
        "mean optim_wrapper.optimizer.lr=1?"
    )
    config = tmp_path / "broken.py"
    config.write_text("model = dict(depth=(1,\n")
    assert _tool_exit("test", [str(config), "last"], monkeypatch) == (
        f"tools/test.py: {config}:1: invalid Python in config file: '(' was never closed\n"
        "    model = dict(depth=(1,\n"
        "                       ^"
    )


def test_print_config_still_returns_its_exit_status(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["tools/print_config.py", DIGITS, "--explain", "nope"])
    assert call_tool(load_tool("print_config").main) == 2
    assert "--explain nope" in capsys.readouterr().err


def test_a_config_calling_user_code_that_raises_keeps_its_traceback(
    tmp_path, monkeypatch, user_module
):
    config = tmp_path / "exp.py"
    config.write_text("from cli_user_code import make_pipeline\npipeline = make_pipeline()\n")
    monkeypatch.setattr(sys, "argv", ["tools/print_config.py", str(config)])
    with pytest.raises(ConfigError, match=r"exp\.py:2: the config raised KeyError") as caught:
        call_tool(load_tool("print_config").main)
    assert config_error_text(caught.value) is None  # Python prints the traceback


def test_a_build_refusing_the_config_is_its_message_but_user_init_code_keeps_its_traceback(
    user_module,
):
    cfg = Config(
        dict(
            typo=dict(type="DigitsConvNett"),
            argument=dict(type="DigitsConvNet", chanels=(4, 8)),
            raising=dict(type=user_module.RaisingNet),
        )
    )
    shown = {}
    for key in cfg:
        with pytest.raises(Exception) as caught:
            MODELS.build(cfg[key])
        shown[key] = config_error_text(caught.value, own_files=[__file__])  # the caller
    assert shown["typo"].startswith("'DigitsConvNett' (cfg.typo.type) is not registered")
    assert shown["argument"].startswith("while building cfg.argument (type='DigitsConvNet'")
    assert shown["argument"].endswith("argument 'chanels'; did you mean 'channels'?")
    assert shown["raising"] is None


def test_train_logs_an_unregistered_type_without_a_traceback(tmp_path, run_in_repo):
    config = tmp_path / "typo.py"
    config.write_text(f"_base_ = {DIGITS!r}\nmodel = dict(type='DigitsConvNett')\n")
    work = tmp_path / "work"
    job = run_in_repo([sys.executable, "tools/train.py", str(config), "--work-dir", str(work)])
    assert job.returncode == 1, job.stderr[-3000:]
    (log,) = work.glob("*/*.log")
    line = (
        "building the Runner failed: 'DigitsConvNett' (cfg.model.type) is not registered in the "
        "'model' registry (scope 'runnerx'). Did you mean 'DigitsConvNet'?"
    )
    assert line in log.read_text() and "Traceback" not in log.read_text()
    console = job.stdout + job.stderr
    assert console.count(line) == 1 and "Traceback" not in console
