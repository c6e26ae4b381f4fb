"""Test a trained model (OpenMMLab's tools/test.py flags and meanings).

python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth
python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth --out preds.pkl
python tools/test.py configs/my_tta_config.py work_dirs/my_run/epoch_8.pth --tta
python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth --fast-dev-run
python tools/test.py configs/digits_convnet.py last    # what the run in the work dir saved last
python tools/test.py configs/digits_convnet.py best    # its best_*.pth (save_best)
"""

from __future__ import annotations

import argparse

from runnerx.evaluator.dump_results import add_dump_results, check_pickle_path
from runnerx.runner.cli import (
    add_common_args,
    call_tool,
    checkpoint_to_test,
    load_config,
    run,
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Test (and evaluate) a model")
    parser.add_argument("config", help="test config file path")
    parser.add_argument(
        "checkpoint",
        help="checkpoint file, or 'last' / 'best': the work dir's last or best checkpoint",
    )
    parser.add_argument(
        "--out",
        help="also save the model's predictions (one entry per test sample, in dataset order) "
        "to this pickle file (.pkl or .pickle) for offline evaluation",
    )
    parser.add_argument(
        "--tta",
        action="store_true",
        help="test with test-time augmentation: the test dataset's pipeline becomes the "
        "config's tta_pipeline and its tta_model wraps the model",
    )
    add_common_args(parser)
    args = parser.parse_args(argv)
    config_suffixes = (".py", ".json", ".yaml", ".yml")
    if args.checkpoint.endswith(config_suffixes) and not args.config.endswith(config_suffixes):
        parser.error(
            f"the arguments are CONFIG CHECKPOINT; they look swapped: try tools/test.py "
            f"{args.checkpoint} {args.config}"
        )
    if args.out is not None:
        try:  # here, before the config is read or anything is built
            check_pickle_path(args.out, "--out")
        except ValueError as error:
            parser.error(str(error))
    return args


def main(argv: list[str] | None = None) -> dict:
    """Load the checkpoint's weights and run the config's test loop; return the metrics."""
    args = parse_args(argv)
    cfg = load_config(args)
    try:
        cfg.load_from = checkpoint_to_test(args.checkpoint, cfg.work_dir)
    except FileNotFoundError as error:
        raise SystemExit(f"tools/test.py: {error}") from None
    cfg.resume = False
    if args.tta:
        from runnerx.hooks.prepare_tta_hook import use_tta_model

        try:
            use_tta_model(cfg)
        except KeyError as error:
            raise SystemExit(f"--tta: {error.args[0]}") from None
    if args.out is not None:
        cfg.test_evaluator = add_dump_results(cfg.get("test_evaluator"), args.out)
    return run(cfg, "test")


if __name__ == "__main__":
    call_tool(main)
