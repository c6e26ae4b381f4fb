"""MMEngine's ``mmengine.model.utils`` path, for code that imports the model helpers from
there (``from runnerx.model.utils import revert_sync_batchnorm``): SyncBatchNorm conversion
both ways, ``stack_batch``, ``merge_dict`` and ``detect_anomalous_params``."""

from runnerx.parallel.steps import report_parameters_without_gradient as detect_anomalous_params
from runnerx.parallel.sync_bn import convert_sync_batchnorm, revert_sync_batchnorm
from runnerx.utils.misc import merge_dict

from .base_model.data_preprocessor import stack_batch

__all__ = [
    "convert_sync_batchnorm",
    "detect_anomalous_params",
    "merge_dict",
    "revert_sync_batchnorm",
    "stack_batch",
]
