"""DefaultSampler and InfiniteSampler in two real processes (gloo on CPU), and what the
dataloader builder decides there about a rank whose share is empty."""

import os
from itertools import islice
from pathlib import Path

import torch.distributed as dist

from runnerx import Config
from runnerx.data import DefaultSampler, InfiniteSampler, build_dataloader
from runnerx.runner import Runner

ROOT = Path(__file__).resolve().parents[2]

DATASET = list(range(11))  # 11 samples over 2 ranks: round_up pads one


def sample_on_rank(rank: int, out_dir: str) -> dict:
    dist.init_process_group("gloo", rank=rank, world_size=2)
    seeded = DefaultSampler(DATASET, shuffle=True, seed=3)
    results = dict(
        rank_world=[seeded.rank, seeded.world_size],
        length=len(seeded),
        epoch0=list(seeded),
        epoch0_again=list(seeded),
    )
    seeded.set_epoch(1)
    results["epoch1"] = list(seeded)
    results["no_round_up"] = list(DefaultSampler(DATASET, seed=3, round_up=False))
    unseeded = DefaultSampler(DATASET, shuffle=True, seed=None)
    results["unseeded_seed"] = unseeded.seed
    results["unseeded"] = list(unseeded)
    results["infinite"] = list(islice(InfiniteSampler(DATASET, seed=5), 17))
    return results


def interleave(per_rank: list[list[int]]) -> list[int]:
    return [index for group in zip(*per_rank) for index in group]


def test_samplers_split_the_data_between_two_real_ranks(tmp_path, spawn_ranks):
    ranks = spawn_ranks(sample_on_rank, tmp_path, world_size=2, timeout=120)

    assert [r["rank_world"] for r in ranks] == [[0, 2], [1, 2]]
    assert [r["length"] for r in ranks] == [6, 6]
    # every index once, plus one padding sample repeated from the start of the order
    epoch0 = interleave([r["epoch0"] for r in ranks])
    assert sorted(epoch0[:11]) == DATASET and epoch0[11] == epoch0[0]
    assert epoch0[:11] != DATASET  # shuffled
    # same seed, same order: again in the epoch, and as computed by one process alone
    assert [r["epoch0_again"] for r in ranks] == [r["epoch0"] for r in ranks]
    alone = [list(DefaultSampler(DATASET, seed=3, rank=r, world_size=2)) for r in range(2)]
    assert alone == [r["epoch0"] for r in ranks]
    # set_epoch reorders, still a cover
    epoch1 = interleave([r["epoch1"] for r in ranks])
    assert sorted(epoch1[:11]) == DATASET and epoch1 != epoch0
    # without round_up: no padding, the last rank gets fewer
    assert [len(r["no_round_up"]) for r in ranks] == [6, 5]
    assert sorted(ranks[0]["no_round_up"] + ranks[1]["no_round_up"]) == DATASET
    # seed=None: one seed drawn on rank 0 for all, so the ranks still split the data
    assert ranks[0]["unseeded_seed"] == ranks[1]["unseeded_seed"]
    assert sorted(interleave([r["unseeded"] for r in ranks])[:11]) == DATASET
    # the infinite stream: every pass a new permutation, each sample once per pass
    stream = interleave([r["infinite"] for r in ranks])
    assert sorted(stream[:11]) == DATASET and sorted(stream[11:22]) == DATASET
    assert stream[:11] != stream[11:22]


def build_on_rank(rank: int, out_dir: str) -> dict:
    """What two ranks decide about a val set of one sample, split without padding."""
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    one_sample = dict(type="DigitsDataset", split="val", val_ratio=0.0006)
    unpadded = dict(type="DefaultSampler", shuffle=False, round_up=False)
    cfg.val_dataloader = {**cfg.val_dataloader, "dataset": one_sample, "sampler": unpadded}
    cfg.work_dir, cfg.launcher = out_dir, "pytorch"
    runner = Runner.from_cfg(cfg)
    results = dict(metrics=runner.val(), batches=len(runner.val_loop.dataloader))
    try:  # too few samples for a full batch on any rank: refused alike on both
        build_dataloader({**cfg.val_dataloader, "drop_last": True}, cfg_key="val_dataloader")
    except ValueError as err:
        results["drop_last"] = str(err)
    return results


def test_a_rank_whose_val_share_is_empty_evaluates_nothing_and_the_other_scores(
    tmp_path, spawn_ranks
):
    ranks = spawn_ranks(build_on_rank, tmp_path, world_size=2, timeout=120)

    assert [r["batches"] for r in ranks] == [1, 0]  # one sample, unpadded: rank 1 has none
    assert ranks[0]["metrics"] == ranks[1]["metrics"]
    assert ranks[0]["metrics"]["accuracy/top1"] in (0.0, 100.0)  # over that one sample
    assert {r["drop_last"] for r in ranks} == {
        "val_dataloader yields no batches: its dataset has 1 samples (at most 1 on each of 2 "
        "ranks), and batch_size=256 with drop_last=True leaves no full batch; lower "
        "val_dataloader.batch_size or set drop_last=False"
    }
