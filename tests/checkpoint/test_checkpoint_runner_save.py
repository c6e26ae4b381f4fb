"""``runner.save_checkpoint``: MMEngine's arguments in its order, local folders only, and a
file complete when a direct call returns (CheckpointHook's saves finish in the background)."""

from __future__ import annotations

import os
import threading

import pytest
import torch

from runnerx.fileio import atomic, wait_for_pending_writes


@pytest.fixture
def trained(make_runner):
    """A Runner after one epoch of training (its optim wrapper and scheduler built)."""
    runner = make_runner(
        max_epochs=1,
        checkpoint={"interval": 1, "save_last": False},
        param_scheduler={"type": "MultiStepLR", "milestones": [1]},
    )
    runner.train()
    return runner


@pytest.fixture
def writer_threads(monkeypatch):
    """``{file name: thread}`` of the threads that put each written file in place (slowly,
    so that a write left to the background is still pending when the save returns)."""
    threads: dict[str, str] = {}
    put_in_place = atomic._put_in_place

    def slow(temporary: str, path: str) -> None:
        threads[os.path.basename(path)] = threading.current_thread().name
        threading.Event().wait(0.2)
        put_in_place(temporary, path)

    monkeypatch.setattr(atomic, "_put_in_place", slow)
    return threads


def test_mmengines_checkpoint_hook_call_and_all_eight_positionals_work(trained):
    # MMEngine's CheckpointHook passes file_client_args third, positionally
    first = trained.save_checkpoint(
        trained.work_dir, "a.pth", None, save_optimizer=False, meta={"note": 1}
    )
    second = trained.save_checkpoint(
        trained.work_dir, "b.pth", None, True, False, {"note": 2}, False, {"backend": "local"}
    )
    a, b = (torch.load(path, weights_only=False) for path in (first, second))
    assert "optimizer" not in a and a["meta"]["note"] == 1 and "param_schedulers" in a
    assert "optimizer" in b and "param_schedulers" not in b
    assert (b["meta"]["note"], b["meta"]["epoch"], b["meta"]["iter"]) == (2, 1, 5)  # by_epoch=False


def test_an_unknown_keyword_is_a_type_error_with_the_close_match(trained):
    with pytest.raises(TypeError, match=r"'save_optimzer'; did you mean 'save_optimizer'\?"):
        trained.save_checkpoint(trained.work_dir, "c.pth", save_optimzer=False)
    assert not os.path.exists(os.path.join(trained.work_dir, "c.pth"))


@pytest.mark.parametrize(
    "out_dir, args, message",
    [
        ("s3://bucket/exp", {}, "'s3'"),
        ("{work}", {"backend_args": {"backend": "petrel"}}, "'petrel'"),
        ("{work}", {"file_client_args": {"backend": "petrel"}}, "'petrel'"),
    ],
)
def test_a_store_is_refused_and_nothing_is_written(
    trained, tmp_path, monkeypatch, out_dir, args, message
):
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path)), set(os.listdir(trained.work_dir))
    with pytest.raises(ValueError, match=message) as error:
        trained.save_checkpoint(out_dir.format(work=trained.work_dir), "d.pth", **args)
    assert "writes to a local folder only" in str(error.value)
    assert (set(os.listdir(tmp_path)), set(os.listdir(trained.work_dir))) == before  # no 's3:'


def test_file_client_args_and_backend_args_together_are_refused(trained):
    with pytest.raises(ValueError, match="same time"):
        trained.save_checkpoint(trained.work_dir, "e.pth", {"backend": "disk"}, backend_args={})


def test_a_direct_save_is_complete_when_it_returns(trained, writer_threads):
    path = trained.save_checkpoint(trained.work_dir, "direct.pth")
    assert writer_threads == {"direct.pth": threading.current_thread().name}
    assert torch.load(path, weights_only=False)["meta"]["epoch"] == 2


def test_checkpoint_hook_saves_still_finish_in_the_background(make_runner, writer_threads):
    runner = make_runner(max_epochs=1, checkpoint={"interval": 1, "save_last": False})
    runner.train()
    wait_for_pending_writes()
    assert writer_threads["epoch_1.pth"] != threading.current_thread().name
    assert os.path.isfile(os.path.join(runner.work_dir, "epoch_1.pth"))


def test_a_subclass_save_checkpoint_with_mmengines_arguments_only_is_called_by_the_hook(
    make_runner,
):
    from runnerx.runner import Runner

    calls = []

    class MMEngineStyle(Runner):
        def save_checkpoint(
            self,
            out_dir,
            filename,
            file_client_args=None,
            save_optimizer=True,
            save_param_scheduler=True,
            meta=None,
            by_epoch=True,
            backend_args=None,
        ):
            calls.append(filename)
            return super().save_checkpoint(out_dir, filename, file_client_args, save_optimizer)

    runner = make_runner(max_epochs=1, checkpoint={"interval": 1, "save_last": False})
    runner.__class__ = MMEngineStyle  # make_runner builds a Runner: its method is replaced
    runner.train()
    assert calls == ["epoch_1.pth"]
    assert os.path.isfile(os.path.join(runner.work_dir, "epoch_1.pth"))


def warnings_of(runner) -> list[str]:
    log = os.path.join(runner.log_dir, f"{runner.timestamp}.log")
    return [line for line in open(log).read().splitlines() if " - WARNING - " in line]


def test_a_save_before_train_keeps_the_model_and_names_what_is_still_a_config(make_runner):
    runner = make_runner(param_scheduler={"type": "MultiStepLR", "milestones": [1]})
    path = runner.save_checkpoint(runner.work_dir, "before.pth")
    saved = torch.load(path, weights_only=False)
    assert "optimizer" not in saved and "param_schedulers" not in saved
    assert torch.equal(saved["state_dict"]["linear.weight"], runner.model.linear.weight)
    (line,) = warnings_of(runner)
    assert "optim_wrapper and param_scheduler are still configs (train() builds them)" in line
    # leaving them out on purpose says nothing
    runner.save_checkpoint(runner.work_dir, "quiet.pth", None, False, False)
    assert len(warnings_of(runner)) == 1


def test_a_test_only_runner_saves_its_model(tmp_path):
    from runnerx.runner import Runner
    from tests.checkpoint.conftest import TinyNet

    runner = Runner(model=TinyNet(), work_dir=str(tmp_path / "test_only"))
    path = runner.save_checkpoint(runner.work_dir, "weights.pth")
    saved = torch.load(path, weights_only=False)
    assert set(saved["state_dict"]) == {"linear.weight", "linear.bias"}
    assert not warnings_of(runner)
