"""Reading config trees: inheritance rules, templates, formats, custom imports and errors."""

import os
import sys
import textwrap
from pathlib import Path

import pytest

from runnerx import Config, ConfigDict
from runnerx.config import (
    ConfigError,
    ConfigFileNotFoundError,
    ConfigSyntaxError,
    DuplicateBaseKeyError,
    InheritanceCycleError,
    config_key_path,
)

DATA = Path(__file__).parent / "data"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_values_are_config_dicts_with_attribute_and_item_access():
    cfg = Config.fromfile(DATA / "mm/faster_rcnn_r101_fpn_2x_voc.py")
    assert isinstance(cfg.model, ConfigDict)
    assert cfg.model.backbone.depth == cfg["model"]["backbone"]["depth"] == 101
    assert cfg.model.roi_head.bbox_head.num_classes == 20
    assert cfg.optim_wrapper.optimizer == dict(type="SGD", lr=0.01, momentum=0.9, weight_decay=1e-4)
    assert isinstance(cfg.train_pipeline[0], ConfigDict)


def test_five_levels_of_inheritance_merge_key_by_key():
    cfg = Config.fromfile(DATA / "deep/level4.py")
    assert cfg.model.type == "Net4"  # level4
    assert cfg.model.depth == 34  # level1
    assert cfg.model.widths == [32, 64, 128]  # level1's list replaced level0's
    assert cfg.model.strides == [2, 2]  # level3's list replaced level0's tuple
    assert cfg.model.head == dict(type="OtherHead", k=5)  # level2 _delete_, level3 merge
    assert cfg.optim_wrapper.optimizer == dict(type="AdamW", lr=1e-3, betas=(0.9, 0.99))
    assert cfg.optim_wrapper.type == "OptimWrapper"
    assert cfg.nested == dict(a=dict(b=dict(z=0)))
    assert cfg.extra is None and cfg.flag is True and cfg.ratio == 0.25


def test_tuples_stay_tuples_and_lists_stay_lists():
    cfg = Config.fromfile(DATA / "deep/level1.py")
    assert isinstance(cfg.model.strides, tuple)
    assert isinstance(cfg.model.widths, list)
    assert isinstance(cfg.nested.a.b.c.e[1], tuple)


def test_python_config_keeps_its_names_but_not_modules_functions_or_dunders():
    cfg = Config.fromfile(DATA / "deep/level0.py")
    assert cfg._private == "kept"
    assert "__hidden" not in cfg and "helper" not in cfg
    assert cfg.doubled == 42 and cfg.squares == [0, 1, 4, 9] and cfg.scale == 2.0
    imports = Config.fromfile(DATA / "deep/imports.py")
    # modules and Python functions are dropped; like MMEngine, a builtin function is kept
    assert set(imports) == {"work_dir", "root", "sqrt"}
    assert imports.work_dir == os.path.join("work_dirs", "imports")


def test_delete_replaces_the_inherited_dict():
    cfg = Config.fromfile(DATA / "delete/child.py")
    assert cfg.model.backbone == dict(type="Swin", embed_dims=96)
    assert cfg.model.head == dict(type="H")
    assert cfg.runner == dict(type="IterBasedRunner", max_iters=1000)
    assert cfg["items"] == [9]  # (cfg.items is the dict method)
    assert cfg.value == dict(a=1)


def test_a_dict_over_an_inherited_scalar_needs_delete(tmp_path):
    write(tmp_path, "base.py", "value = 5\n")
    child = write(tmp_path, "child.py", "_base_ = './base.py'\nvalue = dict(a=1)\n")
    with pytest.raises(TypeError, match="_delete_=True"):
        Config.fromfile(child)


def test_a_dict_over_an_inherited_non_dict_names_the_key_path_and_both_files(tmp_path):
    base = write(tmp_path, "base.py", "model = dict(\n    type='Net',\n    init_cfg=None)\n")
    write(tmp_path, "mid.py", "_base_ = './base.py'\nmodel = dict(init_cfg=dict(type='K'))\n")
    child = write(tmp_path, "child.py", "_base_ = './mid.py'\nx = 1\n")
    with pytest.raises(TypeError) as caught:  # a conflict inside a base names that base
        Config.fromfile(child)
    assert str(caught.value).startswith(
        f"{tmp_path / 'mid.py'}:2: model.init_cfg={{'type': 'K'}} is a dict, but the inherited "
        f"value (from {base}:3) is None, which is not a dict"
    )
    assert str(caught.value).endswith("model.init_cfg=dict(_delete_=True, ...)")
    cfg = Config(dict(model=dict(init_cfg=None)))  # options merged into a config
    with pytest.raises(TypeError, match=r"^model.init_cfg=\{'type': 'K'\} is a dict, but the "):
        cfg.merge_from_dict({"model": {"init_cfg": {"type": "K"}}}, allow_list_keys=False)


def test_base_references_and_in_place_edits():
    cfg = Config.fromfile(DATA / "refs/child.py")
    assert cfg.num_classes == 10
    assert cfg.head == dict(type="Head", in_channels=64, num_classes=10)
    assert cfg.train_pipeline[1].scale == (800, 600)  # edited in place through _base_
    assert cfg.test_pipeline == cfg.train_pipeline
    assert cfg.scaled_lr == 0.02
    assert cfg.model.backbone.channels == 128
    assert cfg.whole_model == dict(
        type="Net", backbone=dict(type="Backbone", channels=64), num_classes=10
    )
    grandchild = Config.fromfile(DATA / "refs/grandchild.py")
    assert grandchild.model.backbone.channels == 256
    assert grandchild.pipeline_copy[1].scale == (800, 600)


def test_base_may_be_one_string_or_a_list(tmp_path):
    write(tmp_path, "a.py", "a = 1\n")
    write(tmp_path, "b.py", "b = 2\n")
    assert Config.fromfile(write(tmp_path, "one.py", "_base_ = 'a.py'\nc = 3\n")).to_dict() == {
        "a": 1,
        "c": 3,
    }
    two = write(tmp_path, "two.py", "_base_ = ['a.py', './b.py']\n")
    assert Config.fromfile(two).to_dict() == {"a": 1, "b": 2}


def test_key_defined_in_two_bases_names_both_files():
    with pytest.raises(DuplicateBaseKeyError) as caught:
        Config.fromfile(DATA / "dup/child.py")
    message = str(caught.value)
    assert "'shared'" in message
    assert str(DATA / "dup/a.py") in message and str(DATA / "dup/b.py") in message
    assert isinstance(caught.value, KeyError)  # as MMEngine raises it


def test_inheritance_cycle_names_the_chain():
    with pytest.raises(InheritanceCycleError) as caught:
        Config.fromfile(DATA / "cycle/a.py")
    chain = [DATA / f"cycle/{name}.py" for name in "abca"]
    assert " -> ".join(str(path) for path in chain) in str(caught.value)


def test_file_inheriting_itself_is_a_cycle(tmp_path):
    path = write(tmp_path, "self.py", "_base_ = './self.py'\n")
    with pytest.raises(InheritanceCycleError, match="self.py -> .*self.py"):
        Config.fromfile(path)


def test_same_base_twice_on_different_branches_is_not_a_cycle(tmp_path):
    write(tmp_path, "common.py", "x = 1\n")
    write(tmp_path, "left.py", "_base_ = './common.py'\nleft = 1\n")
    child = write(tmp_path, "child.py", "_base_ = './left.py'\ny = dict(z=1)\n")
    assert Config.fromfile(child).to_dict() == {"x": 1, "left": 1, "y": {"z": 1}}


def test_syntax_error_names_file_and_line():
    path = DATA / "errors/syntax.py"
    with pytest.raises(ConfigSyntaxError) as caught:
        Config.fromfile(path)
    assert f"{path}:1:" in str(caught.value)
    assert caught.value.filename == str(path) and caught.value.lineno == 1
    assert isinstance(caught.value, SyntaxError)


def test_syntax_error_in_a_base_names_the_base(tmp_path):
    write(tmp_path, "base.py", "a = 1\nb = (\n")
    child = write(tmp_path, "child.py", "_base_ = './base.py'\n")
    with pytest.raises(ConfigSyntaxError, match=f"{tmp_path / 'base.py'}:2"):
        Config.fromfile(child)


def test_missing_base_names_the_file_that_asked_for_it():
    path = DATA / "errors/missing_base.py"
    with pytest.raises(ConfigFileNotFoundError) as caught:
        Config.fromfile(path)
    message = str(caught.value)
    assert f"{path}:1" in message and "does_not_exist.py" in message
    assert isinstance(caught.value, FileNotFoundError)


def test_missing_config_file():
    with pytest.raises(FileNotFoundError, match="nowhere.py"):
        Config.fromfile(DATA / "nowhere.py")


def test_error_raised_by_config_code_names_file_and_line():
    path = DATA / "errors/runtime.py"
    with pytest.raises(ConfigError, match=f"{path}:2: .*NameError.*undefined_name") as caught:
        Config.fromfile(path)
    assert isinstance(caught.value.__cause__, NameError)
    assert isinstance(caught.value, NameError)  # `except NameError` catches it too


def test_an_error_of_the_config_code_keeps_its_type_as_in_mmengine(tmp_path):
    # MMEngine's config.md: editing a `{{_base_.model}}` string raises TypeError
    path = write(tmp_path, "edit.py", "model = 'ResNet'\nmodel['type'] = 'MobileNet'\n")
    with pytest.raises(TypeError, match="edit.py:2: the config raised TypeError") as caught:
        Config.fromfile(path)
    assert isinstance(caught.value, ConfigError)
    assert type(caught.value).__name__ == "ConfigTypeError"


def test_bad_base_reference_names_what_is_missing():
    with pytest.raises(ConfigError, match=r"_base_\.model\.bakbone.*'bakbone'"):
        Config.fromfile(DATA / "errors/bad_ref.py")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.py", "_base_ = 3\n", "bad.py:1: _base_ must be a string"),
        ("cfg.toml", "a = 1\n", r"\.py, \.json, \.yaml"),
        ("bad.json", '{\n  "a": 1,\n  "b": \n}\n', "bad.json:4: invalid JSON"),
    ],
    ids=["base-must-be-literal-strings", "unsupported-suffix", "invalid-json-names-file-and-line"],
)
def test_a_bad_config_file_is_refused_with_the_reason(tmp_path, name, text, message):
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigError, match=message):
        Config.fromfile(path)


def test_environment_variable_without_default_is_an_error(tmp_path, monkeypatch):
    monkeypatch.delenv("RUNNERX_UNSET_VAR", raising=False)
    path = write(tmp_path, "env.py", "a = 1\nroot = '{{$RUNNERX_UNSET_VAR:}}'\n")
    with pytest.raises(ConfigError, match="env.py:2: environment variable RUNNERX_UNSET_VAR"):
        Config.fromfile(path)


def test_predefined_variables_can_be_switched_off():
    cfg = Config.fromfile(DATA / "vars/cfg.py", use_predefined_variables=False)
    assert cfg.name == "{{fileBasename}}"
    cfg = Config.fromfile(DATA / "vars/cfg.py")
    assert cfg.name == "cfg.py" and cfg.work_dir == "./work_dirs/cfg"
    assert cfg.here == str(DATA / "vars")


def test_json_and_yaml_inherit_like_python():
    cfg = Config.fromfile(DATA / "formats/child.json")
    assert cfg.model == dict(type="Net", depth=50, layers=[1, 2, 3])
    assert cfg.optimizer == dict(type="Adam", lr=0.001)
    assert cfg.data.batch_size == 16 and cfg.scaled == 8
    assert Config.fromfile(DATA / "formats/child.py").model.layers == [4, 5]


def test_deprecated_config_warns(tmp_path):
    path = write(tmp_path, "old.py", "a = 1\n_deprecation_ = dict(expected='new.py')\n")
    with pytest.warns(DeprecationWarning, match="Please use new.py"):
        cfg = Config.fromfile(path)
    assert "_deprecation_" not in cfg


def test_custom_imports_run_registrations(tmp_path, monkeypatch):
    write(tmp_path, "my_pkg_cfgtest/__init__.py", "")
    write(
        tmp_path,
        "my_pkg_cfgtest/models.py",
        """\
        from runnerx import MODELS

        @MODELS.register_module()
        class CfgTestNet:
            def __init__(self, width):
                self.width = width
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write(
        tmp_path,
        "cfg.py",
        """\
        custom_imports = dict(imports=['my_pkg_cfgtest.models'], allow_failed_imports=False)
        model = dict(type='CfgTestNet', width=3)
        """,
    )
    cfg = Config.fromfile(path)
    from runnerx import MODELS

    try:
        assert MODELS.build(cfg.model).width == 3
    finally:
        MODELS.module_dict.pop("CfgTestNet", None)
        sys.modules.pop("my_pkg_cfgtest.models", None)


def test_custom_imports_failure_is_an_import_error_naming_the_key(tmp_path):
    path = write(tmp_path, "cfg.py", "custom_imports = dict(imports=['no_such_module_xyz'])\n")
    with pytest.raises(ImportError, match="custom_imports.imports.*no_such_module_xyz"):
        Config.fromfile(path)
    with pytest.warns(UserWarning, match="no_such_module_xyz"):
        Config.fromfile(
            write(
                tmp_path,
                "ok.py",
                "custom_imports = dict(imports="
                "['no_such_module_xyz'], allow_failed_imports=True)\n",
            )
        )
    assert Config.fromfile(path, import_custom_modules=False).custom_imports.imports == [
        "no_such_module_xyz"
    ]


def test_cross_package_base_in_configs_folder(tmp_path, monkeypatch):
    write(tmp_path, "otherpkg_cfgtest/__init__.py", "")
    write(tmp_path, "otherpkg_cfgtest/configs/base/net.py", "model = dict(type='Net', depth=3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    child = write(
        tmp_path,
        "work/child.py",
        "_base_ = 'otherpkg_cfgtest::base/net.py'\nmodel = dict(depth=5)\n",
    )
    cfg = Config.fromfile(child)
    assert cfg.model == dict(type="Net", depth=5, _scope_="otherpkg_cfgtest")


def test_cross_package_errors_name_package_and_paths(tmp_path, monkeypatch):
    write(tmp_path, "emptypkg_cfgtest/__init__.py", "")
    monkeypatch.syspath_prepend(str(tmp_path))
    missing_pkg = write(tmp_path, "a.py", "_base_ = 'no_such_pkg_xyz::x/y.py'\n")
    with pytest.raises(FileNotFoundError, match="package 'no_such_pkg_xyz'.*not installed"):
        Config.fromfile(missing_pkg)
    missing_file = write(tmp_path, "b.py", "_base_ = 'emptypkg_cfgtest::x/y.py'\n")
    with pytest.raises(FileNotFoundError, match=r"b.py:1: .*\.mim/configs/x/y.py"):
        Config.fromfile(missing_file)


def test_fromstring_reads_each_format():
    assert Config.fromstring("a = dict(b=(1, 2))\n", ".py").a.b == (1, 2)
    assert Config.fromstring('{"a": {"b": [1, 2]}}', "json").a.b == [1, 2]
    assert Config.fromstring("a:\n  b: 3\n", ".yaml").a.b == 3


ALIASES = {
    "base.py": "pl = [dict(t='A')]\nd = dict(x=1)\n",
    "base_style.py": """\
        _base_ = './base.py'
        pl2 = _base_.pl
        d2 = _base_.d
        d3 = dict(inner=_base_.d, pair=(_base_.d, 1))
        """,
    "read_base_style.py": """\
        from runnerx.config import read_base

        with read_base():
            from .base import *
        pl2 = pl
        d2 = d
        d3 = dict(inner=d, pair=(d, 1))
        """,
}


@pytest.mark.parametrize("child", ["base_style.py", "read_base_style.py"])
def test_keys_bound_to_one_dict_in_a_file_are_independent_in_the_config(tmp_path, child):
    for name, text in ALIASES.items():
        write(tmp_path, name, text)
    cfg = Config.fromfile(tmp_path / child)
    cfg.pl2[0].t = "Z"
    cfg.d2.x = 2
    cfg.d3.inner.x = 3
    cfg.d3.pair[0].x = 4
    # as in MMEngine: each key has its own containers
    assert cfg.pl == [dict(t="A")] and cfg.d == dict(x=1)
    assert cfg.d2 == dict(x=2) and cfg.d3 == dict(inner=dict(x=3), pair=(dict(x=4), 1))
    # and each knows where it is, for error messages
    paths = [config_key_path(value) for value in (cfg.pl[0], cfg.pl2[0], cfg.d, cfg.d3.inner)]
    assert paths == ["pl.0", "pl2.0", "d", "d3.inner"]


def test_a_base_reference_inside_a_string_is_an_error_naming_it(tmp_path):
    write(tmp_path, "base.py", "name = 'abc'\n")
    path = write(tmp_path, "child.py", "_base_ = './base.py'\ns = 'pre_{{_base_.name}}'\n")
    with pytest.raises(ConfigError, match=r"child.py: \{\{_base_.name\}\} is inside a string"):
        Config.fromfile(path)
    yaml_path = write(tmp_path, "child.yaml", "_base_: ./base.py\ns: pre_{{_base_.name}}_post\n")
    with pytest.raises(ConfigError, match=r"child.yaml: \{\{_base_.name\}\} is inside"):
        Config.fromfile(yaml_path)
    whole = write(tmp_path, "whole.py", "_base_ = './base.py'\ns = {{_base_.name}}\n")
    assert Config.fromfile(whole).s == "abc"


def test_custom_imports_that_is_not_a_dict_is_a_type_error_as_in_mmengine(tmp_path):
    path = write(tmp_path, "cfg.py", "custom_imports = ['no_such_module_xyz']\n")
    with pytest.raises(TypeError, match=r"custom_imports must be dict\(imports=\[...\]"):
        Config.fromfile(path)
