"""Lightning Trainer flags where runnerx takes other keys: a warning for each given as a
config key (which the Runner, like MMEngine's, would leave alone silently), and a TypeError
naming the runnerx key for each given to ``Runner(...)`` (docs/lightning.md, 'The Trainer's
flags')::

    gradient_clip_val = 1.0   # the config's 'gradient_clip_val' is a Lightning Trainer flag ...
                              # in runnerx it is optim_wrapper=dict(..., clip_grad=...)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

#: Lightning Trainer flags (and ``fit()`` arguments) -> the runnerx key for them
TRAINER_FLAGS = {
    "default_root_dir": "work_dir",
    "callbacks": "custom_hooks=[...] (hook objects or configs)",
    "datamodule": "train_dataloader / val_dataloader / test_dataloader (the DataModule's "
    "dm.train_dataloader(), ... after dm.setup('fit'))",
    "check_val_every_n_epoch": "train_cfg=dict(..., val_interval=N)",
    "val_check_interval": "train_cfg=dict(..., val_check_interval=...)",
    "limit_train_batches": "train_cfg=dict(..., limit_batches=...)",
    "limit_val_batches": "val_cfg=dict(limit_batches=...)",
    "limit_test_batches": "test_cfg=dict(limit_batches=...)",
    "overfit_batches": "train_cfg.limit_batches and val_cfg.limit_batches, with an unshuffled "
    "train loader",
    "max_time": "default_hooks=dict(preemption=dict(max_time=...))",
    "accumulate_grad_batches": "optim_wrapper=dict(..., accumulative_counts=N)",
    "gradient_clip_val": "optim_wrapper=dict(..., clip_grad=dict(max_norm=...))",
    "gradient_clip_algorithm": "optim_wrapper=dict(..., clip_grad=dict(type='value', "
    "clip_value=...)) for 'value'",
    "precision": "optim_wrapper=dict(type='AmpOptimWrapper', dtype='bfloat16' or "
    "'float16', ...) and val_cfg=dict(dtype=...)",
    "deterministic": "randomness=dict(..., deterministic=True)",
    "benchmark": "env_cfg=dict(cudnn_benchmark=True)",
    "log_every_n_steps": "default_hooks=dict(logger=dict(type='LoggerHook', interval=N))",
    "enable_checkpointing": "default_hooks=dict(checkpoint=None) for False",
    "enable_model_summary": "default_hooks=dict(model_summary=None) for False",
    "logger": "visualizer=dict(type='Visualizer', vis_backends=[...])",
    "profiler": "custom_hooks=[dict(type='ProfilerHook', ...)]",
    "sync_batchnorm": "sync_bn='torch' (a config key)",
    "accelerator": "nothing: the device follows from the environment (CUDA when available)",
    "devices": "the launcher: torchrun --nproc-per-node N tools/train.py CONFIG --launcher pytorch",
    "num_nodes": "the launcher: torchrun --nnodes N (or srun) with --launcher pytorch/slurm",
}
#: names that configs also use as plain variables (OpenMMLab's ``max_epochs = 12``, read by
#: ``train_cfg``): not warned about as config keys, only refused as ``Runner(...)`` arguments
_ALSO_CONFIG_VARIABLES = {
    "max_epochs": "train_cfg=dict(by_epoch=True, max_epochs=N)",
    "max_steps": "train_cfg=dict(by_epoch=False, max_iters=N * accumulative_counts)",
    "ckpt_path": "resume='<checkpoint>' (or resume=True for the work dir's last one)",
}
#: every flag ``Runner(...)`` refuses with its runnerx key
_ARGUMENTS = {**TRAINER_FLAGS, **_ALSO_CONFIG_VARIABLES}
TRAINER_ARGUMENTS = frozenset(_ARGUMENTS)


def trainer_flag_warnings(cfg: Mapping, taken: set[str]) -> list[str]:
    """A warning for each Lightning Trainer flag set as a key of ``cfg`` (not None) that the
    Runner does not take (``taken``: its arguments and the other keys it reads)."""
    return [
        f"the config's {key!r} is a Lightning Trainer flag, which runnerx ignores as a config "
        f"key; in runnerx it is {place} (docs/lightning.md)"
        for key, place in TRAINER_FLAGS.items()
        if cfg.get(key) is not None and key not in taken
    ]


def refuse_trainer_flags(cls: type, kwargs: Mapping[str, Any]) -> None:
    """Refuse (TypeError) the Lightning Trainer flags among ``kwargs``, the keywords given to
    ``cls(...)``, naming the runnerx key of each; those ``cls.__init__`` takes (a subclass's
    own argument) are left to it."""
    taken = inspect.signature(cls.__init__).parameters
    given = [name for name in kwargs if name in TRAINER_ARGUMENTS and name not in taken]
    if given:
        places = "; ".join(f"{name} -> {_ARGUMENTS[name]}" for name in given)
        raise TypeError(
            f"{cls.__name__}() got Lightning Trainer flags, which it does not take: {places} "
            "(docs/lightning.md, 'The Trainer's flags')"
        )
