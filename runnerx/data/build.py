"""build_dataloader: a ``train_dataloader=dict(...)`` config (MMEngine's keys) to a DataLoader."""

from __future__ import annotations

import functools
import inspect
import numbers
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch.utils.data import DataLoader, IterableDataset, Subset

from runnerx.config.config_dict import with_config_key
from runnerx.config.errors import ConfigKeyError
from runnerx.data.collate import pseudo_collate
from runnerx.data.samplers import InfiniteSampler
from runnerx.data.samplers.generators import ordering_sampler, seed_order_generator
from runnerx.data.worker_init import SamplerValue, WorkerSeededLoader
from runnerx.data.worker_init import worker_init_fn as default_worker_init_fn
from runnerx.dist import get_rank, get_world_size
from runnerx.registry import DATA_SAMPLERS, DATASETS, FUNCTIONS, DefaultScope, NotRegisteredError
from runnerx.registry.errors import mark_wrapped
from runnerx.suggest import did_you_mean

# Keys build_dataloader turns into objects itself; every other key goes to DataLoader.
_BUILT_HERE = (
    "dataset",
    "sampler",
    "batch_sampler",
    "collate_fn",
    "worker_init_fn",
    "num_batch_per_epoch",
    "disable_subprocess_warning",
)
_LOADER_OPTIONS = tuple(
    name
    for name in inspect.signature(DataLoader.__init__).parameters
    if name != "self" and name not in _BUILT_HERE
)
# DataLoader rejects these without worker processes.
_WORKER_ONLY_OPTIONS = ("persistent_workers", "prefetch_factor")


def build_dataloader(
    dataloader_cfg: Mapping[str, Any] | DataLoader,
    seed: int | None = None,
    diff_rank_seed: bool = False,
    cfg_key: str = "train_dataloader",
) -> DataLoader:
    """Build a DataLoader from a config with MMEngine's keys (or take one already built)::

        train_dataloader = dict(
            dataset=dict(type='DigitsDataset', split='train'),  # DATASETS, or a Dataset
            sampler=dict(type='DefaultSampler', shuffle=True),   # DATA_SAMPLERS; see below
            collate_fn=dict(type='default_collate'),             # FUNCTIONS; else pseudo_collate
            batch_size=64, num_workers=2, persistent_workers=True, pin_memory=True)

    The sampler gets ``dataset`` and ``seed`` as defaults. It is required, except for an
    IterableDataset, which takes none: ``sampler=None`` or no ``sampler`` key (a sampler given
    for one is refused, naming ``{cfg_key}.sampler``). ``batch_sampler`` (DATA_SAMPLERS)
    is built around the sampler and takes ``batch_size``. ``collate_fn`` and
    ``worker_init_fn`` dicts name a function in FUNCTIONS; their other keys are bound to it.
    Given a ``seed``, workers are seeded by :func:`worker_init_fn` from the sampler's seed
    and epoch and the rank, and the DataLoader gets its own seeded ``generator`` (unless the
    config gives one).
    ``diff_rank_seed=True`` (the caller's seed differs by rank) leaves the sampler's seed to
    rank 0, because the ranks must shuffle alike to split the data between them.
    ``num_batch_per_epoch`` cuts the dataset to that many batches (for quick trials). Other
    keys are DataLoader's own. ``dataloader_cfg`` itself is not changed.

    Errors name the config key: ``cfg_key`` (``train_dataloader.batch_size must be ...``), and
    ``cfg.{cfg_key}.dataset``, ``.sampler``, ``.batch_sampler`` and the pipeline's entries in
    errors of their builds, also for a plain dict (a config from a file keeps its own paths).
    Outer builds (a loop that builds its dataloader) pass them on unchanged.

    A DataLoader built by the caller is returned as it is, except that given a ``seed``, a
    torch sampler of it that would draw each pass's order from the global torch RNG
    (``DataLoader(dataset, shuffle=True)``) gets a ``torch.Generator`` seeded with ``seed``,
    the loader too when it has none (see :func:`seed_order_generator`): a checkpoint can then
    save the order's state, and a resumed run reads the same order.
    """
    if isinstance(dataloader_cfg, DataLoader):
        if seed is not None:
            seed_order_generator(dataloader_cfg, seed)
        return dataloader_cfg
    if not isinstance(dataloader_cfg, Mapping):
        raise mark_wrapped(
            TypeError(
                f"{cfg_key} must be a dict or a DataLoader, but got {type(dataloader_cfg).__name__}"
            )
        )
    cfg = dict(dataloader_cfg)  # popped below; the caller's config stays as it is
    _check_keys(cfg, cfg_key)

    dataset = _build_dataset(_pop_required(cfg, "dataset", cfg_key), cfg_key)
    num_batch_per_epoch = cfg.pop("num_batch_per_epoch", None)
    batch_sampler_cfg = cfg.pop("batch_sampler", None)
    if num_batch_per_epoch is not None:
        _refuse_iterable(
            dataset,
            f"{cfg_key}.num_batch_per_epoch",
            "cuts the dataset by index",
            "remove it (train_cfg.limit_batches=N ends each training epoch after N batches)",
        )
        batch_size = cfg.get("batch_size") or (batch_sampler_cfg or {}).get("batch_size") or 1
        size = min(len(dataset), num_batch_per_epoch * batch_size * get_world_size())
        dataset = Subset(dataset, range(size))

    sampler = _pop_sampler(cfg, cfg_key, dataset)
    if isinstance(sampler, Mapping):
        sampler_seed = None if diff_rank_seed else seed
        sampler = DATA_SAMPLERS.build(
            with_config_key(sampler, f"{cfg_key}.sampler"),
            default_args=dict(dataset=dataset, seed=sampler_seed),
        )
    batch_sampler = batch_sampler_cfg
    if isinstance(batch_sampler_cfg, Mapping):
        batch_size = cfg.pop("batch_size", 1)
        batch_sampler = DATA_SAMPLERS.build(
            with_config_key(batch_sampler_cfg, f"{cfg_key}.batch_sampler"),
            default_args=dict(sampler=sampler, batch_size=batch_size),
        )

    collate_fn = resolve_function(
        cfg.pop("collate_fn", None) or pseudo_collate, f"{cfg_key}.collate_fn"
    )
    init_fn = _pop_worker_init_fn(cfg, seed, cfg_key, sampler)
    _drop_worker_only_options(cfg, cfg_key)
    if seed is not None and cfg.get("generator") is None:
        # Its own generator keeps starting an epoch's iterator from drawing on the global
        # torch RNG, so a run resumed from a checkpoint continues the same random stream.
        cfg["generator"] = torch.Generator().manual_seed(seed)

    loader_class, extra = DataLoader, {}
    if cfg.get("num_workers", 0) > 0 and getattr(init_fn, "func", None) is default_worker_init_fn:
        # runnerx's own seeding: workers also reseed before each batch (exact resumes)
        loader_class, extra = WorkerSeededLoader, {"rank": get_rank()}
    try:
        loader = loader_class(
            dataset,
            sampler=sampler if batch_sampler is None else None,
            batch_sampler=batch_sampler,
            collate_fn=collate_fn,
            worker_init_fn=init_fn,
            **cfg,
            **extra,
        )
    except (TypeError, ValueError) as err:
        raise mark_wrapped(type(err)(f"{cfg_key}: {err}")) from err
    _refuse_empty(loader, cfg_key)
    return loader


def _refuse_empty(loader: DataLoader, cfg_key: str) -> None:
    """A dataloader that yields no batch on any rank is a mistake (an epoch of nothing,
    metrics of nothing): say why it is empty. Decided from the whole dataset, so that every
    rank of a distributed run decides alike: a rank whose share is empty while another's is
    not (``round_up=False`` with fewer samples than ranks) evaluates nothing, as in MMEngine,
    and a training loop refuses epochs of different lengths on every rank."""
    if length_of(loader) != 0:  # None: an iterable dataset, its length unknown until read
        return
    dataset, world = loader.dataset, get_world_size()
    if len(dataset) == 0:
        why = f"its dataset ({type(dataset).__name__}) is empty"
    elif isinstance(ordering_sampler(loader), InfiniteSampler):
        return  # an endless stream fills every batch, however few the samples
    elif loader.drop_last:
        most = -(-len(dataset) // world)  # the largest share a rank-splitting sampler gives
        if most >= loader.batch_size:
            return  # this rank's share is empty (round_up=False, say), not every rank's
        on_each = f"at most {most} on each of {world} ranks" if world > 1 else "in one process"
        why = (
            f"its dataset has {len(dataset)} samples ({on_each}), and "
            f"batch_size={loader.batch_size} with drop_last=True leaves no full batch; lower "
            f"{cfg_key}.batch_size or set drop_last=False"
        )
    elif world > 1:
        return  # another rank has samples (see above)
    else:
        why = (
            f"its sampler ({type(ordering_sampler(loader)).__name__}) yields none of the dataset's "
            f"{len(dataset)} samples"
        )
    raise mark_wrapped(ValueError(f"{cfg_key} yields no batches: {why}"))


def _check_keys(cfg: dict[str, Any], cfg_key: str) -> None:
    known = (*_BUILT_HERE, *_LOADER_OPTIONS)
    # shuffle is accepted only to be refused below with the sampler to write: not offered
    offered = [key for key in known if key != "shuffle"]
    for key in cfg:
        if key in known:
            continue
        hint = did_you_mean(key, offered, n=3, form="did you mean {}? ")
        raise mark_wrapped(
            TypeError(
                f"{cfg_key}.{key} is not a dataloader option; {hint}(the options: "
                f"{', '.join(offered)})"
            )
        )
    for key, least in (("batch_size", 1), ("num_workers", 0), ("prefetch_factor", 1)):
        value = cfg.get(key)
        whole = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        if value is not None and (not whole or value < least):
            raise mark_wrapped(
                ValueError(
                    f"{cfg_key}.{key} must be an int >= {least}, but got {value!r} "
                    f"({type(value).__name__})"
                )
            )
    if cfg.get("shuffle"):
        raise mark_wrapped(
            ValueError(
                f"{cfg_key}.shuffle: the sampler shuffles; write "
                f"{cfg_key}.sampler=dict(type='DefaultSampler', shuffle=True) instead"
            )
        )


class LoopDefaultSampler(dict):
    """The sampler config a loop gives a dataloader config whose ``sampler`` is None (its
    ``default_sampler``): built for a map-style dataset, dropped for an IterableDataset, which
    takes no sampler (as MMEngine, which passes None on to the DataLoader)."""


def _pop_sampler(cfg: dict[str, Any], cfg_key: str, dataset: Any) -> Any:
    """The ``sampler`` entry: required for a map-style dataset; none for an IterableDataset,
    which yields its samples in its own order (None, left out, or a loop's default)."""
    if not isinstance(dataset, IterableDataset):
        return _pop_required(cfg, "sampler", cfg_key)
    sampler = cfg.pop("sampler", None)
    if sampler is not None and not isinstance(sampler, LoopDefaultSampler):
        _refuse_iterable(
            dataset,
            f"{cfg_key}.sampler={sampler!r}",
            "orders the samples",
            f"remove {cfg_key}.sampler or set it to None, and shuffle or split the samples "
            "between ranks and workers in __iter__ (torch.utils.data.get_worker_info() "
            "names the worker)",
        )
    return None


def _refuse_iterable(dataset: Any, key: str, does: str, cure: str) -> None:
    """Refuse ``key``, which ``does`` something only a map-style dataset allows, for an
    IterableDataset (which yields its samples in its own order, from ``__iter__``)."""
    if isinstance(dataset, IterableDataset):
        raise mark_wrapped(
            ValueError(
                f"{key} {does}, but the dataset, {type(dataset).__name__}, is an "
                f"IterableDataset, which yields its samples in its own order: {cure}"
            )
        )


def _pop_required(cfg: dict[str, Any], key: str, cfg_key: str) -> Any:
    if cfg.get(key) is None:
        shuffle = cfg_key.startswith("train")  # val/test loaders keep the dataset's order
        example = {
            "dataset": "dataset=dict(type='DigitsDataset', split='train')",
            "sampler": f"sampler=dict(type='DefaultSampler', shuffle={shuffle})",
        }[key]
        raise mark_wrapped(
            ConfigKeyError(f"{cfg_key}.{key} is missing; it is required, e.g. {example}")
        )
    return cfg.pop(key)


def _build_dataset(dataset: Any, cfg_key: str) -> Any:
    if isinstance(dataset, DataLoader):  # else torch fails at the first batch, naming no key
        raise mark_wrapped(
            TypeError(
                f"{cfg_key}.dataset is a DataLoader; pass it as {cfg_key} itself "
                f"({cfg_key}=DataLoader(...)), or give {cfg_key}.dataset its dataset"
            )
        )
    if not isinstance(dataset, Mapping):
        return dataset
    dataset = DATASETS.build(with_config_key(dataset, f"{cfg_key}.dataset"))
    if hasattr(dataset, "full_init"):  # MMEngine's lazily initialised datasets
        dataset.full_init()
    return dataset


def _pop_worker_init_fn(cfg: dict[str, Any], seed: int | None, cfg_key: str, sampler: Any) -> Any:
    """The configured ``worker_init_fn``, else seeding from the ``sampler``'s seed (``seed``
    if it has none) and epoch and the rank, else None."""
    quiet_workers = cfg.pop("disable_subprocess_warning", False)
    if "worker_init_fn" in cfg:
        spec = cfg.pop("worker_init_fn")
        return None if spec is None else resolve_function(spec, f"{cfg_key}.worker_init_fn")
    if seed is None:
        return None
    return functools.partial(
        default_worker_init_fn,
        num_workers=cfg.get("num_workers", 0),
        rank=get_rank(),
        seed=SamplerValue(sampler, "seed", seed),
        disable_subprocess_warning=quiet_workers,
        epoch=SamplerValue(sampler, "epoch", 0),
        world_size=get_world_size(),
    )


def resolve_function(spec: Any, key_path: str) -> Callable[..., Any]:
    """A function from ``dict(type=name_or_function, **bound_kwargs)`` or a callable."""
    if callable(spec):
        return spec
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise mark_wrapped(
            TypeError(
                f"{key_path} must be a callable or a dict with a 'type' naming a function "
                f"registered in FUNCTIONS, but got {spec!r}"
            )
        )
    kwargs = dict(spec)
    function = kwargs.pop("type")
    if isinstance(function, str):
        function = _lookup_function(function, key_path)
    if not callable(function):
        raise mark_wrapped(TypeError(f"{key_path}.type must name a function, but got {function!r}"))
    return functools.partial(function, **kwargs) if kwargs else function


def _lookup_function(name: str, key_path: str) -> Callable[..., Any]:
    """``name`` in FUNCTIONS, searching the default scope's registry first (as builds do)."""
    current = DefaultScope.get_current_instance()
    scoped = FUNCTIONS.registry_for_scope(current.scope_name) if current else None
    for registry in (scoped, FUNCTIONS):
        function = registry.get(name) if registry is not None else None
        if function is not None:
            return function
    raise NotRegisteredError(name, [FUNCTIONS], key_path)


def _drop_worker_only_options(cfg: dict[str, Any], cfg_key: str) -> None:
    if cfg.get("num_workers", 0) > 0:
        return
    dropped = [key for key in _WORKER_ONLY_OPTIONS if cfg.pop(key, None)]
    if dropped:
        verb = "applies" if len(dropped) == 1 else "apply"
        warnings.warn(
            f"{cfg_key}: {' and '.join(dropped)} only {verb} with worker processes "
            f"(num_workers > 0); ignored with num_workers={cfg.get('num_workers', 0)}",
            stacklevel=3,
        )


def stop_workers(dataloader: Any) -> None:
    """Shut down the worker processes that a DataLoader with ``persistent_workers=True`` keeps
    between passes (its next pass starts new ones); anything else is left as it is.

    The Runner calls it when training, validation or test ends. Left to the garbage
    collector, such workers live on after the run, and collecting the Runner (a cycle) then
    stalls 5 s per worker: torch's queues are finalised before the iterator that would stop
    the workers through them. torch has no public call for it; this is the one Lightning
    makes, feature-detected.
    """
    iterator = getattr(dataloader, "_iterator", None)
    shutdown = getattr(iterator, "_shutdown_workers", None)
    if callable(shutdown):
        shutdown()
        dataloader._iterator = None


def batch_size_of(dataloader: Any) -> int | None:
    """The samples per batch that ``dataloader`` reads on each rank: its ``batch_size``, or its
    ``batch_sampler``'s when a ``batch_sampler=dict(...)`` config builds the batches (the
    loader's own is None then); None when neither says."""
    size = getattr(dataloader, "batch_size", None)
    if size is None:
        size = getattr(getattr(dataloader, "batch_sampler", None), "batch_size", None)
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def length_of(dataloader: Any, key: str | None = None, instead: str = "") -> int | None:
    """``len(dataloader)``: its batches per pass. A DataLoader over an IterableDataset without
    ``__len__`` has none: then None, or given the config ``key`` that needs it
    (``'train_dataloader'``), a TypeError naming it that says to define ``__len__``, and
    ``instead`` (``', or ...'``)."""
    try:
        return len(dataloader)
    except TypeError as error:
        dataset = getattr(dataloader, "dataset", None)
        if hasattr(dataset, "__len__"):
            raise  # a failure inside a length that exists: its own error says more
        if key is None:
            return None
        raise mark_wrapped(
            TypeError(
                f"{key} has no length: its dataset, {type(dataset).__name__}, is an iterable "
                "dataset without __len__; define __len__ on it (the number of samples it yields)"
                f"{instead}"
            )
        ) from error
