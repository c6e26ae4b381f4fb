"""MMEngine's pure-Python config style (``with read_base():``): runnerx reads it eagerly and
gives mmengine-lite's values, except that an imported class stays a class (MMEngine has its
import path there)."""

import collections
import copy
import importlib
import re
import textwrap
import uuid
from pathlib import Path

import pytest
from mmengine.config import Config as MMConfig
from mmengine.config import ConfigDict as MMConfigDict
from torch.optim import SGD

from runnerx import Config
from runnerx.config import (
    ConfigDict,
    ConfigError,
    ConfigFileNotFoundError,
    ConfigParsingError,
    InheritanceCycleError,
    MissingBaseVariableError,
    read_base,
)
from runnerx.config.pretty import object_path
from runnerx.hooks import CheckpointHook, LoggerHook
from runnerx.runner import LogProcessor, Runner

# `PKG` becomes the module read_base is imported from: mmengine.config or runnerx.config.
TREE = {
    "_base_/models/net.py": """\
        from torch.optim import SGD

        model = dict(type='Net', backbone=dict(depth=18, widths=[8, 16]), heads=[dict(num=10)])
        optim_wrapper = dict(optimizer=dict(type=SGD, lr=0.1, momentum=0.9))
        """,
    "_base_/datasets/data.py": """\
        train_dataloader = dict(batch_size=8, dataset=dict(type='Digits', split='train'))
        val_dataloader = dict(batch_size=16, dataset=dict(type='Digits', split='val'))
        """,
    # a base that itself imports a base, and binds two names to one dict
    "_base_/runtime.py": """\
        from PKG import read_base

        with read_base():
            from .datasets.data import val_dataloader

        test_dataloader = val_dataloader
        test_dataloader.batch_size = 32
        default_hooks = dict(logger=dict(type='LoggerHook', interval=10))
        """,
    "exp/child.py": """\
        from PKG import read_base

        with read_base():
            from .._base_.models.net import *
            from .._base_.datasets.data import train_dataloader, val_dataloader as vdl
            from .._base_.runtime import *
        from torch.optim import AdamW

        model.backbone.depth = 50
        model.heads[0].num = 100
        train_dataloader.update(dict(batch_size=64, dataset=dict(split='trainval')))
        optim_wrapper.merge(dict(optimizer=dict(type=AdamW, lr=0.01)))
        vdl.merge(dict(dataset=dict(_delete_=True, type='Other')))
        test_dataloader.num_workers = 2
        default_hooks.logger.interval = 1
        work_dir = './work_dirs/child'
        """,
}


def write_tree(root: Path, files: dict[str, str], package: str = "runnerx.config") -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).replace("PKG", package))
    return root


def load_both(tmp_path: Path, files: dict[str, str], child: str) -> tuple[dict, dict]:
    ours = write_tree(tmp_path / "runnerx", files)
    theirs = write_tree(tmp_path / "mmengine", files, "mmengine.config")
    return Config.fromfile(ours / child).to_dict(), MMConfig.fromfile(theirs / child).to_dict()


def classes_resolved(value, key=None):
    """MMEngine's dict with each imported class's path ('torch.optim.SGD') as the class."""
    if isinstance(value, dict):
        return {k: classes_resolved(item, k) for k, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(classes_resolved(item) for item in value)
    if key == "type" and isinstance(value, str) and "." in value:
        module, name = value.rsplit(".", 1)
        return getattr(importlib.import_module(module), name)
    return value


def test_a_read_base_tree_gives_mmengines_values_with_classes_as_classes(tmp_path):
    ours, theirs = load_both(tmp_path, TREE, "exp/child.py")
    assert ours == classes_resolved(theirs)
    from torch.optim import AdamW

    assert ours["optim_wrapper"]["optimizer"] == dict(type=AdamW, lr=0.01, momentum=0.9)
    # the two imports of datasets/data.py are independent: vdl's edit stays in vdl
    assert ours["vdl"]["dataset"] == dict(type="Other")
    assert ours["val_dataloader"]["dataset"]["split"] == "val"
    # and in runtime.py's result, test_dataloader is not val_dataloader (as in MMEngine)
    assert ours["test_dataloader"]["num_workers"] == 2 and "num_workers" not in ours["vdl"]
    assert "num_workers" not in ours["val_dataloader"]
    assert {"SGD", "AdamW", "read_base"}.isdisjoint(ours)  # names bound by imports


def test_base_variables_are_config_dicts_before_the_file_runs(tmp_path):
    files = {
        "base.py": "pipeline = [dict(type='Load'), dict(type='Resize', scale=(1, 2))]\n",
        "child.py": """\
            from runnerx.config import read_base

            with read_base():
                from .base import pipeline
            kinds = [type(step).__name__ for step in pipeline]
            pipeline[1].scale = (3, 4)
            """,
    }
    cfg = Config.fromfile(write_tree(tmp_path, files) / "child.py")
    assert cfg.kinds == ["ConfigDict", "ConfigDict"]
    assert cfg.pipeline[1].scale == (3, 4)


def test_an_absolute_module_is_a_file_in_an_importable_package(tmp_path, monkeypatch):
    package = f"rbxpkg_{uuid.uuid4().hex[:8]}"
    files = {
        f"site/{package}/__init__.py": "raise RuntimeError('the package must not be imported')\n",
        f"site/{package}/configs/_base_/runtime.py": "env_cfg = dict(cudnn_benchmark=False)\n",
        "child.py": f"""\
            from PKG import read_base

            with read_base():
                from {package}.configs._base_.runtime import *
            env_cfg.cudnn_benchmark = True
            """,
    }
    monkeypatch.syspath_prepend(str(tmp_path / "runnerx" / "site"))
    monkeypatch.syspath_prepend(str(tmp_path / "mmengine" / "site"))
    ours, theirs = load_both(tmp_path, files, "child.py")
    assert ours == theirs == {"env_cfg": {"cudnn_benchmark": True}}


@pytest.mark.parametrize(
    ("base", "other"),
    [
        (dict(a=dict(x=1, y=2), b=[1, 2]), dict(a=dict(x=3), b=[3], c=dict(z=1))),
        (dict(a=dict(x=1, y=2)), dict(a=dict(_delete_=True, z=1))),
        (dict(a=[dict(x=1)], b=1), dict(a=dict(x=2), b=dict(y=1))),  # a dict over a non-dict
    ],
)
def test_config_dict_merge_matches_mmengine(base, other):
    ours, theirs = ConfigDict(copy.deepcopy(base)), MMConfigDict(copy.deepcopy(base))
    ours.merge(copy.deepcopy(other))
    theirs.merge(copy.deepcopy(other))
    assert ours.to_dict() == theirs.to_dict()


def test_templates_custom_imports_and_cfg_options_keep_working(tmp_path, monkeypatch):
    module = f"rbx_custom_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("RBX_DATA_ROOT", "/mnt/data")
    files = {
        "_base_/data.py": "data_root = '{{$RBX_DATA_ROOT:data/x}}/'\nwork = '{{ fileDirname }}'\n",
        "child.py": f"""\
            from runnerx.config import read_base

            with read_base():
                from ._base_.data import *
            custom_imports = dict(imports=['{module}'])
            name = '{{{{ fileBasenameNoExtension }}}}'
            """,
    }
    cfg = Config.fromfile(write_tree(tmp_path, files) / "child.py")
    assert cfg.data_root == "/mnt/data/" and cfg.env_variables == {"RBX_DATA_ROOT": "/mnt/data"}
    assert cfg.work == str(tmp_path / "_base_") and cfg.name == "child"
    assert importlib.import_module(module).LOADED
    cfg.merge_from_dict({"data_root": "/other/", "custom_imports.allow_failed_imports": True})
    assert cfg.data_root == "/other/" and cfg.custom_imports.allow_failed_imports is True


def test_dump_then_reload_gives_the_same_dict_with_classes_as_paths(tmp_path):
    child = write_tree(tmp_path / "tree", TREE) / "exp/child.py"
    cfg = Config.fromfile(child)
    cfg.dump(tmp_path / "dumped.py")
    reloaded = Config.fromfile(tmp_path / "dumped.py")
    expected = cfg.to_dict()
    optimizer = expected["optim_wrapper"]["optimizer"]
    optimizer["type"] = object_path(optimizer["type"])
    assert reloaded.to_dict() == expected
    assert expected["optim_wrapper"]["optimizer"]["type"] == "torch.optim.adamw.AdamW"
    assert str(child) in cfg.text and str(child.parents[1] / "_base_/runtime.py") in cfg.text


def test_explain_names_the_base_file_and_follows_renamed_imports(tmp_path):
    root = write_tree(tmp_path, TREE)
    cfg = Config.fromfile(root / "exp/child.py")
    depth = cfg.explain("model.backbone.depth")
    assert [origin.where.rsplit("/", 1)[-1] for origin in depth.origins] == [
        "net.py:3",
        "child.py:9",
    ]
    batch = cfg.explain("vdl.batch_size")  # vdl is data.py's val_dataloader
    assert [origin.where.rsplit("/", 1)[-1] for origin in batch.origins] == ["data.py:2"]
    (root / "replace.py").write_text(
        "from runnerx.config import read_base\n"
        "with read_base():\n"
        "    from ._base_.models.net import model\n"
        "model = dict(type='Other')\n"
    )
    replaced = Config.fromfile(root / "replace.py")
    assert replaced.model == dict(type="Other")  # an assignment replaces, nothing merges
    assert "overrides 1" in str(replaced.explain("model"))


HEADER = "from runnerx.config import read_base\nwith read_base():\n"
IMPORT_STAR = "with read_base():\n    from .base import *\n"
ERRORS = [
    # (child text after the read_base import, error type, line, words in the message)
    ("with read_base():\n    x = 1\n", ConfigParsingError, 3, "only `from <config module> import"),
    ("with read_base():\n    from . import base\n", ConfigParsingError, 3, "names a folder"),
    ("with read_base():\n    from .nope import *\n", ConfigFileNotFoundError, 3, "nope.py"),
    ("_base_ = ['base.py']\n" + IMPORT_STAR, ConfigError, 2, "_base_"),
    ("with open('x'):\n    pass\n" + IMPORT_STAR, ConfigError, 2, "only `with read_base():`"),
    ("with read_base():\n    from .loop import *\n", InheritanceCycleError, 3, "loop"),
    ("with read_base():\n    from .base import nope\n", MissingBaseVariableError, 3, "'nope'"),
    ("with read_base():\n    from torch import *\n", ConfigParsingError, 3, "names a package"),
    (IMPORT_STAR + "from .base import x\n", ConfigParsingError, 4, "outside"),
    ("if True:\n    with read_base():\n        from .base import *\n", ConfigError, 3, "top-level"),
    # no block, but imports as only this style may (MMEngine reads such a file this way too)
    ("from .base import x\n", ConfigParsingError, 2, "outside"),
    ("from torch.optim import *\n", ConfigParsingError, 2, "import the names it needs"),
]


@pytest.mark.parametrize(("text", "kind", "line", "words"), ERRORS)
def test_errors_name_the_file_and_line(tmp_path, text, kind, line, words):
    files = {
        "base.py": "x = 1\n",
        "loop.py": HEADER + "    from .child import *\n",
        "child.py": "from runnerx.config import read_base\n" + text,
    }
    path = write_tree(tmp_path, files) / "child.py"
    where = path if kind is not InheritanceCycleError else tmp_path / "loop.py"
    with pytest.raises(kind, match=f"^{re.escape(str(where))}:{line}: ") as info:
        Config.fromfile(path)
    assert words in str(info.value)


def test_a_base_list_and_read_base_do_not_mix_across_files(tmp_path):
    files = {
        "old.py": "_base_ = ['plain.py']\n",
        "plain.py": "x = 1\n",
        "new.py": HEADER + "    from .plain import *\n",
        "imports_old.py": HEADER + "    from .old import *\n",
        "inherits_new.py": "_base_ = ['new.py']\n",
    }
    root = write_tree(tmp_path, files)
    with pytest.raises(ConfigError, match=f"^{re.escape(str(root / 'old.py'))}:1: "):
        Config.fromfile(root / "imports_old.py")
    inherits = re.escape(str(root / "inherits_new.py"))
    with pytest.raises(ConfigError, match=f"{inherits}:1 inherits it through `_base_`"):
        Config.fromfile(root / "inherits_new.py")


def test_lazy_import_false_refuses_and_true_reads_a_plain_file_in_this_style(tmp_path):
    files = {
        "base.py": "x = 1\n",
        "child.py": HEADER + "    from .base import *\n",
        "plain.py": "from torch.optim import SGD\noptimizer = dict(type=SGD, lr=0.1)\n",
    }
    root = write_tree(tmp_path, files)
    child = re.escape(str(root / "child.py"))
    with pytest.raises(ConfigError, match=f"^{child}:2: .*lazy_import=False"):
        Config.fromfile(root / "child.py", lazy_import=False)
    assert Config.fromfile(root / "child.py", lazy_import=True).to_dict() == {"x": 1}
    assert "SGD" in Config.fromfile(root / "plain.py", lazy_import=False)  # the _base_ way
    assert "SGD" not in Config.fromfile(root / "plain.py", lazy_import=True)


def test_a_file_without_a_block_that_imports_a_package_is_read_in_this_style(tmp_path):
    # MMEngine reads a .py file in this style when, without `_base_ = ...`, it imports from
    # outside the standard library: the names those imports bind are not config values.
    files = {
        "base.py": "x = dict(a=1)\n",
        "plain.py": """\
            import numpy as np
            from torch.optim import SGD

            optimizer = dict(type=SGD, lr=0.1)
            cast = dict(type=np.float32)
            """,
        # a `_base_` assignment first: the _base_ way, where an imported class is a value
        "old_style.py": "_base_ = ['base.py']\nfrom torch.optim import SGD\nopt = dict(type=SGD)\n",
    }
    ours, theirs = load_both(tmp_path, files, "plain.py")
    assert ours == classes_resolved(theirs) and set(ours) == {"optimizer", "cast"}
    ours, theirs = load_both(tmp_path, files, "old_style.py")
    assert ours == theirs and "SGD" in ours
    # only the standard library: the _base_ way, an imported class stays (MMEngine's rule; its
    # own check is not an oracle here: it misses the stdlib of a pyenv-made venv)
    stdlib = tmp_path / "stdlib.py"
    stdlib.write_text(
        "from collections import OrderedDict\nimport os.path as osp\np = osp.join('a', 'b')\n"
    )
    assert Config.fromfile(stdlib).to_dict() == {"OrderedDict": collections.OrderedDict, "p": "a/b"}
    # a file a `_base_` list names is read the _base_ way (MMEngine refuses it: style mix)
    (tmp_path / "runnerx" / "inherits_plain.py").write_text("_base_ = ['plain.py']\n")
    inherited = Config.fromfile(tmp_path / "runnerx" / "inherits_plain.py")
    assert inherited.optimizer.type is SGD and "SGD" in inherited


def test_dunder_file_is_the_config_path(tmp_path):
    files = {
        "_base_/base.py": "where = __file__\n",
        "child.py": """\
            from PKG import read_base

            with read_base():
                from ._base_.base import *
            here = __file__
            """,
        "old_style.py": "_base_ = ['_base_/plain.py']\nhere = __file__\n",
        "_base_/plain.py": "where = __file__\n",
    }
    ours, theirs = load_both(tmp_path, files, "child.py")
    for root, cfg in ((tmp_path / "runnerx", ours), (tmp_path / "mmengine", theirs)):
        assert cfg["here"] == str(root / "child.py")
        assert Path(cfg["where"]).resolve() == (root / "_base_/base.py").resolve()
    # the _base_ way too (MMEngine gives the path of a temporary copy there)
    old = Config.fromfile(tmp_path / "runnerx" / "old_style.py")
    assert old.here == str(tmp_path / "runnerx" / "old_style.py")
    assert old.where == str(tmp_path / "runnerx" / "_base_" / "plain.py")


STYLE_ERRORS = {
    "mixed.py": "from PKG import read_base\nwith read_base():\n    from .old import *\n",
    "other_with.py": "from PKG import read_base\nwith open('x'):\n    pass\n" + IMPORT_STAR,
    "star.py": "from torch.optim import *\n",
    "package.py": "from PKG import read_base\nwith read_base():\n    from torch import *\n",
}


@pytest.mark.parametrize("child", sorted(STYLE_ERRORS))
def test_style_errors_are_runtime_errors_as_in_mmengine(tmp_path, child):
    files = {**STYLE_ERRORS, "old.py": "_base_ = ['base.py']\n", "base.py": "x = 1\n"}
    ours = write_tree(tmp_path / "runnerx", files) / child
    theirs = write_tree(tmp_path / "mmengine", files, "mmengine.config") / child
    with pytest.raises(RuntimeError):
        MMConfig.fromfile(theirs)
    with pytest.raises(RuntimeError) as info:
        Config.fromfile(ours)
    assert isinstance(info.value, ConfigParsingError) and isinstance(info.value, ConfigError)


def test_a_name_the_base_lacks_is_a_keyerror_as_in_mmengine(tmp_path):
    files = {
        "base.py": "x = 1\n",
        "child.py": "from PKG import read_base\nwith read_base():\n    from .base import nope\n",
    }
    with pytest.raises(KeyError):
        MMConfig.fromfile(write_tree(tmp_path / "mmengine", files, "mmengine.config") / "child.py")
    with pytest.raises(KeyError, match="no variable 'nope'"):
        Config.fromfile(write_tree(tmp_path / "runnerx", files) / "child.py")


def test_read_base_is_a_context_manager_that_does_nothing():
    with read_base() as value:
        assert value is None


def test_a_read_base_config_with_classes_as_types_trains(tmp_path):
    files = {
        "_base_/toy_runtime.py": """\
            from torch.optim import SGD

            from runnerx.data import DefaultSampler
            from runnerx.hooks import LoggerHook
            from runnerx.runner import LogProcessor
            from runnerx.testing.toy import ToyDataset, ToyModel

            model = dict(type=ToyModel)
            train_dataloader = dict(
                dataset=dict(type=ToyDataset),
                sampler=dict(type=DefaultSampler, shuffle=True),
                batch_size=3,
                num_workers=0,
            )
            optim_wrapper = dict(optimizer=dict(type=SGD, lr=0.1))
            train_cfg = dict(by_epoch=False, max_iters=4)
            default_hooks = dict(logger=dict(type=LoggerHook, interval=1))
            log_processor = dict(type=LogProcessor, window_size=1, by_epoch=False)
            """,
        "toy.py": """\
            from runnerx.config import read_base

            with read_base():
                from ._base_.toy_runtime import *
            from runnerx.hooks import CheckpointHook

            train_cfg.max_iters = 2
            checkpoint = dict(type=CheckpointHook, interval=2, by_epoch=False)
            default_hooks.update(dict(checkpoint=checkpoint))
            work_dir = '{{ fileDirname }}/work'
            """,
    }
    runner = Runner.from_cfg(Config.fromfile(write_tree(tmp_path, files) / "toy.py"))
    runner.train()
    assert runner.iter == 2
    built = {type(hook) for hook in runner.hooks}
    assert {LoggerHook, CheckpointHook} <= built
    assert type(runner.log_processor) is LogProcessor and runner.log_processor.window_size == 1
    work = tmp_path / "work"
    assert (work / "iter_2.pth").is_file()
    (log,) = work.glob("*/*.log")
    assert "Iter(train) [2/2]" in log.read_text()
