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
builds one of their optimizers. Where a package is not installed, its names build an
ImportError that says what to ``pip install``. A name the user registered before this module
ran keeps the user's class.
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
    first built. Returns ``['Adafactor']`` if transformers is installed, else ``[]``."""
    if not _installed("transformers"):
        return []
    return _register_free(
        registry, {"Adafactor": lazy_optimizer("Adafactor", "transformers:Adafactor")}
    )


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


def _bitsandbytes_names() -> list[str]:
    # the optimizers of bitsandbytes.optim (0.45); the 8-bit, 32-bit and paged variants
    names = ["PytorchLARS"]
    for base in ("Adagrad", "Adam", "AdamW", "AdEMAMix", "LAMB", "LARS", "Lion", "RMSprop", "SGD"):
        pages = ("", "Paged") if base in ("Adam", "AdamW", "AdEMAMix", "Lion") else ("",)
        names += [f"{paged}{base}{bits}" for paged in pages for bits in ("", "8bit", "32bit")]
    return names


# import name: (the package's name, what to pip install, the optimizer names it brings)
_THIRD_PARTY = {
    "transformers": ("transformers", "transformers", ["Adafactor"]),
    "dadaptation": ("dadaptation", "dadaptation", ["DAdaptAdaGrad", "DAdaptAdam", "DAdaptSGD"]),
    "lion_pytorch": ("lion-pytorch", "lion-pytorch", ["Lion"]),
    "Sophia": ("Sophia", "Sophia-Optimizer", ["SophiaG"]),
    "bitsandbytes": ("bitsandbytes", '"runnerx[bnb]"', _bitsandbytes_names()),
}


def register_install_hints(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register a stand-in for each third-party optimizer name (the table above) whose package
    is not installed; building it is an ImportError that says what to ``pip install``, where
    the registry alone would say the name is not registered. A stand-in takes only a free
    name (as with MMEngine, a bitsandbytes name torch has gets a ``bnb_`` prefix) and yields
    it to a later registration. Returns the names registered."""
    registered = []
    for module, (package, install, names) in _THIRD_PARTY.items():
        if _installed(module):
            continue
        for name in names:
            if module == "bitsandbytes" and name in registry.module_dict:
                name = f"bnb_{name}"
            if name not in registry.module_dict:
                stand_in = _needs_package(name, package, install)
                registry.register_module(name=name, module=stand_in, replaceable=True)
                registered.append(name)
    return registered


def _needs_package(name: str, package: str, install: str) -> Callable[..., torch.optim.Optimizer]:
    """Stands for ``name`` where ``package`` is not installed: says what to install when built."""
    hint = ""
    if name == "Adafactor" and hasattr(torch.optim, "Adafactor"):
        hint = " (or type='TorchAdafactor' for torch.optim.Adafactor)"
    owner = f"{package}'" if package.endswith("s") else f"{package}'s"

    def build(params, **kwargs):
        raise ImportError(
            f"type={name!r} is {owner} {name}, as in MMEngine, and {package} is not "
            f"installed: pip install {install}{hint}"
        )

    build.__name__ = build.__qualname__ = name  # errors name the config's type
    return build


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
# MMEngine's order, so that a name two packages have is the same package's
DADAPTATION_OPTIMIZERS = register_dadaptation_optimizers()
LION_OPTIMIZERS = register_lion_optimizers()
SOPHIA_OPTIMIZERS = register_sophia_optimizers()
BITSANDBYTES_OPTIMIZERS = register_bitsandbytes_optimizers()
TRANSFORMERS_OPTIMIZERS = register_transformers_optimizers()
register_install_hints()
