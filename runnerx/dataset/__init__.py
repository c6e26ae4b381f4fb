"""MMEngine's ``mmengine.dataset`` path: the names of :mod:`runnerx.data` (one set of objects,
two import paths), so that ``from mmengine.dataset import DefaultSampler`` ports by renaming
``mmengine`` to ``runnerx``. See docs/data.md.

The submodules mirror MMEngine's: ``base_dataset``, ``sampler``, ``utils`` and
``dataset_wrapper``.
"""

from runnerx.data import *  # noqa: F403
from runnerx.data import __all__ as _data_names

__all__ = list(_data_names)
