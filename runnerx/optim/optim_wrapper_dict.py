"""OptimWrapperDict: several named optim wrappers, e.g. a GAN's generator and discriminator."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from torch import nn

from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.suggest import SENTENCE, did_you_mean
from runnerx.utils.errors import KeyAssertionError, TypeAssertionError


class OptimWrapperDict(OptimWrapper):
    """Holds one :class:`OptimWrapper` per name and reads like a dict of them.

    A model with several optimizers updates each itself in its ``train_step``::

        optim_wrapper['generator'].update_params(g_loss)
        optim_wrapper['discriminator'].update_params(d_loss)

    Learning rates and momenta are reported with the name as prefix
    (``{'generator.lr': [...], 'discriminator.lr': [...]}``) and the state dict holds one entry
    per name. What needs one optimizer (``update_params``, ``backward``, ``step``,
    ``optim_context``) raises: call it on the wrapper of that optimizer. It subclasses
    OptimWrapper only so that ``isinstance(x, OptimWrapper)`` holds, as in MMEngine.

    When one optimizer's loss runs through another's parameters (a GAN's generator loss
    through the discriminator), step it inside :meth:`toggle`, or its backward leaves
    gradients on those parameters that their own optimizer's next step applies.
    """

    def __init__(self, **optim_wrappers: OptimWrapper) -> None:
        for name, wrapper in optim_wrappers.items():
            if not isinstance(wrapper, OptimWrapper):
                raise TypeAssertionError(
                    f"OptimWrapperDict holds OptimWrappers, but {name!r} is "
                    f"{type(wrapper).__name__}"
                )
        self.optim_wrappers = optim_wrappers

    def _each_one(self, what: str) -> NoReturn:
        names = ", ".join(f"optim_wrapper[{name!r}].{what}(...)" for name in self.optim_wrappers)
        raise NotImplementedError(
            f"OptimWrapperDict.{what} is ambiguous with several optimizers; call it on one of "
            f"them: {names}"
        )

    def update_params(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises: update each optimizer through its own wrapper."""
        self._each_one("update_params")

    def backward(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises: backward through one wrapper (each may scale the loss differently)."""
        self._each_one("backward")

    def step(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises: step each optimizer through its own wrapper."""
        self._each_one("step")

    def optim_context(self, model: nn.Module) -> NoReturn:
        """Raises: enter the context of the wrapper whose optimizer the loss is for."""
        self._each_one("optim_context")

    def zero_grad(self, **kwargs: Any) -> None:
        """Zero the gradients of every optimizer."""
        for wrapper in self.optim_wrappers.values():
            wrapper.zero_grad(**kwargs)

    @contextmanager
    def toggle(self, name: str) -> Iterator[OptimWrapper]:
        """Inside the block, only the optimizer ``name`` gets gradients (Lightning's
        ``toggle_optimizer`` / ``untoggle_optimizer``); yields its wrapper::

            with optim_wrapper.toggle('generator') as gen_wrapper:
                gen_wrapper.update_params(gen_loss(self.discriminator(self.generator(z))))

        The parameters of the other optimizers that ``name``'s does not hold get
        ``requires_grad=False``, so a backward in the block leaves no gradient on them, and
        they get ``requires_grad=True`` back when the block ends, also on an error; those that
        were frozen before stay frozen.
        """
        wrapper = self[name]
        own = {id(param) for group in wrapper.param_groups for param in group["params"]}
        switched_off = []
        for other, other_wrapper in self.optim_wrappers.items():
            if other == name:
                continue
            for group in other_wrapper.param_groups:
                for param in group["params"]:
                    if param.requires_grad and id(param) not in own:
                        param.requires_grad_(False)
                        switched_off.append(param)
        try:
            yield wrapper
        finally:
            for param in switched_off:
                param.requires_grad_(True)

    def initialize_count_status(self, *args: Any, **kwargs: Any) -> None:
        """Does nothing, as in MMEngine: the model decides when each optimizer steps."""

    @property
    def param_groups(self) -> dict[str, list[dict]]:  # type: ignore[override]
        """``{name: that optimizer's param groups}``."""
        return {name: wrapper.param_groups for name, wrapper in self.optim_wrappers.items()}

    def get_lr(self) -> dict[str, list[float]]:
        """``{'generator.lr': [...], ...}``: each optimizer's learning rates, prefixed."""
        return {
            f"{name}.{key}": value
            for name, wrapper in self.optim_wrappers.items()
            for key, value in wrapper.get_lr().items()
        }

    def get_momentum(self) -> dict[str, list[float]]:
        """``{'generator.momentum': [...], ...}``: each optimizer's momenta, prefixed."""
        return {
            f"{name}.{key}": value
            for name, wrapper in self.optim_wrappers.items()
            for key, value in wrapper.get_momentum().items()
        }

    def state_dict(self) -> dict:
        """``{name: that wrapper's state dict}``."""
        return {name: wrapper.state_dict() for name, wrapper in self.optim_wrappers.items()}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load each name's state into the wrapper of that name."""
        unknown = [name for name in state_dict if name not in self.optim_wrappers]
        if unknown:
            raise KeyAssertionError(
                f"the optimizer state dict has {unknown} but this OptimWrapperDict holds "
                f"{list(self.optim_wrappers)}"
            )
        for name, state in state_dict.items():
            self.optim_wrappers[name].load_state_dict(state)

    def __getitem__(self, name: str) -> OptimWrapper:
        try:
            return self.optim_wrappers[name]
        except KeyError:
            hint = did_you_mean(name, list(self.optim_wrappers), form=SENTENCE)
            raise KeyAssertionError(
                f"no optim wrapper named {name!r}; there are {list(self.optim_wrappers)}.{hint}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self.optim_wrappers

    def __iter__(self) -> Iterator[str]:
        return iter(self.optim_wrappers)

    def __len__(self) -> int:
        return len(self.optim_wrappers)

    def keys(self) -> Iterator[str]:
        """The names."""
        return iter(self.optim_wrappers.keys())

    def values(self) -> Iterator[OptimWrapper]:
        """The wrappers."""
        return iter(self.optim_wrappers.values())

    def items(self) -> Iterator[tuple[str, OptimWrapper]]:
        """``(name, wrapper)`` pairs."""
        return iter(self.optim_wrappers.items())

    def __repr__(self) -> str:
        inner = "\n".join(f"{name}: {wrapper!r}" for name, wrapper in self.optim_wrappers.items())
        return f"OptimWrapperDict(\n{inner}\n)"
