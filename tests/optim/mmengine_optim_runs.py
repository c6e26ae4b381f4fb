"""Runs MMEngine's own Runner for the optim tests that use it as the oracle.

    python tests/optim/mmengine_optim_runs.py OUT_DIR

- ``OUT_DIR/paramwise/epoch_1.pth``: one epoch (4 iterations) of oracle_net's model with
  ``PARAMWISE_OPTIM`` (one param group per parameter, as MMEngine makes them);
  ``OUT_DIR/resumed.pth``: the weights after MMEngine resumed it for a second epoch.
- ``OUT_DIR/lr_curves.json``: for each of oracle_net's ``LR_CURVES``, the ``train/*lr`` keys of
  the message hub in its order, and their value at every iteration of a 3-epoch run.
"""

from __future__ import annotations

import json
import os
import sys

import torch
from mmengine.model import BaseModel
from mmengine.runner import Runner

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from tests.checkpoint.tiny_data import loader
from tests.optim import oracle_net

OracleNet = oracle_net.model_class(BaseModel)


def runner(work_dir: str, max_epochs: int, optim_wrapper: dict, schedule: list, **kwargs) -> Runner:
    return Runner(
        model=OracleNet(),
        work_dir=work_dir,
        train_dataloader=loader(shuffle=False),
        train_cfg={"by_epoch": True, "max_epochs": max_epochs},
        optim_wrapper=optim_wrapper,
        param_scheduler=schedule,
        default_hooks={"logger": {"type": "LoggerHook", "interval": 100}},
        randomness={"seed": 0},
        log_level="WARNING",
        # a message hub of its own (MMEngine's is shared by runs named alike)
        experiment_name=os.path.basename(work_dir),
        **kwargs,
    )


def main(out_dir: str) -> None:
    # MMEngine's resume reads with torch.load's default, weights_only=True since torch 2.6,
    # which refuses its own HistoryBuffer; the file is the one written just before
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    work_dir = os.path.join(out_dir, "paramwise")
    runner(work_dir, 1, oracle_net.PARAMWISE_OPTIM, oracle_net.RESUME_SCHEDULE).train()
    resumed = runner(
        os.path.join(out_dir, "resumed"),
        2,
        oracle_net.PARAMWISE_OPTIM,
        oracle_net.RESUME_SCHEDULE,
        resume=True,
        load_from=os.path.join(work_dir, "epoch_1.pth"),
    )
    resumed.train()
    torch.save(resumed.model.state_dict(), os.path.join(out_dir, "resumed.pth"))

    curves = {}
    for name, (paramwise_cfg, schedule) in oracle_net.LR_CURVES.items():
        run = runner(
            os.path.join(out_dir, name), 3, oracle_net.lr_curve_optim(paramwise_cfg), schedule
        )
        run.train()
        scalars = run.message_hub.log_scalars
        curves[name] = {key: scalars[key].data[0].tolist() for key in scalars if key.endswith("lr")}
    with open(os.path.join(out_dir, "lr_curves.json"), "w") as file:
        json.dump(curves, file)


if __name__ == "__main__":
    main(sys.argv[1])
