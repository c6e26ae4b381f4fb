"""NaiveVisualizationHook in a real Runner: the model's graph at train start, and every
``interval`` test iterations each input restored to its original image and handed, with the
model's output, to a registered visualizer's add_datasample, which draws and records it."""

import os
import uuid

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from runnerx.evaluator import BaseMetric
from runnerx.hooks import NaiveVisualizationHook
from runnerx.hooks.naive_visualization_hook import restore_image
from runnerx.model import BaseModel
from runnerx.registry import FUNCTIONS, METRICS, VISUALIZERS
from runnerx.runner import Runner
from runnerx.structures import BaseDataElement
from runnerx.visualization import Visualizer

Image = pytest.importorskip("PIL.Image")

MEAN, STD = (10.0, 20.0, 30.0), (2.0, 4.0, 8.0)
HEIGHT, WIDTH, PADDED = 6, 8, (8, 10)


def original(index, height=HEIGHT, width=WIDTH):
    return np.random.default_rng(index).integers(0, 256, (height, width, 3), dtype=np.uint8)


class PaddedImages(Dataset):
    """Eight images as a detection pipeline leaves them: normalized with MEAN and STD, padded
    at the bottom and right, the metainfo saying so."""

    def __len__(self):
        return 8

    def __getitem__(self, index):
        image = torch.from_numpy(original(index)).permute(2, 0, 1).float()
        padded = torch.zeros(3, *PADDED)
        padded[:, :HEIGHT, :WIDTH] = (image - torch.tensor(MEAN)[:, None, None]) / torch.tensor(
            STD
        )[:, None, None]
        sample = BaseDataElement(
            metainfo=dict(
                img_path=f"data/img_{index}.jpg",
                ori_shape=(HEIGHT, WIDTH),
                img_shape=(HEIGHT, WIDTH),
                pad_shape=PADDED,
                img_norm_cfg=dict(mean=MEAN, std=STD),
            ),
            gt_label=torch.tensor(index % 3),
        )
        return dict(inputs=padded, data_samples=sample)


class TinyClassifier(BaseModel):
    """Predictions go into the data samples, as OpenMMLab's task models put them."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * PADDED[0] * PADDED[1], 3)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.fc(torch.stack(inputs).flatten(1))
        if mode == "loss":
            labels = torch.stack([sample.gt_label for sample in data_samples])
            return dict(loss=F.cross_entropy(logits, labels))
        if mode == "predict":
            for sample, score in zip(data_samples, logits.softmax(dim=1)):
                sample.pred_score = score
            return data_samples
        return logits


class OldStyleClassifier(TinyClassifier):
    """A model written for MMEngine's older batches: a list of per-sample dicts."""

    def test_step(self, data):
        return self(
            [item["inputs"] for item in data],
            [item["data_sample"] for item in data],
            mode="predict",
        )


@FUNCTIONS.register_module(force=True)
def per_sample_dicts(samples):
    """The older batch layout: one dict per sample, its data sample under 'data_sample'."""
    return [dict(inputs=item["inputs"], data_sample=item["data_samples"]) for item in samples]


@METRICS.register_module(force=True)
class NaiveVisCount(BaseMetric):
    def process(self, data_batch, data_samples):
        self.results.extend(1 for _ in data_samples)

    def compute_metrics(self, results):
        return dict(samples=len(results))


@VISUALIZERS.register_module(force=True)
class RecordingVisualizer(Visualizer):
    """A task visualizer: add_datasample draws a box on the image and records the drawing."""

    def __init__(self, name="visualizer", **kwargs):
        super().__init__(name=name, **kwargs)
        self.samples, self.graphs = [], []

    def add_graph(self, model, data_batch, **kwargs):
        self.graphs.append((model, data_batch))
        super().add_graph(model, data_batch, **kwargs)

    def add_datasample(
        self,
        name,
        image,
        data_sample=None,
        draw_gt=True,
        draw_pred=True,
        show=False,
        wait_time=0,
        step=0,
    ):
        self.set_image(image)
        if draw_pred:
            self.draw_bboxes(np.array([[1, 1, 5, 4]]), edge_colors="r")
        drawn = self.get_image()
        self.samples.append(
            dict(name=name, image=image.copy(), drawn=drawn, sample=data_sample, step=step)
        )
        self.samples[-1].update(draw_gt=draw_gt, draw_pred=draw_pred)
        self.add_image(name, drawn, step)


def make_runner(tmp_path, model=None, collate_fn=None, dataset=None, **hook):
    loader = dict(
        dataset=dataset or PaddedImages(),
        sampler=dict(type="DefaultSampler", shuffle=False),
        batch_size=2,
    )
    test_loader = dict(loader, collate_fn=collate_fn) if collate_fn else loader
    return Runner(
        model=model or TinyClassifier(),
        work_dir=str(tmp_path),
        experiment_name=f"naive_vis_{uuid.uuid4().hex}",
        train_dataloader=loader,
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        test_dataloader=test_loader,
        test_cfg=dict(),
        test_evaluator=dict(type="NaiveVisCount"),
        visualizer=dict(type="RecordingVisualizer", vis_backends=[dict(type="LocalVisBackend")]),
        custom_hooks=[dict(type="NaiveVisualizationHook", **hook)],
        default_hooks=dict(checkpoint=None, logger=dict(type="LoggerHook", interval=100)),
    )


def read_png(path):
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def test_the_model_graph_is_recorded_when_training_starts(tmp_path):
    runner = make_runner(tmp_path)
    runner.train()
    assert runner.visualizer.graphs == [(runner.model, None)]
    assert runner.visualizer.samples == []  # training and its validation draw nothing


def test_every_interval_test_batch_is_drawn_and_saved(tmp_path):
    runner = make_runner(tmp_path, interval=2, draw_gt=False)
    assert runner.test() == {"samples": 8}
    calls = runner.visualizer.samples
    # batches of two; batch_idx 1 and 3 end every second iteration
    assert [(call["name"], call["step"]) for call in calls] == [
        ("img_2.jpg", 1),
        ("img_3.jpg", 1),
        ("img_6.jpg", 3),
        ("img_7.jpg", 3),
    ]
    assert all(call["draw_gt"] is False and call["draw_pred"] is True for call in calls)
    for call, index in zip(calls, (2, 3, 6, 7)):
        # the input, un-normalized and with its padding cut off, is the original RGB image
        assert call["image"].dtype == np.uint8
        assert np.array_equal(call["image"], original(index))
        # the data sample drawn is the model's output: its prediction and metainfo
        assert call["sample"].img_path == f"data/img_{index}.jpg"
        assert call["sample"].pred_score.shape == (3,)
        saved = read_png(
            os.path.join(
                runner.log_dir, "vis_data", "vis_image", call["name"] + f"_{call['step']}.png"
            )
        )
        assert np.array_equal(saved, call["drawn"])
        assert not np.array_equal(saved, call["image"])  # the box was drawn on it
    files = sorted(os.listdir(os.path.join(runner.log_dir, "vis_data", "vis_image")))
    assert files == ["img_2.jpg_1.png", "img_3.jpg_1.png", "img_6.jpg_3.png", "img_7.jpg_3.png"]


def test_mmengines_list_of_sample_dicts_is_drawn_too(tmp_path):
    runner = make_runner(
        tmp_path, model=OldStyleClassifier(), collate_fn=dict(type="per_sample_dicts")
    )
    runner.test()
    calls = runner.visualizer.samples
    assert [call["name"] for call in calls] == [f"img_{index}.jpg" for index in range(8)]
    assert [call["step"] for call in calls] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert all(np.array_equal(call["image"], original(index)) for index, call in enumerate(calls))


def test_the_image_is_resized_to_its_original_size():
    cv2 = pytest.importorskip("cv2")
    small = original(0, 6, 8)
    resized = cv2.resize(small, (13, 9))  # what MMEngine's hook does, (width, height)
    sample = BaseDataElement(
        metainfo=dict(ori_height=9, ori_width=13, scale=(8, 6), pad_shape=(8, 10))
    )
    padded = torch.zeros(1, 3, 8, 10)
    padded[0, :, :6, :8] = torch.from_numpy(small).permute(2, 0, 1)
    image = restore_image(padded, sample)
    assert image.shape == (9, 13, 3) and image.dtype == np.uint8
    assert np.abs(image.astype(int) - resized).max() <= 1  # OpenCV rounds in fixed point


@pytest.mark.parametrize(
    "norm_cfg, flipped",
    [
        (dict(), False),
        (dict(to_rgb=True), False),
        (dict(to_rgb=False), True),
        (dict(to_bgr=True), True),
    ],
)
def test_the_channel_order_follows_img_norm_cfg(norm_cfg, flipped):
    rgb = original(1)
    tensor = torch.from_numpy(rgb).permute(2, 0, 1)  # a uint8 tensor, as pseudo_collate leaves it
    image = restore_image(tensor, dict(img_norm_cfg=norm_cfg))
    assert np.array_equal(image, rgb[..., ::-1] if flipped else rgb)


def test_bad_batches_and_settings_are_errors_that_say_what_is_expected(tmp_path):
    with pytest.raises(ValueError, match=r"interval must be a positive int"):
        NaiveVisualizationHook(interval=0)
    runner = make_runner(tmp_path)
    hook = NaiveVisualizationHook()
    with pytest.raises(TypeError, match=r"dict\(inputs=\.\.\., data_samples=\[\.\.\.\]\)"):
        hook.after_test_iter(runner, 0, data_batch=torch.zeros(2, 3, 4, 4), outputs=[1, 2])
    batch = dict(inputs=torch.zeros(2, 3, 4, 4), data_samples=None)
    with pytest.raises(TypeError, match=r"one output per sample \(2 in this batch\), got dict"):
        hook.after_test_iter(runner, 0, data_batch=batch, outputs=dict(pred=torch.zeros(2)))
    batch = dict(inputs=[torch.zeros(4, 4)], data_samples=[dict(img_norm_cfg=dict(to_rgb=True))])
    with pytest.raises(TypeError, match=r"C x H x W image tensor, got Tensor of shape \(4, 4\)"):
        hook.after_test_iter(runner, 0, data_batch=batch, outputs=[None])
    batch = dict(inputs=[torch.zeros(3, 4, 4)], data_samples=[dict(img_norm_cfg=dict(scale=1))])
    with pytest.raises(ValueError, match=r"img_norm_cfg has \['scale'\]"):
        hook.after_test_iter(runner, 0, data_batch=batch, outputs=[None])


class DictSamples(PaddedImages):
    """The same images with plain-dict data samples, which collating turns into one dict of
    per-sample lists: ``data_samples=dict(img_path=[...], meta=dict(index=[...]))``."""

    def __getitem__(self, index):
        item = super().__getitem__(index)
        meta = item["data_samples"].metainfo
        sample = dict(img_path=meta["img_path"], img_norm_cfg=meta["img_norm_cfg"])
        return dict(inputs=item["inputs"], data_samples=dict(sample, meta=dict(index=index)))


class DictClassifier(TinyClassifier):
    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.fc(torch.stack(inputs).flatten(1))
        return [dict(pred=int(row.argmax())) for row in logits]


def test_plain_dict_data_samples_are_split_into_one_per_input(tmp_path):
    runner = make_runner(tmp_path, model=DictClassifier(), dataset=DictSamples())
    runner.test()
    calls = runner.visualizer.samples
    assert [(call["name"], call["step"]) for call in calls] == [
        (f"img_{index}.jpg", index // 2) for index in range(8)
    ]
    for index, call in enumerate(calls):
        # restored with its sample's img_norm_cfg, whose tuples collating had transposed
        # (no pad_shape here, so the padding stays on)
        assert np.array_equal(call["image"][:HEIGHT, :WIDTH], original(index))
        assert set(call["sample"]) == {"pred"}


def test_data_samples_that_do_not_match_the_inputs_are_an_error(tmp_path):
    runner = make_runner(tmp_path)
    hook = NaiveVisualizationHook()
    images = torch.zeros(2, 3, 4, 4)
    batch = dict(inputs=images, data_samples=dict(img_path=["a.png", "b.png", "c.png"]))
    with pytest.raises(
        TypeError,
        match=r"NaiveVisualizationHook: .*one entry per input \(2 in "
        r"this batch\), but data_samples\['img_path'\] is list of length 3",
    ):
        hook.after_test_iter(runner, 0, data_batch=batch, outputs=[None, None])
    batch = dict(inputs=images, data_samples=dict(img_path="a.png"))
    with pytest.raises(TypeError, match=r"data_samples\['img_path'\] is str;"):
        hook.after_test_iter(runner, 0, data_batch=batch, outputs=[None, None])
    batch = dict(inputs=images, data_samples=[dict(img_path="a.png")])
    with pytest.raises(TypeError, match=r"has 2 inputs but 1 data_samples"):
        hook.after_test_iter(runner, 0, data_batch=batch, outputs=[None, None])
