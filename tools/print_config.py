"""Print the final config of a config file, and explain where any value of it came from.

python tools/print_config.py configs/digits_convnet.py
python tools/print_config.py configs/digits_convnet.py --cfg-options optim_wrapper.optimizer.lr=0.05
python tools/print_config.py configs/digits_convnet.py --explain optim_wrapper.optimizer.lr
python tools/print_config.py configs/digits_convnet.py --save-path work_dirs/final.yaml

OpenMMLab projects keep this script as tools/misc/print_config.py.
"""

from __future__ import annotations

import argparse
import os
import sys

from runnerx.config import Config, DictAction
from runnerx.config.source import SUPPORTED_SUFFIXES
from runnerx.runner.cli import call_tool, read_config


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line arguments, as OpenMMLab's print_config takes them plus ``--explain``."""
    parser = argparse.ArgumentParser(description="Print the whole config, after inheritance")
    parser.add_argument("config", help="config file path")
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        help="override config values: key=value pairs, dotted keys, e.g. "
        "optim_wrapper.optimizer.lr=0.01 train_cfg.max_epochs=3 model.channels=[8,16]",
    )
    parser.add_argument(
        "--explain",
        metavar="KEY",
        action="append",
        help="print the value at dotted KEY and every file:line or option that set it "
        "(may be given more than once)",
    )
    parser.add_argument(
        "--save-path",
        help="also write the config to this file, in the format its suffix names "
        f"({', '.join(SUPPORTED_SUFFIXES)}); missing folders are made",
    )
    args = parser.parse_args(argv)
    if args.save_path and os.path.splitext(args.save_path)[1] not in SUPPORTED_SUFFIXES:
        parser.error(
            f"--save-path {args.save_path}: the file name must end in "
            + ", ".join(SUPPORTED_SUFFIXES)
        )
    return args


def main(argv: list[str] | None = None) -> int:
    """Print the config (or the explanations asked for), write it to ``--save-path`` if
    given, and return the exit code."""
    args = parse_args(argv)
    cfg = read_config(args.config, "tools/print_config.py")
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options, source="--cfg-options")
    status = explain(cfg, args.explain) if args.explain else 0
    if not args.explain:
        print(f"Config:\n{cfg.pretty_text}")
    if args.save_path:
        cfg.dump(args.save_path)
        print(f"Config saving at {args.save_path}")
    return status


def explain(cfg: Config, keys: list[str]) -> int:
    """Print where each dotted key's value came from; 2 after a key that is not there."""
    for number, key in enumerate(keys):
        if number:
            print()
        try:
            print(cfg.explain(key))
        except KeyError as error:
            print(f"--explain {key}: {error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(call_tool(main))
