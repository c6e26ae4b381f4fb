"""EMAHook with ``load_from``: tools/test.py on a checkpoint trained with EMA scores the same
whether the config has EMAHook or not, since the average starts from the loaded weights (as
in MMEngine, whose Runner.load_checkpoint calls ``after_load_checkpoint``)."""

from pathlib import Path

import pytest

from tests.tools import load_tool

ROOT = Path(__file__).parents[2]


def test_testing_an_ema_checkpoint_with_emahook_in_the_config_scores_the_same(tmp_path):
    digits = str(ROOT / "configs/digits_convnet.py")
    plain, with_ema = tmp_path / "plain.py", tmp_path / "ema.py"
    plain.write_text(
        f"_base_ = {digits!r}\ntrain_cfg = dict(max_epochs=1)\nparam_scheduler = None\n"
    )
    with_ema.write_text(
        "_base_ = './plain.py'\ncustom_hooks = [dict(type='EMAHook', momentum=0.2)]\n"
    )
    load_tool("train").main([str(with_ema), "--work-dir", str(tmp_path / "train")])
    checkpoint = str(tmp_path / "train" / "epoch_1.pth")  # its state_dict: the average
    test = load_tool("test")
    without = test.main([str(plain), checkpoint, "--work-dir", str(tmp_path / "test_plain")])
    ema = test.main([str(with_ema), checkpoint, "--work-dir", str(tmp_path / "test_ema")])
    assert without["accuracy/top1"] > 50  # trained (10 classes: about 10 at random)
    assert ema["accuracy/top1"] == pytest.approx(without["accuracy/top1"])
