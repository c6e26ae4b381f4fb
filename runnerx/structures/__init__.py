"""Data-sample structures, MMEngine's: what datasets, models and metrics pass one sample's
annotations and predictions in. Code using ``mmengine.structures`` runs with its imports
changed to ``runnerx.structures``::

    from runnerx.structures import BaseDataElement, InstanceData, LabelData, PixelData

Not imported by ``import runnerx`` (it needs torch).
"""

from .base_data_element import BaseDataElement
from .instance_data import InstanceData
from .label_data import LabelData
from .pixel_data import PixelData

__all__ = ["BaseDataElement", "InstanceData", "LabelData", "PixelData"]
