from .toy_dataset import ToyBoxDataset, make_toy_data
from .transforms import LoadNpyImage, PackMiniDetInputs, RandomHFlip

__all__ = ["LoadNpyImage", "PackMiniDetInputs", "RandomHFlip", "ToyBoxDataset", "make_toy_data"]
