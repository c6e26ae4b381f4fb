"""Print the final config of a config file, and explain where any value of it came from.

python tools/print_config.py configs/digits_convnet.py
python tools/print_config.py configs/digits_convnet.py --cfg-options optim_wrapper.optimizer.lr=0.05
python tools/print_config.py configs/digits_convnet.py --explain optim_wrapper.optimizer.lr
"""

from __future__ import annotations

import argparse
import sys

from runnerx.config import Config, DictAction


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
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Print the config (or the explanations asked for); return the exit code."""
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options, source="--cfg-options")
    if not args.explain:
        print(f"Config:\n{cfg.pretty_text}")
        return 0
    for number, key in enumerate(args.explain):
        if number:
            print()
        try:
            print(cfg.explain(key))
        except KeyError as error:
            print(f"--explain {key}: {error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
