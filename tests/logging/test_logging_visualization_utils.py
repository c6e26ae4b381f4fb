"""runnerx.visualization.utils against mmengine-lite's mmengine.visualization.utils: the same
inputs give the same results and the same kinds of error."""

import warnings

import numpy as np
import pytest
import torch

from runnerx.visualization import utils as ours

theirs = pytest.importorskip("mmengine.visualization.utils")
cv2 = pytest.importorskip("cv2")
matplotlib = pytest.importorskip("matplotlib")


def feature(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=shape) * rng.uniform(0.5, 50) + rng.uniform(-20, 20)
    return values.astype(dtype)


def test_tensor2ndarray_converts_tensors_only():
    tensor = torch.arange(6, dtype=torch.float16).reshape(2, 3)
    mine, reference = ours.tensor2ndarray(tensor), theirs.tensor2ndarray(tensor)
    assert isinstance(mine, np.ndarray) and mine.dtype == reference.dtype
    assert np.array_equal(mine, reference)
    for value in (np.ones(3), [1, 2], "text", None):
        assert ours.tensor2ndarray(value) is value is theirs.tensor2ndarray(value)


@pytest.mark.parametrize(
    "value, valid_type, expand_dim",
    [("r", str, 3), ((1, 2), (str, tuple), 2), (["r", "g"], str, 4), (5, str, 2), (2.0, float, 0)],
)
def test_value2list_expands_values_of_the_valid_type(value, valid_type, expand_dim):
    assert ours.value2list(value, valid_type, expand_dim) == theirs.value2list(
        value, valid_type, expand_dim
    )


def outcome(function, *args):
    """What ``function(*args)`` gives: its result, or which of TypeError / AssertionError it
    raised (runnerx's errors are both where MMEngine asserts: TypeError is checked first)."""
    try:
        return "ok", function(*args)
    except TypeError:
        return "TypeError", None
    except AssertionError:
        return "AssertionError", None


@pytest.mark.parametrize(
    "value, valid_type",
    [(3, int), (3, (str, float)), ("a", (str, list)), ([1], list), (None, int), (2.5, float)],
)
def test_check_type(value, valid_type):
    assert outcome(ours.check_type, "x", value, valid_type) == outcome(
        theirs.check_type, "x", value, valid_type
    )


@pytest.mark.parametrize("value, length", [([1, 2], 3), ([1, 2], 2), ([1, 2, 3], 2), ("ab", 5)])
def test_check_length(value, length):
    assert outcome(ours.check_length, "x", value, length) == outcome(
        theirs.check_length, "x", value, length
    )


@pytest.mark.parametrize(
    "value, valid_type, length",
    [([1], (int, list), 2), ([1, 2], (int, list), 2), (3, (int, list), 2), ("a", int, 1)],
)
def test_check_type_and_length(value, valid_type, length):
    assert outcome(ours.check_type_and_length, "x", value, valid_type, length) == outcome(
        theirs.check_type_and_length, "x", value, valid_type, length
    )


def test_check_errors_name_the_argument():
    with pytest.raises(TypeError, match="`colors`"):
        ours.check_type("colors", 3, str)
    with pytest.raises(AssertionError, match="`colors` has 1 entries for 2 items"):
        ours.check_length("colors", ["r"], 2)


@pytest.mark.parametrize(
    "colors",
    ["red", (255, 128, 0), (0, 0, 0), ["g", (0, 0, 255), "#ff8000"], (256, 0, 0), (1, 2), 5],
)
def test_color_val_matplotlib(colors):
    assert outcome(ours.color_val_matplotlib, colors) == outcome(
        theirs.color_val_matplotlib, colors
    )


@pytest.mark.parametrize("color", ["red", "g", "orange", "#ff8000", "C1", "tab:blue", "0.5"])
def test_color_str2rgb(color):
    assert ours.color_str2rgb(color) == theirs.color_str2rgb(color)


HEATMAP_INPUTS = {
    "2d": lambda: feature((12, 16)),
    "one_channel": lambda: feature((1, 12, 16), seed=1),
    "three_channels": lambda: feature((3, 12, 16), seed=2),
    "tensor": lambda: torch.from_numpy(feature((12, 16), seed=3)),
    "float16": lambda: feature((12, 16), np.float16, seed=4),
    "float64": lambda: feature((12, 16), np.float64, seed=5),
    "every_level": lambda: np.linspace(-1, 1, 256 * 3, dtype=np.float32).reshape(24, 32),
}


@pytest.mark.parametrize("name", sorted(HEATMAP_INPUTS))
@pytest.mark.parametrize("alpha", [None, 0.5, 0.3])
def test_convert_overlay_heatmap(name, alpha):
    feat_map = HEATMAP_INPUTS[name]()
    height, width = feat_map.shape[-2:]
    image = np.random.default_rng(9).integers(0, 256, (height, width, 3), dtype=np.uint8)
    args = (feat_map,) if alpha is None else (feat_map, image, alpha)
    mine, reference = ours.convert_overlay_heatmap(*args), theirs.convert_overlay_heatmap(*args)
    assert mine.shape == reference.shape == (height, width, 3) and mine.dtype == np.uint8
    assert np.array_equal(mine, reference)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32])
def test_convert_overlay_heatmap_of_integer_maps(dtype):
    # OpenCV scales into the input's integer type, rounding in its own arithmetic: a few
    # pixels in a thousand round the other way
    feat_map = np.abs(feature((64, 64), seed=7) * 4).astype(dtype) % 200
    mine, reference = (
        ours.convert_overlay_heatmap(feat_map),
        theirs.convert_overlay_heatmap(feat_map),
    )
    assert (mine == reference).all(axis=-1).mean() > 0.995


def test_convert_overlay_heatmap_takes_one_or_three_channels():
    feat_map = feature((2, 12, 16))
    assert outcome(ours.convert_overlay_heatmap, feat_map)[0] == "AssertionError"
    assert outcome(theirs.convert_overlay_heatmap, feat_map)[0] == "AssertionError"


def test_img_from_canvas():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(1.3, 0.7), dpi=50)
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.plot([0, 1, 0.3], [0, 1, 0.8], color="tab:orange")
    axes.text(0.1, 0.5, "runnerx")
    mine = ours.img_from_canvas(canvas)
    reference = theirs.img_from_canvas(canvas)
    assert mine.shape == reference.shape == (35, 65, 3) and mine.dtype == np.uint8
    assert np.array_equal(mine, reference)


# what the user does while wait_continue waits: a list of events per wait, None: none
SCRIPTS = {
    "timeout": [None],
    "continue_key": [("key_press_event", " ")],
    "other_key_then_continue": [("key_press_event", "a"), ("key_press_event", " ")],
    "close": [("close_event", None)],
    "other_key_then_close": [("key_press_event", "x"), ("close_event", None)],
}


def scripted_wait(function, script, **kwargs):
    """Run ``function`` on a pyplot figure whose event loop plays ``script``, one event per
    wait; return what it returns and how many times it waited."""
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import CloseEvent, KeyEvent

    figure = plt.figure()
    canvas = figure.canvas
    events = list(script)
    waits = []

    def start_event_loop(timeout=0):
        waits.append(timeout)
        event = events.pop(0)
        if event is None:
            return
        kind, key = event
        made = CloseEvent(kind, canvas) if key is None else KeyEvent(kind, canvas, key)
        canvas.callbacks.process(kind, made)

    canvas.start_event_loop = start_event_loop
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # Agg cannot show a window
            return function(figure, **kwargs), waits
    finally:
        plt.close(figure)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_wait_continue(name):
    mine = scripted_wait(ours.wait_continue, SCRIPTS[name], timeout=0.5)
    reference = scripted_wait(theirs.wait_continue, SCRIPTS[name], timeout=0.5)
    assert mine == reference
    assert mine[1] == [0.5] * len(SCRIPTS[name])
