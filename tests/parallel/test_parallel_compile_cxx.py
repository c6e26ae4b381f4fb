"""compile with inductor on the CPU needs a C++ compiler: a missing one is refused when the
model is prepared, naming compile and the ways out, not at the first iteration."""

import os
import sys

import pytest
from torch import nn
from torch._inductor import config as inductor_config

from runnerx.parallel import prepare_model

#: prepares a small model with compile=True, after checking that backend='eager' needs no compiler
PREPARE = """
from torch import nn
from runnerx.parallel import prepare_model
prepare_model(nn.Linear(2, 2), compile=dict(backend='eager'))
print('eager prepared')
prepare_model(nn.Linear(2, 2), compile=True)
print('inductor prepared')
"""


def test_cxx_naming_a_missing_compiler_is_refused_before_training(tmp_path, run_in_repo):
    env = {key: value for key, value in os.environ.items() if key != "TORCH_INDUCTOR_INSTALL_GXX"}
    env["CXX"] = str(tmp_path / "missing" / "g++")  # inductor reads $CXX when it is imported
    result = run_in_repo([sys.executable, "-c", PREPARE], env=env, timeout=120)
    assert "eager prepared" in result.stdout, result.stderr[-3000:]
    assert result.returncode != 0 and "inductor prepared" not in result.stdout
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("RuntimeError: compile (compile=True or a compile dict, or "), error
    assert f"'{env['CXX']}'" in error
    for way_out in ("apt-get install g++", "compile=dict(backend='eager')", "-O2 instead of -O3"):
        assert way_out in error


@pytest.fixture
def missing_compiler(tmp_path, monkeypatch):
    """inductor's compiler search as $CXX naming a missing file would set it."""
    missing = str(tmp_path / "g++")
    monkeypatch.delenv("TORCH_INDUCTOR_INSTALL_GXX", raising=False)
    with inductor_config.patch({"cpp.cxx": (None, missing)}):
        yield missing


def test_a_missing_compiler_is_refused_for_per_block_compile_too(missing_compiler):
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    with pytest.raises(RuntimeError, match="needs a C.. compiler.*none was found"):
        prepare_model(model, compile=dict(modules=["Linear"], mode="max-autotune"))
    assert model[0]._compiled_call_impl is None  # nothing was compiled


@pytest.mark.parametrize(
    "cfg",
    [
        dict(backend="eager"),
        dict(disable=True),
        dict(options={"cpp.cxx": (sys.executable,)}),  # a compiler given to inductor directly
    ],
)
def test_settings_that_need_no_compiler_on_the_path_are_let_through(missing_compiler, cfg):
    model = nn.Linear(2, 2)
    prepare_model(model, compile=cfg)
    assert model._compiled_call_impl is not None


def test_a_compiler_inductor_finds_or_installs_is_let_through(missing_compiler, monkeypatch):
    with inductor_config.patch({"cpp.cxx": (None, missing_compiler, sys.executable)}):
        prepare_model(nn.Linear(2, 2), compile=True)
    monkeypatch.setenv("TORCH_INDUCTOR_INSTALL_GXX", "1")
    prepare_model(nn.Linear(2, 2), compile=True)


def test_a_model_on_the_meta_device_is_not_checked(missing_compiler):
    # (the check is for CPU models only; a GPU model is checked the same way as this one)
    model = nn.Linear(2, 2, device="meta")
    prepare_model(model, compile=True, device="meta")
    assert model._compiled_call_impl is not None
