"""tools/test.py's flags of OpenMMLab's test scripts: ``--show``/``--show-dir``/``--wait-time``/
``--interval`` turn on ``default_hooks.visualization`` through the arguments its class takes,
``--out-item metrics`` writes the metrics, ``--no-pin-memory``; a missing CHECKPOINT stops the
run before anything is built; each key test.py sets is named by ``cfg.explain``."""

import json
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import Dataset

from runnerx.config import Config
from runnerx.evaluator import BaseMetric
from runnerx.hooks import Hook
from runnerx.model import BaseModel
from runnerx.registry import DATASETS, HOOKS, METRICS, MODELS, VISUALIZERS
from runnerx.structures import BaseDataElement
from runnerx.visualization import Visualizer
from tests.tools import load_tool

ROOT = Path(__file__).parents[2]

#: (name, show, wait_time, step) of every sample PicturesRecorder was given
DRAWN: list[tuple] = []


@MODELS.register_module(force=True)
class PicturesNet(BaseModel):
    """Predicts a class from a 3 x 4 x 4 image: one dict per sample."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(48, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.fc(torch.stack(inputs).float().flatten(1))
        for sample, row in zip(data_samples, logits):
            sample.pred = int(row.argmax())
        return data_samples


@DATASETS.register_module(force=True)
class PicturesSet(Dataset):
    """Four random 3 x 4 x 4 uint8 images with their file names."""

    def __len__(self):
        return 4

    def __getitem__(self, index):
        image = torch.randint(0, 256, (3, 4, 4), dtype=torch.uint8)
        sample = BaseDataElement(metainfo=dict(img_path=f"images/{index}.png"))
        return dict(inputs=image, data_samples=sample)


@METRICS.register_module(force=True)
class PicturesCount(BaseMetric):
    default_prefix = "count"

    def process(self, data_batch, data_samples):
        self.results.extend(sample["pred"] for sample in data_samples)

    def compute_metrics(self, results):
        return dict(samples=len(results))


@VISUALIZERS.register_module(force=True)
class PicturesRecorder(Visualizer):
    """Records each sample it is given and writes its image."""

    def add_datasample(
        self, name, image, data_sample=None, draw_gt=True, draw_pred=True, show=False,
        wait_time=0, step=0,
    ):  # fmt: skip
        DRAWN.append((name, show, wait_time, step))
        self.add_image(name, image, step)


@HOOKS.register_module(force=True)
class DetLikeVisualizationHook(Hook):
    """mmdet's DetVisualizationHook's arguments."""

    def __init__(
        self, draw=False, interval=50, score_thr=0.3, show=False, wait_time=0.0,
        test_out_dir=None, backend_args=None,
    ):  # fmt: skip
        pass


@HOOKS.register_module(force=True)
class PretrainLikeVisualizationHook(Hook):
    """mmpretrain's VisualizationHook's arguments (``wait_time`` goes through ``kwargs``)."""

    def __init__(self, enable=False, interval=5000, show=False, out_dir=None, **kwargs):
        pass


@HOOKS.register_module(force=True)
class IntervalOnlyHook(Hook):
    def __init__(self, interval=1):
        pass


@HOOKS.register_module(force=True)
class NotADrawingHook(Hook):
    def __init__(self, period=1):
        pass


CONFIG = """
model = dict(type='PicturesNet')
test_dataloader = dict(
    batch_size=2, num_workers=0, sampler=dict(type='DefaultSampler', shuffle=False),
    collate_fn=dict(type='pseudo_collate'),
    dataset=dict(type='RepeatDataset', times=1, dataset=dict(type='PicturesSet')))
test_cfg = dict()
test_evaluator = dict(type='PicturesCount')
visualizer = dict(type='PicturesRecorder', vis_backends=[dict(type='LocalVisBackend')])
default_hooks = dict(visualization=dict(type='NaiveVisualizationHook', interval=2))
tta_model = dict(type='SomeTTAModel')
tta_pipeline = [dict(type='TestTimeAug', transforms=[])]
"""


@pytest.fixture(scope="module")
def tool():
    return load_tool("test")


# the tools' load_config sets LOCAL_RANK: undone after each test
pytestmark = pytest.mark.usefixtures("keep_local_rank")


@pytest.fixture
def files(tmp_path):
    """A function ``(extra='')``: the config (with ``extra`` appended) and a checkpoint of
    PicturesNet, as the two arguments of tools/test.py, and ``--work-dir`` in tmp_path."""
    checkpoint = tmp_path / "net.pth"
    torch.save({"state_dict": PicturesNet().state_dict()}, checkpoint)

    def make(extra: str = "") -> list[str]:
        config = tmp_path / "pictures.py"
        config.write_text(CONFIG + extra)
        return [str(config), str(checkpoint), "--work-dir", str(tmp_path / "work")]

    return make


def tool_config(tool, *argv: str) -> Config:
    return tool.test_config(tool.parse_args(list(argv)))


def last_source(cfg: Config, key: str) -> str:
    return cfg.explain(key).origins[-1].where


def test_show_dir_draws_the_test_samples_through_the_naive_hook(tool, files, tmp_path):
    DRAWN.clear()
    options = ["--show-dir", str(tmp_path / "vis"), "--no-pin-memory"]
    metrics = tool.main([*files(), *options])
    assert metrics == {"count/samples": 4}
    # every sample (the config's interval=2 is --interval's default, 1), saved under --show-dir
    assert [name for name, *_ in DRAWN] == ["0.png", "1.png", "2.png", "3.png"]
    assert not any(show for _, show, *_ in DRAWN)
    saved = sorted(path.name for path in (tmp_path / "vis" / "vis_data" / "vis_image").iterdir())
    assert saved == ["0.png_0.png", "1.png_0.png", "2.png_1.png", "3.png_1.png"]

    DRAWN.clear()
    options = ["--show", "--wait-time", "0.5", "--interval", "2"]
    tool.main([*files(), *options])
    assert DRAWN == [("2.png", True, 0.5, 1), ("3.png", True, 0.5, 1)]  # the second batch


def test_show_flags_set_the_arguments_of_the_configured_hook(tool, files):
    det = "default_hooks = dict(visualization=dict(type='DetLikeVisualizationHook'))\n"
    cfg = tool_config(tool, *files(det), "--show-dir", "vis", "--show")
    assert cfg.default_hooks.visualization == dict(
        type="DetLikeVisualizationHook", draw=True, show=True, wait_time=2.0, interval=1,
        test_out_dir="vis",
    )  # fmt: skip
    assert "save_dir" not in cfg.visualizer  # the hook writes the images
    assert last_source(cfg, "default_hooks.visualization.test_out_dir") == "--show-dir"
    assert last_source(cfg, "default_hooks.visualization.wait_time") == "--show"

    pretrain = "default_hooks = dict(visualization=dict(type='PretrainLikeVisualizationHook'))\n"
    options = ["--show-dir", "vis", "--wait-time", "1", "--interval", "3"]
    cfg = tool_config(tool, *files(pretrain), *options)
    assert cfg.default_hooks.visualization == dict(
        type="PretrainLikeVisualizationHook", enable=True, wait_time=1.0, interval=3, out_dir="vis"
    )
    assert last_source(cfg, "default_hooks.visualization.enable") == "--show-dir"
    assert last_source(cfg, "default_hooks.visualization.interval") == "--interval"

    cfg = tool_config(tool, *files(), "--show-dir", "vis")  # NaiveVisualizationHook
    assert cfg.visualizer.save_dir == "vis"
    assert last_source(cfg, "visualizer.save_dir") == "--show-dir"


@pytest.mark.parametrize(
    ("extra", "options", "message"),
    [
        (
            "default_hooks = dict(visualization=None)\n",
            ["--show-dir", "vis"],
            "tools/test.py --show-dir: it turns on default_hooks.visualization, which the config "
            "does not have; add one, e.g. default_hooks = dict(visualization=dict(type="
            "'NaiveVisualizationHook')) (runnerx's: ",
        ),
        (
            "default_hooks = dict(visualization=\"dict(type='NaiveVisualizationHook')\")\n",
            ["--show-dir", "vis"],
            'tools/test.py --show-dir: default_hooks.visualization is "dict(type='
            "'NaiveVisualizationHook')\", a str, not a hook config dict (--cfg-options reads "
            "'key=dict(...)' as text: give its keys one by one, e.g. "
            "default_hooks.visualization.type=NaiveVisualizationHook)",
        ),
        (
            "default_hooks = dict(visualization=dict(type='NotADrawingHook'))\n",
            ["--show"],
            "tools/test.py --show: default_hooks.visualization (NotADrawingHook) takes none of "
            "draw, enable, show, wait_time, interval, test_out_dir, out_dir: it does not look "
            "like a visualization hook; add one",
        ),
        (
            "default_hooks = dict(visualization=dict(type='IntervalOnlyHook'))\n",
            ["--show-dir", "vis", "--show"],
            "tools/test.py --show: default_hooks.visualization (IntervalOnlyHook) takes no show "
            "argument; leave --show out, or use a hook that takes it",
        ),
        (
            "default_hooks = dict(visualization=dict(type='MissingHook'))\n",
            ["--show"],
            "tools/test.py --show: default_hooks.visualization.type='MissingHook' is not a "
            "registered hook",
        ),
        (
            "visualizer = dict(type='Visualizer')\n",
            ["--show-dir", "vis"],
            "tools/test.py --show-dir: visualizer.type='Visualizer' draws nothing in "
            "add_datasample, so no image would be made; set visualizer to a visualizer that "
            "draws",
        ),
    ],
)
def test_show_is_refused_when_nothing_would_be_drawn(tool, files, extra, options, message):
    with pytest.raises(SystemExit) as error:
        tool_config(tool, *files(extra), *options)
    assert str(error.value).startswith(message)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--interval", "2"], "--interval says how to draw the test samples: give --show or"),
        (["--show", "--interval", "0"], "--interval must be a positive number, got 0"),
        (["--out-item", "metrics"], "--out-item says what --out saves: give --out FILE too"),
        (["--out", "m.txt", "--out-item", "metrics"], "--out must be a file path ending with "
         ".pkl, .pickle, .json, .yaml or .yml (the metrics are saved in that format), but got "
         "'m.txt'"),
        (["--out", "m.json"], "--out must be a file path ending with .pkl or .pickle"),
    ],
)  # fmt: skip
def test_flags_that_cannot_work_are_refused_by_the_parser(tool, capsys, options, message):
    with pytest.raises(SystemExit) as error:
        tool.parse_args(["c.py", "c.pth", *options])
    assert error.value.code == 2
    assert f"error: {message}" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".pkl"])
def test_out_item_metrics_writes_the_metrics_instead_of_the_predictions(
    tool, files, tmp_path, suffix
):
    from runnerx.fileio import load

    out = tmp_path / f"metrics{suffix}"
    args = [*files(), "--out", str(out), "--out-item", "metrics"]
    assert tool.test_config(tool.parse_args(args)).test_evaluator == dict(
        type="PicturesCount"
    )  # no DumpResults
    metrics = tool.main(args)
    assert load(str(out)) == metrics == {"count/samples": 4}
    if suffix == ".json":
        assert json.loads(out.read_text()) == {"count/samples": 4}


def test_a_missing_checkpoint_stops_before_the_work_dir_is_made(tool, files, tmp_path):
    config, _, *options = files()
    with pytest.raises(SystemExit) as error:
        tool.main([config, str(tmp_path / "nope.pth"), *options])
    assert str(error.value) == (
        f"tools/test.py: CHECKPOINT '{tmp_path / 'nope.pth'}': no such file; give an existing "
        "checkpoint file, a URL, or 'last' / 'best' for the work dir's last or best checkpoint"
    )
    assert not (tmp_path / "work").exists()


def test_the_keys_test_py_sets_are_named_by_explain(tool, files, tmp_path):
    argv = files()
    options = ["--tta", "--no-pin-memory", "--out", str(tmp_path / "p.pkl")]
    cfg = tool_config(tool, *argv, *options)
    assert cfg.load_from == argv[1] and cfg.resume is False
    assert last_source(cfg, "load_from") == last_source(cfg, "resume") == "tools/test.py CHECKPOINT"
    assert cfg.test_dataloader.pin_memory is False
    assert last_source(cfg, "test_dataloader.pin_memory") == "--no-pin-memory"
    assert cfg.model == dict(type="SomeTTAModel", module=dict(type="PicturesNet"))
    assert last_source(cfg, "model") == "--tta"
    inner = cfg.test_dataloader.dataset.dataset  # inside the RepeatDataset
    assert inner.type == "PicturesSet"
    assert inner.pipeline == [dict(type="TestTimeAug", transforms=[])]
    assert last_source(cfg, "test_dataloader.dataset.dataset.pipeline") == "--tta"
    assert cfg.test_evaluator[-1] == dict(type="DumpResults", out_file_path=str(tmp_path / "p.pkl"))
    assert last_source(cfg, "test_evaluator") == "--out"
