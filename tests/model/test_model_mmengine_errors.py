"""Bad arguments raise runnerx's specific error types, which are also the types MMEngine raises
for them (AssertionError, or RuntimeError for a missing override child), so ported code that
catches MMEngine's type keeps working."""

import pytest
import torch
from torch import nn

from runnerx.model import (
    BaseModule,
    BaseTTAModel,
    ExponentialMovingAverage,
    ImgDataPreprocessor,
    MomentumAnnealingEMA,
    initialize,
    merge_dict,
    stack_batch,
    update_init_info,
    xavier_init,
)


class MergeNothing(BaseTTAModel):
    def merge_preds(self, data_samples_list):
        return data_samples_list


def linear():
    return nn.Linear(2, 2)


@pytest.mark.parametrize(
    ("make", "also", "match"),
    [
        (lambda: ExponentialMovingAverage(linear(), momentum=3), ValueError, "momentum"),
        (lambda: MomentumAnnealingEMA(linear(), gamma=-1), ValueError, "gamma"),
        (lambda: ImgDataPreprocessor(mean=(1, 2), std=(1, 2, 3)), ValueError, "mean must"),
        (lambda: ImgDataPreprocessor(mean=(1, 2, 3), std=(1, 2)), ValueError, "std must"),
        (lambda: ImgDataPreprocessor(bgr_to_rgb=True, rgb_to_bgr=True), ValueError, "both"),
        (lambda: ImgDataPreprocessor(mean=None, std=[1, 2, 3]), ValueError, "together"),
        (lambda: stack_batch([]), ValueError, "at least one"),
        (lambda: stack_batch([torch.ones(1, 2), torch.ones(1, 2, 2)]), ValueError, "shapes"),
        (lambda: stack_batch(torch.ones(2, 1, 3)), TypeError, r"tensor of shape \(2, 1, 3\)"),
        (lambda: stack_batch([torch.ones(1, 2), 3]), TypeError, r"list of \['Tensor', 'int'\]"),
        (lambda: MergeNothing(linear()), TypeError, "no test_step"),
        (lambda: xavier_init(linear(), distribution="bad"), ValueError, "'normal' or 'uniform'"),
        (lambda: update_init_info(linear(), "Constant"), ValueError, "no _params_init_info"),
        (lambda: merge_dict({"a": 1}, [1]), TypeError, "argument 1 is list"),
    ],
)
def test_bad_arguments_raise_an_assertion_error_as_in_mmengine(make, also, match):
    with pytest.raises(AssertionError, match=match) as caught:
        make()
    assert isinstance(caught.value, also)


@pytest.mark.parametrize(
    ("inputs", "match"),
    [
        ([torch.ones(10, 10), torch.ones(10, 10)], "need 3 channels"),  # gray, 3-value mean
        (torch.ones(3, 10, 10), "takes an .N, C, H, W. tensor"),  # a 3-d batch tensor
    ],
)
def test_images_that_do_not_fit_the_preprocessor_raise_an_assertion_error(inputs, match):
    preprocessor = ImgDataPreprocessor(mean=(127.5,) * 3, std=(127.5,) * 3)
    with pytest.raises(AssertionError, match=match) as caught:
        preprocessor(dict(inputs=inputs))
    assert isinstance(caught.value, ValueError)


def test_an_unknown_init_cfg_type_raises_a_key_error_as_in_mmengine():
    with pytest.raises(KeyError, match="did you mean 'Constant'") as caught:
        initialize(linear(), dict(type="Constnt", val=1))
    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith("init_cfg type 'Constnt'")  # not quoted as a KeyError


def test_an_override_of_a_missing_child_raises_a_runtime_error_as_in_mmengine():
    class Net(BaseModule):
        def __init__(self):
            super().__init__(dict(type="Constant", val=1, override=dict(name="tail")))
            self.head = nn.Linear(2, 2)

    with pytest.raises(RuntimeError, match="no such child") as caught:
        Net().init_weights()
    assert isinstance(caught.value, ValueError)
