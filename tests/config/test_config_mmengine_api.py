"""Config.diff, Config.auto_argparser and the exception types of MMEngine's Config, with
mmengine-lite as the oracle where it can be one."""

import sys
import textwrap

import pytest
from mmengine.config import Config as MMConfig

from runnerx import Config
from runnerx.config import ConfigError


def write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.mark.parametrize("config_class", [Config, MMConfig], ids=["runnerx", "mmengine"])
def test_diff_of_objects_and_files(tmp_path, config_class):
    one = write(tmp_path, "one.py", "lr = 0.1\nmodel = dict(type='Net', depth=18)\n")
    two = write(tmp_path, "two.py", "model = dict(depth=50, type='Net')\nlr = 0.1\n")

    text = config_class.diff(one, two)
    assert "-model = dict(depth=18, type='Net')" in text
    assert "+model = dict(depth=50, type='Net')" in text
    assert " lr = 0.1" in text  # unchanged lines are context, not changes
    assert not [line for line in text.splitlines() if line.startswith(("-lr", "+lr"))]

    same = config_class.diff(config_class(dict(a=1, b=2)), config_class(dict(b=2, a=1)))
    assert same == "\n"  # key order alone is no difference


def test_diff_of_one_line_configs_is_mmengines_text():
    text = "--- \n\n+++ \n\n@@ -1,3 +1,3 @@\n\n a = 1\n-b = 2\n+b = 3\n \n\n"
    assert Config.diff(Config(dict(a=1, b=2)), Config(dict(a=1, b=3))) == text
    assert MMConfig.diff(MMConfig(dict(a=1, b=2)), MMConfig(dict(a=1, b=3))) == text


@pytest.mark.parametrize("config_class", [Config, MMConfig], ids=["runnerx", "mmengine"])
def test_auto_argparser(tmp_path, monkeypatch, config_class):
    path = write(
        tmp_path,
        "cfg.py",
        """
        work_dir = 'work_dirs/x'
        max_epochs = 12
        lr = 0.1
        amp = False
        milestones = [8, 11]
        optim = dict(type='SGD', momentum=0.9)
        """,
    )
    monkeypatch.setattr(sys, "argv", ["train.py", path])
    parser, cfg = config_class.auto_argparser()
    assert cfg.max_epochs == 12

    options = "--max_epochs 3 --lr 0.5 --amp --milestones 2 3 --optim.momentum 0.5 --work_dir out"
    args = parser.parse_args([path, *options.split()])
    assert args.config == path
    assert (args.max_epochs, args.lr, args.amp, args.milestones) == (3, 0.5, True, [2, 3])
    assert getattr(args, "optim.momentum") == 0.5 and args.work_dir == "out"
    defaults = parser.parse_args([path])
    assert defaults.max_epochs is None and defaults.amp is False


@pytest.mark.parametrize("config_class", [Config, MMConfig], ids=["runnerx", "mmengine"])
def test_unknown_suffix_is_an_oserror(tmp_path, config_class):
    path = write(tmp_path, "cfg.xml", "a = 1\n")
    with pytest.raises(OSError):
        config_class.fromfile(path)
    with pytest.raises(OSError):
        config_class.fromstring("a = 1\n", ".xml")


@pytest.mark.parametrize("config_class", [Config, MMConfig], ids=["runnerx", "mmengine"])
def test_unset_environment_variable_without_default_is_a_keyerror(
    tmp_path, monkeypatch, config_class
):
    monkeypatch.delenv("RUNNERX_TEST_UNSET", raising=False)
    path = write(tmp_path, "cfg.py", "root = '{{$RUNNERX_TEST_UNSET:}}'\n")
    with pytest.raises(KeyError, match="RUNNERX_TEST_UNSET"):
        config_class.fromfile(path)
    monkeypatch.setenv("RUNNERX_TEST_UNSET", "/data")
    assert config_class.fromfile(path).root == "/data"


def test_runnerx_errors_stay_config_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("RUNNERX_TEST_UNSET", raising=False)
    env = write(tmp_path, "env.py", "root = '{{$RUNNERX_TEST_UNSET:}}'\n")
    xml = write(tmp_path, "cfg.xml", "a = 1\n")
    for path in (env, xml):
        with pytest.raises(ConfigError, match=path.split("/")[-1]):
            Config.fromfile(path)


def test_mmengines_keywords_of_config_and_to_dict(tmp_path):
    cfg = Config(dict(lr=0.1), format_python_code=False)
    assert cfg.to_dict() == MMConfig(dict(lr=0.1), format_python_code=False).to_dict()
    # a read_base-style file: its imported names are no config values in either
    path = write(tmp_path, "lazy.py", "from torch.optim import SGD\noptimizer = dict(type=SGD)\n")
    assert "SGD" in MMConfig.fromfile(path).to_dict(keep_imported=True)
    with pytest.warns(UserWarning, match="keeps no names that a config file imports"):
        kept = Config.fromfile(path).to_dict(keep_imported=True)
    assert list(kept) == ["optimizer"]


def test_add_args_at_mmengines_path():
    import argparse

    from mmengine.config.config import add_args as mm_add_args

    from runnerx.config.config import add_args

    cfg = dict(name="a", steps=2, lr=0.1, amp=False, sizes=[1, 2], optim=dict(lr=0.5))
    argv = ["--name", "b", "--steps", "3", "--sizes", "4", "5", "--optim.lr", "0.2", "--amp"]
    ours = add_args(argparse.ArgumentParser(), cfg)
    theirs = mm_add_args(argparse.ArgumentParser(), cfg)
    assert vars(ours.parse_args(argv)) == vars(theirs.parse_args(argv))
