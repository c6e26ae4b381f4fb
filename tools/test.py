"""Test a trained model (OpenMMLab's tools/test.py flags and meanings).

python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth
python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth --out preds.pkl
python tools/test.py configs/my_tta_config.py work_dirs/my_run/epoch_8.pth --tta
python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth --fast-dev-run
"""

from __future__ import annotations

import argparse

from runnerx.evaluator.dump_results import add_dump_results, check_pickle_path
from runnerx.runner.cli import add_common_args, load_config, run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Test (and evaluate) a model")
    parser.add_argument("config", help="test config file path")
    parser.add_argument("checkpoint", help="checkpoint file")
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
    cfg.load_from = args.checkpoint
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
    main()
