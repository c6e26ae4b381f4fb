"""MMEngine's registries take any callable, accept a Config as default_args and make a built
ManagerMixin instance current; runnerx's do the same (checked against mmengine-lite)."""

import functools

import pytest
from mmengine.registry import Registry as MMRegistry

from runnerx import Config
from runnerx.registry import Registry, build_from_cfg
from runnerx.utils import ManagerMixin


def make_cat(size, colour="black"):
    return (size, colour)


class Counter:
    """A callable instance: what a registry of factories may hold."""

    def __call__(self, start=0):
        return start + 1


@pytest.mark.parametrize("registry_class", [Registry, MMRegistry], ids=["runnerx", "mmengine"])
def test_partial_and_callable_instance_register_and_build(registry_class):
    cats = registry_class("cat", scope="callables")
    cats.register_module(name="small_cat", module=functools.partial(make_cat, size=1))
    cats.register_module(name="counter", module=Counter())

    assert cats.build(dict(type="small_cat", colour="white")) == (1, "white")
    assert cats.build(dict(type="counter", start=41)) == 42
    assert "small_cat" in cats and len(cats) == 2


def test_callable_without_a_name_asks_for_one():
    cats = Registry("cat", scope="callables")
    with pytest.raises(TypeError, match=r"no __name__ .* pass register_module\(name="):
        cats.register_module(module=functools.partial(make_cat, size=1))
    assert len(cats) == 0


def test_non_callable_is_still_refused():
    cats = Registry("cat", scope="callables")
    with pytest.raises(TypeError, match="callables, but got str"):
        cats.register_module(name="cat", module="not a class")


def test_a_config_gives_default_args():
    cats = Registry("cat", scope="callables")
    cats.register_module(module=make_cat)
    built = build_from_cfg(dict(type="make_cat"), cats, default_args=Config(dict(size=3)))
    assert built == (3, "black")


class Tracker(ManagerMixin):
    def __init__(self, name, depth=1):
        super().__init__(name)
        self.depth = depth


def test_built_manager_instance_becomes_current():
    trackers = Registry("tracker", scope="callables")
    trackers.register_module(module=Tracker)

    first = trackers.build(dict(type="Tracker", name="callables-run1", depth=2))
    assert Tracker.get_current_instance() is first
    assert Tracker.get_instance("callables-run1") is first

    second = trackers.build(dict(type="Tracker", name="callables-run1", depth=3))
    assert second is not first and second.depth == 3  # a new one replaces the old name
    assert Tracker.get_instance("callables-run1") is second
    assert Tracker.get_current_instance() is second
