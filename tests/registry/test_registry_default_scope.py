"""DefaultScope, init_default_scope, ``_scope_`` and how the default scope picks a registry."""

import pytest

from runnerx.registry import DefaultScope, NotRegisteredError, Registry, init_default_scope


@pytest.fixture(autouse=True)
def clean_default_scope(monkeypatch):
    monkeypatch.setattr(DefaultScope, "_instances", {})
    monkeypatch.setattr(DefaultScope, "_current", None)


def current_scope():
    instance = DefaultScope.get_current_instance()
    return None if instance is None else instance.scope_name


class Recorder:
    """Remembers the default scope it was built under."""

    def __init__(self):
        self.scope = current_scope()


@pytest.fixture
def tree():
    root = Registry("model", scope="dsroot")
    child = Registry("model", parent=root, scope="dschild")
    root_net = type("Net", (Recorder,), {})
    child_net = type("Net", (Recorder,), {})
    root.register_module(module=root_net)
    child.register_module(module=child_net)
    root.register_module(name="OnlyRoot", module=Recorder)
    return root, child, root_net, child_net


def test_get_instance_and_current():
    assert DefaultScope.get_current_instance() is None
    first = DefaultScope.get_instance("run1", scope_name="a")
    assert DefaultScope.get_current_instance() is first and first.scope_name == "a"
    second = DefaultScope.get_instance("run2", scope_name="b")
    assert DefaultScope.get_current_instance() is second
    assert DefaultScope.get_instance("run1") is first  # an existing one is returned
    assert DefaultScope.check_instance_created("run1")
    assert not DefaultScope.check_instance_created("run3")
    with pytest.warns(UserWarning):
        assert DefaultScope.get_instance("run1", scope_name="other").scope_name == "a"
    with pytest.raises(TypeError):
        DefaultScope.get_instance("run3")


def test_overwrite_default_scope_restores_previous():
    DefaultScope.get_instance("run", scope_name="a")
    with DefaultScope.overwrite_default_scope("b"):
        assert current_scope() == "b"
        with DefaultScope.overwrite_default_scope(None):
            assert current_scope() == "b"
    assert current_scope() == "a"
    with pytest.raises(RuntimeError), DefaultScope.overwrite_default_scope("c"):
        raise RuntimeError
    assert current_scope() == "a"


def test_init_default_scope():
    first = init_default_scope("a")
    assert current_scope() == "a"
    assert init_default_scope("a") is first
    init_default_scope("b")
    assert current_scope() == "b"
    init_default_scope("a")
    assert current_scope() == "a"


def test_default_scope_picks_child_registry(tree):
    root, _, root_net, child_net = tree
    assert type(root.build(dict(type="Net"))) is root_net
    with DefaultScope.overwrite_default_scope("dschild"):
        assert type(root.build(dict(type="Net"))) is child_net
        assert type(root.build(dict(type="OnlyRoot"))) is Recorder  # found in the root still
    DefaultScope.get_instance("run", scope_name="dschild")
    assert type(root.build(dict(type="Net"))) is child_net


def test_default_scope_without_matching_registry_uses_registry_itself(tree):
    root, child, root_net, child_net = tree
    with DefaultScope.overwrite_default_scope("nowhere"):
        assert type(root.build(dict(type="Net"))) is root_net
        assert type(child.build(dict(type="Net"))) is child_net


def test_default_scope_falls_back_to_the_called_registry():
    root = Registry("model", scope="fbroot")
    child = Registry("model", parent=root, scope="fbchild")
    child.register_module(name="Mine", module=Recorder)
    # The default scope names the root, but the child's own entries stay reachable.
    with DefaultScope.overwrite_default_scope("fbroot"):
        assert isinstance(child.build(dict(type="Mine")), Recorder)
        with pytest.raises(NotRegisteredError) as info:
            child.build(dict(type="Mne"))
    assert "Did you mean 'Mine'?" in str(info.value)


def test_scope_key_switches_scope_while_building(tree):
    root, _, _, child_net = tree
    built = root.build(dict(type="Net", _scope_="dschild"))
    assert type(built) is child_net
    assert built.scope == "dschild"  # the scope is current while constructing
    assert current_scope() is None  # and restored afterwards


def test_scope_key_applies_to_nested_builds(tree):
    root, _, _, child_net = tree

    @root.register_module()
    class Holder:
        def __init__(self, part):
            self.part = root.build(part)

    holder = root.build(dict(type="Holder", part=dict(type="Net"), _scope_="dschild"))
    assert type(holder.part) is child_net


def test_switch_scope_and_registry_gives_the_scopes_registry_as_in_mmengine():
    from runnerx.registry import DefaultScope, Registry

    root = Registry("thing", scope="switch_root")
    child = Registry("thing", parent=root, scope="switch_child")
    with root.switch_scope_and_registry("switch_child") as registry:
        assert registry is child
        assert DefaultScope.get_current_instance().scope_name == "switch_child"
    with child.switch_scope_and_registry("switch_nowhere") as registry:
        assert registry is child  # no registry of that scope in the tree
