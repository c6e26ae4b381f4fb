"""Two Runners of one visualizer name and one experiment name: while each runs, looking its
visualizer and MessageHub up by name finds its own, not the other Runner's."""

import pytest

from runnerx.hooks import Hook
from runnerx.logging import MessageHub
from runnerx.runner import Runner
from runnerx.testing.toy import ToyDataset, ToyModel
from runnerx.visualization import Visualizer


class LookUpByName(Hook):
    """Records, at each training iteration, whether the instances found by name are the
    runner's own and whether they are the current ones."""

    def __init__(self):
        self.found = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        visualizer = Visualizer.get_instance("vis")
        hub = MessageHub.get_instance(runner.experiment_name)
        self.found.append(
            (
                visualizer is runner.visualizer,
                Visualizer.get_current_instance() is runner.visualizer,
                hub is runner.message_hub,
                MessageHub.get_current_instance() is runner.message_hub,
            )
        )


def make_runner(work_dir):
    hook = LookUpByName()
    loader = dict(dataset=ToyDataset(), sampler=dict(type="DefaultSampler"), batch_size=6)
    runner = Runner(
        model=ToyModel(),
        work_dir=str(work_dir),
        experiment_name="same_experiment",
        train_dataloader=loader,
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        default_hooks=dict(checkpoint=None),
        custom_hooks=[hook],
        visualizer=dict(type="Visualizer", name="vis", vis_backends=[]),
    )
    return runner, hook


def test_each_runner_finds_its_own_instances_by_name_while_it_runs(tmp_path):
    first, first_hook = make_runner(tmp_path / "first")
    second, second_hook = make_runner(tmp_path / "second")
    assert first.visualizer is not second.visualizer  # MMEngine would share one
    assert Visualizer.get_instance("vis") is second.visualizer  # the newest, as in MMEngine
    first.train()
    assert first_hook.found == [(True, True, True, True)] * 2
    assert Visualizer.get_current_instance() is first.visualizer
    second.train()
    assert second_hook.found == [(True, True, True, True)] * 2
    assert MessageHub.get_instance("same_experiment") is second.message_hub


@pytest.mark.parametrize("cls", [Visualizer, MessageHub])
def test_get_instance_of_a_single_name_is_mmengines(cls):
    first = cls.get_instance("instances_a")
    assert cls.get_instance("instances_a") is first and cls.get_current_instance() is first
    second = cls.get_instance("instances_b")
    assert cls.get_current_instance() is second
    assert cls.get_instance("instances_a") is first  # found by name, and current again
    assert cls.get_current_instance() is first
