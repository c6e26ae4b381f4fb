"""build_dataloader: MMEngine-style configs to DataLoaders, and its errors."""

import copy
import functools
import re
from pathlib import Path

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


def test_the_options_listed_for_an_unknown_key_leave_out_shuffle():
    # shuffle is refused with the sampler to write: the list must not offer it
    with pytest.raises(TypeError, match="not a dataloader option") as info:
        build_dataloader(digits_cfg(shufle=True))
    assert "'shuffle'" not in str(info.value) and ", shuffle," not in str(info.value)


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
        r"samples \(in one process\), and batch_size=5000 with drop_last=True "
        r"leaves no full batch; lower val_dataloader\.batch_size",
    ):
        build_dataloader(digits_cfg(batch_size=5000, drop_last=True), cfg_key="val_dataloader")
    empty = torch.utils.data.TensorDataset(torch.zeros(0, 2))
    with pytest.raises(ValueError, match=r"its dataset \(TensorDataset\) is empty"):
        build_dataloader(digits_cfg(dataset=empty))
    assert len(build_dataloader(digits_cfg(batch_size=5000))) == 1  # a partial batch is fine


def test_an_endless_sampler_fills_its_batches_however_few_the_samples():
    cfg = digits_cfg(batch_size=5000, drop_last=True, sampler=dict(type="InfiniteSampler"))
    batches = iter(build_dataloader(cfg, cfg_key="train_dataloader"))
    assert next(batches)["inputs"].shape[0] == 5000  # 1438 samples, cycled


def test_a_sampler_that_yields_nothing_is_refused_naming_it():
    cfg = digits_cfg(sampler=torch.utils.data.SubsetRandomSampler([]))
    with pytest.raises(
        ValueError,
        match=r"^train_dataloader yields no batches: its sampler \(SubsetRandomSampler\) "
        r"yields none of the dataset's 1438 samples$",
    ):
        build_dataloader(cfg, cfg_key="train_dataloader")


def _unknown(where):
    """digits_cfg with an unregistered type at ``where``."""
    if where == "dataset":
        return digits_cfg(dataset=dict(type="DigitsDatset"))
    if where == "sampler":
        return digits_cfg(sampler=dict(type="DefaultSamplr"))
    if where == "batch_sampler":
        return digits_cfg(batch_sampler=dict(type="AspectRatioBatchSampler"))
    if where == "dataset.pipeline.1":
        pipeline = [dict(type="Compose", transforms=[]), dict(type="LoadImg")]
        return digits_cfg(dataset=dict(type="RxBuildTestPipelined", pipeline=pipeline))
    return digits_cfg(dataset=dict(type="RepeatDataset", times=2, dataset=dict(type="Nope")))


@pytest.mark.parametrize(
    "where", ["dataset", "sampler", "batch_sampler", "dataset.pipeline.1", "dataset.dataset"]
)
def test_an_unregistered_type_names_its_key_in_a_plain_dict_as_in_a_file_config(where):
    from runnerx.config.config_dict import ConfigDict
    from runnerx.data import BaseDataset
    from runnerx.registry import DATASETS

    class Pipelined(BaseDataset):
        def load_data_list(self):
            return [dict(img_path="0.jpg")]

    DATASETS.register_module(name="RxBuildTestPipelined", module=Pipelined, force=True)
    plain = _unknown(where)
    original = copy.deepcopy(plain)
    from_file = ConfigDict(dict(train_dataloader=_unknown(where))).train_dataloader
    messages = []
    for cfg in (plain, from_file):
        with pytest.raises(NotRegisteredError) as info:
            build_dataloader(cfg)
        messages.append(str(info.value))
    assert f"(cfg.train_dataloader.{where}.type) is not registered" in messages[0]
    assert messages[0] == messages[1]
    assert plain == original and type(plain[where.split(".")[0]]) is dict  # not changed


def test_a_dataset_that_fails_to_construct_names_its_key_in_a_plain_dict():
    with pytest.raises(TypeError, match=r"^while building cfg\.val_dataloader\.dataset \(type="):
        build_dataloader(
            digits_cfg(dataset=dict(type="DigitsDataset", splt="val")), cfg_key="val_dataloader"
        )


@pytest.mark.parametrize(
    ("overrides", "error", "start"),
    [
        (dict(batchsize=2), TypeError, "train_dataloader.batchsize is not a dataloader option"),
        (dict(sampler=None, dataset=None), KeyError, "train_dataloader.dataset is missing"),
        (dict(batch_size=0), ValueError, "train_dataloader.batch_size must be an int >= 1"),
        (dict(shuffle=True), ValueError, "train_dataloader.shuffle: the sampler shuffles"),
        (dict(collate_fn=dict(type="no_collate")), KeyError, "'no_collate' (cfg.train_datal"),
        (dict(collate_fn=5), TypeError, "train_dataloader.collate_fn must be a callable"),
        (dict(batch_size=5000, drop_last=True), ValueError, "train_dataloader yields no batch"),
        (dict(timeout=-1), ValueError, "train_dataloader: timeout option should be non-neg"),
    ],
)
def test_an_error_naming_its_key_is_not_prefixed_by_the_build_around_it(overrides, error, start):
    """A loop builds its dataloader: its ``while building cfg.train_cfg`` would point
    elsewhere than the key the message names."""
    from runnerx.config.config_dict import ConfigDict

    loops = Registry("loop", scope="data_build_test")

    @loops.register_module()
    class Loop:
        def __init__(self, dataloader):
            self.dataloader = build_dataloader(dataloader)

    cfg = ConfigDict(dict(train_cfg=dict(type="Loop", dataloader=digits_cfg(**overrides))))
    with pytest.raises(error) as info:
        loops.build(cfg.train_cfg)
    assert str(info.value).startswith(start)


def test_a_dataloader_key_typo_under_the_runner_names_only_that_key(tmp_path):
    from runnerx.runner import Runner

    cfg = Config.fromfile(Path(__file__).parents[2] / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path)
    cfg.train_dataloader.batchsize = 2
    with pytest.raises(TypeError) as info:
        Runner.from_cfg(cfg).train()
    assert str(info.value).startswith("train_dataloader.batchsize is not a dataloader option")


def test_the_worker_only_warning_agrees_in_number():
    with pytest.warns(UserWarning, match="train_dataloader: persistent_workers only applies with"):
        build_dataloader(digits_cfg(persistent_workers=True))
