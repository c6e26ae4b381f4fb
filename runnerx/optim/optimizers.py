"""Registers the optimizers a config can name: ``torch.optim``'s, and the third-party ones
MMEngine registers when their package is installed.

Imported by the OPTIMIZERS registry on its first lookup. Names are MMEngine's:

- every ``torch.optim`` optimizer by its class name, except torch's Adafactor, which is
  ``'TorchAdafactor'``: ``'Adafactor'`` is transformers' (``pip install transformers``);
- bitsandbytes' (``'AdamW8bit'``, ``'PagedAdamW8bit'``, ..., ``pip install runnerx[bnb]``);
- dadaptation's ``'DAdaptAdaGrad'``, ``'DAdaptAdam'``, ``'DAdaptSGD'``, lion-pytorch's
  ``'Lion'``, and the optimizers of the ``Sophia`` package (``'SophiaG'``, ...);
- ``'ZeroRedundancyOptimizer'`` (torch's ZeRO, see :mod:`runnerx.optim.optimizer.zero_optimizer`).

transformers, dadaptation, lion-pytorch and torch's ZeRO are imported only when a config
builds one of their optimizers. A name the user registered before this module ran keeps the
user's class.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from collections.abc import Callable
from types import ModuleType

import torch

from runnerx.optim.checks import check_arguments
from runnerx.registry import OPTIMIZERS, Registry


def optimizer_classes(module: ModuleType) -> dict[str, type[torch.optim.Optimizer]]:
    """Every optimizer class ``module`` exports, by name (torch's base class left out)."""
    found = {}
    for name in dir(module):
        obj = getattr(module, name)
        if (
            isinstance(obj, type)
            and issubclass(obj, torch.optim.Optimizer)
            and obj is not torch.optim.Optimizer
        ):
            found[name] = obj
    return found


def lazy_optimizer(name: str, source: str) -> Callable[..., torch.optim.Optimizer]:
    """A builder registered in place of the optimizer class ``source`` (``'module:Class'``):
    it imports the module when it first builds one, so that slow imports (transformers) are
    paid only by the runs that use them."""
    module_name, _, class_name = source.partition(":")

    def build(params, **kwargs):
        optimizer_type = getattr(importlib.import_module(module_name), class_name)
        check_arguments(optimizer_type, list(kwargs), "optim_wrapper.optimizer", skip=1)
        return optimizer_type(params, **kwargs)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Builds ``{module_name}.{class_name}`` (imported on first use)."
    return build


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a broken entry in sys.modules
        return False


def _register_free(registry: Registry, names_and_objects: dict[str, object]) -> list[str]:
    """Register each object whose name is not taken; return the names registered."""
    registered = []
    for name, obj in names_and_objects.items():
        if name not in registry.module_dict:
            registry.register_module(name=name, module=obj)
            registered.append(name)
    return registered


def register_torch_optimizers(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register the ``torch.optim`` optimizers (torch's Adafactor as ``'TorchAdafactor'``, as
    in MMEngine) and return MMEngine's ``TORCH_OPTIMIZERS``: every optimizer class name in
    ``torch.optim`` as torch spells it, so ``'Adafactor'`` and the base class ``'Optimizer'``
    are in it. The base class itself is not registered: it has no ``step``."""
    classes = optimizer_classes(torch.optim)
    names = sorted([*classes, "Optimizer"])
    if "Adafactor" in classes:
        classes["TorchAdafactor"] = classes.pop("Adafactor")
    _register_free(registry, classes)
    return names


def register_transformers_optimizers(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register transformers' Adafactor as ``'Adafactor'`` (as MMEngine does), imported when
    first built. Without transformers, ``'Adafactor'`` is an error saying what to install or
    use instead. Returns ``['Adafactor']`` if transformers is installed, else ``[]``."""
    if _installed("transformers"):
        return _register_free(
            registry, {"Adafactor": lazy_optimizer("Adafactor", "transformers:Adafactor")}
        )
    registry.register_module(
        name="Adafactor", module=_adafactor_needs_transformers, replaceable=True
    )
    return []


def _adafactor_needs_transformers(params, **kwargs):
    """Stands for ``'Adafactor'`` where transformers is not installed: says so when built."""
    torch_has_it = hasattr(torch.optim, "Adafactor")
    raise ImportError(
        "type='Adafactor' is transformers' Adafactor, as in MMEngine, and transformers is not "
        "installed: pip install transformers"
        + (" (or type='TorchAdafactor' for torch.optim.Adafactor)" if torch_has_it else "")
    )


# errors name the config's type
_adafactor_needs_transformers.__name__ = _adafactor_needs_transformers.__qualname__ = "Adafactor"


def register_dadaptation_optimizers(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register dadaptation's ``DAdaptAdaGrad``, ``DAdaptAdam`` and ``DAdaptSGD`` if it is
    installed (imported when first built); return the names registered."""
    if not _installed("dadaptation"):
        return []
    names = ("DAdaptAdaGrad", "DAdaptAdam", "DAdaptSGD")
    return _register_free(
        registry, {name: lazy_optimizer(name, f"dadaptation:{name}") for name in names}
    )


def register_lion_optimizers(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register lion-pytorch's ``Lion`` if it is installed (imported when first built)."""
    if not _installed("lion_pytorch"):
        return []
    return _register_free(registry, {"Lion": lazy_optimizer("Lion", "lion_pytorch:Lion")})


def register_sophia_optimizers(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register every optimizer of the ``Sophia`` package (``SophiaG``, ...) if installed."""
    sophia = _import_if_installed("Sophia")
    return [] if sophia is None else _register_free(registry, optimizer_classes(sophia))


def register_bitsandbytes_optimizers(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register bitsandbytes' optimizers (``AdamW8bit``, ``PagedAdamW8bit``, ...) if installed.

    As in MMEngine, one whose name is taken (``Adam``, ``SGD``, ...) is registered with a
    ``bnb_`` prefix (``bnb_Adam``). Returns the names registered; nothing when bitsandbytes
    is not installed, and a warning (not an error) when it is installed but fails to import.
    """
    bitsandbytes = _import_if_installed("bitsandbytes")
    if bitsandbytes is None:
        return []
    registered = []
    for name, cls in optimizer_classes(bitsandbytes.optim).items():
        if name in registry.module_dict:
            if registry.module_dict[name] is cls:
                continue
            name = f"bnb_{name}"
        registered += _register_free(registry, {name: cls})
    return registered


def _import_if_installed(package: str) -> ModuleType | None:
    """``package`` imported, or None when it is not installed; a warning (not an error) when
    it is installed but fails to import: runs that do not use it must not stop."""
    if not _installed(package):
        return None
    try:
        return importlib.import_module(package)
    except Exception as err:
        warnings.warn(
            f"{package} is installed but could not be imported ({type(err).__name__}: "
            f"{err}); its optimizers are not registered",
            stacklevel=3,
        )
        return None


TORCH_OPTIMIZERS = register_torch_optimizers()
_register_free(
    OPTIMIZERS,
    {
        "ZeroRedundancyOptimizer": lazy_optimizer(
            "ZeroRedundancyOptimizer",
            "runnerx.optim.optimizer.zero_optimizer:ZeroRedundancyOptimizer",
        )
    },
)
BITSANDBYTES_OPTIMIZERS = register_bitsandbytes_optimizers()
TRANSFORMERS_OPTIMIZERS = register_transformers_optimizers()
DADAPTATION_OPTIMIZERS = register_dadaptation_optimizers()
LION_OPTIMIZERS = register_lion_optimizers()
SOPHIA_OPTIMIZERS = register_sophia_optimizers()
