"""MMEngine's build functions: ``build_from_cfg`` and the three that MODELS, PARAM_SCHEDULERS
and RUNNERS build with, for configs that are more than one ``dict(type=...)``.

A package passes them to its own registries as MMEngine's do::

    MODELS = Registry('model', parent=ROOT_MODELS, build_func=build_model_from_cfg)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runnerx.registry.build import _registries_to_search, _resolve_type, build_from_cfg
from runnerx.registry.default_scope import DefaultScope
from runnerx.registry.registry import Registry

__all__ = [
    "build_from_cfg",
    "build_model_from_cfg",
    "build_optimizer_from_cfg",
    "build_runner_from_cfg",
    "build_scheduler_from_cfg",
]


def build_optimizer_from_cfg(
    cfg: Mapping[str, Any], registry: Registry, default_args: Mapping[str, Any] | None = None
) -> Any:
    """Build an optimizer from a config dict: :func:`build_from_cfg` (MMEngine's name, for a
    downstream registry made with ``build_func=build_optimizer_from_cfg``)."""
    return build_from_cfg(cfg, registry, default_args)


def build_model_from_cfg(
    cfg: Mapping[str, Any] | list[Mapping[str, Any]],
    registry: Registry,
    default_args: Mapping[str, Any] | None = None,
) -> Any:
    """Build a model from a config dict, or an ``nn.Sequential`` (runnerx's
    :class:`~runnerx.model.Sequential`) of the models a list of config dicts names::

        MODELS.build([dict(type='Linear', in_features=2, out_features=4), dict(type='ReLU')])
    """
    if not isinstance(cfg, list):
        return build_from_cfg(cfg, registry, default_args)
    from runnerx.model import Sequential  # torch: only when a list is built

    return Sequential(*(build_from_cfg(entry, registry, default_args) for entry in cfg))


def build_scheduler_from_cfg(
    cfg: Mapping[str, Any], registry: Registry, default_args: Mapping[str, Any] | None = None
) -> Any:
    """Build a parameter scheduler; with ``convert_to_iter_based=True`` an epoch-based one is
    built per iteration by its ``build_iter_from_epoch``, which needs ``epoch_length``
    (iterations per epoch: from ``cfg`` or ``default_args``, ignored otherwise)::

        PARAM_SCHEDULERS.build(
            dict(type='MultiStepLR', milestones=[8, 11], convert_to_iter_based=True),
            default_args=dict(optimizer=optim_wrapper, epoch_length=len(train_dataloader)))
    """
    defaults = dict(default_args or {})
    epoch_length = defaults.pop("epoch_length", None)
    if "convert_to_iter_based" not in cfg and "epoch_length" not in cfg:
        return build_from_cfg(cfg, registry, defaults)
    args = dict(cfg)
    epoch_length = args.pop("epoch_length", epoch_length)
    if not args.pop("convert_to_iter_based", False):
        return build_from_cfg(args, registry, defaults)
    if epoch_length is None:
        raise ValueError(
            f"{cfg.get('type')!r} has convert_to_iter_based=True, which needs epoch_length "
            "(iterations per epoch) in the config or in default_args"
        )
    for key, value in defaults.items():
        args.setdefault(key, value)
    with DefaultScope.overwrite_default_scope(args.pop("_scope_", None)):
        scheduler = _resolve_type(args.pop("type", None), _registries_to_search(registry), cfg)
    return scheduler.build_iter_from_epoch(epoch_length=epoch_length, **args)


def build_runner_from_cfg(cfg: Any, registry: Registry) -> Any:
    """Build the Runner a whole config asks for: the registered ``runner_type`` (default
    ``'Runner'``), made with its ``from_cfg``, as OpenMMLab's ``tools/train.py`` does with
    ``RUNNERS.build(cfg)``."""
    if not isinstance(cfg, Mapping) and not hasattr(cfg, "to_dict"):
        raise TypeError(f"cfg must be a dict or a Config, but got {type(cfg).__name__}")
    scope = cfg.get("_scope_")
    if scope is not None:
        cfg = cfg.copy()
        cfg.pop("_scope_")
    with DefaultScope.overwrite_default_scope(scope):
        runner_type = cfg.get("runner_type", "Runner")
        runner = _resolve_type(runner_type, _registries_to_search(registry), cfg)
        return runner.from_cfg(cfg)
