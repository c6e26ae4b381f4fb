"""BaseDataPreprocessor and ImgDataPreprocessor: moving, stacking, normalising, padding."""

from collections import namedtuple

import pytest
import torch

from runnerx import Config
from runnerx.model import BaseDataPreprocessor, ImgDataPreprocessor, stack_batch
from runnerx.registry import MODELS

META = torch.device("meta")
Pair = namedtuple("Pair", ["left", "right"])


class Sample:
    """An MMEngine-style data sample: knows its device and has ``.to``."""

    def __init__(self, device="cpu"):
        self.device = torch.device(device)
        self.moves = []

    def to(self, device, **kwargs):
        self.moves.append((device, kwargs))
        return Sample(device)


def nested_batch(make):
    return dict(
        inputs=make(torch.ones(2, 3)),
        data_samples=[make(torch.zeros(2)), (make(torch.arange(3)), "label", None, 7)],
        pair=Pair(make(torch.ones(1)), {"deep": make(torch.ones(1))}),
        meta=dict(name="a", scale=1.5),
    )


def test_on_its_own_device_the_batch_comes_back_untouched(counting_tensor):
    data = nested_batch(counting_tensor)
    out = BaseDataPreprocessor()(data)
    assert out is data  # no copy of the batch, not even of the containers
    assert counting_tensor.calls["to"] == 0
    assert not counting_tensor.syncing_calls & set(counting_tensor.calls)


def test_moves_every_tensor_of_a_nested_batch_and_keeps_the_structure(counting_tensor):
    preprocessor = BaseDataPreprocessor().to("meta")
    assert preprocessor.device == META
    data = nested_batch(counting_tensor)
    out = preprocessor(data)

    assert counting_tensor.calls["to"] == 5  # once per tensor
    assert out["inputs"].device == META and out["inputs"].shape == (2, 3)
    assert out["data_samples"][0].device == META
    assert isinstance(out["data_samples"], list) and isinstance(out["data_samples"][1], tuple)
    assert out["data_samples"][1][0].device == META
    assert out["data_samples"][1][1:] == ("label", None, 7)
    assert isinstance(out["pair"], Pair) and out["pair"].left.device == META
    assert out["pair"].right["deep"].device == META
    assert out["meta"] == dict(name="a", scale=1.5)
    assert data["inputs"].device == torch.device("cpu")  # the input batch is not changed

    counting_tensor.calls.clear()
    assert preprocessor(out) is out  # already there: nothing to do
    assert counting_tensor.calls["to"] == 0


def test_objects_with_a_to_method_move_only_when_elsewhere():
    preprocessor = BaseDataPreprocessor()
    here = Sample("cpu")
    assert preprocessor(dict(data_samples=[here]))["data_samples"][0] is here
    assert here.moves == []

    moved = BaseDataPreprocessor(non_blocking=True).to("meta")(dict(data_samples=[here]))
    assert moved["data_samples"][0].device == META
    assert here.moves == [(META, {"non_blocking": True})]


def test_non_blocking_is_used_when_asked(monkeypatch):
    asked = BaseDataPreprocessor(non_blocking=True).to("meta")
    default = BaseDataPreprocessor().to("meta")
    seen = []
    original_to = torch.Tensor.to

    def recording_to(self, *args, **kwargs):
        seen.append(kwargs.get("non_blocking"))
        return original_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", recording_to)
    asked(dict(inputs=torch.ones(1)))
    default(dict(inputs=torch.ones(1)))
    assert seen == [True, False]

    monkeypatch.setattr(torch.Tensor, "is_pinned", lambda self, *args: True)
    default(dict(inputs=torch.ones(1)))  # a pinned tensor is always copied asynchronously
    assert seen == [True, False, True]


def test_training_flag_and_registration():
    assert MODELS.get("BaseDataPreprocessor") is BaseDataPreprocessor
    data = dict(inputs=torch.ones(1))
    assert BaseDataPreprocessor()(data, training=True) is data


def test_img_preprocessor_normalises_a_list_of_images_with_channel_swap():
    preprocessor = ImgDataPreprocessor(mean=[1, 2, 3], std=[2, 2, 2], bgr_to_rgb=True)
    image = torch.stack([torch.full((2, 2), value) for value in (30, 20, 10)]).to(torch.uint8)
    out = preprocessor(dict(inputs=[image, image], data_samples=[0, 1]))
    assert out["inputs"].dtype == torch.float32 and out["inputs"].shape == (2, 3, 2, 2)
    # the channels are swapped first, then (10, 20, 30) - mean, / std
    assert out["inputs"][0, :, 0, 0].tolist() == [4.5, 9.0, 13.5]
    assert out["data_samples"] == [0, 1]


def test_img_preprocessor_pads_a_list_to_the_largest_then_the_divisor():
    preprocessor = ImgDataPreprocessor(pad_size_divisor=4, pad_value=-1)
    small, large = torch.ones(1, 3, 5), torch.ones(1, 6, 2)
    out = preprocessor(dict(inputs=[small, large]))
    assert out["inputs"].shape == (2, 1, 8, 8)
    assert out["data_samples"] is None
    assert out["inputs"][0, 0, :3, :5].eq(1).all() and out["inputs"][0, 0, 3:, :].eq(-1).all()
    assert out["inputs"][1, 0, :6, :2].eq(1).all() and out["inputs"][1, 0, :, 2:].eq(-1).all()


def test_img_preprocessor_takes_a_batched_tensor_and_pads_height_and_width():
    preprocessor = ImgDataPreprocessor(mean=[0.5], std=[0.5], pad_size_divisor=4)
    data = dict(inputs=torch.ones(2, 1, 3, 5), data_samples=torch.tensor([1, 2]))
    out = preprocessor(data)
    assert out["inputs"].shape == (2, 1, 4, 8)
    assert out["inputs"][:, :, :3, :5].eq(1).all() and out["inputs"][:, :, 3:, :].eq(0).all()
    assert data["inputs"].shape == (2, 1, 3, 5)  # the caller's batch is not modified


def test_img_preprocessor_moves_to_its_device_before_normalising():
    preprocessor = ImgDataPreprocessor(mean=[0], std=[1]).to("meta")
    assert preprocessor(dict(inputs=torch.ones(1, 1, 2, 2)))["inputs"].device == META
    assert "mean" not in preprocessor.state_dict()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(bgr_to_rgb=True, rgb_to_bgr=True), "cannot both be True"),
        (dict(mean=[1, 2, 3]), "must be given together"),
        (dict(mean=[1, 2], std=[1, 2]), r"mean must have 1 value .* but got 2"),
        (dict(mean=[1, 2, 3], std=[1, 0.0, 2]), r"std must be non-zero .* got \[1, 0\.0, 2\]$"),
        (dict(pad_size_divisor=0), "pad_size_divisor must be an int >= 1 .* but got 0$"),
        (dict(pad_size_divisor=-8), "pad_size_divisor must be an int >= 1 .* but got -8$"),
        (dict(pad_size_divisor=4.0), "pad_size_divisor must be an int >= 1 .* but got 4.0$"),
    ],
)
def test_img_preprocessor_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ImgDataPreprocessor(**kwargs)


def test_img_preprocessor_rejects_bad_inputs():
    three_channel = ImgDataPreprocessor(mean=[0, 0, 0], std=[1, 1, 1])
    with pytest.raises(ValueError, match="need 3 channels, but got shape"):
        three_channel(dict(inputs=[torch.ones(1, 2, 2)]))
    with pytest.raises(ValueError, match=r"\(N, C, H, W\) tensor .* shape \(1, 2, 2\)"):
        three_channel(dict(inputs=torch.ones(1, 2, 2)))
    with pytest.raises(TypeError, match="tensor or a list of tensors, but got str"):
        three_channel(dict(inputs="image.png"))


@pytest.mark.parametrize("channels", [1, 2, 4])
@pytest.mark.parametrize("argument", ["bgr_to_rgb", "rgb_to_bgr"])
def test_channel_swaps_refuse_images_without_3_channels(argument, channels):
    preprocessor = ImgDataPreprocessor(**{argument: True})
    images = torch.arange(channels * 4, dtype=torch.uint8).view(channels, 2, 2)
    expected = rf"{argument}=True swaps the channels of 3-channel images, but got {channels} "
    for inputs in ([images], images[None]):  # a list of images, and a stacked batch
        with pytest.raises(ValueError, match=expected):
            preprocessor(dict(inputs=inputs))
    assert preprocessor(dict(inputs=[torch.ones(3, 2, 2)]))["inputs"].shape == (1, 3, 2, 2)
    with pytest.raises(ValueError, match=r"but got no channel dimension \(shape \(3, 5\)\)"):
        preprocessor(dict(inputs=[torch.ones(3, 5)]))  # a gray (H, W) image: rows not swapped


@pytest.mark.parametrize(
    ("batch", "got"),
    [
        ((torch.ones(1, 3, 2, 2), None), "but got tuple;"),
        ([torch.ones(3, 2, 2)], "but got list;"),
        (dict(images=torch.ones(1, 3, 2, 2)), r"but got keys \['images'\];"),
    ],
)
def test_img_preprocessor_needs_a_batch_dict_with_inputs(batch, got):
    with pytest.raises(TypeError, match=rf"a batch dict with an 'inputs' key .* {got}"):
        ImgDataPreprocessor()(batch)


def test_stack_batch_without_padding_stacks():
    tensors = [torch.full((2, 3, 3), float(i)) for i in range(3)]
    assert torch.equal(stack_batch(tensors), torch.stack(tensors))
    with pytest.raises(ValueError, match="cannot stack"):
        stack_batch([torch.ones(1, 2), torch.ones(1, 2, 2)])
    with pytest.raises(ValueError, match="pad_size_divisor must be an int >= 1"):
        stack_batch(tensors, pad_size_divisor=0)


def test_stack_batch_takes_mmengine_keywords():
    # as a downstream preprocessor calls it: MMEngine's parameter names
    batch = stack_batch(tensor_list=[torch.ones(1, 3, 5), torch.ones(1, 4, 2)], pad_size_divisor=4)
    assert batch.shape == (2, 1, 4, 8) and batch.sum() == 15 + 8


def test_a_zero_std_in_a_config_is_named_by_its_key():
    cfg = Config(
        dict(
            model=dict(
                type="DigitsConvNet",
                data_preprocessor=dict(type="ImgDataPreprocessor", mean=[0.5], std=[0.0]),
            )
        )
    )
    with pytest.raises(ValueError) as caught:
        MODELS.build(cfg.model)
    assert str(caught.value).startswith("while building cfg.model.data_preprocessor (type=")
    assert str(caught.value).endswith(
        "std must be non-zero in every channel (the images are divided by it), but got [0.0]"
    )
