"""tools/dist_train.sh: two processes under torchrun train the digits example with DDP, and
the checkpoint they write loads in a single process (tools/test.py)."""

import json
import os
import sys
from pathlib import Path


def test_dist_train_then_single_process_test(tmp_path, free_port, run_in_repo):
    work = tmp_path / "work"
    env = dict(os.environ, PORT=str(free_port()), OMP_NUM_THREADS="1")
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"  # this venv's python
    train = run_in_repo(
        [
            "bash",
            "tools/dist_train.sh",
            "configs/digits_convnet.py",
            "2",
            "--work-dir",
            str(work),
            "--cfg-options",
            "train_cfg.max_epochs=2",
            "param_scheduler.1.end=2",
        ],
        env=env,
    )
    assert train.returncode == 0, train.stderr[-5000:]
    assert (
        "DistributedDataParallel" in train.stdout + train.stderr or (work / "epoch_2.pth").exists()
    )
    (log_dir,) = [p for p in work.iterdir() if p.is_dir()]
    rows = [
        json.loads(line) for line in (log_dir / "vis_data/scalars.json").read_text().splitlines()
    ]
    trained = [row["accuracy/top1"] for row in rows if "accuracy/top1" in row][-1]

    test = run_in_repo(
        [
            sys.executable,
            "tools/test.py",
            "configs/digits_convnet.py",
            str(work / "epoch_2.pth"),
            "--work-dir",
            str(tmp_path / "test"),
        ]
    )
    assert test.returncode == 0, test.stderr[-5000:]
    (test_dir,) = [path for path in (tmp_path / "test").iterdir() if path.is_dir()]
    tested = json.loads((test_dir / f"{test_dir.name}.json").read_text())["accuracy/top1"]
    # two ranks evaluated half of the validation set each; one process evaluates all of it
    assert abs(tested - trained) < 1e-6
