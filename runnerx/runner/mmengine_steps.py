"""MMEngine's Runner set-up steps: the ones runnerx's Runner does itself, from the same
arguments, when it is built (hooks, MessageHub), which are left out with a hint, and
``scale_lr``, kept for code that calls it::

    runner.optim_wrapper = runner.build_optim_wrapper(cfg.optim_wrapper)
    runner.scale_lr(runner.optim_wrapper, dict(enable=True, base_batch_size=256))
    runner.register_hooks(...)   # AttributeError, saying what runnerx does instead
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runnerx.utils.errors import TypeAssertionError


class LeftOut:
    """A member of MMEngine's Runner that runnerx's Runner leaves out: reading it raises the
    AttributeError a missing member raises (``hasattr`` is False), saying what runnerx does
    ``instead``. A subclass may still define it, as a method of its own."""

    def __init__(self, instead: str) -> None:
        self.instead = instead
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, runner: Any, owner: type | None = None) -> Any:
        cls = owner or type(runner)
        raise AttributeError(
            f"'{cls.__name__}' object has no attribute '{self.name}' (MMEngine's Runner "
            f"method; runnerx leaves it out): {self.instead}",
            name=self.name,
            obj=runner,
        )


_BUILT_WITH_RUNNER = (
    "the Runner does this when it is built (from default_hooks and custom_hooks); add hooks "
    "with runner.register_hook(hook, priority) or runner.register_custom_hooks([...])"
)


class MMEngineSteps:
    """MMEngine's Runner set-up steps, mixed into :class:`~runnerx.runner.Runner` through
    :class:`~runnerx.runner.mmengine_api.MMEngineRunnerAPI` (see the module docstring)."""

    register_hooks = LeftOut(_BUILT_WITH_RUNNER)
    register_default_hooks = LeftOut(_BUILT_WITH_RUNNER)
    build_message_hub = LeftOut(
        "the Runner builds its MessageHub (runner.message_hub) when it is built"
    )

    def _warn_of_left_out_overrides(self) -> None:
        """Say which members of MMEngine's Runner that runnerx never calls a subclass
        defines (what they do is not done), and which it leaves out a subclass's own method
        uses (that method would stop at an AttributeError)."""
        for name, value in vars(MMEngineSteps).items():
            if not isinstance(value, LeftOut):
                continue
            if getattr(type(self), name, None) is not None:
                self.logger.warning(
                    f"{type(self).__name__}.{name} has no effect: runnerx's Runner never "
                    f"calls {name} ({value.instead})"
                )
                continue
            for user in _own_methods_using(type(self), name):
                self.logger.warning(
                    f"{user} uses {name}, a method of MMEngine's Runner that runnerx's leaves "
                    f"out (reading it raises AttributeError): {value.instead}"
                )

    def scale_lr(self, optim_wrapper: Any, auto_scale_lr: dict | None = None) -> None:
        """MMEngine's step, for code that calls it: with ``auto_scale_lr=dict(enable=True,
        base_batch_size=N)``, the lr of each param group of the built ``optim_wrapper``
        multiplied by (world size x ``train_dataloader`` batch size) / N. Each optimizer is
        scaled once: ``train()`` scales the one it builds itself, as ``runner.auto_scale_lr``
        says, and scaling it again changes nothing. As in MMEngine, schedulers already built
        on it are refused (they keep the lr they started from)."""
        from runnerx.optim import OptimWrapper
        from runnerx.optim.lr_scaling import build_with_scaled_lr

        if auto_scale_lr is None:
            return
        if not isinstance(optim_wrapper, OptimWrapper):
            raise TypeAssertionError(
                "scale_lr scales a built optim wrapper (runner.build_optim_wrapper(cfg)), got "
                f"{type(optim_wrapper).__name__}"
            )
        enabled = isinstance(auto_scale_lr, Mapping) and auto_scale_lr.get("enable", False)
        build_with_scaled_lr(
            lambda built: built,  # built already: only its lr changes
            optim_wrapper,
            auto_scale_lr,  # checked even when not enabled
            self._real_batch_size(auto_scale_lr) if enabled else None,
            self.param_schedulers,
            self.logger,
        )

    def _real_batch_size(self, auto_scale_lr: Any) -> int | None:
        """The samples of one iteration over all processes, which ``auto_scale_lr`` scales
        the lr by (None when ``train_dataloader`` has no batch size and it is not enabled)."""
        from runnerx.data.build import batch_size_of

        batch_size = batch_size_of(self._training_loop().dataloader)
        if batch_size is not None:
            return self.world_size * batch_size
        if isinstance(auto_scale_lr, Mapping) and auto_scale_lr.get("enable", False):
            raise ValueError(
                "auto_scale_lr.enable=True scales the lr by the batch size, but "
                "train_dataloader has none (neither batch_size nor a batch_sampler with one): "
                "give train_dataloader.batch_size"
            )
        return None


def _own_methods_using(cls: type, name: str) -> list[str]:
    """``Class.method`` for each function defined in a class of ``cls``'s MRO outside runnerx
    (a user's subclass) whose code reads an attribute called ``name``."""
    return [
        f"{klass.__name__}.{attribute}"
        for klass in cls.__mro__
        if not klass.__module__.startswith("runnerx.") and klass is not object
        for attribute, value in vars(klass).items()
        if name in getattr(getattr(value, "__code__", None), "co_names", ())
    ]
