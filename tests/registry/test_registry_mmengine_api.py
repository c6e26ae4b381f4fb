"""MMEngine's public Registry API that downstream packages call: import_from_location,
infer_scope, re-parenting through ``registry.parent = ...``, and truth testing."""

import itertools
import sys

import pytest

from runnerx.registry import Registry

_ids = itertools.count()


def _lazy_registry(write_module, location_source: str) -> tuple[Registry, str]:
    """A registry whose one location is a fresh module with ``location_source``."""
    n = next(_ids)
    holder = __import__(write_module(f"api_holder_{n}", "REG = None\n"))
    location = write_module(f"api_items_{n}", f"from api_holder_{n} import REG\n{location_source}")
    holder.REG = Registry("thing", scope=f"api{n}", locations=[location])
    return holder.REG, location


def test_import_from_location_imports_the_locations_once(write_module):
    source = "@REG.register_module()\nclass Item:\n    pass\n"
    registry, location = _lazy_registry(write_module, source)
    assert location not in sys.modules
    assert registry.import_from_location() is None
    assert location in sys.modules and "Item" in registry._module_dict
    del sys.modules[location]
    registry.import_from_location()  # done once: not imported again
    assert location not in sys.modules


def test_import_from_location_names_a_failing_location(write_module):
    registry, location = _lazy_registry(write_module, "raise RuntimeError('kaboom')\n")
    with pytest.raises(ImportError, match=location) as info:
        registry.import_from_location()
    assert isinstance(info.value.__cause__, RuntimeError)


def test_infer_scope_is_the_package_that_creates_the_registry(write_module):
    n = next(_ids)
    write_module(  # a subclass that sets its scope itself, as several MMEngine-era ones do
        f"apibase{n}.reg",
        """
        from runnerx.registry import Registry

        class OwnInit(Registry):
            def __init__(self, name, scope=None):
                super().__init__(name, scope='placeholder')
                self._scope = self.infer_scope() if scope is None else scope

        def helper():
            return Registry.infer_scope()
        """,
    )
    write_module(
        f"apiuser{n}.registry",
        f"""
        from apibase{n}.reg import OwnInit, helper
        MODELS = OwnInit('model')
        FROM_HELPER = helper()
        """,
    )
    module = __import__(f"apiuser{n}.registry", fromlist=["MODELS"])
    assert (module.MODELS.scope, module.FROM_HELPER) == (f"apiuser{n}", f"apiuser{n}")


def test_reparenting_moves_the_registry_between_children_maps():
    old_root = Registry("model", scope="api_old")
    new_root = Registry("model", scope="api_new")
    child = Registry("model", parent=old_root, scope="api_child")

    @new_root.register_module()
    class FromNewRoot:
        pass

    assert child.get("FromNewRoot") is None
    child.parent = new_root
    assert child.parent is new_root and new_root.children["api_child"] is child
    assert "api_child" not in old_root.children
    assert child.get("FromNewRoot") is FromNewRoot  # plain names reach the new parent
    assert new_root.get("api_child.FromNewRoot") is FromNewRoot
    assert old_root.registry_for_scope("api_child") is None

    child.parent = child.parent  # unchanged: no scope clash with itself
    child.parent = None
    assert child.root is child and new_root.children == {}


def test_reparenting_refuses_a_cycle_a_taken_scope_and_a_non_registry():
    root = Registry("model", scope="api_root")
    child = Registry("model", parent=root, scope="api_kid")
    grandchild = Registry("model", parent=child, scope="api_grandkid")
    for descendant in (child, grandchild):
        with pytest.raises(ValueError, match="cycle"):
            child.parent = descendant
    other = Registry("model", scope="api_other")
    Registry("model", parent=other, scope="api_kid")
    with pytest.raises(ValueError, match="already has a child with scope 'api_kid'"):
        child.parent = other
    with pytest.raises(TypeError, match="parent must be a Registry or None, but got str"):
        child.parent = "api_root"
    assert child.parent is root and root.children["api_kid"] is child  # nothing moved


def test_constructor_errors_are_mmengine_assertion_errors_too():
    """MMEngine asserts these: ``except AssertionError`` written for it catches runnerx's."""
    cats = Registry("cat", scope="api_cats")
    Registry("little_cat", parent=cats, scope="api_little_cat")
    for kwargs, error, message in [
        (dict(parent="cat"), TypeError, "parent must be a Registry or None, but got str"),
        (dict(scope=1), ValueError, "scope must be a non-empty str without dots, but got 1"),
        (dict(parent=cats, scope="api_little_cat"), ValueError, "already has a child"),
    ]:
        with pytest.raises(AssertionError, match=message) as info:
            Registry("little_cat", **kwargs)
        assert isinstance(info.value, error)
    assert list(cats.children) == ["api_little_cat"]


def test_a_registry_is_true_without_importing_its_locations(write_module):
    registry, location = _lazy_registry(write_module, "raise RuntimeError('kaboom')\n")
    assert registry  # MMEngine's is False while empty; runnerx's never imports for this
    assert location not in sys.modules
    assert Registry("thing", scope="api_empty")
