"""build_param_schedulers: the ``param_scheduler`` config, as MMEngine reads it, to schedulers."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from runnerx.optim.scheduler.lightning_form import (
    LIGHTNING_KEYS,
    counterpart,
    is_lightning_form,
    lightning_argument_note,
    lightning_form_error,
)
from runnerx.optim.scheduler.param_scheduler import (
    INF,
    _ParamScheduler,
    named_optim_wrappers,
    unwrap_optimizer,
)
from runnerx.registry import PARAM_SCHEDULERS, DefaultScope, NotRegisteredError, RegistryKeyError
from runnerx.registry.build import did_you_mean_argument
from runnerx.suggest import did_you_mean, given
from runnerx.utils.errors import TypeAssertionError


def build_param_schedulers(
    cfg: Any,
    optim_wrapper: Any,
    epoch_length: int | None = None,
    *,
    max_epochs: int | None = None,
    max_iters: int | None = None,
) -> list | dict[str, list]:
    """Build the schedulers of ``param_scheduler`` for ``optim_wrapper``.

    ``cfg`` is one scheduler config, a list of them, or built schedulers (kept as they are);
    None gives none. An entry without ``by_epoch`` is epoch-based, as in MMEngine. With
    ``convert_to_iter_based=True`` an epoch-based entry is built as the per-iteration
    schedule ``build_iter_from_epoch`` makes, which needs ``epoch_length`` (iterations per
    epoch). ``max_epochs`` / ``max_iters`` (the train loop's) are the default ``end`` of
    epoch- / iteration-based entries, as the MMEngine Runner sets them::

        param_scheduler = [
            dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500),
            dict(type='CosineAnnealingLR', by_epoch=True, begin=1, end=12,
                 convert_to_iter_based=True),
        ]

    Returns a list; for an OptimWrapperDict, a dict of lists by optimizer name: ``cfg`` may
    then be keyed by those names (``dict(generator=[...], discriminator=[...])``), or be one
    config that each optimizer gets its own copy of. A built scheduler must drive the
    optimizer of ``optim_wrapper`` (of its own name's wrapper when keyed).
    """
    build = partial(
        _build_list,
        epoch_length=epoch_length,
        default_ends=(max_epochs, max_iters),
    )
    wrappers = named_optim_wrappers(optim_wrapper)
    keyed = isinstance(cfg, Mapping) and "type" not in cfg
    if keyed and is_lightning_form(cfg, wrappers or ()):
        raise lightning_form_error("param_scheduler", cfg)
    if wrappers is None:
        if keyed:
            raise RegistryKeyError(
                f"param_scheduler has no 'type' (its keys: {', '.join(map(str, cfg))}); a dict "
                "without 'type' maps optimizer names to schedulers, but there is one optimizer"
            )
        return build(cfg, optim_wrapper, "param_scheduler")
    if not keyed:
        if len(wrappers) > 1 and any(_is_built(entry) for entry in _entries_of(cfg)):
            raise ValueError(
                "param_scheduler holds a built scheduler, which drives one optimizer, but is "
                f"shared by the optimizers {', '.join(map(repr, wrappers))}; key it by optimizer "
                "name instead"
            )
        return {name: build(cfg, wrapper, "param_scheduler") for name, wrapper in wrappers.items()}
    _check_optimizer_names(cfg, wrappers)
    return {
        name: build(cfg[name], wrapper, f"param_scheduler[{name!r}]")
        for name, wrapper in wrappers.items()
    }


def _check_optimizer_names(cfg: Mapping, wrappers: dict) -> None:
    for key in cfg:
        if key not in wrappers:
            hint = did_you_mean(key, wrappers)
            raise RegistryKeyError(
                f"param_scheduler[{key!r}]: there is no optimizer {key!r} (the optimizers: "
                f"{', '.join(map(repr, wrappers))}){hint}"
            )
    for name in wrappers:
        if name not in cfg:
            raise RegistryKeyError(
                f"param_scheduler has no entry for optimizer {name!r}: it is keyed by optimizer "
                "name, so give every optimizer one (an empty list for none)"
            )


def _entries_of(cfg: Any) -> list:
    return list(cfg) if isinstance(cfg, (list, tuple)) else [cfg]


def _is_built(entry: Any) -> bool:
    return isinstance(entry, _ParamScheduler)


def check_scheduler_entry(entry: Any, where: str) -> None:
    """Refuse (TypeError) a ``param_scheduler`` entry that is neither a config dict nor a
    built runnerx scheduler: a scheduler class, one of torch's schedulers, anything else;
    ``where`` names the entry (``param_scheduler[0]``)."""
    if isinstance(entry, Mapping) or _is_built(entry):
        return
    root, _, key = where.partition(".")  # param_scheduler.<key> of a dict without type
    if key in LIGHTNING_KEYS:
        raise lightning_form_error(root, {key: entry}, whole=False)
    kind = entry if isinstance(entry, type) else type(entry)
    name = kind.__name__
    if kind.__module__.startswith("torch.optim"):
        same = name if PARAM_SCHEDULERS.get(name) is not None else counterpart(name)
        differ = "" if same == name else " (its arguments differ: docs/schedulers.md)"
        ours = (
            f"use runnerx's {same}{differ}: dict(type={same!r}, ...) or "
            f"runnerx.optim.scheduler.{same}(optim_wrapper, ...)"
            if same
            else "use a runnerx scheduler (docs/schedulers.md lists them) as a config dict"
        )
        raise TypeError(
            f"{where} is torch's {kind.__module__}.{name}, which the Runner cannot step (it "
            f"has no by_epoch, begin or end); {ours}"
        )
    if isinstance(entry, type):
        raise TypeError(
            f"{where} is {given(entry, 'optim_wrapper, ...')} or a config dict(type={name!r}, ...)"
        )
    raise TypeAssertionError(  # also MMEngine's AssertionError
        f"{where} must be a scheduler config such as dict(type='MultiStepLR', milestones=[8, "
        f"11]) or a built runnerx scheduler, but got {name}: {entry!r}"
    )


def _build_list(
    cfg: Any, optim_wrapper: Any, where: str, epoch_length: int | None, default_ends: tuple
) -> list:
    if cfg is None:
        return []
    if isinstance(cfg, (list, tuple)):
        entries = [(f"{where}[{index}]", entry) for index, entry in enumerate(cfg)]
    else:
        entries = [(where, cfg)]
    schedulers = []
    for label, entry in entries:
        check_scheduler_entry(entry, label)
        if _is_built(entry):
            _check_drives(entry, optim_wrapper, label, where)
            schedulers.append(entry)
        else:
            schedulers.append(_build_one(entry, optim_wrapper, label, epoch_length, default_ends))
    return schedulers


def _check_drives(scheduler: _ParamScheduler, optim_wrapper: Any, label: str, where: str) -> None:
    """Refuse a built scheduler of another optimizer than ``optim_wrapper``'s: stepping it
    would change nothing the training uses (it was built on a wrapper since swapped for a
    config, or on another model's optimizer)."""
    if scheduler.optimizer is unwrap_optimizer(optim_wrapper):
        return
    name = type(scheduler).__name__
    owner = where.replace("param_scheduler", "optim_wrapper", 1)  # param_scheduler['gen']
    raise ValueError(
        f"{label} ({name}) drives another optimizer than the Runner's {owner}, so it would "
        f"change nothing the training uses; build it on that optim wrapper ({name}("
        f"optim_wrapper, ...) or {name}(optim_wrapper.optimizer, ...)) or pass its config, "
        f"dict(type={name!r}, ...)"
    )


def _build_one(
    entry: Mapping, optim_wrapper: Any, where: str, epoch_length: int | None, default_ends: tuple
) -> Any:
    args = dict(entry)
    if "type" not in args:
        if is_lightning_form(args):
            raise lightning_form_error(where, args)
        raise RegistryKeyError(
            f"{where} has no 'type' (its keys: {', '.join(map(str, args)) or 'none'}); name a "
            "scheduler, e.g. type='CosineAnnealingLR'"
        )
    type_value = args.pop("type")
    shown = f"{where} (type={type_value!r})" if isinstance(type_value, str) else where
    scheduler_class = _scheduler_class(type_value, args.pop("_scope_", None), where)
    convert = args.pop("convert_to_iter_based", False)
    epoch_length = args.pop("epoch_length", epoch_length)
    by_epoch = args.get("by_epoch", True)
    default_end = default_ends[0] if by_epoch else default_ends[1]
    if default_end is not None:
        args.setdefault("end", default_end)
    begin, end = args.get("begin", 0), args.get("end", INF)
    if not begin < end:
        raise ValueError(
            f"{shown}: begin must be smaller than end, but got begin={begin}, end={end}"
        )
    build = scheduler_class
    if convert:
        if not by_epoch:
            raise ValueError(
                f"{shown}: convert_to_iter_based=True turns an epoch-based schedule into a "
                "per-iteration one, but this entry has by_epoch=False; drop one of the two"
            )
        if epoch_length is None:
            raise ValueError(
                f"{shown}: convert_to_iter_based=True needs epoch_length (iterations per epoch) "
                "to count its epochs in iterations, which a train_dataloader without a length "
                "(an iterable dataset without __len__) cannot give: set by_epoch=False and "
                "count begin/end in iterations (outside a Runner, pass epoch_length=)"
            )
        build = partial(scheduler_class.build_iter_from_epoch, epoch_length=epoch_length)
    args.setdefault("optimizer", optim_wrapper)
    try:
        return build(**args)
    except Exception as err:
        hint = lightning_argument_note(err) or did_you_mean_argument(err, scheduler_class)
        raise _with_where(err, shown, hint) from err


def _scheduler_class(type_value: Any, scope: str | None, where: str) -> Any:
    """Look ``type`` up as a build would: the default scope's registry first, then the root."""
    if not isinstance(type_value, str):
        if isinstance(type_value, type):
            return type_value
        raise TypeError(f"{where}: type must be a registered name or a class, not {type_value!r}")
    with DefaultScope.overwrite_default_scope(scope):
        current = DefaultScope.get_current_instance()
        scoped = PARAM_SCHEDULERS.registry_for_scope(current.scope_name) if current else None
        registries = [PARAM_SCHEDULERS]
        if scoped is not None and scoped is not PARAM_SCHEDULERS:
            registries.insert(0, scoped)
        for registry in registries:
            found = registry.get(type_value)
            if found is not None:
                return found
    raise RegistryKeyError(f"{where}: {NotRegisteredError(type_value, registries)}")


def _with_where(err: Exception, shown: str, hint: str = "") -> Exception:
    """``err`` with ``shown`` in front of its message (and ``hint`` after it): the same type
    where it can be made."""
    message = f"{shown}: {err}{hint}"
    if isinstance(err, KeyError):
        return RegistryKeyError(message)
    try:
        return type(err)(message)
    except Exception:
        return RuntimeError(f"{shown}: {type(err).__name__}: {err}{hint}")
