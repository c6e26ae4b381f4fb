"""ManagerMixin: MMEngine's semantics, and the one implementation behind MessageHub,
Visualizer and DefaultScope."""

import subprocess
import sys

import mmengine.utils as mm
import pytest

from runnerx.logging import MessageHub, Visualizer
from runnerx.registry import DefaultScope
from runnerx.utils import ManagerMeta, ManagerMixin


def make_class(base, class_name):
    def __init__(self, name="", size=1):
        base.__init__(self, name)
        self.size = size

    return type(base)(class_name, (base,), {"__init__": __init__})


def test_same_answers_as_mmengine_for_the_same_calls():
    ours, theirs = make_class(ManagerMixin, "Ours"), make_class(mm.ManagerMixin, "Theirs")
    for cls in (ours, theirs):
        with pytest.raises(RuntimeError):
            cls.get_current_instance()
    steps = [("a", {"size": 2}), ("b", {}), ("a", {}), ("c", {})]
    for name, kwargs in steps:
        mine, other = ours.get_instance(name, **kwargs), theirs.get_instance(name, **kwargs)
        assert (mine.instance_name, mine.size) == (other.instance_name, other.size)
        assert ours.get_current_instance().instance_name == (
            theirs.get_current_instance().instance_name
        )
        for probe in "abcd":
            assert ours.check_instance_created(probe) == theirs.check_instance_created(probe)
    assert ours.get_instance("a") is ours.get_instance("a")
    with pytest.warns(UserWarning, match="ignores the arguments \\['size'\\]"):
        assert ours.get_instance("a", size=5).size == 2


def test_each_class_has_its_own_instances_and_finds_its_subclasses_ones():
    Base = make_class(ManagerMixin, "Base")
    Other = make_class(ManagerMixin, "Other")
    Sub = make_class(Base, "Sub")
    Base.get_instance("base")
    Other.get_instance("other")
    sub = Sub.get_instance("sub")
    assert not Other.check_instance_created("base") and not Sub.check_instance_created("base")
    assert Base.get_current_instance() is sub  # as MMEngine's Visualizer does
    assert Base.get_instance("sub") is sub
    base = Base.get_instance("base")
    base.make_current()
    assert Base.get_current_instance() is base and Sub.get_current_instance() is sub


def test_names_are_checked():
    with pytest.raises(TypeError, match="must take a `name` argument"):

        class NoName(ManagerMixin):
            def __init__(self, size=1):
                pass

    assert isinstance(ManagerMixin, ManagerMeta)
    Named = make_class(ManagerMixin, "Named")
    with pytest.raises(ValueError, match="non-empty"):
        Named.get_instance("")
    with pytest.raises(TypeError, match="name must be a str"):
        Named.get_instance(3)


@pytest.mark.parametrize("cls", [MessageHub, Visualizer, DefaultScope])
def test_message_hub_visualizer_and_default_scope_are_managed(cls, monkeypatch):
    monkeypatch.setattr(cls, "_instances", {})
    monkeypatch.setattr(cls, "_current", None)
    kwargs = {"scope_name": "utils_scope"} if cls is DefaultScope else {}
    first = cls.get_instance("utils_first", **kwargs)
    assert isinstance(first, ManagerMixin) and first.instance_name == "utils_first"
    assert cls.check_instance_created("utils_first")
    assert cls.get_current_instance() is first
    second = cls.get_instance("utils_second", **kwargs)
    first.make_current()
    assert cls.get_current_instance() is first
    assert cls.get_instance("utils_second") is second


def test_import_runnerx_imports_only_the_manager_of_runnerx_utils():
    code = (
        "import sys, runnerx; "
        "print(sorted(m for m in sys.modules if m.startswith('runnerx.utils')), "
        "'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # errors: the manager's error classes, a module that imports nothing
    expected = "['runnerx.utils', 'runnerx.utils.errors', 'runnerx.utils.manager'] False"
    assert out.stdout.strip() == expected
