"""Looking names up: parents and children, scopes, import paths, lazy locations, scope inference."""

import collections
import itertools
import sys

import pytest

from runnerx.registry import NotRegisteredError, Registry

_ids = itertools.count()


@pytest.fixture
def tree():
    """root (scope 'lroot') with children 'a' and 'b'; 'a' has a child 'deep'."""
    root = Registry("model", scope="lroot")
    a = Registry("model", parent=root, scope="a")
    b = Registry("model", parent=root, scope="b")
    deep = Registry("model", parent=a, scope="deep")
    return root, a, b, deep


def _register(registry, name):
    cls = type(name, (), {})
    registry.register_module(module=cls)
    return cls


def test_child_sees_ancestors_but_parent_not_child(tree):
    root, a, _, deep = tree
    base = _register(root, "Base")
    mine = _register(a, "Mine")
    assert a.get("Base") is base
    assert deep.get("Base") is base
    assert deep.get("Mine") is mine
    assert root.get("Mine") is None
    assert "Mine" not in root
    assert "Base" in a


def test_child_entry_shadows_parent(tree):
    root, a, _, _ = tree
    _register(root, "Net")
    own = _register(a, "Net")
    assert a.get("Net") is own


def test_scoped_names(tree):
    root, a, b, deep = tree
    in_a = _register(a, "OnlyA")
    in_b = _register(b, "OnlyB")
    in_deep = _register(deep, "OnlyDeep")
    in_root = _register(root, "OnlyRoot")
    assert root.get("a.OnlyA") is in_a  # a child
    assert root.get("deep.OnlyDeep") is in_deep  # a grandchild
    assert b.get("a.OnlyA") is in_a  # a sibling, through the root
    assert deep.get("b.OnlyB") is in_b
    assert a.get("lroot.OnlyRoot") is in_root  # the root by its scope
    assert a.get("a.OnlyA") is in_a  # its own scope
    assert root.get("a.deep.OnlyDeep") is in_deep  # nested scopes
    assert root.get("b.OnlyA") is None


def test_dotted_import_path_fallback(tree):
    root, *_ = tree
    assert root.get("collections.OrderedDict") is collections.OrderedDict
    assert "collections.OrderedDict" in root
    assert root.get("collections.NoSuchThing") is None
    assert root.build(dict(type="collections.OrderedDict", x=1)) == {"x": 1}


def test_broken_module_on_import_path_is_reported_not_hidden(tree, write_module):
    root, *_ = tree
    broken = write_module(f"broken_path_{next(_ids)}", "import no_such_dependency_for_runnerx\n")
    with pytest.raises(ImportError, match=broken) as info:
        root.get(f"{broken}.Thing")
    assert isinstance(info.value.__cause__, ModuleNotFoundError)


def test_sibling_scope_collision_is_error(tree):
    root, *_ = tree
    with pytest.raises(ValueError, match="'a'"):
        Registry("model", parent=root, scope="a")


def test_child_inherits_build_func():
    calls = []

    def build(cfg, registry, default_args=None):
        calls.append(registry)
        return "built"

    root = Registry("thing", build_func=build, scope="bfroot")
    child = Registry("thing", parent=root, scope="bfchild")
    assert child.build(dict(type="X")) == "built"
    assert calls == [child]


def test_unknown_name_error_names_registry_scope_and_close_match(tree):
    root, a, _, _ = tree
    _register(root, "ResNet")
    with pytest.raises(KeyError) as info:
        a.build(dict(type="ResNt"))
    err = info.value
    assert isinstance(err, NotRegisteredError)
    message = str(err)
    assert message.startswith("'ResNt' is not registered in the 'model' registry (scope 'a')")
    assert "(scope 'lroot')" in message  # the ancestor searched too
    assert "Did you mean 'ResNet'?" in message


def test_unknown_name_without_close_match_suggests_custom_imports(tree):
    root, *_ = tree
    with pytest.raises(NotRegisteredError, match="custom_imports"):
        root.build(dict(type="Completely"))


def test_a_name_registered_only_in_another_scope_is_named_with_that_scope(tree):
    root, _, b, deep = tree
    _register(deep, "OnlyDeep")
    for searched in (root, b):  # plain names do not reach a child scope or a sibling
        with pytest.raises(NotRegisteredError) as info:
            searched.build(dict(type="OnlyDeep"))
        message = str(info.value)
        assert "'OnlyDeep' is registered in scope 'deep'" in message
        assert "type='deep.OnlyDeep'" in message and "default_scope='deep'" in message
        assert "custom_imports" not in message
    assert root.build(dict(type="deep.OnlyDeep")).__class__.__name__ == "OnlyDeep"


def test_unknown_scope_error_lists_scopes(tree):
    root, *_ = tree
    with pytest.raises(NotRegisteredError) as info:
        root.build(dict(type="dep.Thing"))
    message = str(info.value)
    assert "scope 'dep'" in message
    assert "'deep'" in message  # the scopes that exist, and a close match


@pytest.mark.parametrize(
    "first_lookup",
    [
        lambda reg: reg.get("Item"),
        lambda reg: "Item" in reg,
        lambda reg: reg.build(dict(type="Item")),
        lambda reg: reg.module_dict,
    ],
    ids=["get", "contains", "build", "module_dict"],
)
def test_locations_are_imported_on_first_lookup_only(write_module, first_lookup):
    n = next(_ids)
    items = f"lazy_items_{n}"
    write_module(
        items,
        f"""
        from lazy_reg_{n} import REG

        @REG.register_module()
        class Item:
            pass
        """,
    )
    write_module(
        f"lazy_reg_{n}",
        f"""
        from runnerx.registry import Registry
        REG = Registry('thing', scope='lazy{n}', locations=['{items}'])
        """,
    )
    registry = __import__(f"lazy_reg_{n}").REG
    assert items not in sys.modules
    assert "not yet imported" in repr(registry)
    first_lookup(registry)
    assert items in sys.modules
    assert registry.get("Item") is sys.modules[items].Item
    del sys.modules[items]
    assert "Item" in registry  # already imported once: not imported again
    assert items not in sys.modules


def test_parent_locations_are_imported_by_child_lookup(write_module):
    n = next(_ids)
    holder = __import__(write_module(f"lazy_holder_{n}", "REG = None\n"))
    items = write_module(
        f"lazy_parent_items_{n}",
        f"""
        from lazy_holder_{n} import REG

        @REG.register_module()
        class FromParent:
            pass
        """,
    )
    holder.REG = root = Registry("thing", scope=f"lp{n}", locations=[items])
    child = Registry("thing", parent=root, scope=f"lpchild{n}")
    assert items not in sys.modules
    assert child.get("FromParent") is sys.modules[items].FromParent


def test_failing_location_names_registry_and_module(write_module):
    broken = write_module(f"broken_loc_{next(_ids)}", "raise RuntimeError('kaboom')\n")
    registry = Registry("thing", scope="brk", locations=[broken])
    with pytest.raises(ImportError) as info:
        registry.get("X")
    message = str(info.value)
    assert "'thing' registry" in message and broken in message and "kaboom" in message
    assert isinstance(info.value.__cause__, RuntimeError)

    missing = Registry("thing", scope="brk2", locations=["no_such_module_for_runnerx"])
    with pytest.raises(ImportError, match="no_such_module_for_runnerx") as info:
        "X" in missing  # noqa: B015
    assert isinstance(info.value.__cause__, ModuleNotFoundError)


def test_scope_is_inferred_from_creating_package(write_module):
    n = next(_ids)
    write_module(
        f"inferpkg{n}.registry",
        """
        from runnerx.registry import Registry
        MODELS = Registry('model')
        """,
    )
    registry = __import__(f"inferpkg{n}.registry", fromlist=["MODELS"]).MODELS
    assert registry.scope == f"inferpkg{n}"


def test_scope_inference_skips_subclass_init(write_module):
    n = next(_ids)
    write_module(
        f"basepkg{n}.reg",
        """
        from runnerx.registry import Registry
        class MyRegistry(Registry):
            def __init__(self, name, **kwargs):
                super().__init__(name, **kwargs)
        """,
    )
    write_module(
        f"userpkg{n}.registry",
        f"""
        from basepkg{n}.reg import MyRegistry
        MODELS = MyRegistry('model')
        """,
    )
    registry = __import__(f"userpkg{n}.registry", fromlist=["MODELS"]).MODELS
    assert registry.scope == f"userpkg{n}"


def test_split_scope_key():
    assert Registry.split_scope_key("a.b.C") == ("a", "b.C")
    assert Registry.split_scope_key("C") == (None, "C")
