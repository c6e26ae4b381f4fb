from .backbone import ConvBNReLUBackbone
from .data_preprocessor import MiniDetDataPreprocessor
from .detector import BoxClsHead, MiniDet

__all__ = ["BoxClsHead", "ConvBNReLUBackbone", "MiniDet", "MiniDetDataPreprocessor"]
