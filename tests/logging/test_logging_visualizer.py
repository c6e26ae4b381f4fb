"""Visualizer and its backends: JSON lines on disk, TensorBoard events read back."""

import errno
import gc
import inspect
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from runnerx.config import Config
from runnerx.logging import BaseVisBackend, LocalVisBackend, TensorboardVisBackend, Visualizer
from runnerx.registry import VISBACKENDS, VISUALIZERS

ROOT = Path(__file__).parents[2]


def read_json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_local_backend_appends_one_json_object_per_call(tmp_path):
    backend = LocalVisBackend(tmp_path)
    backend.add_scalars({"lr": 0.01, "loss": 2.3}, step=10)
    # each write is on disk at once (nothing kept in a buffer a crash would lose)
    assert (tmp_path / "scalars.json").read_text() == '{"lr": 0.01, "loss": 2.3, "step": 10}\n'
    backend.add_scalar("accuracy/top1", 96.2, step=1)
    LocalVisBackend(tmp_path).add_scalars({"loss": 1.5}, step=20)  # a resumed run appends
    assert read_json_lines(tmp_path / "scalars.json") == [
        {"lr": 0.01, "loss": 2.3, "step": 10},
        {"accuracy/top1": 96.2, "step": 1},
        {"loss": 1.5, "step": 20},
    ]


def test_local_backend_writes_the_extra_file_path_and_the_config(tmp_path):
    backend = LocalVisBackend(tmp_path, scalar_save_file="all.json", config_save_file="cfg.py")
    backend.add_scalars({"loss": 1.0}, step=3, file_path="20261121_150405.json")
    assert read_json_lines(tmp_path / "20261121_150405.json") == [{"loss": 1.0, "step": 3}]
    assert read_json_lines(tmp_path / "all.json") == [{"loss": 1.0, "step": 3}]
    with pytest.raises(ValueError, match="other than the scalar file"):
        backend.add_scalars({"loss": 1.0}, step=3, file_path="all.json")

    config = Config(dict(model=dict(type="Net", depth=18), lr=0.1))
    backend.add_config(config)
    text = (tmp_path / "cfg.py").read_text()
    assert text == config.pretty_text
    assert Config.fromstring(text, ".py").to_dict() == config.to_dict()
    with pytest.raises(ValueError, match=r"\.json"):
        LocalVisBackend(tmp_path, scalar_save_file="scalars.txt")
    # the config is Python text: a .json name would hold a file no JSON reader takes
    with pytest.raises(
        ValueError, match=r"config_save_file must end with \.py, got 'c\.json'"
    ) as info:
        LocalVisBackend(tmp_path, config_save_file="c.json")
    assert isinstance(info.value, AssertionError)  # MMEngine's type too


def test_a_config_the_disk_cannot_take_is_named_and_leaves_no_file(tmp_path, monkeypatch):
    def full(descriptor):  # the disk fills while the config's text is flushed
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    backend = LocalVisBackend(tmp_path / "vis_data")
    with pytest.raises(OSError, match=r"\[Errno 28\] No space left on device: '.*config\.py'$"):
        backend.add_config(Config(dict(lr=0.1)))
    assert os.listdir(tmp_path / "vis_data") == []  # no empty config.py, no temporary file


def test_visualizer_from_config_writes_into_save_dir_vis_data(tmp_path):
    visualizer = VISUALIZERS.build(
        dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend")], save_dir=str(tmp_path))
    )
    assert Visualizer.get_current_instance() is visualizer
    visualizer.add_scalars({"loss": 0.5}, step=1)
    visualizer.add_scalar("lr", 0.1, step=2)
    visualizer.add_config(dict(a=1))
    visualizer.close()
    assert read_json_lines(tmp_path / "vis_data" / "scalars.json") == [
        {"loss": 0.5, "step": 1},
        {"lr": 0.1, "step": 2},
    ]
    assert "a = 1" in (tmp_path / "vis_data" / "config.py").read_text()
    assert isinstance(visualizer.get_backend("LocalVisBackend"), LocalVisBackend)


def test_add_scalars_refuses_a_non_mapping_before_any_backend_writes(tmp_path):
    visualizer = Visualizer(
        "vis_test_not_a_mapping",
        vis_backends=[dict(type="LocalVisBackend", name="a"), dict(type="LocalVisBackend")],
        save_dir=tmp_path,
    )
    with pytest.raises(TypeError, match=r"add_scalars: scalar_dict must be a dict.*got list"):
        visualizer.add_scalars([1, 2], step=3)
    visualizer.close()
    assert not (tmp_path / "vis_data" / "scalars.json").exists()


def test_visualizer_instances_names_and_backends_without_a_save_dir(tmp_path):
    with pytest.warns(UserWarning, match="needs a save_dir"):
        visualizer = Visualizer("vis_test_no_dir", vis_backends=dict(type="LocalVisBackend"))
    assert visualizer.vis_backends == {}
    assert Visualizer.get_instance("vis_test_no_dir") is visualizer
    named = Visualizer(
        "vis_test_named",
        vis_backends=[
            dict(type="LocalVisBackend", name="a"),
            LocalVisBackend(tmp_path / "b"),
        ],
        save_dir=tmp_path,
    )
    assert list(named.vis_backends) == ["a", "LocalVisBackend"]
    assert Visualizer.get_current_instance() is named
    with pytest.raises(
        ValueError, match=r"vis_backends\[1\]: a backend named 'LocalVisBackend'"
    ) as twice:
        Visualizer(
            "vis_test_twice",
            vis_backends=[dict(type="LocalVisBackend"), dict(type="LocalVisBackend")],
            save_dir=tmp_path,
        )
    assert isinstance(twice.value, RuntimeError)  # what MMEngine raises


def test_tensorboard_events_read_back_with_tensorboard(tmp_path):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator"
    )
    backend = VISBACKENDS.build(dict(type="TensorboardVisBackend", save_dir=str(tmp_path / "tb")))
    assert not (tmp_path / "tb").exists()  # the writer is made on first use
    backend.add_scalars({"loss": 2.5, "lr": 0.01, "step": 10}, step=10)
    backend.add_scalars({"loss": 1.5, "lr": 0.005}, step=20)
    backend.add_scalars({"loss": 0.5, "step": 30}, step=25)  # the dict's step, as local's
    backend.add_scalar("accuracy/top1", 96.25, step=1)
    backend.add_config(Config(dict(lr=0.1)))
    with pytest.warns(UserWarning, match="skips 'matrix'"):
        backend.add_scalars({"matrix": [[1, 0], [0, 1]]}, step=20)
    backend.close()

    events = event_accumulator.EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == ["accuracy/top1", "loss", "lr"]
    loss = [(event.step, event.value) for event in events.Scalars("loss")]
    assert loss == [(10, 2.5), (20, 1.5), (30, 0.5)]
    assert [(e.step, e.value) for e in events.Scalars("accuracy/top1")] == [(1, 96.25)]
    assert [e.value for e in events.Scalars("lr")] == pytest.approx([0.01, 0.005])
    assert "config/text_summary" in events.Tags()["tensors"]
    text = events.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert "lr = 0.1" in text


def test_tensorboard_missing_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # import fails
    backend = TensorboardVisBackend(tmp_path)
    with pytest.raises(ImportError, match=r"pip install tensorboard .*runnerx\[tensorboard\]"):
        backend.add_scalars({"loss": 1.0}, step=1)


def test_importing_runnerx_logging_does_not_import_tensorboard():
    code = (
        "import sys, runnerx.logging; print(sorted(m for m in sys.modules if 'tensorboard' in m))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_visualizer_subclass_written_for_mmengine_builds(tmp_path):
    import numpy as np

    class DetStyleVisualizer(Visualizer):  # as mmdet's DetLocalVisualizer calls its base
        def __init__(self, name="visualizer", image=None, vis_backends=None, save_dir=None):
            super().__init__(name=name, image=image, vis_backends=vis_backends, save_dir=save_dir)

    visualizer = DetStyleVisualizer(
        "vis_test_det_style", vis_backends=[dict(type="LocalVisBackend")], save_dir=tmp_path
    )
    visualizer.add_scalars({"loss": 1.0}, step=3)
    visualizer.close()
    assert read_json_lines(tmp_path / "vis_data" / "scalars.json") == [{"loss": 1.0, "step": 3}]
    assert visualizer.fig_save_cfg == visualizer.fig_show_cfg == dict(frameon=False)
    # MMEngine's order: name, image, vis_backends, save_dir, fig_save_cfg, fig_show_cfg
    positional = Visualizer(
        "vis_test_positional", None, [dict(type="LocalVisBackend")], tmp_path / "p", {"dpi": 50}
    )
    assert list(positional.vis_backends) == ["LocalVisBackend"]
    assert positional.fig_save_cfg == {"dpi": 50}
    # MMEngine's `image`: the first image to draw on
    image = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    assert np.array_equal(Visualizer("vis_test_image", image=image).get_image(), image)


def test_add_graph_reaches_every_backend(tmp_path):
    import torch

    class GraphRecorder(BaseVisBackend):
        def add_graph(self, model, data_batch, **kwargs):
            self.graph = (model, data_batch, kwargs)

    recorder = GraphRecorder()
    visualizer = Visualizer(
        "vis_test_graph", vis_backends=[dict(type="LocalVisBackend"), recorder], save_dir=tmp_path
    )
    model, batch = torch.nn.Linear(2, 1), [dict(inputs=torch.ones(2))]
    visualizer.add_graph(model, batch, verbose=True)  # LocalVisBackend has none: no-op
    assert recorder.graph == (model, batch, {"verbose": True})


CALLS = []


@VISBACKENDS.register_module(force=True)
class FailureRecorder(BaseVisBackend):
    """Records the ``mark_failed`` and ``close`` calls it gets."""

    def mark_failed(self, error):
        CALLS.append(("mark_failed", error))

    def close(self):
        CALLS.append(("close",))


@pytest.mark.parametrize("stage", ["train", "test"])
def test_a_failed_run_tells_the_backends_before_it_closes_them(failing_run, stage):
    error = RuntimeError("boom")
    CALLS.clear()
    failing_run([dict(type="FailureRecorder")], error, stage)
    assert [("mark_failed", error), ("close",)] == CALLS
    CALLS.clear()
    failing_run([dict(type="FailureRecorder")], None, stage)  # success: closed by after_run
    assert ("mark_failed", error) not in CALLS and CALLS[-1] == ("close",)
    CALLS.clear()
    failing_run([dict(type="FailureRecorder")], SystemExit(0), stage)  # a clean exit
    assert CALLS == [("close",)]
    # close keeps MMEngine's signature: visualizers that override it still work
    assert list(inspect.signature(Visualizer.close).parameters) == ["self"]


def test_a_failed_run_leaves_nothing_that_keeps_the_runner_alive(failing_run):
    # a backend kept the error, whose traceback held the Runner (and its dataloader workers)
    runner = weakref.ref(failing_run([dict(type="LocalVisBackend")], RuntimeError("boom")))
    gc.collect()
    assert runner() is None


def test_get_current_instance_before_any_visualizer_is_an_error_as_in_mmengine(monkeypatch):
    monkeypatch.setattr(Visualizer, "_instances", {})
    monkeypatch.setattr(Visualizer, "_current", None)
    with pytest.raises(RuntimeError, match=r"no instance exists yet; create one with Visualizer"):
        Visualizer.get_current_instance()  # writes would otherwise be dropped without a word
    assert Visualizer._instances == {}  # none was made on the way
    visualizer = Visualizer.get_instance("vis_test_first")
    assert Visualizer.get_current_instance() is visualizer


@pytest.mark.parametrize("name", ["NeptuneVisBackend", "AimVisBackend"])
def test_mmengines_backends_that_are_not_ported_say_so(tmp_path, name):
    with pytest.raises(NotImplementedError) as info:
        Visualizer(
            "vis_test_not_ported",
            vis_backends=[dict(type="LocalVisBackend"), dict(type=name, init_kwargs={})],
            save_dir=tmp_path,
        )
    message = str(info.value)
    assert "cfg.visualizer.vis_backends[1]" in message
    assert f"MMEngine's {name} is not ported" in message and "WandbVisBackend" in message
    assert "did you mean" not in message.lower()
