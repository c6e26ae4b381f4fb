"""Test a trained model (OpenMMLab's tools/test.py flags and meanings).

python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth
"""

from __future__ import annotations

import argparse

from runnerx.runner.cli import add_common_args, load_config, run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Test (and evaluate) a model")
    parser.add_argument("config", help="test config file path")
    parser.add_argument("checkpoint", help="checkpoint file")
    add_common_args(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    """Load the checkpoint's weights and run the config's test loop; return the metrics."""
    args = parse_args(argv)
    cfg = load_config(args)
    cfg.load_from = args.checkpoint
    cfg.resume = False
    return run(cfg, "test")


if __name__ == "__main__":
    main()
