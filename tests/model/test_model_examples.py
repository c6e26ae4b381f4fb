"""The example models: DigitsConvNet learns sklearn's digits; CharTransformerLM is a causal LM."""

import math

import pytest
import torch

from runnerx.model import CharTransformerLM, DigitsConvNet, TransformerBlock
from runnerx.registry import MODELS


def digits_split(seed=0):
    """sklearn's digits as float32 ``(1, 8, 8)`` images in [0, 1]: 1437 train, 360 val."""
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    images = torch.tensor(images, dtype=torch.float32).view(-1, 1, 8, 8) / 16
    labels = torch.tensor(labels)
    order = torch.randperm(len(images), generator=torch.Generator().manual_seed(seed))
    train, val = order[:1437], order[1437:]
    return (images[train], labels[train]), (images[val], labels[val])


def test_digits_convnet_reaches_95_percent_in_8_epochs_of_sgd(fake_optim_wrapper):
    torch.manual_seed(0)
    (train_x, train_y), (val_x, val_y) = digits_split()
    model = MODELS.build(dict(type="DigitsConvNet"))
    wrapper = fake_optim_wrapper(model)
    wrapper.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(8):
        order = torch.randperm(len(train_x))
        for start in range(0, len(order), 64):
            index = order[start : start + 64]
            model.train_step(dict(inputs=train_x[index], data_samples=train_y[index]), wrapper)
    with torch.no_grad():
        predictions = model.val_step(dict(inputs=val_x, data_samples=val_y))
    accuracy = (predictions["pred_score"].argmax(1) == predictions["gt_label"]).float().mean()
    assert accuracy >= 0.95


def test_digits_convnet_outputs_per_mode():
    model = DigitsConvNet(channels=(4, 8), num_classes=7)
    inputs, labels = torch.rand(5, 1, 8, 8), torch.tensor([0, 1, 2, 3, 6])
    assert model(inputs).shape == (5, 7)
    assert model(inputs.view(5, 64)).shape == (5, 7)  # flat rows are reshaped
    loss = model(inputs, labels, mode="loss")
    assert set(loss) == {"loss"} and loss["loss"].dim() == 0
    predictions = model(inputs, labels, mode="predict")
    assert predictions["pred_score"].shape == (5, 7)
    assert torch.allclose(predictions["pred_score"].sum(1), torch.ones(5))
    assert predictions["gt_label"] is labels
    unlabelled = model(inputs, mode="predict")  # inference: scores only
    assert set(unlabelled) == {"pred_score"}
    assert torch.equal(unlabelled["pred_score"], predictions["pred_score"])
    # labels as pseudo_collate gives them: a list of ints or of 0-dim tensors
    as_ints = model(inputs, labels.tolist(), mode="loss")["loss"]
    as_tensors = model(inputs, list(labels), mode="loss")["loss"]
    assert torch.equal(as_ints, loss["loss"]) and torch.equal(as_tensors, loss["loss"])
    with pytest.raises(ValueError, match="mode must be 'tensor', 'loss' or 'predict'"):
        model(inputs, labels, mode="train")
    with pytest.raises(TypeError, match="data_samples must be the class labels"):
        model(inputs, None, mode="loss")


def tiny_lm(**kwargs):
    torch.manual_seed(0)
    settings = dict(vocab_size=256, block_size=16, n_layer=2, n_head=2, n_embd=32)
    return CharTransformerLM(**{**settings, **kwargs})


def test_lm_shapes_and_blocks():
    model = tiny_lm(n_layer=3)
    tokens = torch.randint(0, 256, (3, 10))
    assert model(tokens).shape == (3, 10, 256)
    assert sum(isinstance(m, TransformerBlock) for m in model.modules()) == 3
    assert type(model.blocks[0]).__name__ == "TransformerBlock"
    predictions = model(tokens, tokens, mode="predict")
    assert predictions["nll_sum"].shape == (3,) and predictions["num_tokens"].tolist() == [10] * 3
    assert MODELS.get("CharTransformerLM") is CharTransformerLM


def test_lm_is_causal():
    model = tiny_lm().eval()
    tokens = torch.randint(0, 256, (2, 12))
    changed = tokens.clone()
    changed[:, 8] = (changed[:, 8] + 1) % 256
    before, after = model(tokens), model(changed)
    assert torch.allclose(before[:, :8], after[:, :8], atol=1e-6)
    assert not torch.allclose(before[:, 8:], after[:, 8:])


def test_untrained_loss_is_near_uniform_and_predict_agrees_with_loss():
    model = tiny_lm()
    tokens = torch.randint(0, 256, (4, 16), generator=torch.Generator().manual_seed(1))
    targets = torch.randint(0, 256, (4, 16), generator=torch.Generator().manual_seed(2))
    loss = model(tokens, targets, mode="loss")["loss"]
    assert loss.item() == pytest.approx(math.log(256), abs=0.15)
    predictions = model(tokens, targets, mode="predict")
    mean_nll = predictions["nll_sum"].sum() / predictions["num_tokens"].sum()
    assert mean_nll.item() == pytest.approx(loss.item(), rel=1e-5)


def test_ignored_targets_are_not_scored():
    model = tiny_lm()
    tokens = torch.randint(0, 256, (2, 6))
    targets = tokens.roll(-1, dims=1)
    targets[0, -2:] = -100
    predictions = model(tokens, targets, mode="predict")
    assert predictions["num_tokens"].tolist() == [4, 6]
    loss = model(tokens, targets, mode="loss")["loss"]
    assert (predictions["nll_sum"].sum() / 10).item() == pytest.approx(loss.item(), rel=1e-5)


def test_the_head_is_tied_to_the_token_embedding():
    model = tiny_lm()
    assert model.head.weight is model.token_embedding.weight
    state = model.state_dict()
    assert state["head.weight"].data_ptr() == state["token_embedding.weight"].data_ptr()
    n_params = sum(p.numel() for p in model.parameters())
    assert n_params == sum(p.numel() for _, p in model.named_parameters(remove_duplicate=True))


def test_lm_learns_a_repeating_sequence(fake_optim_wrapper):
    model = tiny_lm()
    wrapper = fake_optim_wrapper(model)
    wrapper.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    text = torch.tensor(list(b"abcdefgh" * 5))
    data = dict(inputs=text[:16].view(1, 16), data_samples=text[1:17].view(1, 16))
    first = model.train_step(data, wrapper)["loss"]
    for _ in range(40):
        last = model.train_step(data, wrapper)["loss"]
    assert last < 0.3 * first


def test_generate_extends_the_context_within_the_vocabulary():
    model = tiny_lm(vocab_size=20).eval()
    start = torch.zeros(2, 3, dtype=torch.long)
    generated = model.generate(start, max_new_tokens=20, temperature=0.8, top_k=5)
    assert generated.shape == (2, 23) and torch.equal(generated[:, :3], start)
    assert generated.min() >= 0 and generated.max() < 20


def test_lm_errors_name_what_is_wrong():
    model = tiny_lm()
    with pytest.raises(ValueError, match="longer than block_size 16"):
        model(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match=r"target token ids.*\(1, 4\), but got NoneType"):
        model(torch.zeros(1, 4, dtype=torch.long), mode="loss")
    with pytest.raises(ValueError, match="divisible by n_head"):
        CharTransformerLM(n_embd=30, n_head=4)
