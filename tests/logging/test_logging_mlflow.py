"""MLflowVisBackend: runs in a local MLflow file store, read back with ``MlflowClient``."""

import json
import os
import sys
from pathlib import Path

import pytest

from runnerx.config import Config
from runnerx.logging import MLflowVisBackend
from runnerx.registry import VISBACKENDS

ROOT = Path(__file__).parents[2]


@pytest.fixture
def mlflow(monkeypatch):
    """mlflow installed, allowed a file store, sending no telemetry; its global tracking URI
    and active runs are reset afterwards."""
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    yield mlflow
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)


def only_run(mlflow, tracking_uri: str, experiment: str):
    client = mlflow.MlflowClient(tracking_uri)
    (run,) = client.search_runs([client.get_experiment_by_name(experiment).experiment_id])
    return client, run


def history(client, run, name: str) -> list[tuple[int, float]]:
    return [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, name)]


def artifacts(client, run, folder: str | None = None) -> set[str]:
    """Every artifact's path in the run, folders opened."""
    found = set()
    for entry in client.list_artifacts(run.info.run_id, folder):
        found |= artifacts(client, run, entry.path) if entry.is_dir else {entry.path}
    return found


def test_metrics_params_tags_config_and_artifacts_read_back(tmp_path, mlflow):
    store = (tmp_path / "store").as_uri()
    work = tmp_path / "work"
    for name in ("run1/run1.log", "run1/vis_data/scalars.json", "notes.txt", "run1/.hidden.py"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(name)
    backend = VISBACKENDS.build(
        dict(
            type="MLflowVisBackend",
            save_dir=str(tmp_path / "vis"),
            exp_name="digits",
            run_name="convnet",
            tags=dict(team="vision"),
            params=dict(note="baseline"),
            tracking_uri=store,
        )
    )
    assert not (tmp_path / "vis").exists() and not (tmp_path / "store").exists()  # lazy
    backend.add_scalars({"loss": 2.5, "lr": 0.01, "step": 10}, step=10)
    backend.add_scalars({"loss": 1.5, "lr": 0.005}, step=20)
    backend.add_scalar("accuracy/top1", 96.25, step=1)
    with pytest.warns(UserWarning, match="MLflowVisBackend skips 'matrix'"):
        backend.add_scalars({"matrix": [[1, 0], [0, 1]]}, step=20)
    config = dict(
        model=dict(type="Net", depth=3, channels=[16, 32]),
        param_scheduler=[dict(type="LinearLR", end=20)],
        work_dir=str(work),
    )
    backend.add_config(Config(config))
    assert backend.experiment.active_run() is not None  # the mlflow module, our run active
    backend.close()

    client, run = only_run(mlflow, store, "digits")
    assert run.info.run_name == "convnet" and run.info.status == "FINISHED"
    assert run.data.tags["team"] == "vision"
    assert run.data.params == {
        "note": "baseline",
        "model.type": "Net",
        "model.depth": "3",
        "model.channels": "[16, 32]",
        "param_scheduler.0.type": "LinearLR",
        "param_scheduler.0.end": "20",
        "work_dir": str(work),
    }
    assert history(client, run, "loss") == [(10, 2.5), (20, 1.5)]
    assert history(client, run, "accuracy/top1") == [(1, 96.25)]
    assert sorted(run.data.metrics) == ["accuracy/top1", "loss", "lr"]  # 'step' is the step
    # the config's work_dir, by artifact_suffix: no .txt, no hidden file
    assert artifacts(client, run) == {"config.py", "run1/run1.log", "run1/vis_data/scalars.json"}
    text = client.download_artifacts(run.info.run_id, "config.py", str(tmp_path / "back"))
    assert Config.fromfile(text).to_dict() == Config(config).to_dict()


def test_default_store_is_save_dir_and_its_records_are_no_artifacts(tmp_path, mlflow):
    save_dir = tmp_path / "vis_data"
    backend = MLflowVisBackend(save_dir, artifact_suffix=("yaml", ".json"))
    backend.add_scalars({"loss": 0.5}, step=3)
    (save_dir / "scalars.json").write_text("{}\n")
    backend.close()
    client, run = only_run(mlflow, save_dir.as_uri(), "Default")
    assert history(client, run, "loss") == [(3, 0.5)]
    assert list(save_dir.glob("*/meta.yaml"))  # the store's own records are in save_dir...
    assert artifacts(client, run) == {"scalars.json"}  # ...and stay out of the artifacts


def test_default_store_refused_by_mlflow_is_explained(tmp_path, mlflow, monkeypatch):
    variables = pytest.importorskip("mlflow.environment_variables")
    if not hasattr(variables, "MLFLOW_ALLOW_FILE_STORE"):
        pytest.skip("this mlflow takes a file store without asking")
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE")
    backend = MLflowVisBackend(tmp_path)
    with pytest.raises(RuntimeError, match="MLFLOW_ALLOW_FILE_STORE=true.*tracking_uri"):
        backend.add_scalars({"loss": 0.5}, step=3)


def test_an_active_run_is_logged_into_and_left_open(tmp_path, mlflow):
    store = (tmp_path / "store").as_uri()
    mlflow.set_tracking_uri(store)
    mlflow.set_experiment("mine")
    with mlflow.start_run() as outer:
        backend = MLflowVisBackend(
            tmp_path, tracking_uri=store, tracked_config_keys=["model"], run_name="renamed"
        )
        backend.add_config(dict(model=dict(depth=3), lr=0.1))
        backend.add_scalar("loss", 0.25, step=7)
        backend.close()
        assert mlflow.active_run().info.run_id == outer.info.run_id
        with pytest.raises(KeyError, match=r"tracked_config_keys names \['optim'\]"):
            MLflowVisBackend(
                tmp_path, tracking_uri=store, tracked_config_keys=["optim"]
            ).add_config(dict(model=dict(depth=3)))
    client, run = only_run(mlflow, store, "mine")
    assert run.info.run_name == "renamed"
    assert run.data.params == {"model.depth": "3"}  # tracked_config_keys only
    assert history(client, run, "loss") == [(7, 0.25)]


def test_runner_logs_the_loss_steps_params_and_run_files_to_mlflow(tmp_path, mlflow):
    store = (tmp_path / "store").as_uri()
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path / "work")
    cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
    cfg.default_hooks.checkpoint = None
    cfg.visualizer.vis_backends = [
        dict(type="LocalVisBackend"),
        dict(type="MLflowVisBackend", exp_name="digits", tracking_uri=store),
    ]
    from runnerx.runner import Runner

    runner = Runner.from_cfg(cfg)
    runner.train()

    stamp = runner.timestamp
    scalars = Path(runner.log_dir) / "vis_data" / "scalars.json"
    local = [json.loads(line) for line in scalars.read_text().splitlines()]
    client, run = only_run(mlflow, store, "digits")
    # train rows at iterations 10 and 20 (of 23), then the validation row at epoch 1
    train, val = [row for row in local if "loss" in row], local[-1]
    assert [row["step"] for row in train] == [10, 20] and val["step"] == 1
    assert history(client, run, "loss") == [(row["step"], row["loss"]) for row in train]
    assert history(client, run, "accuracy/top1") == [(1, val["accuracy/top1"])]
    assert run.data.params["train_cfg.max_epochs"] == "1"
    assert run.data.params["model.type"] == "DigitsConvNet"
    assert artifacts(client, run) == {
        "config.py",
        "digits_convnet.py",
        f"{stamp}/{stamp}.log",
        f"{stamp}/vis_data/{stamp}.json",
        f"{stamp}/vis_data/config.py",
        f"{stamp}/vis_data/scalars.json",
    }
    log = client.download_artifacts(run.info.run_id, f"{stamp}/{stamp}.log", str(tmp_path / "b"))
    assert "Epoch(train) [1][20/23]" in Path(log).read_text()


def test_a_missing_mlflow_names_the_install_command_and_the_config_key(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import fails
    backend = MLflowVisBackend(tmp_path)
    with pytest.raises(ImportError, match=r"pip install mlflow .*runnerx\[mlflow\].*vis_backends"):
        backend.add_scalars({"loss": 1.0}, step=1)
    assert not os.listdir(tmp_path)


def test_bad_artifact_suffix_is_named(tmp_path):
    with pytest.raises(TypeError, match="artifact_suffix must be a str or strs"):
        MLflowVisBackend(tmp_path, artifact_suffix=[".log", 3])


@pytest.mark.parametrize(
    ("error", "status", "logged"),
    [
        (None, "FINISHED", [1, 2, 3, 4]),
        (RuntimeError("boom"), "FAILED", [1]),
        (KeyboardInterrupt(), "KILLED", [1]),
    ],
)
def test_a_failed_run_ends_failed_and_one_stopped_by_ctrl_c_killed(
    tmp_path, mlflow, failing_run, error, status, logged
):
    store = (tmp_path / "store").as_uri()
    failing_run([dict(type="MLflowVisBackend", exp_name="toy", tracking_uri=store)], error)
    assert mlflow.active_run() is None
    client, run = only_run(mlflow, store, "toy")
    assert run.info.status == status  # MMEngine: FINISHED whatever happened
    assert [step for step, _ in history(client, run, "loss")] == logged


def test_a_failure_is_recorded_once_and_systemexit_0_is_none(tmp_path, mlflow):
    store = (tmp_path / "store").as_uri()
    backend = MLflowVisBackend(tmp_path, exp_name="toy", tracking_uri=store)
    for step, error in enumerate([ValueError("bad batch"), None, SystemExit(0)]):
        backend.add_scalar("loss", 1.0, step=step)
        if error is not None:
            backend.mark_failed(error)
        backend.close()  # the next write starts a new run, which knows of no failure
    client = mlflow.MlflowClient(store)
    runs = client.search_runs([client.get_experiment_by_name("toy").experiment_id])
    statuses = {history(client, run, "loss")[0][0]: run.info.status for run in runs}
    assert statuses == {0: "FAILED", 1: "FINISHED", 2: "FINISHED"}
