"""DVCLiveVisBackend: DVCLive's local files (metrics .tsv and .json, params.yaml, the DVC
files of the artifacts), read back from disk; no Git repository."""

import hashlib
import json
import sys
from pathlib import Path

import pytest

from runnerx.config import Config
from runnerx.logging import DVCLiveVisBackend
from runnerx.registry import VISBACKENDS

ROOT = Path(__file__).parents[2]
NO_EXPERIMENT = dict(save_dvc_exp=False)  # a DVC experiment needs a Git commit
#: DVC's own use of pygtrie, when it tracks an artifact
pytestmark = pytest.mark.filterwarnings("ignore:_NoneStep.value:DeprecationWarning")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """dvclive installed; the current directory a fresh folder in no Git or DVC repository."""
    pytest.importorskip("dvclive")
    yaml = pytest.importorskip("yaml")
    from scmrepo.exceptions import SCMError
    from scmrepo.git import Git

    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    with pytest.raises(SCMError):
        Git().root_dir  # noqa: B018
    monkeypatch.setenv("DVC_NO_ANALYTICS", "1")
    return folder, yaml


def metric(save_dir: Path, name: str) -> list[tuple[int, float]]:
    """A metric's rows in ``plots/metrics/<name>.tsv``: (step, value)."""
    lines = (save_dir / "plots" / "metrics" / f"{name}.tsv").read_text().splitlines()
    assert lines[0] == f"step\t{name.split('/')[-1]}"
    return [(int(step), float(value)) for step, value in (line.split("\t") for line in lines[1:])]


def tracked(yaml, path: Path) -> bool:
    """Whether DVC tracks ``path`` (its ``.dvc`` file names it, with its content's md5)."""
    dvc_file = path.with_name(path.name + ".dvc")
    if not dvc_file.exists():
        return False
    (out,) = yaml.safe_load(dvc_file.read_text())["outs"]
    assert out["path"] == path.name
    assert out["md5"] == hashlib.md5(path.read_bytes()).hexdigest()
    return True


def test_metrics_params_and_artifacts_are_in_dvclive_files(project):
    import numpy as np
    import torch

    folder, yaml = project
    save_dir = folder / "vis"
    backend = VISBACKENDS.build(
        dict(type="DVCLiveVisBackend", save_dir=str(save_dir), init_kwargs=NO_EXPERIMENT)
    )
    assert not save_dir.exists() and not (folder / ".dvc").exists()  # started on first use
    backend.add_scalars({"loss": 2.5, "lr": 0.01}, step=10)
    backend.add_scalars({"loss": 1.5, "lr": 0.005, "step": 20}, step=20)
    backend.add_scalar("accuracy/top1", 96.25, step=1)
    with pytest.warns(UserWarning, match="DVCLiveVisBackend skips 'matrix'"):
        backend.add_scalars({"matrix": [[1, 0], [0, 1]]}, step=20)
    backend.add_config(
        Config(dict(model=dict(type="Net", channels=(16, 32)), mean=np.array([0.5]), lr=0.1))
    )
    backend.add_scalar("loss", torch.tensor(0.75), step=30)
    for name in ("scalars.json", "sub/config.py", "notes.txt", ".hidden.py"):
        (save_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (save_dir / name).write_text(name)
    backend.close()

    assert metric(save_dir, "loss") == [(10, 2.5), (20, 1.5), (30, 0.75)]
    assert metric(save_dir, "lr") == [(10, 0.01), (20, 0.005)]
    assert metric(save_dir, "accuracy/top1") == [(1, 96.25)]
    assert not (save_dir / "plots" / "metrics" / "step.tsv").exists()  # the step, no metric
    latest = json.loads((save_dir / "metrics.json").read_text())
    assert latest == {"loss": 0.75, "lr": 0.005, "accuracy": {"top1": 96.25}, "step": 30}
    params = yaml.safe_load((save_dir / "params.yaml").read_text())
    assert params == {"model": {"type": "Net", "channels": [16, 32]}, "mean": [0.5], "lr": 0.1}
    # outside Git, the current directory became a DVC repository, as in MMEngine
    assert (folder / ".dvc").is_dir()
    # save_dir's files by artifact_suffix ('.json', '.py', 'yaml'), DVCLive's own aside
    assert tracked(yaml, save_dir / "scalars.json") and tracked(yaml, save_dir / "sub/config.py")
    for untracked in ("notes.txt", ".hidden.py", "metrics.json", "params.yaml"):
        assert not tracked(yaml, save_dir / untracked), untracked


def test_an_image_is_saved_as_a_png_under_its_name(project):
    import numpy as np
    from PIL import Image

    folder, _ = project
    image = np.zeros((4, 6, 3), np.uint8)
    image[1, 2] = (255, 128, 0)
    backend = DVCLiveVisBackend(folder / "vis", init_kwargs=NO_EXPERIMENT)
    backend.add_image("sample", image, step=7)
    backend.add_image("gray", np.full((3, 5), 0.5, np.float32), step=7)  # floats in [0, 1]
    backend.close()
    images = folder / "vis" / "plots" / "images"
    assert (np.asarray(Image.open(images / "sample.png").convert("RGB")) == image).all()
    assert (np.asarray(Image.open(images / "gray.png")) == 127).all()


def test_an_existing_dvc_repository_is_kept_and_mmengine_defaults_work_without_git(project):
    from dvc.repo import Repo

    folder, yaml = project
    Repo.init(str(folder), no_scm=True)
    (folder / ".dvc" / "config.local").write_text("# the user's settings\n")
    backend = DVCLiveVisBackend(folder / "vis", artifact_suffix=".json")  # save_dvc_exp=True
    backend.add_scalar("loss", 0.5, step=3)
    backend.close()  # a second close does nothing
    backend.close()
    assert (folder / ".dvc" / "config.local").read_text() == "# the user's settings\n"
    assert metric(folder / "vis", "loss") == [(3, 0.5)]
    assert not tracked(yaml, folder / "vis" / "metrics.json")


def test_runner_logs_the_loss_steps_params_and_run_files_with_dvclive(project):
    folder, yaml = project
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(folder / "work")
    cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
    cfg.default_hooks.checkpoint = None
    cfg.visualizer.vis_backends = [
        dict(type="LocalVisBackend"),
        dict(type="DVCLiveVisBackend", init_kwargs=NO_EXPERIMENT),
    ]
    from runnerx.runner import Runner

    runner = Runner.from_cfg(cfg)
    runner.train()

    vis_data = Path(runner.log_dir) / "vis_data"  # the save_dir of both backends
    local = [json.loads(line) for line in (vis_data / "scalars.json").read_text().splitlines()]
    train, val = [row for row in local if "loss" in row], local[-1]
    # train rows at iterations 10 and 20 (of 23), then the validation row at epoch 1
    assert [row["step"] for row in train] == [10, 20] and val["step"] == 1
    assert metric(vis_data, "loss") == [(row["step"], row["loss"]) for row in train]
    assert metric(vis_data, "accuracy/top1") == [(1, val["accuracy/top1"])]
    params = yaml.safe_load((vis_data / "params.yaml").read_text())
    assert params["train_cfg"]["max_epochs"] == 1 and params["model"]["type"] == "DigitsConvNet"
    for name in ("scalars.json", f"{runner.timestamp}.json", "config.py"):  # LocalVisBackend's
        assert tracked(yaml, vis_data / name), name


def test_a_missing_dvclive_names_the_install_command_and_the_config_key(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dvclive", None)  # import fails
    backend = DVCLiveVisBackend(tmp_path)
    with pytest.raises(ImportError, match=r"pip install dvclive .*\[dvclive\].*vis_backends"):
        backend.add_scalars({"loss": 1.0}, step=1)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(TypeError, match="DVCLiveVisBackend: init_kwargs must be a dict"):
        DVCLiveVisBackend(tmp_path, init_kwargs=["offline"])
    with pytest.raises(TypeError, match="DVCLiveVisBackend: artifact_suffix must be a str or strs"):
        DVCLiveVisBackend(tmp_path, artifact_suffix=(".json", None))
