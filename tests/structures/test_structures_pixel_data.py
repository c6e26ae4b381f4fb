"""PixelData against mmengine-lite's: (C, H, W) fields, the shape, slicing, the errors."""

import warnings

import mmengine.structures as theirs
import numpy as np
import pytest
import torch

import runnerx.structures as ours
from runnerx.structures import PixelData


def pixels(lib):
    with warnings.catch_warnings():  # MMEngine warns when a 2-D value gets its channel
        warnings.simplefilter("ignore")
        return lib.PixelData(
            metainfo=dict(img_shape=(4, 6)),
            sem_seg=torch.arange(24).reshape(4, 6),
            logits=np.arange(48.0).reshape(2, 4, 6),
        )


def view(data):
    return dict(
        shape=data.shape,
        metainfo=sorted(data.metainfo_items()),
        data=sorted((k, type(v).__name__, tuple(v.shape), v.tolist()) for k, v in data.items()),
    )


def outcome(call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call()
    except Exception as error:  # the error is the outcome compared
        return error
    return view(result) if isinstance(result, (ours.PixelData, theirs.PixelData)) else result


OPERATIONS = {
    "build": lambda data: data,
    "rows and columns": lambda data: data[1:3, 2:],
    "ints keep their dimension": lambda data: data[2, -1],
    "an int and a slice": lambda data: data[0, ::2],
    "set a 2-D tensor": lambda data: data.set_data(dict(extra=torch.ones(4, 6))),
    "set a 3-D array": lambda data: data.set_data(dict(extra=np.ones((3, 4, 6)))),
    "set another size": lambda data: data.set_data(dict(extra=torch.ones(1, 4, 5))),
    "set a 4-D tensor": lambda data: data.set_data(dict(extra=torch.ones(1, 1, 4, 6))),
    "set a 1-D tensor": lambda data: data.set_data(dict(extra=torch.ones(6))),
    "set a list": lambda data: data.set_data(dict(extra=[[1.0]])),
    "metainfo is not checked": lambda data: data.set_metainfo(dict(extra=[1])),
    "index by one int": lambda data: data[1],
    "index by three": lambda data: data[0, 0, 0],
    "index by a float": lambda data: data[0.5, 1],
    "to": lambda data: data.to(torch.float64),
    "numpy": lambda data: data.numpy(),
}


@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_operations_match_mmengine(operation):
    def run(lib):
        data = pixels(lib)
        result = outcome(lambda: operation(data))
        return result if isinstance(result, Exception) else (result, view(data))

    mine, reference = run(ours), run(theirs)
    if isinstance(reference, Exception):
        assert isinstance(mine, type(reference)), (mine, reference)
    else:
        assert mine == reference


def test_shape_channels_and_errors():
    data = PixelData()
    assert data.shape is None
    data.mask = torch.zeros(3, 5)
    assert data.mask.shape == (1, 3, 5) and data.shape == (3, 5)
    with pytest.raises(
        ValueError, match="'other' has height and width \\(3, 4\\), but .* \\(3, 5\\)"
    ):
        data.other = torch.zeros(2, 3, 4)
    with pytest.raises(ValueError, match="'other' must have shape \\(C, H, W\\) or \\(H, W\\)"):
        data.other = torch.zeros(1, 1, 3, 5)
    with pytest.raises(TypeError, match="'other' must be a torch.Tensor or numpy.ndarray"):
        data.other = [[0]]
    with pytest.raises(IndexError, match="index 3 is out of range for size 3"):
        data[3, 0]  # MMEngine gave an empty PixelData; -4 gave row 0
    assert data[-3, 0].shape == (1, 1)
