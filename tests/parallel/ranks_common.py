"""What the DDP and FSDP tests share: the model, the batches and their per-rank halves, the
training loop, and the comparison of state dicts. A plain module (not a conftest), so that the
ranks spawned by ``spawn_ranks`` import it with the test module that runs in them."""

import torch

from runnerx.model.examples import CharTransformerLM
from runnerx.parallel import unwrap

WORLD_SIZE = 2
HALF = 2  # samples per rank and step; one process takes 2 * HALF
STEPS = 4
VOCAB, LENGTH = 32, 8


def make_model():
    torch.manual_seed(0)
    return CharTransformerLM(vocab_size=VOCAB, block_size=LENGTH, n_layer=2, n_head=2, n_embd=16)


def batches():
    """STEPS whole batches of 2 * HALF token sequences (targets: the inputs shifted)."""
    generator = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (STEPS, 2 * HALF, LENGTH + 1), generator=generator)
    return [dict(inputs=seq[:, :-1], data_samples=seq[:, 1:]) for seq in tokens]


def rank_share(batch, rank):
    return {key: value[rank * HALF : (rank + 1) * HALF] for key, value in batch.items()}


def train(model, optim_wrapper, data, after_first_step=None):
    optim_wrapper.initialize_count_status(unwrap(model), 0, len(data))
    for index, batch in enumerate(data):
        model.train_step(batch, optim_wrapper)
        if index == 0 and after_first_step is not None:
            after_first_step()


def assert_same_tensors(actual, expected, atol):
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        torch.testing.assert_close(
            actual[key], value, atol=atol, rtol=0, msg=lambda m, k=key: f"{k}: {m}"
        )
