"""Lightning Callback methods on a hook, which nothing calls: one warning per hook class names
each with the runnerx hook point (or place) that does its work."""

from runnerx.hooks import Hook, check_hook_points
from runnerx.hooks.lightning_callbacks import callback_places
from runnerx.model.lightning_methods import LIGHTNING_HOOK_POINTS, LIGHTNING_METHODS


class Ported(Hook):
    def on_train_epoch_end(self, trainer, pl_module): ...

    def on_validation_end(self, trainer, pl_module): ...

    def on_exception(self, trainer, pl_module, exception): ...

    def setup(self, trainer, pl_module, stage): ...

    def on_before_backward(self, trainer, pl_module, loss): ...

    def state_dict(self):  # the Runner saves and restores these
        return {}

    def load_state_dict(self, state): ...

    def after_run(self, runner): ...


def test_each_method_is_named_with_its_hook_point_in_one_warning():
    warnings = check_hook_points(Ported())
    assert len(warnings) == 1
    message = warnings[0]
    assert message.startswith("Ported defines Lightning Callback methods that the Runner never")
    for named in (
        "on_train_epoch_end -> after_train_epoch",
        "on_validation_end -> after_val",
        "setup -> before_run",
        "on_exception -> a try/except around runner.train()",
        "on_before_backward -> an override of the model's train_step",
        "docs/lightning.md",
    ):
        assert named in message
    assert "state_dict" not in message and "after_run" not in message


def test_a_method_the_hook_calls_itself_or_a_helper_of_its_own_is_no_callbacks():
    class Adapter(Hook):
        def on_train_epoch_end(self, trainer, pl_module): ...

        def after_train_epoch(self, runner):
            self.on_train_epoch_end(runner, runner.model)

        def setup(self):  # a helper of the hook's own, not Lightning's form
            ...

    class Subclass(Ported):  # inherited methods count
        def on_exception(self, trainer, pl_module, exception): ...

    assert check_hook_points(Adapter()) == []
    assert "on_train_epoch_end -> after_train_epoch" in check_hook_points(Subclass())[0]


def test_the_hook_points_are_the_models_table():
    places = callback_places()
    for name, point in LIGHTNING_HOOK_POINTS.items():
        assert places[name] == point
        assert point in LIGHTNING_METHODS[name]  # the model's warning names the same point
