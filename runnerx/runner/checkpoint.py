"""MMEngine's ``mmengine.runner.checkpoint`` path: runnerx's checkpoint functions for code
that imports them from there (see :mod:`runnerx.checkpoint.model_state`)::

    from runnerx.runner.checkpoint import _load_checkpoint, load_checkpoint

    checkpoint = _load_checkpoint('work_dirs/x/epoch_12.pth', map_location='cpu')  # read only
    load_checkpoint(model, 'work_dirs/x/epoch_12.pth')  # read and load into the model

``_load_checkpoint(filename, map_location=None, logger=None)`` is, as in MMEngine,
:meth:`CheckpointLoader.load_checkpoint`: a path, an http(s) URL or a registered prefix, read
safely (``weights_only=True``). ``_load_checkpoint_with_prefix(prefix, filename,
map_location=None)`` returns one sub-module's weights (see
:func:`~runnerx.checkpoint.model_state.load_checkpoint_with_prefix`), and
``_load_checkpoint_to_model(model, checkpoint, strict=False, logger=None, revise_keys=...)``
loads a checkpoint already read into a model.
"""

from runnerx.checkpoint.loader import CheckpointLoader, load_from_http, load_from_local
from runnerx.checkpoint.model_state import (
    get_state_dict,
    load_checkpoint,
    load_checkpoint_to_model,
    load_checkpoint_with_prefix,
    load_state_dict,
    save_checkpoint,
    weights_to_cpu,
)
from runnerx.checkpoint.model_zoo import (
    get_deprecated_model_names,
    get_external_models,
    get_mmcls_models,
    get_torchvision_models,
    load_from_mmcls,
    load_from_openmmlab,
    load_from_torchvision,
)
from runnerx.checkpoint.runner_state import find_latest_checkpoint

_load_checkpoint = CheckpointLoader.load_checkpoint
_load_checkpoint_with_prefix = load_checkpoint_with_prefix  # OpenMMLab projects import it
_load_checkpoint_to_model = load_checkpoint_to_model  # mmdet's DetInferencer imports it

__all__ = [
    "CheckpointLoader",
    "find_latest_checkpoint",
    "get_deprecated_model_names",
    "get_external_models",
    "get_mmcls_models",
    "get_state_dict",
    "get_torchvision_models",
    "load_checkpoint",
    "load_from_http",
    "load_from_local",
    "load_from_mmcls",
    "load_from_openmmlab",
    "load_from_torchvision",
    "load_state_dict",
    "save_checkpoint",
    "weights_to_cpu",
]
