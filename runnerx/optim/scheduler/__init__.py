"""Parameter schedulers: learning rate, momentum or any param-group value over the steps of
training, configured by ``param_scheduler`` as in MMEngine (see docs/schedulers.md).

Importing this package registers every scheduler in PARAM_SCHEDULERS; it does not import torch.
"""

from runnerx.optim.scheduler.build import build_param_schedulers
from runnerx.optim.scheduler.cosine_schedulers import (
    CosineAnnealingParamScheduler,
    CosineRestartParamScheduler,
)
from runnerx.optim.scheduler.decay_schedulers import (
    ExponentialParamScheduler,
    MultiStepParamScheduler,
    PolyParamScheduler,
    StepParamScheduler,
)
from runnerx.optim.scheduler.factor_schedulers import ConstantParamScheduler, LinearParamScheduler
from runnerx.optim.scheduler.lr_schedulers import (
    ConstantLR,
    CosineAnnealingLR,
    CosineRestartLR,
    ExponentialLR,
    LinearLR,
    LRSchedulerMixin,
    MultiStepLR,
    OneCycleLR,
    PolyLR,
    StepLR,
)
from runnerx.optim.scheduler.momentum_schedulers import (
    ConstantMomentum,
    CosineAnnealingMomentum,
    CosineRestartMomentum,
    ExponentialMomentum,
    LinearMomentum,
    MomentumSchedulerMixin,
    MultiStepMomentum,
    OneCycleMomentum,
    PolyMomentum,
    StepMomentum,
)
from runnerx.optim.scheduler.one_cycle import OneCycleParamScheduler
from runnerx.optim.scheduler.param_scheduler import INF, _ParamScheduler
from runnerx.optim.scheduler.reduce_on_plateau import (
    ReduceOnPlateauLR,
    ReduceOnPlateauMomentum,
    ReduceOnPlateauParamScheduler,
)

__all__ = [
    "INF",
    "ConstantLR",
    "ConstantMomentum",
    "ConstantParamScheduler",
    "CosineAnnealingLR",
    "CosineAnnealingMomentum",
    "CosineAnnealingParamScheduler",
    "CosineRestartLR",
    "CosineRestartMomentum",
    "CosineRestartParamScheduler",
    "ExponentialLR",
    "ExponentialMomentum",
    "ExponentialParamScheduler",
    "LRSchedulerMixin",
    "LinearLR",
    "LinearMomentum",
    "LinearParamScheduler",
    "MomentumSchedulerMixin",
    "MultiStepLR",
    "MultiStepMomentum",
    "MultiStepParamScheduler",
    "OneCycleLR",
    "OneCycleMomentum",
    "OneCycleParamScheduler",
    "PolyLR",
    "PolyMomentum",
    "PolyParamScheduler",
    "ReduceOnPlateauLR",
    "ReduceOnPlateauMomentum",
    "ReduceOnPlateauParamScheduler",
    "StepLR",
    "StepMomentum",
    "StepParamScheduler",
    "_ParamScheduler",
    "build_param_schedulers",
]
