"""FullyShardedModel passes attributes it lacks on to the wrapped model, as FSDP1 (MMEngine's
FSDP wrapper) does, so ``model.save_pretrained(...)`` works on the model ``prepare_model``
returned; two real ranks (spawned processes, gloo, CPU). Also the recipe docs/distributed.md
gives for saving such a model whole: ``state_dict=model_state_dict(model)``."""

import os
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

from runnerx.model.examples import CharTransformerLM
from runnerx.parallel import model_state_dict, prepare_model
from tests.parallel.ranks_common import LENGTH, VOCAB, WORLD_SIZE, make_model


class PretrainedLM(CharTransformerLM):
    """A model with the Hugging Face methods the llama2 example calls on the wrapped model."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.config = dict(vocab_size=kwargs["vocab_size"])

    def save_pretrained(self, folder, state_dict=None):
        os.makedirs(folder, exist_ok=True)
        state_dict = self.state_dict() if state_dict is None else state_dict
        torch.save(state_dict, os.path.join(folder, "pytorch_model.bin"))
        return folder


def make_pretrained():
    torch.manual_seed(0)  # the weights of make_model()
    return PretrainedLM(vocab_size=VOCAB, block_size=LENGTH, n_layer=2, n_head=2, n_embd=16)


def run_rank(rank, out_dir):
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=60))
    torch.set_num_threads(1)
    model = prepare_model(
        make_pretrained(), strategy=dict(type="FSDP", wrap_modules=["TransformerBlock"])
    )
    outcome = {
        "wrapper": type(model).__name__,
        "config": model.config,
        "blocks": type(model.blocks).__name__,
        "own": (model.state_dict_type, isinstance(model.module, PretrainedLM)),
    }
    try:
        model.no_such_attribute  # noqa: B018
    except AttributeError as error:
        outcome["missing"] = str(error)
    raw = model.state_dict()
    outcome["raw"] = (next(iter(raw)), type(next(iter(raw.values()))).__name__)
    state = model_state_dict(model)  # every rank takes part; rank 0 gets the whole weights
    if rank == 0:
        outcome["saved"] = model.save_pretrained(os.path.join(out_dir, "hf"), state_dict=state)
    dist.barrier()
    return outcome


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("fsdp_attrs"), WORLD_SIZE, timeout=120)


def test_attributes_the_wrapper_lacks_come_from_the_wrapped_model(outcomes):
    for outcome in outcomes:
        assert outcome["wrapper"] == "FullyShardedModel"
        assert outcome["config"] == {"vocab_size": VOCAB}
        assert outcome["blocks"] == "ModuleList"
        assert "no_such_attribute" in outcome["missing"]
        assert outcome["own"] == ("full", True)  # the wrapper's own come first


def test_a_raw_state_dict_is_sharded_and_prefixed_as_documented(outcomes):
    for outcome in outcomes:
        assert outcome["raw"] == ("module.token_embedding.weight", "DTensor")


def test_save_pretrained_with_model_state_dict_writes_weights_a_plain_model_loads(outcomes):
    folder = outcomes[0]["saved"]
    state = torch.load(os.path.join(folder, "pytorch_model.bin"), weights_only=True)
    make_model().load_state_dict(state, strict=True)  # the plain model's keys, whole tensors
    for key, value in make_model().state_dict().items():
        torch.testing.assert_close(state[key], value, rtol=0, atol=0)
