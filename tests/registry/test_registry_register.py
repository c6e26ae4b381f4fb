"""Registering classes and functions: decorator, call, aliases, force, and the errors."""

import pytest

from runnerx.registry import Registry, RegistryKeyError


@pytest.fixture
def models():
    return Registry("model", scope="regtest")


def test_decorator_registers_class_under_its_name(models):
    @models.register_module()
    class ResNet:
        pass

    assert models.get("ResNet") is ResNet
    assert models.module_dict == {"ResNet": ResNet}


def test_decorator_with_name_and_aliases(models):
    @models.register_module(name="Net")
    class ResNet:
        pass

    @models.register_module(name=["A", "B"])
    class Other:
        pass

    assert models.get("Net") is ResNet
    assert models.get("ResNet") is None
    assert models.get("A") is Other and models.get("B") is Other
    assert len(models) == 3


def test_call_form_registers_class_and_function(models):
    class Head:
        pass

    def make_head():
        return Head()

    assert models.register_module(module=Head) is Head
    assert models.register_module(name="make", module=make_head) is make_head
    assert models.get("Head") is Head
    assert models.get("make") is make_head


def test_decorator_returns_the_object_unchanged(models):
    def build_thing(x=1):
        return x

    decorated = models.register_module()(build_thing)
    assert decorated is build_thing
    assert models.get("build_thing") is build_thing


def test_duplicate_name_error_names_both_classes_and_force(models):
    @models.register_module()
    class ResNet:
        pass

    class Impostor:
        pass

    with pytest.raises(KeyError) as info:
        models.register_module(name="ResNet", module=Impostor)
    message = str(info.value)
    assert isinstance(info.value, RegistryKeyError)
    assert "'ResNet'" in message
    assert "'model' registry" in message and "regtest" in message
    assert ResNet.__qualname__ in message and ResNet.__module__ in message
    assert Impostor.__qualname__ in message
    assert "force=True" in message
    assert not message.startswith('"')  # readable, not KeyError's quoted repr
    assert models.get("ResNet") is ResNet


def test_duplicate_alias_registers_nothing(models):
    @models.register_module()
    class B:
        pass

    class Other:
        pass

    with pytest.raises(KeyError):
        models.register_module(name=["A", "B"], module=Other)
    assert "A" not in models


def test_the_same_object_registered_again_is_no_error(models):
    class ResNet:
        pass

    models.register_module(module=ResNet)
    models.register_module(module=ResNet)  # a module's registrations run twice (docs/registry.md)
    assert models.get("ResNet") is ResNet and len(models) == 1


def test_force_replaces(models):
    @models.register_module()
    class ResNet:
        pass

    @models.register_module(name="ResNet", force=True)
    class Better:
        pass

    assert models.get("ResNet") is Better


@pytest.mark.parametrize("thing", [42, "ResNet", object()])
def test_registering_non_class_is_type_error(models, thing):
    with pytest.raises(TypeError, match=type(thing).__name__):
        models.register_module(module=thing)


def test_bad_names_are_rejected(models):
    class X:
        pass

    with pytest.raises(TypeError):
        models.register_module(name=3, module=X)
    with pytest.raises(ValueError, match="dots"):
        models.register_module(name="a.b", module=X)
    with pytest.raises(TypeError):
        models.register_module(force="yes", module=X)


def test_get_contains_len(models):
    @models.register_module()
    class A:
        pass

    assert "A" in models
    assert "B" not in models
    assert models.get("B") is None
    assert len(models) == 1
    with pytest.raises(TypeError):
        models.get(3)


def test_repr_is_a_table_of_names_and_objects(models):
    @models.register_module(name=["Alpha", "B"])
    class Alpha:
        pass

    text = repr(models)
    assert "'model'" in text and "regtest" in text
    lines = text.splitlines()
    assert any(
        line.split() == ["Alpha", f"{Alpha.__module__}.{Alpha.__qualname__}"] for line in lines
    )
    assert any(line.split()[0] == "B" for line in lines[1:])


def test_properties(models):
    child = Registry("model", parent=models, scope="kid")
    assert models.name == "model" and models.scope == "regtest"
    assert child.parent is models and models.parent is None
    assert models.children == {"kid": child}
    assert child.root is models and models.root is models


def test_a_replaceable_default_yields_its_name_to_a_later_registration_with_a_warning():
    registry = Registry("thing", scope="replaceable_a")

    @registry.register_module(replaceable=True)
    class Accuracy:
        pass

    with pytest.warns(UserWarning, match="takes the name 'Accuracy'.*from the built-in"):

        @registry.register_module()
        class Accuracy:  # the user's own, as in MMEngine's runner tutorial
            pass

    assert registry.get("Accuracy") is Accuracy
    with pytest.raises(RegistryKeyError, match="already registered"):
        registry.register_module(name="Accuracy", module=type("Other", (), {}))


def test_a_replaceable_default_registered_late_leaves_a_taken_name_to_its_holder():
    registry = Registry("thing", scope="replaceable_b")
    users = registry.register_module(name="Accuracy", module=type("Mine", (), {}))
    registry.register_module(
        name=["Accuracy", "Top1"], module=type("Builtin", (), {}), replaceable=True
    )
    assert registry.get("Accuracy") is users
    assert registry.get("Top1").__name__ == "Builtin"


def test_a_user_metric_named_accuracy_replaces_runnerx_builtin_one():
    from runnerx.evaluator import BaseMetric
    from runnerx.registry import METRICS

    builtin = METRICS.get("Accuracy")
    try:
        with pytest.warns(
            UserWarning, match="from the built-in runnerx.evaluator.accuracy.Accuracy"
        ):

            @METRICS.register_module()
            class Accuracy(BaseMetric):
                default_prefix = "mine"

                def process(self, data_batch, data_samples):
                    self.results.append(1)

                def compute_metrics(self, results):
                    return {"n": len(results)}

        metric = METRICS.build(dict(type="Accuracy"))
        assert type(metric) is Accuracy
    finally:
        METRICS.register_module(name="Accuracy", module=builtin, force=True, replaceable=True)
