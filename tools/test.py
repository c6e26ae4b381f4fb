"""Test a trained model (OpenMMLab's tools/test.py flags and meanings).

python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth
python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth --out preds.pkl
python tools/test.py configs/digits_convnet.py last --out metrics.json --out-item metrics
python tools/test.py configs/my_det_config.py work_dirs/my_run/epoch_8.pth --show-dir vis
python tools/test.py configs/my_tta_config.py work_dirs/my_run/epoch_8.pth --tta
python tools/test.py configs/digits_convnet.py work_dirs/digits_convnet/epoch_8.pth --fast-dev-run
python tools/test.py configs/digits_convnet.py last    # what the run in the work dir saved last
python tools/test.py configs/digits_convnet.py best    # its best_*.pth (save_best)
"""

from __future__ import annotations

import argparse
import copy
import inspect
import os
from collections.abc import Mapping
from typing import Any

from runnerx.config import Config
from runnerx.evaluator.dump_results import (
    add_dump_results,
    check_metrics_path,
    check_pickle_path,
    dump_metrics,
)
from runnerx.runner.cli import (
    add_common_args,
    call_tool,
    checkpoint_to_test,
    load_config,
    run,
)

#: the argument that turns drawing on (mmdet's and mmseg's hooks; mmpretrain's and mmpose's)
_SWITCHES = ("draw", "enable")
#: the argument --show-dir sets (mmdet's DetVisualizationHook; mmpretrain's and mmpose's)
_OUT_DIRS = ("test_out_dir", "out_dir")

_ADD_A_HOOK = (
    "add one, e.g. default_hooks = dict(visualization=dict(type='NaiveVisualizationHook')) "
    "(runnerx's: it hands each test sample to the visualizer's add_datasample, which a task "
    "visualizer such as mmdet's DetLocalVisualizer or your Visualizer subclass draws), or "
    "your task's hook (mmdet's DetVisualizationHook, mmpretrain's VisualizationHook, ...)"
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description="Test (and evaluate) a model")
    parser.add_argument("config", help="test config file path")
    parser.add_argument(
        "checkpoint",
        help="checkpoint file (or URL), or 'last' / 'best': the work dir's last or best checkpoint",
    )
    parser.add_argument(
        "--out",
        help="also save the model's predictions (one entry per test sample, in dataset order) "
        "to this pickle file (.pkl or .pickle) for offline evaluation; with --out-item "
        "metrics, the metrics (.pkl, .pickle, .json, .yaml or .yml)",
    )
    parser.add_argument(
        "--out-item",
        choices=["pred", "metrics"],
        help="what --out saves: the predictions ('pred', the default) or the metrics dict",
    )
    parser.add_argument(
        "--show-dir",
        help="draw the test samples with default_hooks.visualization and save the images "
        "in this folder",
    )
    parser.add_argument(
        "--show",
        action="store_true",
        help="draw the test samples with default_hooks.visualization and show each in a window",
    )
    parser.add_argument(
        "--wait-time",
        type=float,
        help="with --show: seconds each image is shown (default 2)",
    )
    parser.add_argument(
        "--interval",
        type=int,
        help="with --show/--show-dir: the visualization hook's interval (default 1: every "
        "test sample)",
    )
    parser.add_argument(
        "--no-pin-memory",
        action="store_true",
        help="set test_dataloader.pin_memory=False",
    )
    parser.add_argument(
        "--tta",
        action="store_true",
        help="test with test-time augmentation: the test dataset's pipeline becomes the "
        "config's tta_pipeline and its tta_model wraps the model",
    )
    add_common_args(parser)
    args = parser.parse_args(argv)
    _check_args(parser, args)
    return args


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse what the flags cannot mean, before the config is read or anything is built."""
    config_suffixes = (".py", ".json", ".yaml", ".yml")
    if args.checkpoint.endswith(config_suffixes) and not args.config.endswith(config_suffixes):
        parser.error(
            f"the arguments are CONFIG CHECKPOINT; they look swapped: try tools/test.py "
            f"{args.checkpoint} {args.config}"
        )
    if args.out_item is not None and args.out is None:
        parser.error("--out-item says what --out saves: give --out FILE too")
    if args.out is not None:
        check = check_metrics_path if args.out_item == "metrics" else check_pickle_path
        try:
            check(args.out, "--out")
        except ValueError as error:
            parser.error(str(error))
    if not (args.show or args.show_dir):
        for flag, value in (("--wait-time", args.wait_time), ("--interval", args.interval)):
            if value is not None:
                parser.error(f"{flag} says how to draw the test samples: give --show or --show-dir")
    if args.interval is not None and args.interval < 1:
        parser.error(f"--interval must be a positive number, got {args.interval}")


def test_config(args: argparse.Namespace) -> Config:
    """The config ``tools/test.py`` runs: the CHECKPOINT's weights loaded (not resumed) and
    each flag applied through ``merge_from_dict`` with the flag as its source, so that
    ``cfg.explain('load_from')`` names ``tools/test.py CHECKPOINT``."""
    cfg = load_config(args, "tools/test.py")
    if args.tta:
        _use_tta(cfg)
    if args.no_pin_memory and isinstance(cfg.get("test_dataloader"), Mapping):
        cfg.merge_from_dict({"test_dataloader.pin_memory": False}, source="--no-pin-memory")
    if args.show or args.show_dir:
        enable_visualization(cfg, args)
    if args.out is not None and args.out_item != "metrics":
        evaluator = add_dump_results(cfg.get("test_evaluator"), args.out)
        cfg.merge_from_dict({"test_evaluator": evaluator}, source="--out")
    try:
        checkpoint = checkpoint_to_test(args.checkpoint, cfg.work_dir)
    except FileNotFoundError as error:
        raise SystemExit(f"tools/test.py: {error}") from None
    cfg.merge_from_dict(
        {"load_from": checkpoint, "resume": False}, source="tools/test.py CHECKPOINT"
    )
    return cfg


def _use_tta(cfg: Config) -> None:
    """``--tta``: the model wrapped in ``tta_model`` and the (innermost) test dataset's
    pipeline replaced with ``tta_pipeline``, as OpenMMLab's test scripts do."""
    from runnerx.hooks.prepare_tta_hook import use_tta_model

    keys = ("model", "test_dataloader", "tta_model", "tta_pipeline")
    changed = {key: copy.deepcopy(cfg.get(key)) for key in keys}
    try:
        dataset_key = use_tta_model(changed)
    except KeyError as error:
        raise SystemExit(f"--tta: {error.args[0]}") from None
    cfg.merge_from_dict(
        {
            "model": {"_delete_": True, **changed["model"]},
            f"{dataset_key}.pipeline": changed["tta_pipeline"],
        },
        source="--tta",
    )


def enable_visualization(cfg: Config, args: argparse.Namespace) -> None:
    """``--show`` / ``--show-dir`` (with ``--wait-time``, ``--interval``): turn on
    ``default_hooks.visualization`` through the arguments its class takes, in the spelling of
    OpenMMLab's hooks (``draw`` or ``enable``; ``show``; ``wait_time``; ``interval``;
    ``test_out_dir`` or ``out_dir`` for the folder). A hook without a folder argument (runnerx's
    NaiveVisualizationHook, mmseg's) draws through the visualizer's backends: ``--show-dir``
    then sets ``visualizer.save_dir``, as mmseg's test.py does. Refused with a message: no
    such hook, one that takes none of these, a flag the hook has no argument for, and a
    visualizer whose ``add_datasample`` draws nothing (runnerx's base Visualizer)."""
    flag = "--show" if args.show else "--show-dir"
    hook_cfg = (cfg.get("default_hooks") or {}).get("visualization")
    if hook_cfg is not None and not isinstance(hook_cfg, Mapping):
        raise SystemExit(
            f"tools/test.py {flag}: default_hooks.visualization is {hook_cfg!r}, a "
            f"{type(hook_cfg).__name__}, not a hook config dict (--cfg-options reads "
            "'key=dict(...)' as text: give its keys one by one, e.g. "
            "default_hooks.visualization.type=NaiveVisualizationHook)"
        )
    if hook_cfg is None:
        raise SystemExit(
            f"tools/test.py {flag}: it turns on default_hooks.visualization, which the config "
            f"does not have; {_ADD_A_HOOK}"
        )
    from runnerx.registry import HOOKS

    hook_class = _registered_class(HOOKS, hook_cfg, cfg)
    if hook_class is None:
        raise SystemExit(
            f"tools/test.py {flag}: default_hooks.visualization.type={hook_cfg.get('type')!r} "
            "is not a registered hook (is its package in custom_imports, or default_scope set?)"
        )
    arguments = _hook_arguments(hook_class)
    name = f"default_hooks.visualization ({hook_class.__name__})"
    every = (*_SWITCHES, "show", "wait_time", "interval", *_OUT_DIRS)
    if not any(_taken((argument,), arguments) for argument in every):
        raise SystemExit(
            f"tools/test.py {flag}: {name} takes none of {', '.join(every)}: it does not look "
            f"like a visualization hook; {_ADD_A_HOOK}"
        )
    _check_visualizer(cfg, flag)

    def put(names: tuple[str, ...], value: Any, source: str, given: bool) -> bool:
        """Set the first of ``names`` the hook takes; refuse a flag given for none of them."""
        taken = _taken(names, arguments)
        if taken is not None:
            cfg.merge_from_dict({f"default_hooks.visualization.{taken}": value}, source=source)
        elif given:
            raise SystemExit(
                f"tools/test.py {source}: {name} takes no {' or '.join(names)} argument; leave "
                f"{source} out, or use a hook that takes it"
            )
        return taken is not None

    put(_SWITCHES, True, flag, given=False)  # a hook without a switch always draws
    if args.show:
        put(("show",), True, "--show", given=True)
    if args.show or args.wait_time is not None:
        given = args.wait_time is not None
        wait_time = args.wait_time if given else 2.0  # OpenMMLab's default
        put(("wait_time",), wait_time, "--wait-time" if given else "--show", given=given)
    given = args.interval is not None
    interval = args.interval if given else 1  # mmpretrain's: every sample
    put(("interval",), interval, "--interval" if given else flag, given=given)
    if args.show_dir and not put(_OUT_DIRS, args.show_dir, "--show-dir", given=False):
        cfg.merge_from_dict({"visualizer.save_dir": args.show_dir}, source="--show-dir")


def _hook_arguments(hook_class: type) -> tuple[set[str], bool]:
    """The names of the arguments ``hook_class`` takes, and whether it takes ``**kwargs``
    (mmpretrain's VisualizationHook passes them, ``wait_time`` among them, to the visualizer)."""
    parameters = inspect.signature(hook_class).parameters.values()
    named = {p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD}
    return named, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _taken(names: tuple[str, ...], arguments: tuple[set[str], bool]) -> str | None:
    """The first of ``names`` the hook takes; the one name also when it takes ``**kwargs``."""
    named, takes_any = arguments
    found = [name for name in names if name in named]
    if not found and takes_any and len(names) == 1:
        return names[0]
    return found[0] if found else None


def _check_visualizer(cfg: Config, flag: str) -> None:
    """Refuse a visualizer whose ``add_datasample`` is the base class's, which draws nothing."""
    from runnerx.logging.run_logging import DEFAULT_VISUALIZER
    from runnerx.registry import VISUALIZERS
    from runnerx.visualization import Visualizer

    visualizer_cfg = cfg.get("visualizer") or DEFAULT_VISUALIZER
    if not isinstance(visualizer_cfg, Mapping):
        return
    visualizer_class = _registered_class(VISUALIZERS, visualizer_cfg, cfg)
    if getattr(visualizer_class, "add_datasample", None) is Visualizer.add_datasample:
        raise SystemExit(
            f"tools/test.py {flag}: visualizer.type={visualizer_cfg.get('type')!r} draws nothing "
            "in add_datasample, so no image would be made; set visualizer to a visualizer that "
            "draws the samples (your task's, e.g. mmdet's DetLocalVisualizer, or a Visualizer "
            "subclass with add_datasample: see docs/hooks.md, NaiveVisualizationHook)"
        )


def _registered_class(registry: Any, entry: Mapping, cfg: Config) -> Any:
    """The class ``entry['type']`` names, looked up as the Runner will (in the registry of
    ``_scope_`` or the config's ``default_scope`` first); None when none is registered."""
    kind = entry.get("type")
    if not isinstance(kind, str):
        return kind if isinstance(kind, type) else None
    scope = entry.get("_scope_") or cfg.get("default_scope")
    scoped = registry.registry_for_scope(scope) if scope else None
    found = scoped.get(kind) if scoped is not None else None
    return found if found is not None else registry.get(kind)


def main(argv: list[str] | None = None) -> dict:
    """Load the checkpoint's weights and run the config's test loop; return the metrics
    (``--out FILE --out-item metrics`` also writes them to FILE, on the first rank)."""
    args = parse_args(argv)
    metrics = run(test_config(args), "test")
    if args.out_item == "metrics" and os.environ.get("RANK", "0") == "0":
        dump_metrics(metrics, args.out)
    return metrics


if __name__ == "__main__":
    call_tool(main)
