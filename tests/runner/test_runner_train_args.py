"""tools/train.py's flags folded into the config: ``--amp``, ``--auto-scale-lr``, ``--resume``,
``--work-dir``; each set through ``merge_from_dict``, so ``cfg.explain`` names the flag."""

import textwrap
from pathlib import Path

import pytest

from runnerx import Config
from runnerx.optim import AmpOptimWrapper
from runnerx.runner import Runner
from runnerx.runner.cli import load_config
from tests.tools import load_tool

ROOT = Path(__file__).parents[2]
DIGITS = str(ROOT / "configs/digits_convnet.py")


@pytest.fixture(scope="module")
def train():
    return load_tool("train")


# the tools' load_config sets LOCAL_RANK: undone after each test
pytestmark = pytest.mark.usefixtures("keep_local_rank")


def train_config(train, *argv: str) -> Config:
    """The config tools/train.py builds from ``argv``, before it builds the Runner."""
    args = train.parse_args(list(argv))
    return train.apply_train_args(load_config(args), args)


def last_source(cfg: Config, key: str) -> str:
    return cfg.explain(key).origins[-1].where


@pytest.mark.parametrize(
    ("type_text", "switched"),
    [
        ("OptimWrapper", AmpOptimWrapper),  # the class, as a read_base-style config names it
        ("'mmengine.OptimWrapper'", "AmpOptimWrapper"),  # names the registry resolves to it
        ("'OptimWrapper'", "AmpOptimWrapper"),
    ],
)
def test_amp_switches_an_optim_wrapper_the_registry_resolves(train, tmp_path, type_text, switched):
    config = tmp_path / "amp.py"
    config.write_text(
        "from runnerx.optim import OptimWrapper\n"
        f"optim_wrapper = dict(type={type_text}, optimizer=dict(type='SGD', lr=0.1))\n"
    )
    cfg = train_config(train, str(config), "--amp")
    assert cfg.optim_wrapper == dict(
        type=switched, optimizer=dict(type="SGD", lr=0.1), loss_scale="dynamic"
    )
    assert last_source(cfg, "optim_wrapper.type") == "--amp"


@pytest.mark.parametrize(
    ("text", "has"),
    [
        ("auto_scale_lr = None\n", "the config has auto_scale_lr = None"),
        (
            "auto_scale_lr = dict(enable=False)\n",
            "the config has auto_scale_lr = {'enable': False}",
        ),
        ("", "the config has no auto_scale_lr"),
    ],
)
def test_auto_scale_lr_without_a_base_batch_size_says_what_to_set(train, tmp_path, text, has):
    config = tmp_path / "no_scale.py"
    config.write_text("model = dict(type='Net')\n" + text)
    with pytest.raises(KeyError) as caught:
        train_config(train, str(config), "--auto-scale-lr")
    message = str(caught.value)
    assert message.startswith("--auto-scale-lr needs auto_scale_lr = dict(base_batch_size=N)")
    assert message.endswith(has)


def test_auto_scale_lr_enables_it_and_explain_names_the_flag(train):
    cfg = train_config(train, DIGITS, "--auto-scale-lr")
    assert cfg.auto_scale_lr.enable is True
    assert last_source(cfg, "auto_scale_lr.enable") == "--auto-scale-lr"


def test_explain_names_the_flag_that_set_a_key(train, tmp_path):
    work = str(tmp_path / "flag")
    cfg = train_config(
        train, DIGITS, "--work-dir", work, "--cfg-options", "work_dir=opt", "--fast-dev-run"
    )
    assert cfg.work_dir == work
    assert [origin.where for origin in cfg.explain("work_dir").origins] == [
        "--cfg-options",
        "--work-dir",
    ]
    assert last_source(cfg, "fast_dev_run") == "--fast-dev-run"
    assert last_source(cfg, "launcher") == "--launcher"
    default = train_config(train, DIGITS)
    assert default.work_dir == "./work_dirs/digits_convnet"
    assert last_source(default, "work_dir") == "the default (./work_dirs/<config name>)"


@pytest.mark.parametrize("argv", [["--resume"], ["--resume", "auto"]])
def test_resume_alone_or_auto_resumes_from_the_newest_checkpoint(train, argv):
    cfg = train_config(train, DIGITS, *argv)
    assert (cfg.resume, cfg.load_from) == (True, None)


TOY = """\
from runnerx.testing.toy import ToyDataset, ToyModel

model = dict(type=ToyModel)
train_dataloader = dict(dataset=dict(type=ToyDataset), sampler=dict(type='DefaultSampler'),
                        batch_size=3, num_workers=0)
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))
train_cfg = dict(by_epoch=False, max_iters=2)
default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=2, by_epoch=False))
"""


def test_resume_path_is_dumped_as_mmdet_does_and_the_dump_resumes_from_it(train, tmp_path):
    config = tmp_path / "toy.py"
    config.write_text(textwrap.dedent(TOY))
    train.main([str(config), "--work-dir", str(tmp_path / "first")])
    checkpoint = str(tmp_path / "first" / "iter_2.pth")
    more = ["--cfg-options", "train_cfg.max_iters=4"]
    train.main([str(config), "--resume", checkpoint, "--work-dir", str(tmp_path / "second"), *more])
    dumped = Config.fromfile(tmp_path / "second" / "toy.py")
    assert (dumped.resume, dumped.load_from) == (True, checkpoint)
    assert last_source(train_config(train, str(config), "--resume", checkpoint), "load_from") == (
        "--resume"
    )

    dumped.work_dir = str(tmp_path / "third")  # the dumped config alone, as MMEngine reads it
    runner = Runner.from_cfg(dumped)
    runner.train()
    assert runner.iter == 4
    (log,) = (tmp_path / "third").glob("*/*.log")
    assert f"resumed from {checkpoint}" in log.read_text()
