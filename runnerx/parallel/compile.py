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
"""

from __future__ import annotations

from typing import Any

from torch import nn

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
    modules = options.pop("modules", None)
    targets = [model] if modules is None else find_modules(model, modules, "compile.modules")
    for target in targets:
        target.compile(**options)
    return targets
