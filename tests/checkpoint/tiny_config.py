"""A whole run of the checkpoint tests' model and data as a plain-data config (its text is
saved in the checkpoints, as a config file's is), for the tests of what a resume restores and
says: a linear classifier on 8 samples in batches of 2, logging rarely, seed 0."""

from pathlib import Path

from runnerx import DATASETS, MODELS, Config
from tests.checkpoint.conftest import TinyNet
from tests.checkpoint.tiny_data import TinyData


@MODELS.register_module()
class ConfigTinyNet(TinyNet):
    """The checkpoint tests' model, by name."""


@DATASETS.register_module()
class ConfigTinyData(TinyData):
    """The checkpoint tests' 8 samples, by name."""


def tiny_run_config(
    work_dir: Path, train_cfg: dict, optimizer: dict, checkpoint_interval: int, **extra
) -> Config:
    """The run in ``work_dir``: ``train_cfg``, SGD with ``optimizer``'s arguments, an
    iteration checkpoint every ``checkpoint_interval``; ``extra`` top-level keys."""
    return Config(
        dict(
            model=dict(type="ConfigTinyNet"),
            work_dir=str(work_dir),
            train_dataloader=dict(
                dataset=dict(type="ConfigTinyData"),
                batch_size=2,
                sampler=dict(type="DefaultSampler", shuffle=True),
                collate_fn=dict(type="default_collate"),
            ),
            train_cfg=train_cfg,
            optim_wrapper=dict(optimizer=dict(type="SGD", **optimizer)),
            default_hooks=dict(
                logger=dict(type="LoggerHook", interval=100),
                checkpoint=dict(
                    type="CheckpointHook", by_epoch=False, interval=checkpoint_interval
                ),
            ),
            randomness=dict(seed=0),
            **extra,
        )
    )
