"""Two real ranks (spawned processes, gloo): each evaluates its interleaved share of the
dataset, and both get the metrics a single process gets from all of it."""

import logging
import os
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

from runnerx.evaluator import Accuracy, BaseMetric, DumpResults, Evaluator, Perplexity
from runnerx.fileio import load
from runnerx.logging import make_logger_current

WORLD_SIZE = 2
SIZE = 11  # odd: rank 1's share is one sample shorter than rank 0's


class SampleOrder(BaseMetric):
    """Reports the sample indices in the order compute_metrics receives them."""

    default_prefix = "order"

    def process(self, data_batch, data_samples):
        if isinstance(data_samples, dict):
            self.results.extend(data_samples["index"].tolist())
        else:
            self.results.extend(int(sample["index"]) for sample in data_samples)

    def compute_metrics(self, results):
        return {"indices": list(results)}


class FailsOnCompute(BaseMetric):
    default_prefix = "fails"

    def process(self, data_batch, data_samples):
        self.results.append(1)

    def compute_metrics(self, results):
        raise ZeroDivisionError("no metric today")


class ReturnsAFloat(FailsOnCompute):
    """A metric whose compute_metrics returns a score, not a dict of them."""

    def compute_metrics(self, results):
        return 1.0


class NoPrefix(SampleOrder):
    default_prefix = None


class KeepRecords(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(f"{record.levelname} - {record.getMessage()}")


def dataset():
    """Per-sample predictions for every metric, fixed by a seed."""
    generator = torch.Generator().manual_seed(3)
    scores = torch.rand(SIZE, 6, generator=generator).softmax(dim=1)
    labels = torch.randint(6, (SIZE,), generator=generator)
    nll = torch.rand(SIZE, generator=generator) * 20
    tokens = torch.randint(1, 9, (SIZE,), generator=generator)
    return [
        dict(
            index=i, pred_score=scores[i], gt_label=labels[i], nll_sum=nll[i], num_tokens=tokens[i]
        )
        for i in range(SIZE)
    ]


def batched(samples):
    return {key: torch.stack([torch.as_tensor(s[key]) for s in samples]) for key in samples[0]}


def make_evaluator():
    return Evaluator([Accuracy(topk=(1, 3), thrs=(0.0, 0.2)), Perplexity(), SampleOrder()])


def evaluate(shares, size, as_batches):
    """Process ``shares`` in batches of 2 (batched tensors or per-sample dicts), evaluate."""
    evaluator = make_evaluator()
    for start in range(0, len(shares), 2):
        chunk = shares[start : start + 2]
        evaluator.process(batched(chunk) if as_batches else chunk, data_batch=None)
    return evaluator.evaluate(size)


def run_rank(rank, out_dir):
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=60))
    samples = dataset()
    outcome = {}
    # what a sampler without padding gives: rank r gets samples r, r + 2, ...
    outcome["uneven"] = evaluate(samples[rank::WORLD_SIZE], SIZE, as_batches=True)
    # what a padding sampler gives: equal shares, rank 1's topped up with sample 0 again
    padded = (samples + samples[:1])[rank::WORLD_SIZE]
    outcome["padded"] = evaluate(padded, SIZE, as_batches=False)
    # collect_dir: the ranks leave their results as files in a directory both reach
    through_files = SampleOrder(collect_dir=os.path.join(out_dir, "collect"))
    through_files.process(None, samples[rank::WORLD_SIZE])
    outcome["collect_dir"] = through_files.evaluate(SIZE)
    dist.barrier()
    outcome["left_in_collect_dir"] = os.listdir(os.path.join(out_dir, "collect"))
    for key, failing in (("failure", FailsOnCompute()), ("not_a_dict", ReturnsAFloat())):
        failing.process(None, None)
        try:
            failing.evaluate(SIZE)
        except Exception as err:
            outcome[key] = f"{type(err).__name__}: {err}"
    # the "no prefix" warning: a line of the current logger, on rank 0 only
    logger, records = logging.Logger(f"rank{rank}"), KeepRecords()
    logger.addHandler(records)
    make_logger_current(logger)
    NoPrefix()
    outcome["logged"] = records.messages
    outcome.update(offline_outcomes(rank))
    outcome.update(empty_share_outcomes(rank, out_dir))
    # last: a collect_dir per rank (not shared); before the fix rank 1 went on waiting
    not_shared = SampleOrder(collect_dir=os.path.join(out_dir, f"own_{rank}"))
    not_shared.process(None, samples[rank::WORLD_SIZE])
    outcome["not_shared"] = error_of(lambda: not_shared.evaluate(SIZE))
    return outcome


def error_of(call):
    try:
        call()
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return None


def offline_outcomes(rank):
    """offline_evaluate with each rank's own part, and with the whole list on every rank."""
    samples = dataset()
    evaluator = Evaluator(SampleOrder())
    logger, records = logging.Logger(f"offline{rank}"), KeepRecords()
    logger.addHandler(records)
    make_logger_current(logger)
    own_part = evaluator.offline_evaluate(samples[rank::WORLD_SIZE], chunk_size=2)
    own_part_logged = list(records.messages)
    whole = evaluator.offline_evaluate(samples, data=list(range(SIZE)))
    return dict(
        offline_own_part=own_part,
        own_part_logged=own_part_logged,
        offline_whole=whole,
        whole_logged=records.messages[len(own_part_logged) :],
    )


def empty_share_outcomes(rank, out_dir):
    """Fewer samples than ranks (rank 1's share is empty), then no samples at all."""
    logger, records = logging.Logger(f"empty{rank}"), KeepRecords()
    records.setLevel(logging.WARNING)  # not DumpResults' "saved the predictions" line
    logger.addHandler(records)
    make_logger_current(logger)
    dump_path = os.path.join(out_dir, "one.pkl")
    evaluator = Evaluator([SampleOrder(), DumpResults(out_file_path=dump_path)])
    if rank == 0:
        evaluator.process([dict(index=0)])
    one_sample = evaluator.evaluate(1)
    one_sample_logged = list(records.messages)
    records.messages.clear()
    no_sample = Evaluator(SampleOrder()).evaluate(0)
    return dict(
        one_sample=one_sample,
        one_sample_logged=one_sample_logged,
        dumped=load(dump_path),
        no_sample=no_sample,
        no_sample_logged=records.messages,
    )


@pytest.fixture(scope="module")
def rank_outcomes(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("ranks"), WORLD_SIZE, timeout=120)


@pytest.mark.parametrize("scenario", ["uneven", "padded"])
def test_each_rank_gets_the_single_process_metrics(rank_outcomes, scenario):
    expected = evaluate(dataset(), SIZE, as_batches=True)
    assert expected["order/indices"] == list(range(SIZE))
    assert set(expected) >= {"accuracy/top1_thr-0.20", "lm/perplexity"}
    for outcome in rank_outcomes:
        assert outcome[scenario] == expected


def test_collect_dir_gathers_through_files_and_leaves_none(rank_outcomes):
    for outcome in rank_outcomes:
        assert outcome["collect_dir"] == {"order/indices": list(range(SIZE))}
        assert outcome["left_in_collect_dir"] == []


def test_a_metric_without_prefix_logs_one_warning_on_rank_zero_only(rank_outcomes):
    assert rank_outcomes[0]["logged"] == [
        "WARNING - metric NoPrefix has no prefix (neither prefix= nor default_prefix is set), "
        "so its keys are logged without one"
    ]
    assert rank_outcomes[1]["logged"] == []


def test_compute_metrics_returning_no_dict_is_named_on_every_rank(rank_outcomes):
    expected = (
        "TypeError: ReturnsAFloat.compute_metrics must return a dict of metric names and "
        "values, e.g. dict(accuracy=0.93), but returned float 1.0"
    )
    assert rank_outcomes[0]["not_a_dict"] == expected
    assert rank_outcomes[1]["not_a_dict"] == (
        f"RuntimeError: ReturnsAFloat.compute_metrics failed on rank 0: {expected}"
    )


def test_a_failure_on_rank_zero_reaches_the_other_rank(rank_outcomes):
    assert rank_outcomes[0]["failure"] == "ZeroDivisionError: no metric today"
    assert rank_outcomes[1]["failure"] == (
        "RuntimeError: FailsOnCompute.compute_metrics failed on rank 0: "
        "ZeroDivisionError: no metric today"
    )


def test_offline_evaluate_sums_the_ranks_parts(rank_outcomes):
    for outcome in rank_outcomes:
        assert outcome["offline_own_part"] == {"order/indices": list(range(SIZE))}


def test_offline_evaluate_with_the_whole_list_on_every_rank_warns_on_rank_zero(rank_outcomes):
    # equal parts cannot be told from the whole list on every rank: a warning, not an error
    for outcome in rank_outcomes:
        assert outcome["own_part_logged"] == []
        twice = [index for index in range(SIZE) for _ in range(2)]
        assert outcome["offline_whole"] == {"order/indices": twice}
    (warning,) = rank_outcomes[0]["whole_logged"]
    assert warning.startswith(
        f"WARNING - Evaluator.offline_evaluate: all 2 ranks passed the same {SIZE}"
    )
    assert "data_samples[rank::world_size]" in warning
    assert rank_outcomes[1]["whole_logged"] == []


def test_an_empty_share_is_no_warning_but_an_empty_evaluation_is_on_rank_zero(rank_outcomes):
    for outcome in rank_outcomes:
        assert outcome["one_sample"] == {"order/indices": [0]}
        assert outcome["one_sample_logged"] == []  # neither SampleOrder nor DumpResults
        assert outcome["no_sample"] == {"order/indices": []}
    assert rank_outcomes[0]["dumped"] == [dict(index=0)]
    assert rank_outcomes[0]["no_sample_logged"] == [
        "WARNING - SampleOrder got no results: its process() did not add anything to "
        "self.results on any rank (or the dataloader was empty)"
    ]
    assert rank_outcomes[1]["no_sample_logged"] == []


def test_a_collect_dir_not_every_rank_reaches_is_an_error_on_every_rank(rank_outcomes, tmp_path):
    for rank, outcome in enumerate(rank_outcomes):
        assert outcome["not_shared"].startswith(
            "FileNotFoundError: rank 0 did not find the results of ranks [1] in tmpdir="
        )
        assert f"own_{rank}" in outcome["not_shared"]
        assert "every rank can reach" in outcome["not_shared"]
