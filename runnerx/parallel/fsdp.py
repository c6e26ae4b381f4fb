"""Fully sharded data parallel (FSDP2, ``torch.distributed.fsdp.fully_shard``).

.. code-block:: python

    strategy = dict(
        type='FSDP',
        sharding='zero3',                 # 'zero3' | 'zero2' | 'hsdp'
        wrap_modules=['TransformerBlock'],
        mixed_precision=dict(param_dtype='bfloat16', reduce_dtype='float32'),
        cpu_offload=False,
        reshard_after_forward=None,       # None: what `sharding` implies
        prefetch=None,                    # N: explicitly prefetch the next N blocks
        shard_size=None,                  # hsdp: processes per shard group (default: per node)
        state_dict_type='full',           # checkpoints: 'full' (one file) | 'sharded' (a folder)
    )

Each block of ``wrap_modules`` becomes one FSDP unit (its parameters are all-gathered just
before it runs), then the whole model becomes the root unit for the rest. ``zero3`` frees the
gathered parameters after each block's forward pass (least memory, a second all-gather in
the backward pass); ``zero2`` keeps them until the backward pass (more memory, less
communication); ``hsdp`` shards within groups of ``shard_size`` processes and replicates
across groups (a 2-D device mesh: shard within a node, all-reduce between nodes).
``state_dict_type='sharded'`` makes the Runner's checkpoints folders that every rank writes
its shards to (see :mod:`runnerx.parallel.sharded_checkpoint`) instead of one file gathered
on rank 0.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

from runnerx.dist import get_world_size
from runnerx.registry import MODEL_WRAPPERS
from runnerx.registry.errors import mark_wrapped

from .module_match import find_modules
from .options import check_choice, check_keys, resolve_dtype
from .steps import WrappedModelSteps

SHARDINGS = ("zero3", "zero2", "hsdp")
STATE_DICT_TYPES = ("full", "sharded")
MIXED_PRECISION_KEYS = ("param_dtype", "reduce_dtype", "output_dtype", "cast_forward_inputs")


@functools.cache
def fsdp_api() -> SimpleNamespace:
    """``fully_shard`` and its policy classes from where this torch keeps them (public since
    torch 2.6, ``torch.distributed._composable.fsdp`` in 2.4 and 2.5)."""
    try:
        from torch.distributed.fsdp import (
            CPUOffloadPolicy,
            FSDPModule,
            MixedPrecisionPolicy,
            fully_shard,
        )
    except ImportError:
        try:
            from torch.distributed._composable.fsdp import (
                CPUOffloadPolicy,
                FSDPModule,
                MixedPrecisionPolicy,
                fully_shard,
            )
        except ImportError as error:
            raise RuntimeError(
                f"strategy=dict(type='FSDP') needs FSDP2 (fully_shard, torch >= 2.4 built with "
                f"distributed support); this is torch {torch.__version__}"
            ) from error
    return SimpleNamespace(
        fully_shard=fully_shard,
        FSDPModule=FSDPModule,
        MixedPrecisionPolicy=MixedPrecisionPolicy,
        CPUOffloadPolicy=CPUOffloadPolicy,
    )


def is_fully_sharded(module: nn.Module) -> bool:
    """Whether ``fully_shard`` was applied to ``module`` (its parameters are DTensor shards)."""
    try:
        return isinstance(module, fsdp_api().FSDPModule)
    except RuntimeError:
        return False


def fsdp_units(module: nn.Module) -> list[nn.Module]:
    """The modules of ``module`` (itself included) that ``fully_shard`` was applied to."""
    return [unit for unit in module.modules() if is_fully_sharded(unit)]


def reshard(units: list[nn.Module]) -> None:
    """Put the sharded parameters back in ``units``: a forward pass without backward leaves
    the units that do not reshard after forward (zero2, the root, the last block) holding
    gathered parameters, which the optimizer and state dicts do not know."""
    for unit in units:
        unit.reshard()


@MODEL_WRAPPERS.register_module()
class FullyShardedModel(WrappedModelSteps, nn.Module):
    """Shards ``module`` with FSDP2 (in place) and holds it as ``self.module``, with the model
    steps of :class:`WrappedModelSteps` and ``no_sync`` for gradient accumulation.

    The optimizer must be built after this (the parameters become DTensor shards). Arguments
    as in the module docstring; ``module`` must already be on its device.
    """

    def __init__(
        self,
        module: nn.Module,
        sharding: str = "zero3",
        wrap_modules: Any = None,
        mixed_precision: str | Mapping | None = None,
        cpu_offload: bool | Mapping = False,
        reshard_after_forward: bool | int | None = None,
        prefetch: int | None = None,
        shard_size: int | None = None,
        state_dict_type: str = "full",
    ) -> None:
        super().__init__()
        blocks = check_fsdp_values(
            module,
            dict(
                sharding=sharding,
                wrap_modules=wrap_modules,
                mixed_precision=mixed_precision,
                prefetch=prefetch,
                shard_size=shard_size,
                state_dict_type=state_dict_type,
            ),
        )
        self.state_dict_type = state_dict_type
        api = fsdp_api()
        device_type = _device_type(module)
        options: dict[str, Any] = {"mesh": build_mesh(sharding, shard_size, device_type)}
        if mixed_precision is not None:
            options["mp_policy"] = api.MixedPrecisionPolicy(**_mixed_precision(mixed_precision))
        if cpu_offload:
            options["offload_policy"] = _offload_policy(api, cpu_offload, device_type)
        explicit_reshard = reshard_after_forward is not None
        reshard = reshard_after_forward if explicit_reshard else sharding != "zero2"
        for index, block in enumerate(blocks):
            # the last block runs first in the backward pass: freeing it would only regather it
            last = index == len(blocks) - 1
            api.fully_shard(
                block, reshard_after_forward=reshard and (explicit_reshard or not last), **options
            )
        api.fully_shard(module, reshard_after_forward=reshard, **options)
        if prefetch is not None:
            set_explicit_prefetch(blocks, prefetch)
        self.module = module
        self._units = fsdp_units(module)
        self._gradient_sync = True
        self._skip_sync = False

    def __getattr__(self, name: str) -> Any:
        """An attribute the wrapper lacks is looked up on the wrapped model, as FSDP1 (and so
        MMEngine's FSDP wrapper) does: ``model.save_pretrained(...)``, ``model.config``."""
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "module":  # not set yet (inside __init__, or while unpickling)
                raise
            return getattr(self.module, name)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the sharded model; a forward pass inside :meth:`no_sync` makes its backward
        pass keep the gradients local (no reduce-scatter)."""
        sync = not self._skip_sync
        if sync is not self._gradient_sync:
            self.module.set_requires_gradient_sync(sync)
            self._gradient_sync = sync
        return self.module(*args, **kwargs)

    def val_step(self, data: Any) -> Any:
        """The wrapped model's ``val_step``; its parameters sharded again afterwards."""
        outputs = self.module.val_step(data)
        reshard(self._units)
        return outputs

    def test_step(self, data: Any) -> Any:
        """The wrapped model's ``test_step``; its parameters sharded again afterwards."""
        outputs = self.module.test_step(data)
        reshard(self._units)
        return outputs

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Forward passes run inside skip the gradient reduce-scatter of their backward pass
        (it may run after the context has closed, as with DDP's ``no_sync``)."""
        self._skip_sync = True
        try:
            yield
        finally:
            self._skip_sync = False


def check_fsdp_values(module: nn.Module, values: Mapping[str, Any]) -> list[nn.Module]:
    """Check the :class:`FullyShardedModel` arguments in ``values`` whose check needs no
    process group (``sharding``, ``state_dict_type``, ``wrap_modules``, ``mixed_precision``,
    ``prefetch``, ``shard_size``), so that a one-process run, which runs the model unwrapped,
    refuses what a distributed one would. A key left out has its valid default. Returns the
    blocks ``wrap_modules`` names. Each error names its ``strategy`` key, so the strategy's
    build puts no ``while building ...`` in front of it."""
    try:
        sharding = values.get("sharding", "zero3")
        check_choice(sharding, SHARDINGS, "strategy.sharding")
        dict_type = values.get("state_dict_type", "full")
        check_choice(dict_type, STATE_DICT_TYPES, "strategy.state_dict_type")
        wrap_modules = values.get("wrap_modules")
        blocks = find_modules(module, wrap_modules, "strategy.wrap_modules") if wrap_modules else []
        if values.get("mixed_precision") is not None:
            _mixed_precision(values["mixed_precision"])
        _check_prefetch(values.get("prefetch"), blocks)
        _check_shard_size(values.get("shard_size"), sharding)
    except (TypeError, ValueError, KeyError) as error:
        mark_wrapped(error)
        raise
    return blocks


def _check_prefetch(prefetch: Any, blocks: list[nn.Module]) -> None:
    if prefetch is None:
        return
    if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 1:
        raise ValueError(f"strategy.prefetch must be None or an int >= 1, got {prefetch!r}")
    if not blocks:
        raise ValueError("strategy.prefetch needs strategy.wrap_modules: the blocks to prefetch")


def _check_shard_size(shard_size: Any, sharding: str) -> None:
    if shard_size is None:
        return
    if sharding != "hsdp":
        raise ValueError(
            f"strategy.shard_size is for sharding='hsdp'; sharding={sharding!r} shards over "
            "all processes"
        )
    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 1:
        raise ValueError(f"strategy.shard_size must be a positive int, got {shard_size!r}")


def build_mesh(sharding: str, shard_size: int | None, device_type: str) -> Any:
    """The device mesh of ``sharding`` (checked by :func:`check_fsdp_values`): 1-D over all
    processes, or 2-D (replicate, shard)."""
    from torch.distributed.device_mesh import init_device_mesh

    world = get_world_size()
    if sharding != "hsdp":
        return init_device_mesh(device_type, (world,), mesh_dim_names=("shard",))
    if shard_size is None:
        shard_size = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    if world % shard_size:
        raise ValueError(
            f"sharding='hsdp' splits the {world} processes into shard groups of "
            f"strategy.shard_size={shard_size}, which does not divide {world}; set shard_size "
            "to a divisor of the world size (usually the number of GPUs per node)"
        )
    return init_device_mesh(
        device_type, (world // shard_size, shard_size), mesh_dim_names=("replicate", "shard")
    )


def set_explicit_prefetch(blocks: list[nn.Module], count: int) -> None:
    """Let each block start the all-gather of the next ``count`` blocks in the forward pass
    (and of the previous ``count`` in the backward pass) before it computes."""
    for index, block in enumerate(blocks):
        following = blocks[index + 1 : index + 1 + count]
        preceding = blocks[max(0, index - count) : index][::-1]
        if following:
            block.set_modules_to_forward_prefetch(following)
        if preceding:
            block.set_modules_to_backward_prefetch(preceding)


def _mixed_precision(cfg: str | Mapping) -> dict[str, Any]:
    """``MixedPrecisionPolicy`` arguments; a dtype name alone means
    ``dict(param_dtype=name, reduce_dtype='float32')``."""
    if isinstance(cfg, str):
        cfg = {"param_dtype": cfg, "reduce_dtype": "float32"}
    if not isinstance(cfg, Mapping):
        raise TypeError(
            "strategy.mixed_precision must be a dtype name or a dict such as "
            f"dict(param_dtype='bfloat16', reduce_dtype='float32'), but got {cfg!r}"
        )
    check_keys(cfg, MIXED_PRECISION_KEYS, "strategy.mixed_precision")
    policy = dict(cfg)
    for key in ("param_dtype", "reduce_dtype", "output_dtype"):
        if key in policy:
            policy[key] = resolve_dtype(policy[key], f"strategy.mixed_precision.{key}")
    return policy


def _device_type(module: nn.Module) -> str:
    for param in module.parameters():
        return param.device.type
    raise ValueError(f"strategy FSDP: {type(module).__name__} has no parameters to shard")


def _offload_policy(api: SimpleNamespace, cfg: bool | Mapping, device_type: str) -> Any:
    if device_type == "cpu":
        raise ValueError(
            "strategy.cpu_offload keeps parameters on the CPU between uses, but this run is "
            "on the CPU already; remove cpu_offload"
        )
    options = {} if cfg is True else dict(cfg)
    check_keys(options, ("pin_memory",), "strategy.cpu_offload")
    return api.CPUOffloadPolicy(**options)
