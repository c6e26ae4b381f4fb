"""WandbVisBackend: offline wandb runs, read back from the run's own transaction log."""

import json
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runnerx.config import Config
from runnerx.logging import WandbVisBackend
from runnerx.registry import VISBACKENDS

ROOT = Path(__file__).parents[2]
OFFLINE = dict(mode="offline", project="digits")


@pytest.fixture(scope="module", autouse=True)
def stop_wandb_service():
    """Stop wandb's service process and threads after these tests: later tests fork, and a
    process forked beside running threads can inherit locks they held."""
    yield
    wandb = sys.modules.get("wandb")
    if wandb is not None:
        wandb.teardown()


@pytest.fixture
def wandb_home(tmp_path, monkeypatch):
    """wandb installed, quiet, and keeping its caches and settings in tmp_path."""
    pytest.importorskip("wandb")
    for name in ("WANDB_CACHE_DIR", "WANDB_DATA_DIR", "WANDB_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / "wandb_home" / name.lower()))
    monkeypatch.setenv("WANDB_SILENT", "true")
    code = tmp_path / "project"  # what run.log_code finds: the current directory's .py files
    code.mkdir()
    (code / "train.py").write_text("print('training')\n")
    (code / "models").mkdir()
    (code / "models" / "net.py").write_text("NET = 1\n")
    for installed in (".venv/lib/python3.11/site-packages/torch", "site-packages/x", ".git"):
        (code / installed).mkdir(parents=True)
        (code / installed / "module.py").write_text("# not the project's code\n")
    monkeypatch.chdir(code)


def run_records(save_dir: Path, timeout: float = 20.0) -> list:
    """The records of the one offline run under ``save_dir``, once wandb has written them
    all: ``run.finish()`` returns before wandb's service has flushed the run's file, so this
    waits for the run's 'exit' record."""
    (path,) = save_dir.glob("wandb/offline-run-*/run-*.wandb")
    deadline = time.monotonic() + timeout
    while True:
        records = parse_run_file(path.read_bytes())
        if any(record.WhichOneof("record_type") == "exit" for record in records):
            return records
        if time.monotonic() > deadline:
            pytest.fail(f"{path} has no 'exit' record after {timeout} s")
        time.sleep(0.05)


def parse_run_file(data: bytes) -> list:
    """A ``run-<id>.wandb`` file's records, as far as written: after wandb's 7-byte header it
    is a LevelDB-style log (32 KiB blocks of chunks, each with a 7-byte header: crc, length,
    type), each record a ``wandb_internal_pb2.Record``."""
    from wandb.proto import wandb_internal_pb2

    assert data[:4] == b":W&B"
    records, chunks, position = [], [], 7
    while position + 7 <= len(data):
        left_in_block = 32768 - position % 32768
        if left_in_block < 7:  # a block's tail too short for a header is padding
            position += left_in_block
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        if position + 7 + length > len(data):  # still being written
            break
        chunks.append(data[position + 7 : position + 7 + length])
        position += 7 + length
        if kind in (1, 4):  # a whole record, or the last chunk of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(b"".join(chunks))
            records.append(record)
            chunks = []
    return records


def of_kind(records: list, kind: str) -> list:
    return [getattr(r, kind) for r in records if r.WhichOneof("record_type") == kind]


def values(items) -> dict:
    """Logged items by name (a name may come as a path: ``nested_key``)."""
    return {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in items}


def history_rows(records: list) -> list[dict]:
    """The logged rows, without wandb's own ``_step``, ``_runtime``, ``_timestamp``."""
    return [
        {key: value for key, value in values(row.item).items() if not key.startswith("_")}
        for row in of_kind(records, "history")
    ]


def run_config(records: list) -> dict:
    return {
        item.key: json.loads(item.value_json)
        for config in of_kind(records, "config")
        for item in config.update
        if item.key != "_wandb"
    }


def test_rows_config_metrics_and_code_are_in_the_run(tmp_path, wandb_home):
    save_dir = tmp_path / "vis"
    backend = VISBACKENDS.build(
        dict(
            type="WandbVisBackend",
            save_dir=str(save_dir),
            init_kwargs=OFFLINE,
            define_metric_cfg={"acc": "max"},
            log_code_name="digits_code",
        )
    )
    assert not save_dir.exists()  # the run starts on first use
    backend.add_scalars({"loss": 2.5, "lr": 0.01, "iter": 10}, step=10)
    backend.add_scalars({"loss": 1.5, "lr": 0.005, "iter": 20}, step=20)
    for accuracy in (0.5, 0.7, 0.6):
        backend.add_scalar("acc", accuracy, step=1)
    backend.add_config(Config(dict(model=dict(type="Net", depth=3), lr=0.1)))
    assert backend.experiment.run is not None  # the wandb module, its run ours
    backend.close()

    records = run_records(save_dir)
    assert history_rows(records) == [
        {"loss": 2.5, "lr": 0.01, "iter": 10},
        {"loss": 1.5, "lr": 0.005, "iter": 20},
        {"acc": 0.5},
        {"acc": 0.7},
        {"acc": 0.6},
    ]
    assert run_config(records) == {"model": {"type": "Net", "depth": 3}, "lr": 0.1}
    (metric,) = of_kind(records, "metric")
    assert metric.name == "acc" and metric.summary.max
    summary = {}
    for update in of_kind(records, "summary"):
        summary.update(values(update.update))
    assert summary["acc"] == {"max": 0.7}
    (code,) = of_kind(records, "artifact")
    assert code.type == "code" and code.name == "digits_code"
    # the project's own code, not a virtualenv or installed packages inside its folder
    assert sorted(entry.path for entry in code.manifest.contents) == ["models/net.py", "train.py"]


def test_commit_false_merges_rows_and_a_write_after_close_starts_a_new_run(tmp_path, wandb_home):
    backend = WandbVisBackend(
        tmp_path / "vis",
        init_kwargs=dict(OFFLINE, dir=str(tmp_path / "elsewhere")),
        define_metric_cfg=[dict(name="acc", summary="min")],
        commit=False,
    )
    backend.add_scalars({"loss": 1.0}, step=1)
    backend.add_scalars({"acc": 0.5}, step=1)
    backend.close()
    records = run_records(tmp_path / "elsewhere")
    assert history_rows(records) == [{"loss": 1.0, "acc": 0.5}]
    assert of_kind(records, "metric")[0].summary.min
    assert not (tmp_path / "vis" / "wandb").exists()  # init_kwargs' dir wins over save_dir

    backend.add_scalar("loss", 0.5)
    backend.close()
    assert len(list((tmp_path / "elsewhere").glob("wandb/offline-run-*"))) == 2


def test_runner_sends_the_logged_rows_and_the_config_to_wandb(tmp_path, wandb_home):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path / "work")
    cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
    cfg.default_hooks.checkpoint = None
    cfg.visualizer.vis_backends = [
        dict(type="LocalVisBackend"),
        dict(type="WandbVisBackend", init_kwargs=OFFLINE),
    ]
    from runnerx.runner import Runner

    runner = Runner.from_cfg(cfg)
    runner.train()

    vis_data = Path(runner.log_dir) / "vis_data"
    local = [json.loads(line) for line in (vis_data / "scalars.json").read_text().splitlines()]
    records = run_records(vis_data)
    rows = history_rows(records)
    # train rows at iterations 10 and 20 (of 23), then the validation row of epoch 1
    assert [row["step"] for row in local] == [10, 20, 1]
    assert rows == [{k: v for k, v in row.items() if k != "step"} for row in local]
    assert [row.get("iter") for row in rows[:2]] == [10, 20] and "accuracy/top1" in rows[2]
    config = run_config(records)
    assert config["train_cfg"]["max_epochs"] == 1
    assert config["model"] == json.loads(json.dumps(cfg.model.to_dict()))  # tuples as lists


def test_a_missing_wandb_names_the_install_command_and_the_config_key(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # import fails
    backend = WandbVisBackend(tmp_path)
    with pytest.raises(ImportError, match=r"pip install wandb .*runnerx\[wandb\].*vis_backends"):
        backend.add_scalars({"loss": 1.0}, step=1)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(TypeError, match="define_metric_cfg must be a dict"):
        WandbVisBackend(tmp_path, define_metric_cfg="acc")
    with pytest.raises(TypeError, match="init_kwargs must be a dict"):
        WandbVisBackend(tmp_path, init_kwargs=["offline"])
    with pytest.raises(TypeError, match="watch_kwargs must be a dict"):
        WandbVisBackend(tmp_path, watch_kwargs=["gradients"])


def test_add_graph_watches_the_model_with_watch_kwargs(tmp_path, wandb_home):
    import torch

    from runnerx.logging import Visualizer

    visualizer = Visualizer(
        name="wandb_add_graph",
        vis_backends=[
            dict(type="LocalVisBackend"),  # has no graph to record: does nothing
            dict(type="WandbVisBackend", init_kwargs=OFFLINE, watch_kwargs=dict(log_freq=1)),
        ],
        save_dir=tmp_path,
    )
    model = torch.nn.Linear(3, 1)
    visualizer.add_graph(model, data_batch=None)  # MMEngine: wandb.watch(model, **watch_kwargs)
    model(torch.ones(2, 3)).sum().backward()
    visualizer.add_scalars({"loss": 1.0}, step=1)
    visualizer.close()

    (row,) = history_rows(run_records(tmp_path / "vis_data"))
    assert row["loss"] == 1.0
    # the watch hooks logged a histogram of each parameter's gradient into the same row
    assert row["gradients/weight/_type"] == row["gradients/bias/_type"] == "histogram"


def test_importing_runnerx_logging_imports_neither_wandb_nor_mlflow():
    code = (
        "import sys, runnerx.logging; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'wandb', 'mlflow'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_an_image_is_logged_as_a_wandb_image_file(tmp_path, wandb_home):
    import numpy as np

    Image = pytest.importorskip("PIL.Image")
    image = np.random.default_rng(0).integers(0, 256, (6, 4, 3), dtype=np.uint8)
    backend = WandbVisBackend(tmp_path / "vis", init_kwargs=OFFLINE)
    backend.add_image("pred", image, step=3)
    backend.close()
    (row,) = history_rows(run_records(tmp_path / "vis"))  # nested keys: 'pred/path', ...
    assert row["pred/_type"] == "image-file" and row["pred/width"] == 4
    (run_dir,) = (tmp_path / "vis").glob("wandb/offline-run-*")
    written = np.asarray(Image.open(run_dir / "files" / row["pred/path"]))
    assert np.array_equal(written, image)


@pytest.mark.parametrize(
    ("error", "exit_code"), [(None, 0), (RuntimeError("boom"), 1), (KeyboardInterrupt(), 130)]
)
def test_a_failed_run_finishes_with_a_non_zero_exit_code(
    tmp_path, wandb_home, failing_run, error, exit_code
):
    runner = failing_run([dict(type="WandbVisBackend", init_kwargs=OFFLINE)], error)
    records = run_records(Path(runner.log_dir) / "vis_data")
    (exit_record,) = of_kind(records, "exit")
    assert exit_record.exit_code == exit_code  # W&B shows the run as failed (MMEngine: 0)
    assert len(history_rows(records)) == (4 if error is None else 1)
