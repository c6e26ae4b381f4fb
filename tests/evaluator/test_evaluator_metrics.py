"""The built-in metrics against hand computations and torch: Accuracy and Perplexity."""

import pytest
import torch
import torch.nn.functional as F

from runnerx.evaluator import Accuracy, Perplexity

# Four samples over five classes; where the true label ranks among the scores (0 = best):
# sample 0 -> 0 (score 0.5), 1 -> 1 (0.2), 2 -> 4 (0.05), 3 -> 2 (0.2).
SCORES = torch.tensor(
    [
        [0.50, 0.20, 0.10, 0.12, 0.08],
        [0.10, 0.60, 0.20, 0.06, 0.04],
        [0.05, 0.10, 0.15, 0.30, 0.40],
        [0.25, 0.35, 0.15, 0.05, 0.20],
    ]
)
LABELS = torch.tensor([0, 2, 0, 4])


def evaluate(metric, *batches):
    for batch in batches:
        metric.process(None, batch)
    return metric.evaluate(sum(len(batch["gt_label"]) for batch in batches))


def per_sample(scores, labels, label_form=int):
    return [dict(pred_score=s, gt_label=label_form(g)) for s, g in zip(scores, labels)]


def test_accuracy_topk_matches_hand_computation():
    metrics = evaluate(Accuracy(topk=(1, 2, 3, 5)), dict(pred_score=SCORES, gt_label=LABELS))
    assert metrics == {
        "accuracy/top1": 25.0,
        "accuracy/top2": 50.0,
        "accuracy/top3": 75.0,
        "accuracy/top5": 100.0,
    }


def test_accuracy_topk_as_int_gives_one_key():
    metrics = evaluate(Accuracy(topk=2), dict(pred_score=SCORES, gt_label=LABELS))
    assert metrics == {"accuracy/top2": 50.0}


@pytest.mark.parametrize(
    "label_form",
    [int, lambda g: g, lambda g: g.reshape(1)],
    ids=["int", "0-dim tensor", "1-element tensor"],
)
def test_accuracy_per_sample_dicts_equal_batched_tensors(label_form):
    batched = Accuracy(topk=(1, 3))
    batched.process(None, dict(pred_score=SCORES[:3], gt_label=LABELS[:3]))
    batched.process(None, dict(pred_score=SCORES[3:], gt_label=LABELS[3:]))
    samples = Accuracy(topk=(1, 3))
    samples.process(None, per_sample(SCORES[:2], LABELS[:2], label_form))
    samples.process(None, per_sample(SCORES[2:], LABELS[2:], label_form))
    assert (
        samples.evaluate(4)
        == batched.evaluate(4)
        == {
            "accuracy/top1": 25.0,
            "accuracy/top3": 75.0,
        }
    )


def test_accuracy_thresholds_name_keys_as_mmpretrain_and_count_only_scores_above():
    metric = Accuracy(topk=(1, 2, 5), thrs=(0.0, 0.25, None))
    metrics = evaluate(metric, dict(pred_score=SCORES, gt_label=LABELS))
    assert metrics == {
        "accuracy/top1_thr-0.00": 25.0,
        "accuracy/top1_thr-0.25": 25.0,
        "accuracy/top1_no-thr": 25.0,
        "accuracy/top2_thr-0.00": 50.0,
        "accuracy/top2_thr-0.25": 25.0,  # sample 1's hit scores 0.2
        "accuracy/top2_no-thr": 50.0,
        "accuracy/top5_thr-0.00": 100.0,
        "accuracy/top5_thr-0.25": 25.0,
        "accuracy/top5_no-thr": 100.0,
    }


def test_accuracy_default_threshold_drops_hits_with_non_positive_scores():
    logits = torch.tensor([[-1.0, -2.0], [3.0, -4.0]])
    batch = dict(pred_score=logits, gt_label=torch.tensor([0, 0]))
    assert evaluate(Accuracy(), batch) == {"accuracy/top1": 50.0}
    assert evaluate(Accuracy(thrs=None), batch) == {"accuracy/top1": 100.0}


def test_accuracy_with_pred_label_reports_top1_only():
    samples = [
        dict(pred_label=torch.tensor([1]), gt_label=1),
        dict(pred_label=torch.tensor([0]), gt_label=2),
        dict(pred_label=torch.tensor([2]), gt_label=2),
    ]
    metric = Accuracy(topk=(1, 5), thrs=(0.0, 0.5))
    metric.process(None, samples)
    metric.process(None, dict(pred_label=torch.tensor([3]), gt_label=torch.tensor([0])))
    assert metric.evaluate(4) == {"accuracy/top1": 50.0}


def test_accuracy_topk_above_number_of_classes_is_a_clear_error():
    metric = Accuracy(topk=(1, 5))
    with pytest.raises(ValueError, match=r"top-5 .* only 3 classes.*topk"):
        metric.process(None, dict(pred_score=torch.rand(2, 3), gt_label=torch.tensor([0, 1])))


@pytest.mark.parametrize(
    ("batch", "message"),
    [
        # a one-hot gt_label of a last batch of one sample broadcast to 3 wrong rows
        (
            dict(pred_score=torch.eye(3)[:1], gt_label=torch.eye(3)[:1]),
            r"one class index per sample in gt_label \(1 for pred_score of shape \(1, 3\).*"
            r"but got gt_label of shape \(1, 3\); .* gt_label=labels.argmax\(-1\)",
        ),
        (
            [dict(pred_score=torch.rand(3), gt_label=torch.eye(3)[0]) for _ in range(4)],
            r"gt_label \(4 for pred_score of shape \(4, 3\).*gt_label of shape \(4, 3\)",
        ),
        (
            dict(pred_score=torch.rand(4, 3), gt_label=torch.tensor([0, 1])),
            r"gt_label \(4 for pred_score of shape \(4, 3\).*gt_label of shape \(2,\)",
        ),
        (
            dict(pred_label=torch.tensor([1]), gt_label=torch.eye(3)[:1]),
            r"gt_label \(1 for a batch of size 1.*gt_label of shape \(1, 3\)",
        ),
        (
            [dict(pred_label=torch.eye(3)[1], gt_label=1)],
            r"pred_label \(1 for a batch of size 1.*pred_label of shape \(1, 3\)",
        ),
    ],
    ids=["one-hot-of-one", "one-hot-per-sample", "other-batch-size", "label-one-hot", "pred-label"],
)
def test_accuracy_wants_one_label_per_sample_and_says_what_it_got(batch, message):
    metric = Accuracy()
    with pytest.raises(ValueError, match=message):
        metric.process(None, batch)
    assert metric.results == []


def test_accuracy_missing_field_names_it():
    with pytest.raises(KeyError, match="Accuracy needs 'gt_label'.*pred_score"):
        Accuracy().process(None, [dict(pred_score=torch.rand(3))])


@pytest.mark.parametrize(
    ("predictions", "got"),
    [(torch.rand(4, 3), r"a Tensor of shape \(4, 3\)"), ([torch.rand(3)], "a list of Tensor")],
)
def test_accuracy_names_predictions_of_the_wrong_form_and_the_form_it_reads(predictions, got):
    with pytest.raises(TypeError, match=rf"Accuracy reads .* per-sample dicts, but got {got}; "):
        Accuracy().process(None, predictions)


@pytest.mark.parametrize("topk", [0, (1, -2), ()])
def test_accuracy_rejects_bad_topk(topk):
    with pytest.raises(ValueError, match="topk"):
        Accuracy(topk=topk)


def test_accuracy_results_are_one_small_row_per_sample():
    metric = Accuracy(topk=(1, 5), thrs=(0.0, 0.3))
    metric.process(None, dict(pred_score=SCORES, gt_label=LABELS))
    # position of the true label among the top 5 for each threshold (5 = not counted)
    assert metric.results == [[0, 0], [1, 5], [4, 5], [2, 5]]


def lm_batch(generator, batch_size, length=7, vocab=11):
    """Random logits and targets, padded with -100 past each sequence's length."""
    logits = torch.randn(batch_size, length, vocab, generator=generator)
    targets = torch.randint(vocab, (batch_size, length), generator=generator)
    lengths = torch.randint(1, length + 1, (batch_size,), generator=generator)
    targets[torch.arange(length) >= lengths[:, None]] = -100
    return logits, targets


def test_perplexity_equals_exp_of_torch_cross_entropy_over_all_tokens():
    generator = torch.Generator().manual_seed(0)
    batches = [lm_batch(generator, 3), lm_batch(generator, 4)]
    metric = Perplexity()
    for logits, targets in batches:
        token_nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
        valid = targets != -100
        nll_sum, num_tokens = token_nll.sum(dim=1), valid.sum(dim=1)
        metric.process(None, dict(nll_sum=nll_sum, num_tokens=num_tokens))
    metrics = metric.evaluate(7)

    logits = torch.cat([logits.flatten(0, 1) for logits, _ in batches])
    targets = torch.cat([targets.flatten() for _, targets in batches])
    expected = F.cross_entropy(logits.double(), targets).item()
    assert metrics["lm/loss"] == pytest.approx(expected, rel=1e-6)
    assert metrics["lm/perplexity"] == pytest.approx(torch.tensor(expected).exp().item(), 1e-6)
    assert set(metrics) == {"lm/loss", "lm/perplexity"}


def test_perplexity_weights_tokens_not_sequences_and_reads_per_sample_dicts():
    metric = Perplexity(prefix="val_lm")
    metric.process(
        None, [dict(nll_sum=torch.tensor(6.0), num_tokens=3), dict(nll_sum=2.0, num_tokens=1)]
    )
    metrics = metric.evaluate(2)
    assert metrics["val_lm/loss"] == pytest.approx(2.0)
    assert metrics["val_lm/perplexity"] == pytest.approx(torch.tensor(2.0).exp().item())


def test_metrics_without_results_give_nan_and_warn(tmp_path):
    from runnerx.logging import get_run_logger, make_logger_current

    make_logger_current(get_run_logger(tmp_path / "run.log", "INFO", rank=0))
    metrics = Perplexity().evaluate(0)
    assert "WARNING - Perplexity got no results" in (tmp_path / "run.log").read_text()
    assert all(value != value for value in metrics.values())  # NaN
