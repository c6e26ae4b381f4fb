"""MMEngine's other root registries and registry helpers in runnerx.registry: the same names,
and the same results as mmengine-lite's for the same input."""

import json
from pathlib import Path

import pytest
import torch
from torch import nn

import runnerx.registry as rx
from runnerx import Config
from runnerx.runner import Runner

mm = pytest.importorskip("mmengine.registry")
pytest.importorskip("mmengine.optim")  # registers MMEngine's schedulers
ROOT = Path(__file__).parents[2]


def test_every_mmengine_root_registry_is_there_with_its_name():
    roots = {name: value for name, value in vars(mm.root).items() if isinstance(value, mm.Registry)}
    assert {"WEIGHT_INITIALIZERS", "TASK_UTILS", "INFERENCERS", "RUNNER_CONSTRUCTORS"} <= set(roots)
    for attribute, theirs in roots.items():
        ours = getattr(rx, attribute)
        assert (ours.name, ours.scope, ours.parent) == (theirs.name, "runnerx", None), attribute
        assert attribute in rx.__all__


def test_the_registries_mmengine_builds_with_a_helper_use_runnerxs_helper_of_that_name():
    for attribute in ("MODELS", "PARAM_SCHEDULERS", "RUNNERS"):
        helper = getattr(mm, attribute).build_func.__name__
        assert getattr(rx, attribute).build_func is getattr(rx, helper), attribute


def test_a_list_of_model_configs_builds_a_sequential_as_in_mmengine():
    from runnerx.model import Sequential

    cfgs = [dict(type="Linear", in_features=2, out_features=3), dict(type="ReLU")]
    registries = [
        package.Registry("model", package.build_model_from_cfg, scope="seqtest")
        for package in (rx, mm)
    ]
    for registry in registries:
        registry.register_module(name="Linear", module=nn.Linear)
        registry.register_module(name="ReLU", module=nn.ReLU)
    built = [registry.build(cfgs) for registry in registries]
    assert type(built[0]) is Sequential and isinstance(built[1], nn.Sequential)
    assert [type(m) for m in built[0]] == [type(m) for m in built[1]] == [nn.Linear, nn.ReLU]
    single = rx.build_model_from_cfg(
        dict(type="Linear"), registries[0], default_args=dict(in_features=4, out_features=1)
    )
    assert single.weight.shape == (1, 4)


def scheduler_state(scheduler) -> dict:
    return {key: getattr(scheduler, key) for key in ("by_epoch", "begin", "end", "milestones")}


@pytest.mark.parametrize("convert", [True, False])
def test_scheduler_configs_build_as_mmengines_build_scheduler_from_cfg(convert):
    cfg = dict(type="MultiStepLR", milestones=[2, 4], by_epoch=True, begin=0, end=6)
    if convert:
        cfg["convert_to_iter_based"] = True
    built = []
    for registry in (rx.PARAM_SCHEDULERS, mm.PARAM_SCHEDULERS):
        optimizer = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
        default_args = dict(optimizer=optimizer, epoch_length=5)
        built.append(scheduler_state(registry.build(dict(cfg), default_args=default_args)))
    assert built[0] == built[1]
    assert built[0]["by_epoch"] is not convert
    with pytest.raises(ValueError, match="epoch_length"):
        rx.build_scheduler_from_cfg(
            dict(cfg, convert_to_iter_based=True),
            rx.PARAM_SCHEDULERS,
            dict(optimizer=torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)),
        )


@rx.RUNNERS.register_module()
class HelperTestRunner(Runner):
    """A runner a config names with runner_type."""


def test_runners_build_the_runner_type_a_config_names(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path)
    assert type(rx.RUNNERS.build(cfg)) is Runner
    cfg.runner_type = "HelperTestRunner"
    assert type(rx.build_runner_from_cfg(cfg, rx.RUNNERS)) is HelperTestRunner
    cfg.runner_type = "HelperTestRuner"
    with pytest.raises(rx.NotRegisteredError, match="Did you mean 'HelperTestRunner'"):
        rx.RUNNERS.build(cfg)


def make_trees(package):
    """The same registry tree in runnerx or MMEngine: entries from two folders and a child."""
    root = package.Registry("gadget", scope="treeroot")
    child = package.Registry("gadget", parent=root, scope="treechild")
    for registry, names in ((root, ["A", "B"]), (child, ["C"])):
        for name in names:
            registry.register_module(module=type(name, (), {"__module__": f"pkg.sub.{name}"}))
    root.register_module(module=type("D", (), {"__module__": "pkg.other"}))
    return child


def test_traverse_registry_tree_reports_what_mmengines_does():
    ours = rx.traverse_registry_tree(make_trees(rx), verbose=False)
    theirs = mm.traverse_registry_tree(make_trees(mm), verbose=False)
    assert ours == theirs
    assert ours[0] == {"num_modules": 3, "scope": "treeroot", "pkg/sub": ["A", "B"], "pkg": ["D"]}


def test_count_registered_modules_covers_the_registries_mmengines_does(tmp_path):
    ours = rx.count_registered_modules(save_path=str(tmp_path), verbose=False)
    theirs = mm.count_registered_modules(verbose=False)
    assert ours.keys() == theirs.keys() == {"scan_date", "registries"}
    assert ours["registries"].keys() == theirs["registries"].keys()
    initializers = [
        {key.replace("mmengine", "runnerx"): value for key, value in info.items()}
        | {"scope": "runnerx"}
        for info in theirs["registries"]["WEIGHT_INITIALIZERS"]
    ]
    assert ours["registries"]["WEIGHT_INITIALIZERS"] == initializers
    saved = json.loads((tmp_path / "modules_statistic_results.json").read_text())
    assert saved == ours


def test_build_optimizer_from_cfg_builds_as_build_from_cfg():
    from runnerx.registry import OPTIMIZERS
    from runnerx.registry.build_functions import build_optimizer_from_cfg

    params = [torch.nn.Parameter(torch.zeros(2))]
    optimizer = build_optimizer_from_cfg(dict(type="SGD", lr=0.5), OPTIMIZERS, dict(params=params))
    assert isinstance(optimizer, torch.optim.SGD) and optimizer.param_groups[0]["lr"] == 0.5
