"""build_from_cfg: type forms, default_args, missing type, and how construction errors read."""

import pytest

from runnerx.config.config_dict import ConfigDict
from runnerx.registry import Registry, RegistryKeyError, build_from_cfg

HAS_NOTES = hasattr(BaseException, "add_note")  # Python 3.11+


class Point:
    def __init__(self, x=0, y=0):
        self.x, self.y = x, y


def make_pair(a, b=2):
    return (a, b)


class TwoArgError(Exception):
    def __init__(self, code, detail):
        super().__init__(code, detail)


class CodedError(Exception):  # one message, and a field that a rebuild would lose
    def __init__(self, message, code=0):
        super().__init__(message)
        self.code = code


class Fails:
    def __init__(self, kind="value"):
        if kind == "value":
            raise ValueError("depth must be positive")
        if kind == "key":
            raise KeyError("missing")
        raise TwoArgError(7, "odd")


class Raises:
    def __init__(self, raised):
        raise raised


@pytest.fixture
def models():
    registry = Registry("model", scope="buildtest")
    registry.register_module(module=Point)
    registry.register_module(module=make_pair)
    registry.register_module(module=Fails)
    registry.register_module(module=Raises)
    return registry


def test_build_with_string_class_and_function_types(models):
    point = models.build(dict(type="Point", x=1, y=2))
    assert isinstance(point, Point) and (point.x, point.y) == (1, 2)
    assert isinstance(models.build(dict(type=Point)), Point)
    assert models.build(dict(type="make_pair", a=1)) == (1, 2)
    assert models.build(dict(type=make_pair, a=3, b=4)) == (3, 4)
    assert build_from_cfg(dict(type="Point", x=5), models).x == 5


def test_build_from_config_dict(models):
    cfg = ConfigDict(dict(model=dict(type="Point", x=1)))
    assert models.build(cfg.model).x == 1


def test_build_from_whole_config(models):
    from runnerx.config import Config

    point = models.build(Config(dict(type="Point", x=4)))
    assert isinstance(point, Point) and point.x == 4


def test_default_args_fill_in_but_do_not_override(models):
    cfg = dict(type="Point", x=1)
    defaults = dict(x=10, y=20)
    point = models.build(cfg, default_args=defaults)
    assert (point.x, point.y) == (1, 20)
    assert cfg == dict(type="Point", x=1)
    assert defaults == dict(x=10, y=20)
    positional = models.build(dict(type="Point"), dict(y=3))  # MMEngine: 2nd arg is default_args
    assert positional.y == 3


def test_type_may_come_from_default_args(models):
    assert isinstance(models.build(dict(x=1), default_args=dict(type="Point")), Point)


def test_missing_type_says_what_was_given_and_expected(models):
    with pytest.raises(KeyError) as info:
        models.build(dict(x=1))
    message = str(info.value)
    assert isinstance(info.value, RegistryKeyError)
    assert "'type'" in message and "x" in message and "registered name" in message

    cfg = ConfigDict(dict(model=dict(neck=dict(depth=1))))
    with pytest.raises(KeyError, match=r"cfg\.model\.neck has no 'type' key"):
        models.build(cfg.model.neck)


def test_cfg_must_be_a_dict(models):
    with pytest.raises(TypeError, match="list"):
        models.build([("type", "Point")])
    with pytest.raises(TypeError, match="type must be"):
        models.build(dict(type=42))


def test_cfg_is_not_mutated_by_scope_key(models):
    cfg = dict(type="Point", _scope_="buildtest")
    models.build(cfg)
    assert cfg == dict(type="Point", _scope_="buildtest")


def test_construction_error_keeps_type_names_type_and_chains(models):
    with pytest.raises(ValueError) as info:
        models.build(dict(type="Fails"))
    err = info.value
    assert type(err) is ValueError
    message = str(err)
    assert "type='Fails'" in message and __name__ in message
    assert "depth must be positive" in message
    assert isinstance(err.__cause__, ValueError) and err.__cause__ is not err


def test_construction_error_of_key_error_stays_key_error(models):
    with pytest.raises(KeyError) as info:
        models.build(dict(type="Fails", kind="key"))
    assert "missing" in str(info.value) and "Fails" in str(info.value)


@pytest.mark.skipif(not HAS_NOTES, reason="BaseException.add_note is Python 3.11+")
@pytest.mark.parametrize(
    "raised", [TwoArgError(7, "odd"), CodedError("quota", code=3)], ids=["two_args", "field"]
)
def test_an_error_that_holds_more_than_a_message_is_raised_itself_with_a_note(models, raised):
    cfg = ConfigDict(dict(model=dict(type="Raises", raised=raised)))
    with pytest.raises(type(raised)) as info:
        models.build(cfg.model)
    assert info.value is raised and info.value.args == raised.args
    (note,) = info.value.__notes__
    assert note == f"while building cfg.model (type='Raises' from {__name__})"


@pytest.mark.skipif(not HAS_NOTES, reason="BaseException.add_note is Python 3.11+")
def test_an_oserror_keeps_errno_and_filename_and_its_own_except_clause(models):
    try:
        models.build(dict(type="Raises", raised=FileNotFoundError(2, "gone", "w.pth")))
    except FileNotFoundError as err:
        assert (err.errno, err.filename) == (2, "w.pth")
        assert err.__notes__ == [f"while building type='Raises' from {__name__}"]
    else:
        raise AssertionError("expected the FileNotFoundError itself")


@pytest.mark.skipif(HAS_NOTES, reason="Python 3.10 has no exception notes")
def test_error_that_cannot_take_one_string_becomes_runtime_error(models):
    with pytest.raises(RuntimeError) as info:
        models.build(dict(type="Fails", kind="two"))
    assert "TwoArgError" in str(info.value) and "type='Fails'" in str(info.value)
    assert isinstance(info.value.__cause__, TwoArgError)


def test_error_names_config_key_path(models):
    cfg = ConfigDict(dict(model=dict(backbone=dict(type="Point", bad=1))))["model"]["backbone"]
    with pytest.raises(TypeError) as info:
        models.build(cfg)
    message = str(info.value)
    assert message.startswith("while building cfg.model.backbone (type='Point' from ")
    assert "bad" in message
    assert isinstance(info.value.__cause__, TypeError)


def test_unknown_type_error_names_config_key_path(models):
    cfg = ConfigDict(dict(model=dict(head=dict(type="Pont"))))
    with pytest.raises(KeyError) as info:
        models.build(cfg.model.head)
    assert "(cfg.model.head.type)" in str(info.value)
    assert "Did you mean 'Point'?" in str(info.value)


def test_nested_build_wraps_only_once(models):
    @models.register_module()
    class Outer:
        def __init__(self, inner):
            self.inner = models.build(inner)

    cfg = ConfigDict(dict(model=dict(type="Outer", inner=dict(type="Fails"))))
    with pytest.raises(ValueError) as info:
        models.build(cfg.model)
    message = str(info.value)
    assert message.count("while building") == 1
    assert "cfg.model.inner (type='Fails'" in message

    bad_name = ConfigDict(dict(model=dict(type="Outer", inner=dict(type="Nope"))))
    with pytest.raises(KeyError) as info:
        models.build(bad_name.model)
    assert "while building" not in str(info.value)
    assert "(cfg.model.inner.type)" in str(info.value)


def test_an_error_that_names_its_key_passes_through_outer_builds(models):
    from runnerx.registry import NotRegisteredError
    from runnerx.registry.errors import mark_wrapped

    @models.register_module()
    class Loop:  # builds its own parts, as a train loop builds its dataloader
        def __init__(self, raises):
            raise raises

    def build_loop(raises):
        cfg = ConfigDict(dict(train_cfg=dict(type="Loop", raises=raises)))
        return models.build(cfg.train_cfg)

    keyed = mark_wrapped(TypeError("train_dataloader.batchsize is not a dataloader option"))
    unknown = NotRegisteredError("Pont", [models], "train_dataloader.collate_fn")
    for raised in (keyed, unknown):
        with pytest.raises(type(raised)) as info:
            build_loop(raised)
        assert info.value is raised and "while building" not in str(info.value)
    assert "(cfg.train_dataloader.collate_fn.type)" in str(unknown)

    # an error that names no key still says which build it came from: in a note on 3.11+,
    # which keeps the error itself (its .key); on 3.10 in front of a rebuilt one's message
    with pytest.raises(KeyError) as info:
        build_loop(NotRegisteredError("Pont"))
    said = info.value.__notes__[0] if HAS_NOTES else str(info.value)
    assert said.startswith("while building cfg.train_cfg (type='Loop'")
    assert info.value.key == "Pont" or not HAS_NOTES


def test_error_from_plain_dict_omits_path(models):
    with pytest.raises(TypeError) as info:
        models.build(dict(type="Point", bad=1))
    assert str(info.value).startswith("while building type='Point' from ")


def test_an_unexpected_argument_gets_the_closest_one_the_type_takes():
    import torch

    from runnerx.registry import OPTIMIZERS

    params = torch.nn.Linear(2, 2).parameters()
    with pytest.raises(TypeError, match="'momentun'; did you mean 'momentum'"):
        OPTIMIZERS.build(dict(type="SGD", params=params, lr=0.1, momentun=0.9))


class Base:
    def __init__(self, depth=1):
        self.depth = depth


class Fixed(Base):
    def __init__(self, width=2):  # takes no depth: its base's is not passed on
        super().__init__()
        self.width = width


def test_an_argument_only_a_base_class_takes_is_not_suggested_as_itself():
    registry = Registry("toys")
    registry.register_module(module=Fixed)
    with pytest.raises(TypeError, match="unexpected keyword argument 'depth'") as info:
        registry.build(dict(type="Fixed", depth=3))
    assert "did you mean 'depth'" not in str(info.value)
