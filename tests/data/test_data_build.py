"""build_dataloader: MMEngine-style configs to DataLoaders, and its errors."""

import copy
import functools
import re

import pytest
import torch
from torch.utils.data import BatchSampler, DataLoader

from runnerx import Config
from runnerx.data import DefaultSampler, DigitsDataset, build_dataloader, pseudo_collate
from runnerx.registry import FUNCTIONS, NotRegisteredError, Registry


def digits_cfg(**overrides):
    cfg = dict(
        dataset=dict(type="DigitsDataset", split="train"),
        sampler=dict(type="DefaultSampler", shuffle=True),
        collate_fn=dict(type="default_collate"),
        batch_size=32,
        num_workers=0,
        drop_last=False,
    )
    cfg.update(overrides)
    return cfg


def test_digits_config_gives_stacked_batches():
    cfg = digits_cfg()
    original = copy.deepcopy(cfg)
    loader = build_dataloader(cfg, seed=0)
    assert cfg == original  # the caller's config is not changed
    assert isinstance(loader.dataset, DigitsDataset) and isinstance(loader.sampler, DefaultSampler)
    assert loader.sampler.seed == 0 and loader.sampler.shuffle
    assert len(loader) == -(-1438 // 32)
    batch = next(iter(loader))
    assert batch["inputs"].shape == (32, 1, 8, 8) and batch["inputs"].dtype == torch.float32
    assert batch["data_samples"].shape == (32,) and batch["data_samples"].dtype == torch.int64
    assert sum(len(b["data_samples"]) for b in loader) == 1438


def test_a_config_from_a_file_builds_and_is_not_changed(tmp_path):
    path = tmp_path / "cfg.py"
    path.write_text(
        "train_dataloader = dict(batch_size=8, dataset=dict(type='DigitsDataset', split='val'),"
        " sampler=dict(type='DefaultSampler', shuffle=False))\n"
    )
    cfg = Config.fromfile(str(path))
    loader = build_dataloader(cfg.train_dataloader)
    assert "dataset" in cfg.train_dataloader and "sampler" in cfg.train_dataloader
    batch = next(iter(loader))  # pseudo_collate by default, as in MMEngine
    assert loader.collate_fn is pseudo_collate
    assert isinstance(batch["inputs"], list) and len(batch["inputs"]) == 8
    assert batch["inputs"][0].shape == (1, 8, 8)


def test_a_missing_sampler_is_an_error_naming_the_key():
    cfg = digits_cfg()
    del cfg["sampler"]
    with pytest.raises(KeyError, match=r"val_dataloader\.sampler is missing"):
        build_dataloader(cfg, cfg_key="val_dataloader")


def test_a_misspelled_key_is_an_error_with_a_close_match():
    cfg = digits_cfg()
    cfg["batch_szie"] = cfg.pop("batch_size")
    with pytest.raises(
        TypeError, match=r"train_dataloader\.batch_szie .*did you mean 'batch_size'"
    ):
        build_dataloader(cfg)


def test_dataloader_options_pass_through():
    loader = build_dataloader(digits_cfg(batch_size=500, drop_last=True, timeout=0, in_order=True))
    assert loader.drop_last and len(loader) == 2


def test_shuffle_in_the_dataloader_config_points_to_the_sampler():
    with pytest.raises(ValueError, match=r"train_dataloader\.shuffle.*sampler=dict"):
        build_dataloader(digits_cfg(shuffle=True))


def test_worker_only_options_are_dropped_with_a_warning_without_workers():
    with pytest.warns(UserWarning, match="persistent_workers and prefetch_factor only apply"):
        loader = build_dataloader(digits_cfg(persistent_workers=True, prefetch_factor=4))
    assert not loader.persistent_workers
    loader = build_dataloader(digits_cfg(num_workers=1, persistent_workers=True, prefetch_factor=3))
    assert loader.persistent_workers and loader.prefetch_factor == 3


def test_collate_fn_kwargs_are_bound_and_unknown_names_are_errors():
    calls = []

    def tagging_collate(batch, tag):
        calls.append(tag)
        return pseudo_collate(batch)

    loader = build_dataloader(digits_cfg(collate_fn=dict(type=tagging_collate, tag="x")))
    next(iter(loader))
    assert calls == ["x"]
    assert isinstance(loader.collate_fn, functools.partial)
    with pytest.raises(NotRegisteredError, match="Did you mean 'default_collate'"):
        build_dataloader(digits_cfg(collate_fn=dict(type="defualt_collate")))


def test_collate_fn_is_looked_up_in_the_default_scope_first():
    from runnerx.registry import DefaultScope

    scoped = Registry("function", parent=FUNCTIONS, scope="data_test_scope")
    scoped.register_module(name="scoped_collate", module=lambda batch: "scoped")
    try:
        with DefaultScope.overwrite_default_scope("data_test_scope"):
            loader = build_dataloader(digits_cfg(collate_fn=dict(type="scoped_collate")))
    finally:
        FUNCTIONS.children.pop("data_test_scope")
    assert next(iter(loader)) == "scoped"


def test_sampler_gets_the_seed_unless_ranks_seed_differently():
    assert build_dataloader(digits_cfg(), seed=11).sampler.seed == 11
    # diff_rank_seed: the ranks' seeds differ, so the sampler's seed comes from rank 0
    loader = build_dataloader(digits_cfg(), seed=11, diff_rank_seed=True)
    assert isinstance(loader.sampler.seed, int)
    keywords = dict(loader.worker_init_fn.keywords)
    assert int(keywords.pop("epoch")) == loader.sampler.epoch == 0
    assert int(keywords.pop("seed")) == loader.sampler.seed  # workers follow the sampler's
    assert keywords == dict(num_workers=0, rank=0, disable_subprocess_warning=False, world_size=1)
    assert build_dataloader(digits_cfg()).worker_init_fn is None


def test_batch_sampler_takes_the_sampler_and_batch_size():
    cfg = digits_cfg(batch_sampler=dict(type=BatchSampler, drop_last=True), batch_size=100)
    del cfg["drop_last"]
    loader = build_dataloader(cfg)
    assert isinstance(loader.batch_sampler, BatchSampler)
    assert loader.batch_sampler.batch_size == 100 and len(loader) == 14


def test_objects_and_num_batch_per_epoch():
    dataset = DigitsDataset("val")
    loader = build_dataloader(
        dict(dataset=dataset, sampler=DefaultSampler(dataset, seed=0), batch_size=4)
    )
    assert loader.dataset is dataset and len(loader) == 90
    assert build_dataloader(loader) is loader
    cut = build_dataloader(digits_cfg(num_batch_per_epoch=3, batch_size=10))
    assert len(cut.dataset) == 30 and len(cut) == 3


def test_a_bad_config_type_is_an_error():
    with pytest.raises(TypeError, match="test_dataloader must be a dict or a DataLoader"):
        build_dataloader([1], cfg_key="test_dataloader")
    assert isinstance(build_dataloader(digits_cfg()), DataLoader)


def test_a_configured_worker_init_fn_replaces_the_seeding_one():
    def init(worker_id, tag):
        pass

    loader = build_dataloader(digits_cfg(worker_init_fn=dict(type=init, tag=1)), seed=3)
    assert loader.worker_init_fn.func is init and loader.worker_init_fn.keywords == dict(tag=1)
    assert build_dataloader(digits_cfg(worker_init_fn=None), seed=3).worker_init_fn is None
    with pytest.raises(TypeError, match=r"train_dataloader\.worker_init_fn must be a callable"):
        build_dataloader(digits_cfg(worker_init_fn=dict(tag=1)))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("batch_size", "64"),
        ("batch_size", 0),
        ("batch_size", 2.0),
        ("num_workers", "2"),
        ("num_workers", -1),
        ("prefetch_factor", True),
    ],
)
def test_a_count_that_is_not_a_whole_number_is_refused_naming_its_key(key, value):
    expected = rf"train_dataloader\.{key} must be an int >= \d, but got {re.escape(repr(value))} \("
    with pytest.raises(ValueError, match=expected):
        build_dataloader(digits_cfg(**{key: value}), cfg_key="train_dataloader")


def test_batch_size_none_still_turns_batching_off():
    loader = build_dataloader(digits_cfg(batch_size=None, collate_fn=None))
    assert loader.batch_size is None and loader.batch_sampler is None


def test_a_dataloader_of_no_batches_is_refused_saying_why():
    with pytest.raises(
        ValueError,
        match=r"^val_dataloader yields no batches: its dataset has 1438 "
        r"samples \(1438 on this rank\), and batch_size=5000 with drop_last=True "
        r"leaves no full batch; lower val_dataloader\.batch_size",
    ):
        build_dataloader(digits_cfg(batch_size=5000, drop_last=True), cfg_key="val_dataloader")
    empty = torch.utils.data.TensorDataset(torch.zeros(0, 2))
    with pytest.raises(ValueError, match=r"its dataset \(TensorDataset\) is empty"):
        build_dataloader(digits_cfg(dataset=empty))
    assert len(build_dataloader(digits_cfg(batch_size=5000))) == 1  # a partial batch is fine
