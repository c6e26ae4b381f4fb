"""ClearMLVisBackend: offline ClearML tasks, read back from the offline session folder."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runnerx.config import Config
from runnerx.logging import ClearMLVisBackend
from runnerx.registry import VISBACKENDS

ROOT = Path(__file__).parents[2]
#: ClearML's HOCON parser (writing and reading the configuration) calls pyparsing's old names
pytestmark = pytest.mark.filterwarnings(r"ignore:'\w+' (argument is )?deprecated")
#: no patching of torch, argparse or the console, no monitor thread: these tests share a process
QUIET = dict(
    auto_connect_frameworks=False,
    auto_connect_arg_parser=False,
    auto_connect_streams=False,
    auto_resource_monitoring=False,
)


@pytest.fixture(scope="module")
def clearml_offline(tmp_path_factory):
    """clearml installed and offline for these tests, with a clearml.conf that reports from a
    thread (with the default reporting subprocess an offline task's close waits 10 s for it;
    ClearML reads its config once per process). Going back online needs a configured server,
    so the process stays offline; the environment is restored."""
    clearml = pytest.importorskip("clearml")
    conf = tmp_path_factory.mktemp("clearml") / "clearml.conf"
    conf.write_text("sdk.development.report_use_subprocess: false\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLEARML_CONFIG_FILE", str(conf))
        patch.setenv("CLEARML_OFFLINE_MODE", "1")  # what set_offline sets, undone afterwards
        clearml.Task.set_offline(True)
        yield clearml


@pytest.fixture
def clearml(tmp_path, monkeypatch, clearml_offline):
    """Offline clearml keeping this test's sessions in ``tmp_path / 'cache' / 'offline'``."""
    monkeypatch.setenv("CLEARML_CACHE_DIR", str(tmp_path / "cache"))
    return clearml_offline


def offline_session(tmp_path: Path) -> tuple[dict, list[dict], Path]:
    """The one offline session's task record, scalar events and folder."""
    (folder,) = (tmp_path / "cache" / "offline").glob("offline-*/")
    task = json.loads((folder / "task.json").read_text())
    events = []
    if (folder / "metrics.jsonl").exists():
        for line in (folder / "metrics.jsonl").read_text().splitlines():
            events += json.loads(line)
    return task, events, folder


def scalars(events: list[dict]) -> list[tuple[str, str, int, float]]:
    return [
        (e["metric"], e["variant"], e["iter"], e["value"])
        for e in events
        if e["type"] == "training_stats_scalar"
    ]


def configuration(task: dict) -> dict:
    """The connected configuration, parsed back from the HOCON text ClearML stores."""
    from clearml.utilities.pyhocon import ConfigFactory

    text = task["configuration"]["General"]["value"]
    tree = ConfigFactory.parse_string(text).as_plain_ordered_dict()
    return json.loads(json.dumps(tree))


def test_scalars_config_and_artifacts_are_in_the_offline_session(tmp_path, clearml):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    for name in ("net.py", "epoch_1.pth", "notes.txt", "sub/deep.py"):
        (work / name).write_text(name)
    backend = VISBACKENDS.build(
        dict(
            type="ClearMLVisBackend",
            init_kwargs=dict(project_name="digits", task_name="convnet", **QUIET),
        )
    )
    assert not (tmp_path / "cache").exists()  # the task starts on first use
    backend.add_scalars({"loss": 2.5, "lr": 0.01}, step=10)
    backend.add_scalars({"loss": 1.5, "lr": 0.005, "step": 20}, step=20)
    backend.add_scalar("accuracy/top1", 96.25, step=1)
    with pytest.warns(UserWarning, match="ClearMLVisBackend skips 'matrix'"):
        backend.add_scalars({"matrix": [[1, 0], [0, 1]]}, step=20)
    config = dict(model=dict(type="Net", depth=3, channels=(16, 32)), work_dir=str(work))
    backend.add_config(Config(config))
    assert backend.experiment.Task.current_task().name == "convnet"  # the clearml module
    backend.close()

    task, events, folder = offline_session(tmp_path)
    assert task["project_name"] == "digits" and task["name"] == "convnet"
    assert scalars(events) == [
        ("loss", "loss", 10, 2.5),
        ("lr", "lr", 10, 0.01),
        ("loss", "loss", 20, 1.5),
        ("lr", "lr", 20, 0.005),
        ("accuracy/top1", "accuracy/top1", 1, 96.25),
    ]
    assert configuration(task) == {
        "model": {"type": "Net", "depth": 3, "channels": [16, 32]},
        "work_dir": str(work),
    }
    # the work_dir's own files ending with '.py' or '.pth' (MMEngine's default), not deeper
    artifacts = {a["key"]: a["uri"] for a in task["execution"]["artifacts"]}
    assert sorted(artifacts) == ["epoch_1.pth", "net.py"]
    assert Path(artifacts["epoch_1.pth"]).read_text() == "epoch_1.pth"
    assert Path(artifacts["net.py"]).is_relative_to(folder)


def test_a_write_after_close_starts_a_new_task_and_close_without_config_uploads_nothing(
    tmp_path, clearml
):
    backend = ClearMLVisBackend(tmp_path / "unused", init_kwargs=dict(task_name="t", **QUIET))
    backend.close()  # never started: nothing to close
    backend.add_scalar("loss", 0.5, step=3)
    backend.close()
    task, events, _ = offline_session(tmp_path)
    assert scalars(events) == [("loss", "loss", 3, 0.5)]
    assert task["execution"]["artifacts"] == []
    assert not (tmp_path / "unused").exists()  # save_dir is not used, as in MMEngine
    backend.add_scalar("loss", 0.25, step=4)
    backend.close()
    assert len(list((tmp_path / "cache" / "offline").glob("offline-*/"))) == 2


def test_runner_reports_the_loss_steps_config_and_checkpoint_to_clearml(tmp_path, clearml):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path / "work")
    cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
    cfg.visualizer.vis_backends = [
        dict(type="LocalVisBackend"),
        dict(type="ClearMLVisBackend", init_kwargs=dict(task_name="digits", **QUIET)),
    ]
    from runnerx.runner import Runner

    runner = Runner.from_cfg(cfg)
    runner.train()

    scalars_file = Path(runner.log_dir) / "vis_data" / "scalars.json"
    local = [json.loads(line) for line in scalars_file.read_text().splitlines()]
    train, val = [row for row in local if "loss" in row], local[-1]
    task, events, _ = offline_session(tmp_path)
    reported = scalars(events)
    # train rows at iterations 10 and 20 (of 23), then the validation row at epoch 1
    assert [row["step"] for row in train] == [10, 20] and val["step"] == 1
    loss = [(step, value) for name, _, step, value in reported if name == "loss"]
    assert loss == [(row["step"], row["loss"]) for row in train]
    assert ("accuracy/top1", "accuracy/top1", 1, val["accuracy/top1"]) in reported
    config = configuration(task)
    assert config["train_cfg"]["max_epochs"] == 1
    assert config["model"]["type"] == "DigitsConvNet"
    artifacts = {a["key"] for a in task["execution"]["artifacts"]}
    assert artifacts == {"digits_convnet.py", "epoch_1.pth"}  # the dumped config, the checkpoint


def test_a_missing_clearml_names_the_install_command_and_the_config_key(monkeypatch):
    monkeypatch.setitem(sys.modules, "clearml", None)  # import fails
    backend = ClearMLVisBackend()
    with pytest.raises(ImportError, match=r"pip install clearml .*\[clearml\].*vis_backends"):
        backend.add_scalars({"loss": 1.0}, step=1)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="ClearMLVisBackend: init_kwargs must be a dict"):
        ClearMLVisBackend(init_kwargs="digits")
    with pytest.raises(TypeError, match="ClearMLVisBackend: artifact_suffix must be a str or strs"):
        ClearMLVisBackend(artifact_suffix=[".py", 3])


def test_importing_runnerx_logging_imports_neither_clearml_nor_dvclive():
    code = (
        "import sys, runnerx.logging; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'clearml', 'dvclive', 'dvc'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_an_image_is_reported_at_its_step(tmp_path, clearml):
    import numpy as np

    image = np.zeros((16, 24, 3), np.uint8)
    image[:8] = (255, 128, 0)  # orange above black
    backend = ClearMLVisBackend(init_kwargs=dict(project_name="digits", task_name="img", **QUIET))
    backend.add_image("sample", image, step=7)
    backend.add_image("sample", image.astype(np.float32) / 255, step=8)  # floats in [0, 1]
    backend.close()

    _, events, folder = offline_session(tmp_path)
    reported = [e for e in events if e["type"] == "training_debug_image"]
    assert [(e["metric"], e["variant"], e["iter"]) for e in reported] == [
        ("sample", "sample", 7),
        ("sample", "sample", 8),
    ]
    from PIL import Image

    for event in reported:  # the image files the offline session keeps (ClearML's JPEG)
        (path,) = folder.rglob(Path(event["key"]).name)
        stored = np.asarray(Image.open(path).convert("RGB")).astype(int)
        assert stored.shape == image.shape
        assert np.abs(stored - image).mean() < 8


def test_starting_the_task_leaves_the_runs_random_state_as_it_was(tmp_path, clearml):
    import random

    import numpy as np
    import torch

    torch.manual_seed(42), np.random.seed(42), random.seed(42)
    expected = (torch.rand(3), np.random.rand(3), random.random())
    torch.manual_seed(42), np.random.seed(42), random.seed(42)
    backend = ClearMLVisBackend(init_kwargs=dict(project_name="digits", task_name="rng", **QUIET))
    backend.add_scalar("loss", 1.0, step=1)  # Task.init, which seeds the generators itself
    drawn = (torch.rand(3), np.random.rand(3), random.random())
    backend.close()
    assert torch.equal(drawn[0], expected[0])
    assert np.array_equal(drawn[1], expected[1]) and drawn[2] == expected[2]


@pytest.mark.parametrize("error", [None, RuntimeError("boom")])
def test_a_failed_run_marks_the_task_failed_before_closing_it(
    tmp_path, clearml, monkeypatch, failing_run, error
):
    """An offline session records no task status, so the calls on the real Task are
    watched: ClearML's own close would mark the task completed."""
    calls = []
    for name in ("mark_failed", "close"):
        method = getattr(clearml.Task, name)

        def watched(task, *args, _method=method, _name=name, **kwargs):
            calls.append((_name, kwargs.get("status_reason")))
            return _method(task, *args, **kwargs)

        monkeypatch.setattr(clearml.Task, name, watched)
    backend = dict(type="ClearMLVisBackend", init_kwargs=dict(task_name="toy", **QUIET))
    failing_run([backend], error)
    failed = [("mark_failed", "RuntimeError: boom")] if error else []
    assert calls == [*failed, ("close", None)]
    _, events, _ = offline_session(tmp_path)
    assert [step for name, _, step, _ in scalars(events) if name == "loss"] == (
        [1] if error else [1, 2, 3, 4]
    )
