"""MMEngine's ``mmengine.model.base_model`` path: BaseModel (``base_model.py``), the model
contract the Runner trains, validates and tests, and the data preprocessors
(``data_preprocessor.py``) that move a batch to the model's device first.

.. code-block:: python

    from runnerx.model.base_model import BaseModel, ImgDataPreprocessor
"""

from .base_model import BaseModel
from .data_preprocessor import BaseDataPreprocessor, ImgDataPreprocessor

__all__ = ["BaseDataPreprocessor", "BaseModel", "ImgDataPreprocessor"]
