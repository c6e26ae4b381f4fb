"""Train a model from a config file (OpenMMLab's tools/train.py flags and meanings).

python tools/train.py configs/digits_convnet.py
python tools/train.py configs/digits_convnet.py --work-dir work_dirs/try1 --amp
python tools/train.py configs/digits_convnet.py --resume            # newest checkpoint
python tools/train.py configs/digits_convnet.py --resume work_dirs/x/epoch_3.pth
python tools/train.py configs/digits_convnet.py --resume last   # the work dir's last checkpoint
python tools/train.py configs/digits_convnet.py --fast-dev-run 2     # smoke test: 2 batches
torchrun --nproc-per-node 2 tools/train.py configs/digits_convnet.py --launcher pytorch
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from runnerx.config import Config, ConfigKeyError
from runnerx.runner.cli import add_common_args, call_tool, checkpoint_to_test, load_config, run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Train a model")
    parser.add_argument("config", help="train config file path")
    parser.add_argument(
        "--resume",
        nargs="?",
        const="auto",
        help="resume from this checkpoint ('last': the work dir's last one, which must exist; "
        "sets resume=True, load_from=PATH) or, with no value or 'auto', from the newest one in "
        "the work dir if there is one (resume=True, load_from=None)",
    )
    parser.add_argument("--amp", action="store_true", help="automatic mixed precision training")
    parser.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=[0, 1, 2, 3],
        help="GPU speed presets: 0 none, 1 TF32 matmuls, 2 + bf16 AMP, 3 + torch.compile "
        "(on a CPU without native bf16, 2 and 3 are slower than 0)",
    )
    parser.add_argument(
        "--auto-scale-lr", action="store_true", help="scale lr with the total batch size"
    )
    add_common_args(parser)
    return parser.parse_args(argv)


def apply_train_args(cfg: Config, args: argparse.Namespace) -> Config:
    """Fold ``--amp``, ``-O``, ``--resume`` and ``--auto-scale-lr`` into the config, each
    through ``merge_from_dict`` with the flag as its source, which ``cfg.explain`` names.

    ``--resume PATH`` sets ``resume=True, load_from=PATH`` (as OpenMMLab's tools do: the
    dumped config resumes from PATH under MMEngine too); ``--resume`` alone (or ``auto``)
    sets ``resume=True, load_from=None``: the newest checkpoint of the work dir, if any.
    """
    if args.amp:
        from runnerx.optim import enable_amp

        amp = enable_amp(cfg.optim_wrapper)
        cfg.merge_from_dict(_changes(cfg.optim_wrapper, amp, "optim_wrapper"), source="--amp")
    if args.opt_level:
        from runnerx.parallel import optimization_level_changes

        changes = optimization_level_changes(cfg, args.opt_level)
        cfg.merge_from_dict(changes, source=f"-O{args.opt_level}")
    if args.resume is not None:
        checkpoint = None
        if args.resume != "auto":
            checkpoint = _checkpoint_to_resume(args.resume, cfg.work_dir)
        cfg.merge_from_dict({"resume": True, "load_from": checkpoint}, source="--resume")
    if args.auto_scale_lr:
        scaling = cfg.get("auto_scale_lr")
        if not isinstance(scaling, Mapping) or not scaling.get("base_batch_size"):
            has = f"auto_scale_lr = {scaling!r}" if "auto_scale_lr" in cfg else "no auto_scale_lr"
            raise ConfigKeyError(
                "--auto-scale-lr needs auto_scale_lr = dict(base_batch_size=N) in the config, N "
                f"being the total batch size the config's learning rate was tuned for; the "
                f"config has {has}"
            )
        cfg.merge_from_dict({"auto_scale_lr.enable": True}, source="--auto-scale-lr")
    return cfg


def _changes(old: Mapping, new: Mapping, prefix: str) -> dict[str, Any]:
    """The dotted keys (below ``prefix``) whose values ``new`` adds or changes over ``old``."""
    changes: dict[str, Any] = {}
    for key, value in new.items():
        dotted = f"{prefix}.{key}"
        if key in old and isinstance(value, Mapping) and isinstance(old[key], Mapping):
            changes.update(_changes(old[key], value, dotted))
        elif key not in old or old[key] != value:
            changes[dotted] = value
    return changes


def _checkpoint_to_resume(checkpoint: str, work_dir: str) -> str:
    """``--resume PATH``'s checkpoint: PATH, or for ``last`` (when no file has that name) the
    one the work dir's ``last_checkpoint`` names, as tools/test.py takes it (when there is
    none, the error names the newest best checkpoint, if any, to resume from instead)."""
    if checkpoint != "last":
        return checkpoint
    try:
        return checkpoint_to_test(checkpoint, work_dir, resuming=True)
    except FileNotFoundError as error:
        raise SystemExit(f"tools/train.py --resume {error}") from None


def main(argv: list[str] | None = None) -> None:
    """Build the Runner the config asks for and train."""
    args = parse_args(argv)
    run(apply_train_args(load_config(args), args), "train")


if __name__ == "__main__":
    call_tool(main)
