"""MMEngine's drawing API of the Visualizer (set_image, draw_*, get_image, draw_featmap, show,
add_datasample), with mmengine-lite's Visualizer as the oracle: the same calls on the same
image must give the same pixels."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from runnerx.dist import master_only
from runnerx.logging.featmap import heatmap
from runnerx.visualization import Visualizer

mm_visualizer = pytest.importorskip("mmengine.visualization.visualizer")
cv2 = pytest.importorskip("cv2")
Image = pytest.importorskip("PIL.Image")

ROOT = Path(__file__).resolve().parents[2]
HEIGHT, WIDTH = 48, 64


def image(seed=0, height=HEIGHT, width=WIDTH):
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def mask(top, bottom, left, right):
    values = np.zeros((HEIGHT, WIDTH), bool)
    values[top:bottom, left:right] = True
    return values


# each a list of (method, args, kwargs), run on both visualizers after set_image
DRAWINGS = {
    "boxes": [
        ("draw_bboxes", (np.array([[4, 4, 30, 20], [10, 12, 60, 44]]),), {}),
        ("draw_bboxes", (torch.tensor([2.5, 3, 20, 40]),), {"edge_colors": (255, 0, 0)}),
        (
            "draw_bboxes",
            (np.array([[20, 5, 50, 25], [1, 30, 15, 46]]),),
            dict(
                edge_colors=["r", (0, 0, 255)],
                face_colors="yellow",
                alpha=0.4,
                line_widths=[1, 6],
                line_styles="--",
            ),
        ),
    ],
    "texts": [
        ("draw_texts", ("cat", np.array([3, 3])), {}),
        (
            "draw_texts",
            (["dog", "bird"], torch.tensor([[10, 20], [40, 30]])),
            dict(
                colors=["w", (255, 128, 0)],
                font_sizes=[8, 13.5],
                vertical_alignments="bottom",
                horizontal_alignments=["center", "right"],
                font_families="monospace",
                bboxes=dict(facecolor="black", alpha=0.8, pad=0.7, edgecolor="none"),
            ),
        ),
    ],
    "points_lines_circles": [
        ("draw_points", (np.array([[5, 5], [30, 20], [60, 40]]),), {}),
        (
            "draw_points",
            (np.array([10, 40]),),
            dict(colors=[(0, 255, 255)], marker="x", sizes=np.array([80])),
        ),
        ("draw_lines", (np.array([0, 63]), np.array([0, 47])), {}),
        (
            "draw_lines",
            (np.array([[5, 50], [10, 20]]), np.array([[40, 2], [5, 45]])),
            dict(colors=["m", "c"], line_styles=["-", ":"], line_widths=[1, 3]),
        ),
        ("draw_circles", (np.array([32, 24]), np.array([10])), {}),
        (
            "draw_circles",
            (torch.tensor([[10, 10], [50, 35]]), torch.tensor([6, 9])),
            dict(edge_colors=["b", "r"], face_colors=(0, 255, 0), alpha=0.5, line_widths=4),
        ),
    ],
    "point_sizes": [  # one number for all points, or one per point in a list or a tensor
        ("draw_points", (np.array([[8, 8], [40, 30]]),), dict(marker="o", sizes=[20, 120])),
        ("draw_points", (torch.tensor([[20, 40], [56, 10]]),), dict(sizes=torch.tensor([9, 64]))),
        ("draw_points", (np.array([30, 20]),), dict(colors="r", marker="s", sizes=50)),
    ],
    "polygons": [
        ("draw_polygons", (np.array([[2, 2], [30, 4], [16, 30]]),), {}),
        (
            "draw_polygons",
            (
                [
                    np.array([[40, 5], [60, 5], [60, 25], [40, 25]]),
                    torch.tensor([[5, 40], [25, 45], [15, 30]]),
                ],
            ),
            dict(edge_colors=["w", (200, 0, 200)], face_colors=["none", "blue"], alpha=0.6),
        ),
    ],
    "masks_over_drawings": [
        ("draw_bboxes", (np.array([8, 8, 40, 40]),), dict(edge_colors="w", line_widths=3)),
        ("draw_binary_masks", (mask(5, 30, 10, 50),), {}),
        (
            "draw_binary_masks",
            (np.stack([mask(0, 20, 0, 20), mask(25, 48, 30, 64)]),),
            dict(colors=["red", (0, 0, 255)], alphas=[0.3, 0.65]),
        ),
        ("draw_texts", ("on top", np.array([20, 20])), dict(colors="k")),
    ],
}


def draw(visualizer, calls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # boxes reaching the border
        for method, args, kwargs in calls:
            getattr(visualizer, method)(*args, **kwargs)
    return visualizer.get_image()


@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_drawing_gives_mmengines_pixels(name):
    ours = Visualizer(f"drawing_{name}", image=image())
    theirs = mm_visualizer.Visualizer(f"drawing_{name}", image=image())
    drawn = draw(ours, DRAWINGS[name])
    assert drawn.shape == (HEIGHT, WIDTH, 3) and drawn.dtype == np.uint8
    assert not np.array_equal(drawn, image())  # something was drawn
    assert np.array_equal(drawn, draw(theirs, DRAWINGS[name]))


def test_set_image_starts_over_and_calls_chain():
    visualizer = Visualizer("drawing_chain")
    visualizer.set_image(image(1))
    assert np.array_equal(visualizer.get_image(), image(1))  # the image pixel for pixel
    chained = visualizer.draw_bboxes(np.array([1, 1, 20, 20])).draw_texts("a", np.array([2, 2]))
    assert chained is visualizer and not np.array_equal(visualizer.get_image(), image(1))
    visualizer.set_image(image(2, height=30, width=40))
    assert np.array_equal(visualizer.get_image(), image(2, height=30, width=40))
    assert (visualizer.width, visualizer.height) == (40, 30)


def test_drawing_out_of_the_image_warns():
    visualizer = Visualizer("drawing_outside", image=image())
    with pytest.warns(UserWarning, match=r"bbox is out of bounds of the 64 x 48 image"):
        visualizer.draw_bboxes(np.array([10, 10, 70, 20]))
    with pytest.warns(UserWarning, match=r"text is out of bounds"):
        visualizer.draw_texts("x", np.array([5, 48]))


# the heatmaps' pixels may be one level apart: OpenCV scales some dtypes with fused arithmetic,
# and with resize_shape it resizes the image in fixed point where ours rounds torch's bilinear
# result
FEATMAPS = {
    "mean": ((), {}),
    "mean_over_image": ((image(3, 12, 16),), {"alpha": 0.3}),
    "max_over_grey_image": ((image(3, 12, 16)[..., 0],), {"channel_reduction": "select_max"}),
    "image_of_other_size": ((image(4),), {}),
    "resized": ((image(3, 12, 16),), {"resize_shape": (30, 20)}),
    "three_channels": ((), {"channel_reduction": None, "topk": 0}),
    "topk_grid": (
        (image(3, 12, 16),),
        {"channel_reduction": None, "topk": 4, "arrangement": (2, 3)},
    ),
}


@pytest.mark.parametrize("name", sorted(FEATMAPS))
def test_draw_featmap_gives_mmengines_heatmaps(name):
    args, kwargs = FEATMAPS[name]
    channels = 3 if name == "three_channels" else 6
    featmap = torch.randn(channels, 12, 16, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the image of another size
        ours = Visualizer.draw_featmap(featmap, *args, **kwargs)
        theirs = mm_visualizer.Visualizer.draw_featmap(featmap, *args, **kwargs)
    assert ours.shape == theirs.shape and ours.dtype == np.uint8
    difference = np.abs(ours.astype(int) - theirs)
    assert difference.max() <= 1
    assert (difference > 0).mean() < (0.15 if "resize_shape" in kwargs else 0.01)


def test_heatmap_colours_are_opencvs_jet():
    levels = np.arange(256, dtype=np.float32).reshape(16, 16)  # min-max scaling keeps them
    ours = heatmap(levels).reshape(256, 3).astype(int)
    opencv = cv2.applyColorMap(np.arange(256, dtype=np.uint8), cv2.COLORMAP_JET)[0, :, ::-1]
    assert np.array_equal(ours, opencv)
    # a constant map is level 0 everywhere, as OpenCV scales it
    assert np.array_equal(heatmap(torch.full((3, 4), 7.0)), np.broadcast_to(opencv[0], (3, 4, 3)))


def make_det_style_visualizer(base):
    """A visualizer subclass written as mmdet writes DetLocalVisualizer, on ``base``."""

    class DetStyleVisualizer(base):
        def __init__(self, name="visualizer", image=None, vis_backends=None, save_dir=None):
            super().__init__(name=name, image=image, vis_backends=vis_backends, save_dir=save_dir)

        @master_only
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
            boxes, labels = data_sample["bboxes"], data_sample["labels"]
            classes = self.dataset_meta["classes"]
            self.draw_bboxes(boxes, edge_colors=[(220, 20, 60), (0, 0, 142)], alpha=0.8)
            self.draw_texts(
                [f"{classes[label]}: 0.9" for label in labels],
                boxes[:, :2],
                colors=(255, 255, 255),
                font_sizes=[10, 12],
                bboxes=[dict(facecolor="black", alpha=0.8, pad=0.7, edgecolor="none")] * 2,
            )
            drawn = self.get_image()
            if show:
                self.show(drawn, win_name=name, wait_time=wait_time)
            else:
                self.add_image(name, drawn, step)

    return DetStyleVisualizer


def test_an_mmengine_style_visualizer_writes_its_drawing_through_local_vis_backend(tmp_path):
    sample = {"bboxes": np.array([[4.0, 6, 40, 30], [20, 18, 62, 46]]), "labels": [1, 0]}
    pngs = []
    for where, base in (("ours", Visualizer), ("theirs", mm_visualizer.Visualizer)):
        visualizer = make_det_style_visualizer(base)(
            f"det_style_{where}",
            vis_backends=[dict(type="LocalVisBackend")],
            save_dir=str(tmp_path / where),
        )
        visualizer.dataset_meta = {"classes": ("person", "car")}
        visualizer.add_datasample("val_img", image(5), data_sample=sample, step=7)
        visualizer.close()
        pngs.append(
            np.asarray(Image.open(tmp_path / where / "vis_data" / "vis_image" / "val_img_7.png"))
        )
    assert not np.array_equal(pngs[0], image(5))
    assert np.array_equal(pngs[0], pngs[1])


def test_add_datasample_of_the_base_class_records_nothing(tmp_path):
    visualizer = Visualizer(
        "drawing_base_sample", vis_backends=[dict(type="LocalVisBackend")], save_dir=tmp_path
    )
    assert visualizer.add_datasample("x", image(), data_sample=None, step=1) is None
    assert not (tmp_path / "vis_data" / "vis_image").exists()


def test_show_without_a_display_warns_and_returns_at_once():
    visualizer = Visualizer("drawing_show", image=image())
    with pytest.warns(UserWarning, match=r"backend 'agg' has no window.*add_image"):
        assert visualizer.show(wait_time=0) is None  # MMEngine waits for a key forever here
    assert visualizer.manager.canvas.figure.axes  # the window's figure holds the image
    with pytest.warns(UserWarning, match=r"OpenCV cannot open a window.*add_image"):
        visualizer.show(image(1), win_name="other", backend="cv2")


def test_importing_and_building_a_visualizer_leaves_matplotlib_unimported():
    code = (
        "import sys, numpy as np; from runnerx.logging import Visualizer; "
        "vis = Visualizer(); print('matplotlib' in sys.modules, end=' '); "
        "vis.set_image(np.zeros((4, 4, 3), np.uint8)); print('matplotlib' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MPLBACKEND": "agg"},
    )
    assert result.stdout.strip() == "False True"


def bad_masks():
    return np.ones((HEIGHT, WIDTH), np.uint8)


# (method, args, kwargs, our error type and message); MMEngine raises the same type or its
# AssertionError for each, which ours also are
BAD_CALLS = {
    "box_shape": ("draw_bboxes", (np.array([[1, 2, 3]]),), {}, ValueError, r"`bboxes`.*\(N, 4\)"),
    "box_order": ("draw_bboxes", (np.array([9, 1, 3, 5]),), {}, ValueError, r"`bboxes`.*x1 <= x2"),
    "box_list": ("draw_bboxes", ([1, 2, 3, 4],), {}, TypeError, r"`bboxes` should be a numpy"),
    "text_type": ("draw_texts", (3, np.array([1, 2])), {}, TypeError, r"`texts` should be str"),
    "text_positions": (
        "draw_texts",
        (["a", "b"], np.array([[1, 2]])),
        {},
        ValueError,
        r"`positions`.*\(2, 2\)",
    ),
    "text_colors": (
        "draw_texts",
        (["a", "b"], np.array([[1, 2], [3, 4]])),
        {"colors": ["r"]},
        ValueError,
        r"`colors` has 1 entries for 2 items",
    ),
    "text_font_sizes": (
        "draw_texts",
        ("a", np.array([1, 2])),
        {"font_sizes": "big"},
        TypeError,
        r"`font_sizes` should be",
    ),
    "colour_range": (
        "draw_points",
        (np.array([1, 2]),),
        {"colors": (300, 0, 0)},
        ValueError,
        r"`colors`.*0-255",
    ),
    "colour_type": (
        "draw_bboxes",
        (np.array([1, 2, 3, 4]),),
        {"edge_colors": 5},
        TypeError,
        r"`edge_colors`",
    ),
    "line_shapes": (
        "draw_lines",
        (np.array([[1, 2]]), np.array([[1, 2], [3, 4]])),
        {},
        ValueError,
        r"`x_datas` and `y_datas` should have the same shape",
    ),
    "circle_radii": (
        "draw_circles",
        (np.array([[1, 2], [3, 4]]), np.array([1])),
        {},
        ValueError,
        r"`center`",
    ),
    "polygon_shape": (
        "draw_polygons",
        (np.array([[1, 2, 3]]),),
        {},
        ValueError,
        r"`polygons`.*\(N, 2\)",
    ),
    "mask_dtype": ("draw_binary_masks", (bad_masks(),), {}, ValueError, r"dtype of `binary_masks`"),
    "mask_size": (
        "draw_binary_masks",
        (np.ones((3, 3), bool),),
        {},
        ValueError,
        r"`binary_masks`.*size",
    ),
    "color_as_list": (
        "draw_bboxes",
        (np.array([[1, 1, 5, 5]]),),
        {"edge_colors": [[220, 20, 60]]},
        TypeError,
        r"`edge_colors` holds the list \[220, 20, 60\]; an RGB colour is a tuple: \(220, 20, 60\)",
    ),
    "mask_colors": (
        "draw_binary_masks",
        (np.ones((2, HEIGHT, WIDTH), bool),),
        {"colors": ["r"]},
        ValueError,
        r"`colors` has 1 entries for 2",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_arguments_are_named(name):
    method, args, kwargs, error, message = BAD_CALLS[name]
    visualizer = Visualizer(f"drawing_bad_{name}", image=image())
    with pytest.raises(error, match=message) as raised:
        getattr(visualizer, method)(*args, **kwargs)
    theirs = mm_visualizer.Visualizer(f"drawing_bad_{name}", image=image())
    with pytest.raises((error, AssertionError)) as raised_by_mmengine:
        getattr(theirs, method)(*args, **kwargs)
    assert isinstance(raised.value, type(raised_by_mmengine.value))


@pytest.mark.parametrize(
    ("featmap", "kwargs", "error", "message"),
    [
        (np.zeros((2, 3, 3)), {}, TypeError, r"`featmap` should be a torch.Tensor"),
        (torch.zeros(3, 3), {}, ValueError, r"`featmap` should be C x H x W"),
        (torch.zeros(2, 3, 3), {"channel_reduction": "max"}, ValueError, r"`channel_reduction`"),
        (torch.zeros(4, 3, 3), {"channel_reduction": None, "topk": 0}, ValueError, r"1 or 3"),
        (
            torch.zeros(9, 3, 3),
            {"channel_reduction": None, "topk": 7, "arrangement": (2, 3)},
            ValueError,
            r"`arrangement` \(2, 3\) has 6 places for topk=7",
        ),
    ],
)
def test_bad_featmap_arguments_are_named(featmap, kwargs, error, message):
    with pytest.raises(error, match=message):
        Visualizer.draw_featmap(featmap, **kwargs)
    with pytest.raises((error, AssertionError)):
        mm_visualizer.Visualizer.draw_featmap(featmap, **kwargs)


def test_drawing_before_set_image_says_to_set_one():
    visualizer = Visualizer("drawing_no_image")
    for call in (visualizer.get_image, lambda: visualizer.draw_points(np.array([1, 2]))):
        with pytest.raises(AssertionError, match=r"call set_image\(image\) first"):
            call()
    with pytest.raises(ValueError, match=r"`backend` should be 'matplotlib' or 'cv2'"):
        Visualizer("drawing_bad_backend", image=image()).show(backend="qt")


def draw_on_rank(rank: int, folder: str) -> tuple:
    """Draw a chain on this rank of two (gloo); return what came back."""
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=2)
    visualizer = Visualizer("drawing_ranks", image=np.zeros((8, 8, 3), np.uint8))
    chained = visualizer.draw_bboxes(np.array([1, 1, 6, 6])).draw_points(np.array([3, 3]))
    featmap = Visualizer.draw_featmap(torch.ones(2, 4, 4))
    image = visualizer.get_image()
    return chained is visualizer, None if image is None else image.shape, featmap is None


def test_only_rank0_draws_and_chained_calls_work_on_every_rank(tmp_path, spawn_ranks):
    results = spawn_ranks(draw_on_rank, tmp_path, world_size=2, timeout=120)
    assert results == [(True, (8, 8, 3), False), (True, None, True)]
