"""Third-party optimizers under MMEngine's names: transformers' Adafactor, dadaptation,
lion-pytorch, Sophia. Small stand-in packages on sys.path play the real ones (not installed
here); mmengine-lite, importing the same stand-ins, is the oracle for which class each name
builds."""

import importlib.util
import os
import sys
import textwrap

import pytest
import torch
from torch import nn

from runnerx.optim import build_optim_wrapper
from runnerx.optim.optimizers import (
    register_dadaptation_optimizers,
    register_install_hints,
    register_lion_optimizers,
    register_sophia_optimizers,
    register_torch_optimizers,
    register_transformers_optimizers,
)
from runnerx.registry import Registry

# each stand-in is plain SGD with the real optimizer's signature
STANDINS = {
    "transformers": {"Adafactor": "lr=None, eps=(1e-30, 1e-3), scale_parameter=True, "
                     "relative_step=True, warmup_init=False, weight_decay=0.0"},
    "dadaptation": {name: "lr=1.0, momentum=0.0, weight_decay=0.0"
                    for name in ("DAdaptAdaGrad", "DAdaptAdam", "DAdaptSGD")},
    "lion_pytorch": {"Lion": "lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0"},
    "Sophia": {"SophiaG": "lr=1e-4, betas=(0.965, 0.99), rho=0.04, weight_decay=1e-1"},
    "bitsandbytes": {name: "lr=1e-3, weight_decay=0.0" for name in ("Lion", "AdamW8bit")},
}  # fmt: skip
BUILT = {
    "Adafactor": dict(lr=1e-3, scale_parameter=False, relative_step=False, weight_decay=1e-2),
    "DAdaptAdaGrad": dict(lr=1.0, momentum=0.9),
    "DAdaptAdam": dict(lr=1.0),
    "DAdaptSGD": dict(lr=1.0),
    "Lion": dict(lr=1e-4, weight_decay=1e-2),
    "SophiaG": dict(lr=2e-4, betas=(0.965, 0.99), rho=0.01, weight_decay=1e-1),
    "bnb_Lion": dict(lr=3e-4),  # 'Lion' is lion-pytorch's, as in MMEngine
    "AdamW8bit": dict(lr=1e-3),
}


def write_standins(root, packages=STANDINS):
    for package, classes in packages.items():
        source = "import torch\n"
        for name, signature in classes.items():
            source += textwrap.dedent(f"""
                class {name}(torch.optim.SGD):
                    def __init__(self, params, {signature}):
                        super().__init__(params, lr=1e-3 if lr is None else lr)
            """)
        if package == "bitsandbytes":  # which keeps them in bitsandbytes.optim
            source += "import sys\noptim = sys.modules[__name__]\n"
        (root / package).mkdir()
        (root / package / "__init__.py").write_text(source)
    return root


CHECK = """
import sys
import torch
from runnerx.optim import build_optim_wrapper
from runnerx.registry import OPTIMIZERS

OPTIMIZERS.get("SGD")  # loads the registrations
packages = ("transformers", "dadaptation", "lion_pytorch", "Sophia")
print("imported at registration:", [p for p in packages if p in sys.modules])
from mmengine.registry import OPTIMIZERS as MMENGINE_OPTIMIZERS
import mmengine.optim  # registers the same stand-ins
for name, kwargs in {built}.items():
    wrapper = build_optim_wrapper(torch.nn.Linear(2, 1), dict(optimizer=dict(type=name, **kwargs)))
    oracle = MMENGINE_OPTIMIZERS.get(name)
    print(name, type(wrapper.optimizer) is oracle, wrapper.get_lr())
"""


def test_mmengines_third_party_names_build_the_packages_optimizers(tmp_path, run_in_repo):
    write_standins(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = run_in_repo([sys.executable, "-c", CHECK.format(built=BUILT)], env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    # Sophia's names are read from the package; the others are imported when first built
    assert lines[0] == "imported at registration: ['Sophia']"
    assert lines[1:] == [
        f"{name} True {{'lr': [{kwargs['lr']}]}}" for name, kwargs in BUILT.items()
    ]


def test_not_installed_registers_nothing_and_each_name_says_what_to_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    registry = Registry("optimizer", scope="third_party_absent")
    register_torch_optimizers(registry)
    for register in (
        register_transformers_optimizers,
        register_dadaptation_optimizers,
        register_lion_optimizers,
        register_sophia_optimizers,
    ):
        assert register(registry) == []
    assert not {"Adafactor", "DAdaptAdam", "Lion", "SophiaG"} & set(registry.module_dict)
    hinted = register_install_hints(registry)
    assert {"Adafactor", "DAdaptSGD", "Lion", "SophiaG", "PagedAdamW8bit", "bnb_Adam"} <= set(
        hinted
    )
    assert "Adam" not in hinted  # torch's Adam keeps its name
    expected = {
        "Lion": "lion-pytorch's Lion, as in MMEngine, and lion-pytorch is not installed: "
        "pip install lion-pytorch",
        "DAdaptAdam": "pip install dadaptation",
        "SophiaG": "pip install Sophia-Optimizer",
        "PagedAdamW8bit": r"bitsandbytes' PagedAdamW8bit.*pip install .runnerx\[bnb\].$",
        "Adafactor": "transformers' Adafactor.*pip install transformers",
    }
    for name, message in expected.items():
        with pytest.raises(ImportError, match=message):
            registry.build(dict(type=name, lr=1e-3), default_args=dict(params=[torch.ones(1)]))
    with pytest.warns(UserWarning, match="takes the name 'Lion'"):  # a stand-in yields

        @registry.register_module(name="Lion")
        class MyLion(torch.optim.SGD):
            pass

    assert registry.get("Lion") is MyLion


@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is not None or not hasattr(torch.optim, "Adafactor"),
    reason="transformers is installed, or torch < 2.5",
)
def test_adafactor_without_transformers_in_a_config():
    model = nn.Linear(2, 1)
    with pytest.raises(ImportError, match=r"transformers' Adafactor.*pip install transformers"):
        build_optim_wrapper(model, dict(optimizer=dict(type="Adafactor", lr=1e-2)))
    torch_one = build_optim_wrapper(model, dict(optimizer=dict(type="TorchAdafactor", lr=1e-2)))
    assert type(torch_one.optimizer) is torch.optim.Adafactor


def test_stand_ins_register_lazily_check_arguments_and_yield_to_earlier_names(
    tmp_path, monkeypatch
):
    monkeypatch.syspath_prepend(str(write_standins(tmp_path)))
    for package in STANDINS:
        monkeypatch.delitem(sys.modules, package, raising=False)
    registry = Registry("optimizer", scope="third_party_present")

    @registry.register_module(name="Lion")
    class MyLion(torch.optim.SGD):
        pass

    assert register_lion_optimizers(registry) == []  # the user's Lion stays
    assert registry.get("Lion") is MyLion
    assert register_transformers_optimizers(registry) == ["Adafactor"]
    assert register_dadaptation_optimizers(registry) == ["DAdaptAdaGrad", "DAdaptAdam", "DAdaptSGD"]
    assert "transformers" not in sys.modules and "dadaptation" not in sys.modules
    assert not {"Lion", "SophiaG", "AdamW8bit"} & set(register_install_hints(registry))
    params = [nn.Parameter(torch.ones(2))]
    adafactor = registry.build(dict(type="Adafactor", relative_step=False), dict(params=params))
    assert type(adafactor).__module__ == "transformers"
    with pytest.raises(TypeError, match="'relative_stp', which Adafactor does not take"):
        registry.build(dict(type="Adafactor", relative_stp=False), dict(params=params))
