"""AmpOptimWrapper: automatic mixed precision (fp16 with a loss scaler, or bf16) on CPU and CUDA."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from runnerx.logging import print_log
from runnerx.optim.checks import check_arguments
from runnerx.optim.optim_wrapper import OptimWrapper, current_message_hub
from runnerx.registry import OPTIM_WRAPPERS
from runnerx.registry.errors import mark_wrapped
from runnerx.suggest import SENTENCE, did_you_mean
from runnerx.utils.errors import ValueAssertionError

AMP_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
_ALLOWED_DTYPES = (
    "None (the device's autocast default: float16 on CUDA, bfloat16 on CPU), 'float16', "
    "'bfloat16', torch.float16 or torch.bfloat16"
)
_LOSS_SCALE_FORMS = (
    "'dynamic', a number (a fixed scale) or a dict of torch.amp.GradScaler arguments "
    "(init_scale, growth_factor, backoff_factor, growth_interval, enabled)"
)


def resolve_amp_dtype(
    dtype: Any, device_type: str = "cuda", key: str = "optim_wrapper.dtype"
) -> torch.dtype:
    """The autocast dtype that the config's ``key`` names; None picks the device's default."""
    if dtype is None:
        return torch.bfloat16 if device_type == "cpu" else torch.float16
    if isinstance(dtype, str) and dtype in AMP_DTYPES:
        return AMP_DTYPES[dtype]
    if isinstance(dtype, torch.dtype) and dtype in AMP_DTYPES.values():
        return dtype
    hint = did_you_mean(dtype, list(AMP_DTYPES), form=SENTENCE)
    raise mark_wrapped(  # these errors name their key: no "while building" in front of them
        ValueAssertionError(
            f"{key}={dtype!r} is not supported for mixed precision; expected "
            f"{_ALLOWED_DTYPES}.{hint}"
        )
    )


def _scaler_type(use_fsdp: bool) -> type:
    if use_fsdp:
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        return ShardedGradScaler
    return torch.amp.GradScaler


def check_loss_scale(loss_scale: Any, use_fsdp: bool = False) -> None:
    """Raise a TypeError naming ``optim_wrapper.loss_scale`` unless it is one of
    ``_LOSS_SCALE_FORMS`` (a dict: of arguments the scaler takes)."""
    if loss_scale == "dynamic":
        return
    if isinstance(loss_scale, (int, float)) and not isinstance(loss_scale, bool) and loss_scale > 0:
        return
    if isinstance(loss_scale, Mapping):
        check_arguments(
            _scaler_type(use_fsdp), list(loss_scale), "optim_wrapper.loss_scale", skip=1
        )
        return
    raise mark_wrapped(
        TypeError(
            f"optim_wrapper.loss_scale={loss_scale!r} is not valid; expected {_LOSS_SCALE_FORMS}"
        )
    )


def build_loss_scaler(loss_scale: Any, device_type: str, use_fsdp: bool) -> tuple[Any, Any]:
    """``(GradScaler, fixed scale or None)`` for ``optim_wrapper.loss_scale``."""
    check_loss_scale(loss_scale, use_fsdp)
    scaler_type = _scaler_type(use_fsdp)
    if isinstance(loss_scale, Mapping):
        return scaler_type(device_type, **loss_scale), None
    if loss_scale == "dynamic":
        return scaler_type(device_type), None
    return scaler_type(device_type, init_scale=float(loss_scale)), float(loss_scale)


def _device_type(optimizer: torch.optim.Optimizer) -> str:
    for group in optimizer.param_groups:
        for param in group["params"]:
            return param.device.type
    return "cuda" if torch.cuda.is_available() else "cpu"


def autocast(
    device_type: str | None = None,
    dtype: torch.dtype | None = None,
    enabled: bool = True,
    cache_enabled: bool | None = None,
) -> torch.autocast:
    """``torch.autocast`` with MMEngine's defaults (``mmengine.runner.autocast``): the device
    type is CUDA's when a GPU is visible, else the CPU's; the dtype is the device's
    autocast default (float16 on CUDA, bfloat16 on CPU)::

        with autocast(dtype=torch.bfloat16):
            logits = model(inputs)
    """
    device_type = device_type or ("cuda" if torch.cuda.is_available() else "cpu")
    options = {} if cache_enabled is None else {"cache_enabled": cache_enabled}
    dtype = dtype or resolve_amp_dtype(None, device_type)
    return torch.autocast(device_type, dtype=dtype, enabled=enabled, **options)


@OPTIM_WRAPPERS.register_module()
class AmpOptimWrapper(OptimWrapper):
    """An :class:`OptimWrapper` whose ``optim_context`` runs the forward pass under autocast::

        optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16',
                             optimizer=dict(type='AdamW', lr=1e-3))

    The device type is that of the parameters being optimized (the model's), so the same
    config runs on CPU and CUDA. ``dtype='float16'`` (the default on CUDA) scales the loss
    with ``torch.amp.GradScaler``: ``loss_scale='dynamic'`` (default), a number for a fixed
    scale, or a dict of GradScaler arguments; ``use_fsdp=True`` takes FSDP's sharded scaler.
    Gradients are unscaled before clipping; a step whose gradients hold inf/nan is skipped
    and the scale lowered. ``'train/loss_scale'`` and ``'train/skipped_steps'`` (the count so
    far) go to the MessageHub as tensors, read only when logged. ``dtype='bfloat16'`` (the
    default on CPU) needs no scaler: ``loss_scale`` is checked all the same, and one other
    than ``'dynamic'`` is warned about (it has no effect). The scaler's state is saved under
    ``'loss_scaler'``. ``valid_dtypes`` names the ``dtype`` strings taken (as in MMEngine,
    whose list also has float32 and float64, which runnerx refuses); a subclass may narrow it.
    """

    valid_dtypes: tuple[str, ...] = tuple(AMP_DTYPES)

    def __init__(
        self,
        loss_scale: str | float | dict = "dynamic",
        dtype: str | torch.dtype | None = None,
        use_fsdp: bool = False,
        *,
        optimizer: torch.optim.Optimizer,
        accumulative_counts: int = 1,
        clip_grad: dict | None = None,
    ) -> None:
        super().__init__(optimizer, accumulative_counts, clip_grad)
        check_loss_scale(loss_scale, use_fsdp)  # also where bfloat16 makes no scaler
        self._device_type = _device_type(self.optimizer)
        self.cast_dtype = resolve_amp_dtype(dtype, self._device_type)
        if isinstance(dtype, str) and dtype not in self.valid_dtypes:
            raise mark_wrapped(
                ValueAssertionError(
                    f"optim_wrapper.dtype={dtype!r} is not one of {type(self).__name__}'s "
                    f"valid_dtypes {self.valid_dtypes}"
                )
            )
        bf16_on_gpu = self._device_type == "cuda" and self.cast_dtype is torch.bfloat16
        if bf16_on_gpu and not torch.cuda.is_bf16_supported():
            raise mark_wrapped(
                RuntimeError(
                    "optim_wrapper.dtype is bfloat16, which this GPU does not support; "
                    "use dtype='float16'"
                )
            )
        self.loss_scaler = None
        self._fixed_scale = None
        self._skipped_steps: Any = 0
        if self.cast_dtype is torch.float16:
            self.loss_scaler, self._fixed_scale = build_loss_scaler(
                loss_scale, self._device_type, use_fsdp
            )
            if self.message_hub is None:
                self.message_hub = current_message_hub()
        elif loss_scale != "dynamic":
            warnings.warn(
                f"optim_wrapper.loss_scale={loss_scale!r} has no effect: the dtype is bfloat16, "
                "which needs no loss scaling (no scaler is made); drop loss_scale, or set "
                "dtype='float16' to scale the loss",
                stacklevel=2,
            )
        print_log(self._precision_summary(dtype), logger="current")

    def _precision_summary(self, dtype: Any) -> str:
        """The start-up line saying what this wrapper's mixed precision does."""
        default = " (its default: optim_wrapper.dtype is not set)" if dtype is None else ""
        scaler = self.loss_scaler
        if scaler is None:
            scaling = "no loss scaling (bfloat16 needs none)"
        elif not scaler.is_enabled():
            scaling = "loss scaling off (optim_wrapper.loss_scale has enabled=False)"
        elif self._fixed_scale is not None:
            scaling = f"a fixed loss scale of {self._fixed_scale:g}"
        else:
            scaling = f"dynamic loss scaling ({type(scaler).__name__})"
        return (
            f"{type(self).__name__}: mixed precision autocasts the forward pass to "
            f"{str(self.cast_dtype).removeprefix('torch.')} on {self._device_type}{default}, "
            f"with {scaling}"
        )

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """Backward the (scaled, for float16) loss, counting one micro-step."""
        if self.loss_scaler is not None:
            loss = self.loss_scaler.scale(loss)
        super().backward(loss, **kwargs)

    def step(self, **kwargs: Any) -> None:
        """Unscale, clip, step (skipped on inf/nan gradients) and update the loss scale."""
        scaler = self.loss_scaler
        if scaler is None:
            super().step(**kwargs)
            return
        if self._clip_fn is not None:
            scaler.unscale_(self.optimizer)
            self._clip_grad()
        scaler.step(self.optimizer, **kwargs)
        # 1.0 on each device whose gradients held inf/nan; read from the scaler, no sync
        found_inf = sum(scaler._found_inf_per_device(self.optimizer).values())
        scaler.update(self._fixed_scale)
        self._skipped_steps = self._skipped_steps + found_inf
        # the scale tensor changes in place on update: log a copy of this step's value
        self.message_hub.update_scalar("train/loss_scale", scaler._get_scale_async().clone())
        self.message_hub.update_scalar("train/skipped_steps", self._skipped_steps)

    @property
    def skipped_steps(self) -> int:
        """How many optimizer steps were skipped because of inf/nan gradients (reads the device)."""
        return int(self._skipped_steps)

    @contextmanager
    def optim_context(self, model: nn.Module) -> Iterator[None]:
        """Autocast to :attr:`cast_dtype` (plus ``no_sync`` while accumulating, as the base)."""
        with super().optim_context(model), torch.autocast(self._device_type, dtype=self.cast_dtype):
            yield

    def state_dict(self) -> dict:
        """The optimizer's state dict, plus the scaler's under ``'loss_scaler'`` (float16)."""
        state = super().state_dict()
        if self.loss_scaler is not None:
            state["loss_scaler"] = self.loss_scaler.state_dict()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Load the optimizer's state and, when both sides have one, the scaler's."""
        state = dict(state_dict)
        scaler_state = state.pop("loss_scaler", None)
        if scaler_state is not None and self.loss_scaler is not None:
            self.loss_scaler.load_state_dict(scaler_state)
        super().load_state_dict(state)
