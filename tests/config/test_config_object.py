"""The Config object: access, missing keys, command-line merges, dumping, pickling, copying."""

import copy
import pickle
from pathlib import Path

import pytest

from runnerx import Config, ConfigDict
from runnerx.config import ConfigKeyError, config_key_path

DATA = Path(__file__).parent / "data"
TREE = DATA / "mm/faster_rcnn_r101_fpn_2x_voc.py"


@pytest.fixture
def cfg() -> Config:
    return Config.fromfile(TREE)


def test_missing_attribute_names_key_path_and_close_match(cfg):
    with pytest.raises(AttributeError) as caught:
        cfg.optim_wrapper.optimzer  # noqa: B018
    message = str(caught.value)
    assert "cfg.optim_wrapper has no key 'optimzer'" in message
    assert "Did you mean 'optimizer'?" in message
    assert "type, optimizer, clip_grad" in message


def test_missing_item_is_a_key_error_with_the_same_help(cfg):
    with pytest.raises(KeyError) as caught:
        cfg["model"]["backbone"]["detph"]
    assert "cfg.model.backbone has no key 'detph'. Did you mean 'depth'?" in str(caught.value)
    with pytest.raises(KeyError, match="cfg has no key 'modle'. Did you mean 'model'"):
        cfg["modle"]


def test_missing_key_in_a_list_element_names_its_index(cfg):
    with pytest.raises(AttributeError, match=r"cfg\.train_pipeline\.2 has no key 'scal'"):
        cfg.train_pipeline[2].scal  # noqa: B018


def test_hasattr_getattr_and_get_behave_like_a_dict(cfg):
    assert not hasattr(cfg.model, "nope") and hasattr(cfg.model, "backbone")
    assert getattr(cfg.model, "nope", 7) == 7
    assert cfg.get("nope") is None and cfg.model.get("type") == "FasterRCNN"
    assert "model" in cfg and "nope" not in cfg
    assert cfg.model.pop("nope") is None  # MMEngine's ConfigDict.pop defaults to None


def test_items_and_values_are_lists_so_a_loop_may_change_the_dict(cfg):
    """As MMEngine's: removing keys while looping over items() works; values() indexes."""
    cfg.model.backbone.frozen_stages = None
    for key, value in cfg.model.backbone.items():
        if value is None:
            cfg.model.backbone.pop(key)
    assert "frozen_stages" not in cfg.model.backbone
    assert cfg.values()[list(cfg).index("model")] is cfg.model
    assert [key for key, _ in cfg.items()] == list(cfg.keys())


def test_setting_values_converts_dicts_and_tracks_paths(cfg):
    cfg.custom = dict(inner=dict(x=1), items=[dict(y=2)])
    assert isinstance(cfg.custom.inner, ConfigDict)
    assert isinstance(cfg.custom["items"][0], ConfigDict)
    assert config_key_path(cfg.custom["items"][0]) == "custom.items.0"
    cfg["model"]["backbone"]["depth"] = 152
    assert cfg.model.backbone.depth == 152
    del cfg.custom
    assert "custom" not in cfg


def test_reserved_keys_are_refused():
    with pytest.raises(KeyError, match="'filename' is reserved"):
        Config(dict(filename="x"))


def test_merge_from_dict_with_dotted_keys_and_list_indices(cfg):
    cfg.merge_from_dict(
        {
            "model.backbone.depth": 18,
            "train_pipeline.2.scale": (640, 480),
            "param_scheduler.1.gamma": 0.5,
            "brand.new.key": [1, 2],
        }
    )
    assert cfg.model.backbone.depth == 18
    assert cfg.model.backbone.num_stages == 4  # merged, not replaced
    assert cfg.train_pipeline[2] == dict(type="Resize", scale=(640, 480), keep_ratio=True)
    assert cfg.param_scheduler[1].gamma == 0.5 and cfg.param_scheduler[1].milestones == [16, 22]
    assert cfg.brand.new.key == [1, 2]
    assert isinstance(cfg.brand, ConfigDict)


def test_merge_from_dict_list_index_out_of_range(cfg):
    with pytest.raises(ConfigKeyError, match=r"train_pipeline has 5 entries \(indexes 0-4\)"):
        cfg.merge_from_dict({"train_pipeline.9.scale": 1})


def test_merge_from_dict_does_not_change_other_configs_sharing_values():
    first = Config.fromfile(TREE)
    second = copy.copy(first)
    second.merge_from_dict({"model.backbone.depth": 18})
    assert first.model.backbone.depth == 101 and second.model.backbone.depth == 18


def test_pretty_text_is_python_that_loads_back_equal(cfg, tmp_path):
    text = cfg.pretty_text
    compile(text, "pretty", "exec")
    path = tmp_path / "pretty.py"
    path.write_text(text)
    assert Config.fromfile(path).to_dict() == cfg.to_dict()
    assert all(len(line) <= 100 for line in text.splitlines())


@pytest.mark.parametrize("suffix", [".py", ".json", ".yaml", ".yml"])
def test_dump_loads_back_to_an_equal_config(suffix, tmp_path):
    cfg = Config.fromfile(DATA / "formats/child.py")  # no tuples: JSON and YAML have none
    path = tmp_path / f"dumped{suffix}"
    cfg.dump(path)
    assert Config.fromfile(path).to_dict() == cfg.to_dict()
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_dump_py_keeps_tuples_and_json_turns_them_into_lists(cfg, tmp_path):
    cfg.dump(tmp_path / "c.py")
    cfg.dump(tmp_path / "c.json")
    assert Config.fromfile(tmp_path / "c.py").model.backbone.out_indices == (0, 1, 2, 3)
    assert Config.fromfile(tmp_path / "c.json").model.backbone.out_indices == [0, 1, 2, 3]


def test_dump_without_a_file_returns_text_in_the_source_format():
    assert "model = dict(" in Config.fromfile(TREE).dump()
    assert Config.fromfile(DATA / "formats/base.json").dump().lstrip().startswith("{")


def test_dump_writes_classes_as_import_paths(tmp_path):
    cfg = Config(dict(optimizer=dict(type=pickle.Pickler)))
    cfg.dump(tmp_path / "c.py")
    assert Config.fromfile(tmp_path / "c.py").optimizer.type == "_pickle.Pickler"


def test_values_json_or_yaml_lack_dump_where_they_can_and_else_name_their_key(tmp_path):
    cfg = Config(dict(tags={"a", "b"}, raw=b"xy", z=complex(1, -2), kind=pickle.Pickler))

    def reloaded(suffix: str) -> dict:
        cfg.dump(tmp_path / f"c{suffix}")
        return Config.fromfile(tmp_path / f"c{suffix}").to_dict()

    assert reloaded(".py") == {**cfg.to_dict(), "kind": "_pickle.Pickler"}  # keeps them all
    with pytest.raises(TypeError, match=r"value at z as YAML: complex \(1-2j\) has no YAML form"):
        reloaded(".yaml")
    del cfg.z
    assert reloaded(".yaml") == {**cfg.to_dict(), "kind": "_pickle.Pickler"}  # sets, bytes
    message = r"value at tags as JSON: set \{.*\} has no JSON form; dump to \.py, which keeps it"
    with pytest.raises(TypeError, match=message):
        reloaded(".json")
    assert not (tmp_path / "c.json").exists()


def test_dump_to_unknown_format_is_an_error(cfg, tmp_path):
    with pytest.raises(ValueError, match="'.toml'"):
        cfg.dump(tmp_path / "c.toml")


def test_pickle_round_trip_keeps_everything(cfg):
    cfg.merge_from_dict({"model.backbone.depth": 18}, source="--cfg-options")
    clone = pickle.loads(pickle.dumps(cfg))
    assert clone == cfg and clone.to_dict() == cfg.to_dict()
    assert clone.filename == cfg.filename and clone.text == cfg.text
    assert isinstance(clone.model.backbone, ConfigDict)
    assert str(clone.explain("model.backbone.depth")) == str(cfg.explain("model.backbone.depth"))
    with pytest.raises(AttributeError, match="cfg.model has no key 'bakbone'"):
        clone.model.bakbone  # noqa: B018


def test_deepcopy_is_independent(cfg):
    clone = copy.deepcopy(cfg)
    clone.model.backbone.depth = 18
    clone.train_pipeline[0].type = "Other"
    assert cfg.model.backbone.depth == 101 and cfg.train_pipeline[0].type == "LoadImageFromFile"
    assert clone.filename == cfg.filename


def test_shallow_copy_shares_nested_values(cfg):
    clone = cfg.copy()
    clone.new_top = 1
    clone.model.backbone.depth = 18
    assert "new_top" not in cfg and cfg.model.backbone.depth == 18


def test_text_holds_every_file_in_merge_order(cfg):
    text = cfg.text
    names = [
        "faster_rcnn.py",
        "coco_detection.py",
        "schedule_1x.py",
        "default_runtime.py",
        "faster_rcnn_r50_fpn_1x_coco.py",
        "faster_rcnn_r101_fpn_2x_voc.py",
    ]
    positions = [text.index(name + "\n") for name in names]
    assert positions == sorted(positions)
    assert cfg.filename == str(TREE)


def test_config_from_a_dict_and_equality():
    cfg = Config(dict(a=dict(b=1), c=[dict(d=(1, 2))]))
    assert cfg == Config(dict(a=dict(b=1), c=[dict(d=(1, 2))]))
    assert cfg == dict(a=dict(b=1), c=[dict(d=(1, 2))])
    assert cfg != Config(dict(a=dict(b=2)))
    assert len(cfg) == 2 and list(cfg) == ["a", "c"]
    assert "Config (path: None)" in repr(cfg)


def test_merge_from_dict_leaves_the_options_unchanged(cfg):
    options = {"optim_wrapper": dict(_delete_=True, type="OptimWrapper", optimizer=dict(lr=1))}
    cfg.merge_from_dict(options)
    assert options["optim_wrapper"]["_delete_"] is True  # usable again, e.g. for a second run
    assert cfg.optim_wrapper == dict(type="OptimWrapper", optimizer=dict(lr=1))
