"""The root registries, the torch optimizers in OPTIMIZERS, import cost and MMEngine parity."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import runnerx.registry as registry_pkg
from runnerx.registry import OPTIMIZERS, Registry

REPO = Path(__file__).resolve().parents[2]

ROOT_NAMES = {
    "MODELS": "model",
    "DATASETS": "dataset",
    "DATA_SAMPLERS": "data sampler",
    "TRANSFORMS": "transform",
    "OPTIMIZERS": "optimizer",
    "OPTIM_WRAPPERS": "optim_wrapper",
    "OPTIM_WRAPPER_CONSTRUCTORS": "optimizer wrapper constructor",
    "PARAM_SCHEDULERS": "parameter scheduler",
    "HOOKS": "hook",
    "LOOPS": "loop",
    "METRICS": "metric",
    "EVALUATOR": "evaluator",
    "VISBACKENDS": "vis_backend",
    "VISUALIZERS": "visualizer",
    "LOG_PROCESSORS": "log_processor",
    "MODEL_WRAPPERS": "model_wrapper",
    "STRATEGIES": "strategy",
    "FUNCTIONS": "function",
    "RUNNERS": "runner",
}


def test_root_registries_have_mmengine_names_and_runnerx_scope():
    for attr, name in ROOT_NAMES.items():
        registry = getattr(registry_pkg, attr)
        assert isinstance(registry, Registry)
        assert (registry.name, registry.scope, registry.parent) == (name, "runnerx", None)


def test_every_torch_optimizer_is_registered():
    import torch

    expected = {
        name: obj
        for name in dir(torch.optim)
        if isinstance(obj := getattr(torch.optim, name), type)
        and issubclass(obj, torch.optim.Optimizer)
        and obj is not torch.optim.Optimizer
    }
    assert {"SGD", "AdamW"} <= expected.keys()
    for name, cls in expected.items():
        name = "TorchAdafactor" if name == "Adafactor" else name  # MMEngine's name for it
        assert OPTIMIZERS.get(name) is cls, name
    if "Adafactor" in expected:  # MMEngine configs call torch's Adafactor 'TorchAdafactor'
        assert OPTIMIZERS.get("TorchAdafactor") is expected["Adafactor"]


def test_build_sgd_from_optimizers():
    import torch

    param = torch.nn.Parameter(torch.zeros(2))
    sgd = OPTIMIZERS.build(dict(type="SGD", lr=0.1), default_args=dict(params=[param]))
    assert isinstance(sgd, torch.optim.SGD)
    assert sgd.param_groups[0]["lr"] == 0.1
    by_path = OPTIMIZERS.build(dict(type="torch.optim.Adam", params=[param], lr=0.01))
    assert isinstance(by_path, torch.optim.Adam)


def test_importing_registry_does_not_import_torch():
    code = (
        "import sys, runnerx.registry as r\n"
        "assert r.Registry('thing').get('Nothing') is None\n"  # a registry without locations
        "print('torch' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False", result.stderr


def test_registry_behaves_like_mmengine():
    mm_registry = pytest.importorskip("mmengine.registry")
    ours_root = Registry("model", scope="parityroot")
    ours_child = Registry("model", parent=ours_root, scope="paritychild")
    theirs_root = mm_registry.Registry("model", scope="parityroot")
    theirs_child = mm_registry.Registry("model", parent=theirs_root, scope="paritychild")

    class Net:
        def __init__(self, depth, width=8):
            self.depth, self.width = depth, width

    class Head:
        def __init__(self, size=1):
            self.size = size

    for root, child in ((ours_root, ours_child), (theirs_root, theirs_child)):
        root.register_module(name=["Net", "NetAlias"])(Net)
        child.register_module(module=Head)

    def outcome(root, child, key, cfg, default_args=None):
        found = root.get(key), child.get(key)
        built = root.build(dict(cfg), default_args=default_args)
        return found, type(built), vars(built)

    cases = [
        ("Net", dict(type="Net", depth=3), None),
        ("NetAlias", dict(type="NetAlias", depth=3), dict(width=4, depth=9)),
        ("paritychild.Head", dict(type="paritychild.Head", size=2), None),
        ("collections.OrderedDict", dict(type=Net, depth=1), None),
    ]
    for key, cfg, default_args in cases:
        ours = outcome(ours_root, ours_child, key, cfg, default_args)
        theirs = outcome(theirs_root, theirs_child, key, cfg, default_args)
        assert ours == theirs, key
    assert ours_root.get("Head") is None and theirs_root.get("Head") is None
    assert ("Net" in ours_child) == ("Net" in theirs_child) is True
