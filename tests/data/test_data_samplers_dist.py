"""DefaultSampler and InfiniteSampler in two real processes (gloo on CPU)."""

from itertools import islice

import torch.distributed as dist

from runnerx.data import DefaultSampler, InfiniteSampler

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
