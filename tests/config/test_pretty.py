import collections
import json
import math
import random

import pytest
import torch

from runnerx.config.config_dict import ConfigDict
from runnerx.config.pretty import format_config, object_path


class ModuleLevelThing:
    pass


def module_level_function():
    pass


def load(text: str) -> dict:
    ns: dict = {}
    exec(compile(text, "<config>", "exec"), ns)
    ns.pop("__builtins__")
    return ns


def same(a, b) -> bool:
    """Equality that also checks container types and treats nan as equal to nan."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def as_plain(value):
    """The value format_config is expected to give back: ConfigDict -> dict, recursively."""
    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_plain(v) for v in value)
    return value


def check_round_trip(cfg) -> str:
    text = format_config(cfg)
    loaded = load(text)
    assert same(loaded, as_plain(cfg)), text
    assert format_config(loaded) == text
    return text


CASES = {
    "openmmlab": dict(
        model=dict(
            type="ImageClassifier",
            backbone=dict(type="ResNet", depth=50, num_stages=4, out_indices=(3,), style="pytorch"),
            neck=dict(type="GlobalAveragePooling"),
            head=dict(
                type="LinearClsHead",
                num_classes=1000,
                in_channels=2048,
                loss=dict(type="CrossEntropyLoss", loss_weight=1.0),
                topk=(1, 5),
            ),
        ),
        train_pipeline=[
            dict(type="LoadImageFromFile"),
            dict(type="RandomResizedCrop", scale=224),
            dict(type="RandomFlip", prob=0.5, direction="horizontal"),
            dict(type="PackInputs"),
        ],
        param_scheduler=[dict(type="MultiStepLR", by_epoch=True, milestones=[30, 60, 90])],
        work_dir=None,
        resume=False,
    ),
    "deep": {"a": {"b": {"c": {"d": {"e": {"f": {"g": [1, (2, [3, {"h": 4}])]}}}}}}},
    "long_list": {"classes": [f"class_{i}" for i in range(60)], "nums": list(range(100))},
    "odd_keys": {
        "a-b": 1,
        "lambda": {"class": 2, "x y": 3, 4: "four", None: 5, (1, "t"): 6},
        "class": [1],
        "with space": {"ok": 1},
        7: "seven",
    },
    "empties": {"d": {}, "l": [], "t": (), "nested": {"d": {}, "l": [[]], "t": ((),)}},
    "one_tuples": {"t": (1,), "tt": ((1,),), "lt": [("x",)], "long": ("y" * 90,)},
    "strings": {
        "quotes": 'it\'s "quoted"',
        "both": "'\"",
        "newline": "line1\nline2\ttab\\back",
        "unicode": "größe ✓ 日本語 \U0001f600",
        "empty": "",
    },
    "numbers": {
        "ints": [0, -1, 10**30],
        "floats": [0.1, 1e-3, 1e300, -0.0, 2.5e-12],
        "bools": (True, False, None),
        "bytes": b"\x00ab",
    },
    "lists_of_dicts": {
        "x": [
            {"a": (1, 2), "b": [{"c": ((3,), (4, 5))}]},
            {"long_name_key_" + str(i): (i, i + 1) for i in range(8)},
        ]
    },
    "sets": {"s": {3, 1, 2}, "f": frozenset({"b", "a"}), "e": set(), "fe": frozenset()},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip(name):
    check_round_trip(CASES[name])


def test_config_dict_input_gives_dicts():
    cfg = ConfigDict(model=dict(type="X", layers=[dict(a=1), (2, dict(b=3))]))
    loaded = load(check_round_trip(cfg))
    assert type(loaded["model"]) is dict
    assert type(loaded["model"]["layers"][1][1]) is dict


def test_other_mappings_become_dicts():
    cfg = {"od": collections.OrderedDict(b=1, a=2), "dd": collections.defaultdict(int, x=1)}
    assert load(format_config(cfg)) == {"od": {"b": 1, "a": 2}, "dd": {"x": 1}}


def test_non_finite_floats():
    cfg = {"inf": float("inf"), "ninf": float("-inf"), "nan": float("nan"), "l": [float("nan")]}
    text = check_round_trip(cfg)
    assert "float('inf')" in text and "float('-inf')" in text and "float('nan')" in text
    loaded = load(text)
    assert loaded["inf"] == math.inf and loaded["ninf"] == -math.inf
    assert math.isnan(loaded["nan"]) and math.isnan(loaded["l"][0])


def test_classes_and_functions_become_dotted_paths():
    cfg = {
        "optimizer": dict(type=torch.optim.SGD, lr=0.1),
        "fn": module_level_function,
        "cls": ModuleLevelThing,
        "builtin": math.sqrt,
        "module": math,
    }
    loaded = load(format_config(cfg))
    assert loaded["optimizer"]["type"] == "torch.optim.sgd.SGD"
    assert loaded["fn"] == f"{__name__}.module_level_function"
    assert loaded["cls"] == f"{__name__}.ModuleLevelThing"
    assert loaded["builtin"] == "math.sqrt"
    assert loaded["module"] == "math"


def local_class_instance():
    class Local:
        pass

    return Local()


@pytest.mark.parametrize(
    "value",
    [lambda x: x, local_class_instance(), ModuleLevelThing(), type(local_class_instance())],
    ids=["lambda", "local_instance", "instance", "local_class"],
)
def test_unimportable_object_raises(value):
    cfg = {"model": dict(layers=[1, dict(act=value)])}
    with pytest.raises(TypeError, match=r"model\.layers\[1\]\.act") as info:
        format_config(cfg)
    assert type(value).__name__ in str(info.value)


def test_self_containing_value_raises():
    loop: list = [1]
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        format_config({"x": loop})


def test_top_level_layout():
    text = format_config({"model": dict(type="ResNet", depth=50), "a-b": 1, 3: "x"})
    assert (
        text == "model = dict(type='ResNet', depth=50)\nglobals()['a-b'] = 1\nglobals()[3] = 'x'\n"
    )
    assert format_config({}) == ""


def test_broken_layout_is_indented_one_item_per_line():
    cfg = {
        "model": dict(
            type="ImageClassifier",
            backbone=dict(type="ResNet", depth=50) | {f"option_{i}": i for i in range(10)},
        )
    }
    lines = format_config(cfg).splitlines()
    assert lines[0] == "model = dict("
    assert lines[1] == "    type='ImageClassifier',"
    assert lines[2] == "    backbone=dict("
    assert lines[3] == "        type='ResNet',"
    assert lines[-1] == "        option_9=9))"


def test_builtin_named_top_level_keys_do_not_shadow():
    cfg = {"dict": dict(a=1), "x": {"b": 2}, "float": float("inf"), "set": {1}, "globals": 1}
    loaded = load(format_config(cfg))
    assert loaded == cfg


def random_value(rng: random.Random, depth: int):
    kind = rng.randrange(12 if depth < 4 else 6)
    if kind == 0:
        return rng.randint(-(10**6), 10**6)
    if kind == 1:
        return rng.choice([0.5, -1e-8, 3.14159, float("inf"), float("nan"), 1e22])
    if kind == 2:
        return "".join(rng.choice("ab'\" \n\\é_-,()[]") for _ in range(rng.randrange(12)))
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return rng.choice([(), [], {}, "x" * rng.randrange(100)])
    if kind == 5:
        return rng.choice([ModuleLevelThing, math.floor, b"raw"])
    size = rng.randrange(7)
    items = [random_value(rng, depth + 1) for _ in range(size)]
    if kind in (6, 7):
        return items
    if kind == 8:
        return tuple(items)
    # Mostly identifier keys (written as dict(k=v)), sometimes mixed (written as {k: v}).
    pool = (
        ["type", "lr", "depth"] if rng.random() < 0.6 else ["class", "a-b", "x y", 1, None, (1, 2)]
    )
    return {
        f"{k}_{i}" if isinstance(k, str) and rng.random() < 0.5 else k: v
        for i, (k, v) in enumerate(zip((rng.choice(pool) for _ in items), items))
    }


def expected(value):
    """What loading the output should give: classes and functions as dotted strings."""
    if value is ModuleLevelThing:
        return f"{__name__}.ModuleLevelThing"
    if value is math.floor:
        return "math.floor"
    if isinstance(value, dict):
        return {k: expected(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expected(v) for v in value]
    if isinstance(value, tuple):
        return tuple(expected(v) for v in value)
    return value


@pytest.mark.parametrize("seed", range(300))
def test_random_structures_round_trip(seed):
    rng = random.Random(seed)
    cfg = {f"key_{i}": random_value(rng, 0) for i in range(rng.randrange(1, 6))}
    cfg[rng.choice(["a-b", "lambda", 5])] = random_value(rng, 0)
    text = format_config(cfg)
    compile(text, "<config>", "exec")
    loaded = load(text)
    assert same(loaded, expected(cfg)), text
    assert format_config(loaded) == text


def breakable_config(rng: random.Random, depth: int = 0):
    """Identifier keys, short scalars: every over-long line can be broken."""
    if depth > 3 or rng.random() < 0.3:
        return rng.choice([1, 2.5, "short", None, True, (1, 2)])
    kind = rng.randrange(3)
    items = [breakable_config(rng, depth + 1) for _ in range(rng.randrange(1, 9))]
    if kind == 0:
        return items
    if kind == 1:
        return tuple(items)
    return {f"name_{i}": v for i, v in enumerate(items)}


@pytest.mark.parametrize("seed", range(50))
def test_lines_fit_in_79_columns_when_breakable(seed):
    rng = random.Random(seed)
    cfg = {f"section_{i}": breakable_config(rng) for i in range(5)}
    text = check_round_trip(cfg)
    assert max(len(line) for line in text.splitlines()) <= 79, text


def test_object_path():
    assert object_path(torch.optim.SGD) == "torch.optim.sgd.SGD"
    assert object_path(ModuleLevelThing) == f"{__name__}.ModuleLevelThing"
    assert object_path(math) == "math"
    assert json.loads(json.dumps({"t": math.floor}, default=object_path)) == {"t": "math.floor"}
    with pytest.raises(TypeError, match="no importable dotted path"):
        object_path(lambda: None)
    with pytest.raises(TypeError):
        json.dumps({"t": ModuleLevelThing()}, default=object_path)
