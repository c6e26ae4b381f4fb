"""MMEngine's scopes in runnerx: ``mmengine`` names runnerx's root registries, and a scope
that is not in the tree yet gets its package's ``registry`` module imported, as MMEngine does."""

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runnerx import Config
from runnerx.hooks import CheckpointHook, IterTimerHook
from runnerx.model import ImgDataPreprocessor
from runnerx.registry import (
    HOOKS,
    MODELS,
    DefaultScope,
    NotRegisteredError,
    Registry,
    init_default_scope,
)

ROOT = Path(__file__).parents[2]
_ids = itertools.count()


@pytest.fixture(autouse=True)
def clean_default_scope(monkeypatch):
    monkeypatch.setattr(DefaultScope, "_instances", {})
    monkeypatch.setattr(DefaultScope, "_current", None)


@pytest.fixture
def keep_root_children():
    """Packages imported by a test add children to the root registries: take them off again."""
    before = {registry: dict(registry.children) for registry in (MODELS, HOOKS)}
    yield
    for registry, children in before.items():
        registry.children.clear()
        registry.children.update(children)


def test_mmengine_scope_and_module_paths_name_runnerx_root_entries():
    assert HOOKS.get("mmengine.IterTimerHook") is IterTimerHook
    assert HOOKS.get("mmengine.hooks.CheckpointHook") is CheckpointHook  # not MMEngine's
    assert MODELS.get("mmengine.model.ImgDataPreprocessor") is ImgDataPreprocessor
    assert type(HOOKS.build(dict(type="IterTimerHook", _scope_="mmengine"))) is IterTimerHook
    built = HOOKS.build(dict(type="mmengine.hooks.CheckpointHook", interval=3))
    assert type(built) is CheckpointHook and built.interval == 3


def test_default_scope_mmengine_searches_the_root_first():
    root = Registry("model", scope="runnerx")
    child = Registry("model", parent=root, scope="scopechild")
    root_net, child_net = type("Net", (), {}), type("Net", (), {})
    root.register_module(module=root_net)
    child.register_module(module=child_net)
    assert type(child.build(dict(type="Net"))) is child_net
    init_default_scope("mmengine")
    assert type(child.build(dict(type="Net"))) is root_net


def test_a_registry_with_the_scope_mmengine_is_used_as_it_is():
    activations = Registry("activation", scope="mmengine")  # MMEngine's registry tutorial
    relu = activations.register_module(name="ReLU", module=type("ReLU", (), {}))
    assert activations.get("mmengine.ReLU") is relu


def test_an_unknown_mmengine_module_path_is_refused_without_importing_mmengine():
    code = (
        "import sys\n"
        "from runnerx.registry import HOOKS\n"
        "assert HOOKS.get('mmengine.hooks.NoSuchHook') is None\n"
        "try:\n"
        "    HOOKS.build(dict(type='mmengine.hooks.NoSuchHook'))\n"
        "except KeyError as error:\n"
        "    print(error)\n"
        "print('mmengine' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    message, imported = result.stdout.strip().rsplit("\n", 1)
    assert imported == "False"
    assert "'mmengine.hooks.NoSuchHook'" in message and "'hook' registry" in message
    assert "looked up as 'NoSuchHook'" in message


def test_a_runner_takes_mmengine_prefixed_hooks_and_default_scope(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.merge_from_dict(
        dict(
            work_dir=str(tmp_path),
            log_level="WARNING",
            default_scope="mmengine",
            train_cfg=dict(max_epochs=1),
            default_hooks=dict(
                timer=dict(type="mmengine.IterTimerHook"),
                checkpoint=dict(type="mmengine.hooks.CheckpointHook", interval=1),
            ),
        )
    )
    from runnerx.runner import Runner

    runner = Runner.from_cfg(cfg)
    kinds = {type(hook) for hook in runner.hooks}
    assert {IterTimerHook, CheckpointHook} <= kinds
    runner.train()
    assert (tmp_path / "epoch_1.pth").is_file()


def write_package(write_module, name: str) -> None:
    """An OpenMMLab-style package: ``registry.py`` makes a child of MODELS whose location
    registers the models; nothing imports the package up front."""
    write_module(f"{name}.__init__")
    write_module(
        f"{name}.registry",
        f"""
        from runnerx.registry import MODELS as ROOT_MODELS, Registry

        MODELS = Registry('model', parent=ROOT_MODELS, locations=['{name}.models'])
        """,
    )
    write_module(
        f"{name}.models",
        f"""
        from {name}.registry import MODELS

        @MODELS.register_module()
        class Detector:
            def __init__(self, depth=1):
                self.depth = depth
        """,
    )


@pytest.mark.parametrize("form", ["default_scope", "prefix", "_scope_"])
def test_a_scope_imports_its_package_registry(write_module, keep_root_children, form):
    name = f"scopepkg{next(_ids)}"
    write_package(write_module, name)
    assert f"{name}.registry" not in sys.modules
    if form == "default_scope":
        init_default_scope(name)
        cfg = dict(type="Detector", depth=2)
    elif form == "prefix":
        cfg = dict(type=f"{name}.Detector", depth=2)
    else:
        cfg = dict(type="Detector", depth=2, _scope_=name)
    built = MODELS.build(cfg)
    assert type(built) is sys.modules[f"{name}.models"].Detector and built.depth == 2


def test_a_scope_registry_that_fails_to_import_is_tried_once_and_named(write_module):
    name = f"brokenpkg{next(_ids)}"
    counter = write_module(f"counter{name}", "TRIES = []\n")
    write_module(f"{name}.__init__")
    write_module(
        f"{name}.registry",
        f"import {counter}\n{counter}.TRIES.append(1)\nraise ImportError('it needs mmcv')\n",
    )
    for _ in range(2):
        with pytest.raises(NotRegisteredError) as info:
            HOOKS.build(dict(type=f"{name}.SomeHook"))
        assert f"tried to import '{name}.registry'" in str(info.value)
        assert "it needs mmcv" in str(info.value)
    assert sys.modules[counter].TRIES == [1]


def test_a_missing_default_scope_is_named_in_the_error():
    name = f"absentpkg{next(_ids)}"
    init_default_scope(name)
    with pytest.raises(NotRegisteredError) as info:
        HOOKS.build(dict(type="NoSuchHook"))
    message = str(info.value)
    assert f"default scope is '{name}'" in message
    assert f"tried to import '{name}.registry'" in message and "No module named" in message


def test_an_error_inside_a_scope_registry_is_not_hidden(write_module):
    name = f"buggypkg{next(_ids)}"
    write_module(f"{name}.__init__")
    write_module(f"{name}.registry", "undefined_name\n")
    with pytest.raises(NameError, match="undefined_name"):
        MODELS.build(dict(type=f"{name}.Detector"))
