"""ProfilerHook: a real Runner profiles the first iterations or epoch and no more, writing a
Chrome trace, a logged table or TensorBoard traces; a schedule decides which iterations are
recorded; bad arguments are named; two real ranks write one trace each."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import torch.distributed as dist
from torch import profiler

from runnerx import HOOKS, Config
from runnerx.hooks import Hook, ProfilerHook
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]


@HOOKS.register_module()
class MarkIterations(Hook):
    """Puts an ``iteration <n>`` range into any running profiler at each training iteration
    (before ProfilerHook steps or stops it)."""

    priority = "NORMAL"

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.range = profiler.record_function(f"iteration {runner.iter}")
        self.range.__enter__()

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.range.__exit__(None, None, None)


def digits_cfg(work_dir, profiler_hook, by_epoch=False, length=6):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(work_dir)
    if by_epoch:
        cfg.train_cfg = dict(by_epoch=True, max_epochs=length, val_interval=100)
        cfg.train_dataloader.batch_size = 256  # 6 iterations an epoch
    else:
        cfg.train_cfg = dict(by_epoch=False, max_iters=length, val_interval=100)
        cfg.log_processor = dict(by_epoch=False)
    cfg.param_scheduler = None
    cfg.val_dataloader = cfg.val_cfg = cfg.val_evaluator = None
    cfg.default_hooks.checkpoint = None
    cfg.custom_hooks = [dict(type="MarkIterations"), dict(type="ProfilerHook", **profiler_hook)]
    return cfg


def train(cfg):
    runner = Runner.from_cfg(cfg)
    runner.train()
    hook = next(hook for hook in runner.hooks if isinstance(hook, ProfilerHook))
    return runner, hook


def trace_events(path):
    with open(path) as file:
        trace = json.load(file)
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def marked_iterations(events):
    return sorted(
        int(event["name"].split()[1])
        for event in events
        if str(event.get("name", "")).startswith("iteration ")
    )


def test_by_iteration_it_writes_a_chrome_trace_of_the_first_iterations_only(tmp_path):
    path = tmp_path / "traces" / "trace.json"
    cfg = digits_cfg(
        tmp_path / "work",
        dict(
            by_epoch=False,
            profile_times=3,
            json_trace_path=str(path),
            on_trace_ready=dict(type="log_trace", sort_by="cpu_time_total", row_limit=7),
        ),
    )
    runner, hook = train(cfg)
    assert runner.iter == 6
    events = trace_events(path)
    assert any(event.get("name") == "aten::addmm" for event in events)  # the classifier
    assert marked_iterations(events) == [0, 1, 2]
    assert hook.overridden_points() == []  # nothing to do for the rest of the run
    assert hook.after_train_iter not in runner.train_loop._after_iter  # and not called there
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    table = log.split("ProfilerHook:\n", 1)[1]
    assert "Self CPU" in table.splitlines()[1] and "aten::" in table
    assert f"Chrome trace written to {path}" in log


def test_by_epoch_it_profiles_the_first_epoch_and_writes_tensorboard_traces(tmp_path):
    cfg = digits_cfg(
        tmp_path / "work",
        dict(on_trace_ready=dict(type="tb_trace", worker_name="worker0")),
        by_epoch=True,
        length=2,
    )
    runner, _ = train(cfg)
    assert runner.iter == 12
    # without a schedule nothing is done per iteration
    assert "after_train_iter" not in ProfilerHook().overridden_points()
    traces = list(Path(runner.log_dir, "tf_tracing_logs").glob("worker0.*.pt.trace.json"))
    assert len(traces) == 1
    assert marked_iterations(trace_events(traces[0])) == [0, 1, 2, 3, 4, 5]


CYCLES = []


def record_cycle(prof):
    """on_trace_ready: the iterations each recorded cycle holds."""
    CYCLES.append(marked_iterations([{"name": event.name} for event in prof.events()]))


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events at the end of each cycle")
def test_a_schedule_records_only_its_active_iterations(tmp_path):
    path = tmp_path / "trace.json"
    hook_cfg = dict(
        by_epoch=False,
        profile_times=4,
        schedule=dict(wait=0, warmup=1, active=1),  # a new cycle would begin at iteration 4
        on_trace_ready=record_cycle,
        json_trace_path=str(path),
    )
    CYCLES.clear()
    train(digits_cfg(tmp_path / "work", hook_cfg))
    assert CYCLES == [[1], [3]]
    events = trace_events(path)  # the last cycle
    assert marked_iterations(events) == [3]
    steps = {event["name"] for event in events if event.get("name", "").startswith("ProfilerStep")}
    assert steps == {"ProfilerStep#3"}


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events at the end of each cycle")
@pytest.mark.parametrize(
    ("by_epoch", "length", "profile_times", "schedule", "recorded"),
    [
        # iterations 3 and 4 are the wait and warmup of a cycle that profiling never reaches
        (False, 6, 5, dict(wait=1, warmup=1, active=1), 2),
        # 6 iterations an epoch: the epoch's last step enters the warmup of the second cycle
        (True, 1, 1, dict(wait=2, warmup=1, active=1), 3),
    ],
)
def test_the_chrome_trace_is_the_last_completed_cycle_when_profiling_stops_in_a_later_one(
    tmp_path, by_epoch, length, profile_times, schedule, recorded
):
    path = tmp_path / "trace.json"
    hook_cfg = dict(
        by_epoch=by_epoch, profile_times=profile_times, schedule=schedule, json_trace_path=str(path)
    )
    train(digits_cfg(tmp_path / "work", hook_cfg, by_epoch=by_epoch, length=length))
    events = trace_events(path)
    assert marked_iterations(events) == [recorded]
    assert any(event.get("name") == "aten::addmm" for event in events)
    steps = {event["name"] for event in events if event.get("name", "").startswith("ProfilerStep")}
    assert steps == {f"ProfilerStep#{recorded}"}


def test_a_callable_gets_the_profiler_once_when_profiling_stops(runner, train):
    ready = []
    hook = ProfilerHook(
        by_epoch=False, profile_times=6, on_trace_ready=lambda prof: ready.append(runner.iter)
    )
    train(runner, [hook], epochs=3)  # 4 iterations an epoch
    assert ready == [5]  # in the 6th iteration, past the end of the first epoch


def test_a_run_shorter_than_profile_times_stops_profiling_at_its_end(runner, train):
    ready = []
    hook = ProfilerHook(by_epoch=True, profile_times=3, on_trace_ready=ready.append)
    train(runner, [hook], epochs=2)  # of max_epochs=3: stopped early
    assert ready == [hook.profiler]
    assert hook.overridden_points() == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(profile_times=0), ValueError, "profile_times must be a positive int"),
        (dict(profile_times=True), ValueError, "profile_times must be a positive int"),
        (dict(by_epoch="no"), TypeError, "by_epoch must be True or False"),
        (dict(with_flops=1), TypeError, "with_flops must be True or False"),
        (dict(activity_with_cpu=False), ValueError, "activity_with_cpu and activity_with_cuda"),
        (dict(schedule=[1, 1, 2]), TypeError, "schedule must be a dict"),
        (dict(schedule=dict(wait=1, warmup=1, active=1, every=2)), ValueError, "['every']"),
        (dict(schedule=dict(wait=1)), ValueError, "not valid for torch.profiler.schedule"),
        (dict(schedule=dict()), TypeError, "not valid for torch.profiler.schedule"),  # MMEngine's
        (dict(on_trace_ready="print"), TypeError, "on_trace_ready must be a callable"),
        (dict(on_trace_ready=dict(type="csv")), ValueError, "on_trace_ready.type must be"),
        (dict(on_trace_ready=dict(type="log_trace", rows=3)), ValueError, "['rows']"),
        (dict(on_trace_ready=dict(type="tb_trace", dir="x")), ValueError, "['dir']"),
        (dict(json_trace_path=3), TypeError, "json_trace_path must be a file path"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=r"ProfilerHook") as info:
        ProfilerHook(**kwargs)
    assert message in str(info.value)


@pytest.mark.skipif(
    profiler.ProfilerActivity.CUDA in profiler.supported_activities(),
    reason="this torch can profile CUDA",
)
def test_cuda_activity_without_cuda_is_an_error():
    with pytest.raises(ValueError, match="activity_with_cuda=True, but this torch cannot"):
        ProfilerHook(activity_with_cuda=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(by_epoch=False, profile_times=13), "profile_times=13 is more than the 12 iter"),
        (dict(profile_times=4), "profile_times=4 is more than the 3 epochs"),
        # 4 iterations an epoch: after skipping 3 and warming up 1, none is left to record
        (dict(schedule=dict(skip_first=3, wait=0, warmup=1, active=1)), "records nothing in"),
        (dict(by_epoch=False, profile_times=2, schedule=dict(wait=1, warmup=1, active=1)), "2 it"),
    ],
)
def test_settings_the_run_cannot_satisfy_are_errors_before_training(runner, kwargs, message):
    hook = ProfilerHook(**kwargs)
    with pytest.raises(ValueError, match="ProfilerHook") as info:
        hook.before_train(runner)
    assert message in str(info.value)
    assert hook.profiler is None


WORLD_SIZE = 2


def run_rank(rank, out_dir):
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    logger = SimpleNamespace(info=lambda message: None)
    runner = SimpleNamespace(max_epochs=1, max_iters=2, log_dir=out_dir, logger=logger)
    hook = ProfilerHook(by_epoch=False, profile_times=2, json_trace_path=f"{out_dir}/t.json")
    hook.before_train(runner)
    for index in range(2):
        with profiler.record_function(f"rank {rank}"):
            torch.ones(2).add(index)
        hook.after_train_iter(runner, index)
    return hook.overridden_points()


def test_each_rank_writes_its_own_trace(tmp_path, spawn_ranks):
    assert spawn_ranks(run_rank, tmp_path, WORLD_SIZE, timeout=60) == [[], []]  # finished
    for rank, name in enumerate(["t.json", "t_rank1.json"]):
        names = {event.get("name") for event in trace_events(tmp_path / name)}
        assert f"rank {rank}" in names and f"rank {1 - rank}" not in names
