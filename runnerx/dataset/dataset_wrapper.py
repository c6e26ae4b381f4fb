"""MMEngine's ``mmengine.dataset.dataset_wrapper`` path: runnerx's dataset wrappers (see
:mod:`runnerx.data.dataset_wrappers`)."""

from runnerx.data.dataset_wrappers import ClassBalancedDataset, ConcatDataset, RepeatDataset

__all__ = ["ClassBalancedDataset", "ConcatDataset", "RepeatDataset"]
