"""``torch.compile`` of a model's compute, in place.

.. code-block:: python

    compile = True                                            # the whole model
    compile = dict(mode='max-autotune', fullgraph=False, dynamic=None, backend='inductor')
    compile = dict(modules=['TransformerBlock'])              # each block on its own

Compiling happens with ``nn.Module.compile``: the module's call is compiled, the module object
and its parameters stay the same, so ``train_step``/``val_step`` (Python methods) run as
before, EMA averages the very parameters being trained, a deep copy is an independent model
and state dicts keep their keys. Compiling blocks one by one (``modules``) compiles one block
graph and reuses it for every block: quicker to compile, and under DDP/FSDP gradients of a
block are communicated while earlier blocks still compute. MMEngine compiles the wrapped
model's ``train_step`` instead; the options (``backend``, ``mode``, ...) mean the same, and
its ``target`` (``'train_step'`` or ``'forward'``) is accepted: both are served by compiling
the forward pass.

On the CPU, the default backend (inductor) needs a C++ compiler: one that cannot be found is an
error here, before training, rather than a long traceback at the first iteration.

A model given already compiled, ``torch.compile(model)`` (Lightning 2.x's form), is unwrapped
and its inner model compiled here as this key says (:func:`uncompiled`): with the key's options
when the config sets it, else with its defaults (``compile=True``), with a warning, as the
options of the user's ``torch.compile`` call cannot be read back.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import sys
from collections.abc import Mapping
from typing import Any

from torch import nn

from runnerx.logging import print_log

from .module_match import find_modules
from .options import as_dict, check_choice, check_keys

COMPILE_KEYS = (
    "backend",
    "mode",
    "fullgraph",
    "dynamic",
    "options",
    "disable",
    "modules",
    "target",
)
#: MMEngine's ``compile.target`` values: runnerx compiles the model's forward pass for either
COMPILE_TARGETS = ("train_step", "forward")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile_model(model: nn.Module, cfg: Any) -> list[nn.Module]:
    """Compile ``model`` (or the sub-modules ``cfg['modules']`` names) in place and return
    what was compiled; ``cfg`` None or False compiles nothing."""
    if cfg is None or cfg is False:
        return []
    options = as_dict(cfg, "compile", "dict(mode='max-autotune')")
    check_keys(options, COMPILE_KEYS, "compile")
    if options.get("mode") is not None:
        check_choice(options["mode"], COMPILE_MODES, "compile.mode")
    check_choice(options.pop("target", "train_step"), COMPILE_TARGETS, "compile.target")
    if isinstance(options.get("backend"), str):
        _check_backend(options["backend"])
    modules = options.pop("modules", None)
    _check_cpp_compiler(model, options)
    targets = [model] if modules is None else find_modules(model, modules, "compile.modules")
    for target in targets:
        target.compile(**options)
    return targets


def uncompiled(model: nn.Module, cfg: Any) -> tuple[nn.Module, Any]:
    """``model`` and the ``compile`` config to compile it with; for ``torch.compile(model)``
    (an ``OptimizedModule``), the model inside and ``cfg``, or ``True`` (the key's defaults,
    with a logged warning) when ``cfg`` is None or False: the user asked for compiling, and
    the Runner compiles in place, where its steps, EMA and state dict keys see the model."""
    if type(model).__name__ != "OptimizedModule" or not isinstance(
        getattr(model, "_orig_mod", None), nn.Module
    ):
        return model, cfg
    if cfg is None or cfg is False:
        print_log(
            "model is a torch.compile(model) (OptimizedModule): runnerx trains the model "
            "inside it and compiles that model's forward itself, with the compile key's "
            "defaults (compile=True: backend='inductor'), as the options of your "
            "torch.compile(...) call cannot be read back. Set them with the compile key, "
            "compile=dict(backend=..., mode=...) (Runner(..., cfg=dict(compile=dict(...))) in "
            "a script), and pass the model uncompiled",
            logger="current",
            level=logging.WARNING,
        )
        cfg = True
    return model._orig_mod, cfg


def _check_backend(backend: str) -> None:
    """Refuse a ``compile.backend`` name that torch's backend registry lacks (debug and
    experimental backends and those of installed plugins included), with a close match;
    a torch whose ``list_backends`` cannot list them all lets every name through."""
    try:
        from torch._dynamo import list_backends

        known = list_backends(exclude_tags=())
    except (ImportError, TypeError):
        return
    check_choice(backend, known, "compile.backend")


def _check_cpp_compiler(model: nn.Module, options: dict[str, Any]) -> None:
    """Refuse to compile a CPU model with inductor when none of the C++ compilers inductor
    would try (``torch._inductor.config.cpp.cxx``, set from ``$CXX``, or ``compile.options
    ['cpp.cxx']``) is on the ``PATH``. Anything this cannot tell passes: inductor decides."""
    if options.get("disable") or options.get("backend", "inductor") != "inductor":
        return
    tensor = next(itertools.chain(model.parameters(), model.buffers()), None)
    if tensor is None or tensor.device.type != "cpu" or sys.platform == "win32":
        return
    try:
        from torch._inductor import config as inductor_config
    except ImportError:
        return
    inductor_options = options.get("options")
    search = inductor_options.get("cpp.cxx") if isinstance(inductor_options, Mapping) else None
    if search is None:
        search = getattr(getattr(inductor_config, "cpp", None), "cxx", None)
    search = (search,) if isinstance(search, str) else search
    if not isinstance(search, (list, tuple)):
        return
    if None in search and os.environ.get("TORCH_INDUCTOR_INSTALL_GXX"):
        return  # inductor installs g++ itself
    compilers = [name for name in search if isinstance(name, str)]
    if not compilers or any(shutil.which(name) for name in compilers):
        return
    found = ", ".join(map(repr, compilers))
    raise RuntimeError(
        "compile (compile=True or a compile dict, or tools/train.py -O3) with the default "
        "inductor backend needs a C++ compiler for a model on the CPU, and none was found "
        f"(torch._inductor.config.cpp.cxx, which $CXX sets: {found}). Install one (apt-get "
        "install g++, or point $CXX at one), or set compile=dict(backend='eager') (no "
        "speed-up), or drop compile (no compile key; -O2 instead of -O3)"
    )
