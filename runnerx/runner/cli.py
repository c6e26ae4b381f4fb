"""What tools/train.py and tools/test.py share: common flags, config loading, runner choice."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

from runnerx.config import Config, ConfigFileNotFoundError, ConfigFormatError, DictAction
from runnerx.config.error_report import config_error_text
from runnerx.config.source import SUPPORTED_SUFFIXES
from runnerx.dist import is_distributed
from runnerx.suggest import close_matches


def add_common_args(parser: argparse.ArgumentParser) -> None:
    """``--work-dir``, ``--cfg-options`` and ``--launcher`` as OpenMMLab tools have them, and
    runnerx's ``--fast-dev-run [N]`` (the config key ``fast_dev_run``)."""
    parser.add_argument("--work-dir", help="the dir to save logs, checkpoints and metrics")
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        help="override config values: key=value pairs with dotted keys, e.g. "
        "optim_wrapper.optimizer.lr=0.01 train_cfg.max_epochs=3",
    )
    parser.add_argument(
        "--launcher",
        choices=["none", "pytorch", "slurm", "mpi"],
        default="none",
        help="job launcher",
    )
    parser.add_argument(
        "--unsafe-load",
        action="store_true",
        help="allow checkpoints that hold arbitrary pickled objects (they can run code when "
        "loaded): only for files you trust",
    )
    parser.add_argument(
        "--fast-dev-run",
        nargs="?",
        const=1,
        type=int,
        metavar="N",
        help="smoke test on N batches (1 if no N): N training iterations then one validation "
        "of N batches (tools/test.py: N test batches); no checkpoints are saved",
    )
    parser.add_argument("--local_rank", "--local-rank", type=int, default=0, help=argparse.SUPPRESS)


def read_config(path: str, tool: str) -> Config:
    """``Config.fromfile(path)``; a config file (or a base file of it) that is missing or not
    a config file ends ``tool`` with one line, ``tools/train.py: config file not found: PATH
    (did you mean ...?)``, and exit code 1 rather than a traceback (on every rank of a
    distributed launch: each reads the config before any process group exists)."""
    try:
        return Config.fromfile(path)
    except (ConfigFileNotFoundError, ConfigFormatError) as error:
        raise SystemExit(f"{tool}: {error}{_close_match(path)}") from None


def _close_match(path: str) -> str:
    """`` (did you mean configs/x.py?)`` for a missing ``path`` when its folder holds a config
    file of a similar name; else nothing."""
    folder, name = os.path.split(path)
    if os.path.exists(path) or not os.path.isdir(folder or "."):
        return ""
    names = [
        entry
        for entry in os.listdir(folder or ".")
        if os.path.splitext(entry)[1] in SUPPORTED_SUFFIXES
    ]
    match = close_matches(name, names, n=1)
    return f" (did you mean {os.path.join(folder, match[0])}?)" if match else ""


def load_config(args: argparse.Namespace, tool: str = "tools/train.py") -> Config:
    """The config ``tool`` runs (see :func:`read_config`), with the common flags applied
    (work dir: flag, else config, else ``./work_dirs/<config name>``), each through
    ``merge_from_dict`` with the flag as its source, so that ``cfg.explain('work_dir')``
    names ``--work-dir``."""
    os.environ.setdefault("LOCAL_RANK", str(args.local_rank))
    cfg = read_config(args.config, tool)
    cfg.merge_from_dict({"launcher": args.launcher}, source="--launcher")
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options, source="--cfg-options")
    if args.unsafe_load:
        cfg.merge_from_dict({"unsafe_load": True}, source="--unsafe-load")
    if args.fast_dev_run is not None:
        cfg.merge_from_dict({"fast_dev_run": args.fast_dev_run}, source="--fast-dev-run")
    if args.work_dir is not None:
        cfg.merge_from_dict({"work_dir": args.work_dir}, source="--work-dir")
    elif cfg.get("work_dir") is None:
        stem = os.path.splitext(os.path.basename(args.config))[0]
        work_dir = os.path.join("./work_dirs", stem)
        cfg.merge_from_dict(
            {"work_dir": work_dir}, source="the default (./work_dirs/<config name>)"
        )
    return cfg


def run(cfg: Config, action: str) -> Any:
    """Build the Runner the config asks for, call ``train``/``val``/``test``, and leave the
    process group cleanly afterwards; return the metrics of ``val``/``test`` (None after
    ``train``). A training stopped by a signal (PreemptionHook) ends the process with
    ``PREEMPTED_EXIT_CODE`` once its checkpoint is saved. An error (or Ctrl-C) after the
    Runner was built is logged through its logger, so the work dir's ``.log`` says why the run
    ended (see :func:`report_failure`), and is raised again; so is an error while the Runner
    was being built, once its log file was open (a model that cannot be built)."""
    from runnerx.dist.launch import shutdown_dist
    from runnerx.hooks import PREEMPTED_EXIT_CODE, preempted_by
    from runnerx.logging import MMLogger

    runner = None
    logger_before = MMLogger.get_current_instance()
    try:
        runner = build_runner(cfg)
        result = getattr(runner, action)()
    except BaseException as error:
        if runner is None:
            shown = _report_build_failure(error, logger_before)
        else:
            shown = report_failure(runner, action, error)
        if shown:  # call_tool does not print it again
            setattr(error, _REPORTED, True)
        if is_distributed():
            _exit_after_failure(print_traceback=not shown)
        shutdown_dist(wait_for_others=False)
        raise
    preempted = False
    if action == "train":
        preempted = preempted_by(runner)
        result = None  # the trained model: it goes with the runner
    del runner  # the model, wrapped in DDP/FSDP, goes before the process group does
    shutdown_dist()
    if preempted:
        raise SystemExit(PREEMPTED_EXIT_CODE)
    return result


#: the attribute that marks an error :func:`run` has reported (and the console has shown)
_REPORTED = "_runnerx_reported"


def report_failure(runner: Any, action: str, error: BaseException) -> bool:
    """Say why ``runner``'s ``action`` ended; return whether the console has shown it.

    On rank 0 an error is logged at ERROR with its traceback (console and the work dir's
    ``.log``), and Ctrl-C as one line that says where training stopped and which checkpoint
    ``--resume`` continues from; an error whose message says all there is to know (another
    run holds the work dir) as one line too. Another rank, which writes no log file, prints the
    traceback and ``rank N failed: <error>`` to its stderr, and nothing after Ctrl-C (rank 0
    says it). A SystemExit is not reported."""
    if not isinstance(error, (Exception, KeyboardInterrupt)):
        return False
    where = _progress(runner, action, error)
    if isinstance(error, KeyboardInterrupt):
        if runner.rank == 0:
            runner.logger.warning(f"{action} interrupted (Ctrl-C){where}")
        return True
    if runner.rank == 0 and isinstance(error, _one_line_errors()):
        runner.logger.error(f"{action} failed: {type(error).__name__}: {error}")
        return True
    if runner.rank == 0:
        peer = _lost_a_peer(error) if runner.world_size > 1 else ""
        runner.logger.error(f"{action} failed{where}{peer}:", exc_info=error)
        return True
    first_line = next(iter(str(error).splitlines()), "")
    traceback.print_exception(error)
    print(f"rank {runner.rank} failed: {type(error).__name__}: {first_line}", file=sys.stderr)
    return True


def _one_line_errors() -> tuple[type[BaseException], ...]:
    """Errors whose traceback tells a user nothing that their message does not."""
    from runnerx.runner.work_dir_lock import WorkDirInUseError

    return (WorkDirInUseError,)


def _report_build_failure(error: BaseException, logger_before: logging.Logger) -> bool:
    """Log an error raised while a Runner was being built into its log, when it got as far as
    setting up its logger (which became the current one) on rank 0; return whether it did
    (and the console has shown the error). An error in the config (a type no registry knows,
    an argument the class does not take) is logged as its message, without a traceback, unless
    that passes through the user's code (a model's ``__init__`` that raised)."""
    from runnerx.dist import get_rank
    from runnerx.logging import MMLogger

    logger = MMLogger.get_current_instance()
    if logger is logger_before or get_rank() != 0 or not isinstance(error, Exception):
        return False
    text = config_error_text(error)
    if text is None:
        logger.error("building the Runner failed:", exc_info=error)
    else:
        logger.error(f"building the Runner failed: {text}")
    return True


def _progress(runner: Any, action: str, error: BaseException | None = None) -> str:
    """For a training, where it stopped and what resumes it: `` in epoch 3, after iteration
    557; the last checkpoint is .../iter_550.pth (...)`` (the epoch under way, the iterations
    done; `` during the after_train_iter hooks of iteration 558 (...)`` when ``error`` was
    raised there, in a checkpoint save say; `` at the end of epoch 3 (...)``
    once its iterations are all done but not its end-of-epoch hooks; `` after its last
    iteration (...)`` in the hooks that end training; `` during the validation after epoch 2
    (iteration 540)`` while an epoch's validation runs), or `` before completing an
    iteration`` when this process trained none (the checkpoints are as they were); nothing
    for ``val``/``test``, nor when training had not started (building, loading or resuming
    the checkpoint: the error says what)."""
    first_iter = getattr(runner, "_first_iter", None)  # set by Runner.train once resumed
    if action != "train" or first_iter is None:
        return ""
    if runner.iter == first_iter:
        return " before completing an iteration"
    from runnerx.checkpoint.runner_state import find_latest_checkpoint
    from runnerx.checkpoint.work_dir_checkpoints import newest_best_checkpoint, resume_from_best
    from runnerx.runner.loops import EpochBasedTrainLoop

    loop = getattr(runner, "_train_loop", None)
    by_epoch = isinstance(loop, EpochBasedTrainLoop)
    validating = runner.message_hub.get_info("loop_stage") == "val"  # set by RuntimeInfoHook
    where = f" {'during the validation ' if validating else ''}after iteration {runner.iter}"
    ended = runner.iter >= getattr(loop, "max_iters", runner.iter + 1) and (
        not by_epoch or runner.epoch >= loop.max_epochs  # the last epoch's hooks have run
    )
    if not validating and _raised_in(error, "after_train_iter"):  # the counter is not yet up
        where = (
            f" during the after_train_iter hooks of iteration {runner.iter + 1} (its training "
            "step done)"
        )
        if by_epoch:
            where = f" in epoch {runner.epoch + 1},{where}"
    elif ended and not validating:
        where = (  # after_train hooks (a final checkpoint save, say), or after_run's
            f" after its last iteration ({runner.iter}), in the hooks that end training"
        )
    elif by_epoch and validating and not loop.pass_batches_done:  # not mid-epoch
        where = f" during the validation after epoch {runner.epoch} (iteration {runner.iter})"
    elif by_epoch and not validating and loop.pass_batches_done >= len(loop.dataloader):
        where = (  # the epoch counts once its end-of-epoch hooks have run
            f" at the end of epoch {runner.epoch + 1} (its last iteration, {runner.iter}, done; "
            "its end-of-epoch hooks, such as the checkpoint save, not finished)"
        )
    elif by_epoch:
        where = f" in epoch {runner.epoch + 1},{where}"
    last = find_latest_checkpoint(str(runner.work_dir))
    if last is None or ("://" not in last and not os.path.exists(last)):
        best = newest_best_checkpoint(str(runner.work_dir))
        if best is not None:
            return f"{where}; {runner.work_dir} has only best checkpoints, the newest {best}: " + (
                resume_from_best(best)
            )
        return f"{where}; {runner.work_dir} has no checkpoint to resume from"
    return f"{where}; the last checkpoint is {last} (--resume continues from it)"


def _raised_in(error: BaseException | None, function: str) -> bool:
    """Whether ``error`` was raised inside a function (a hook point's method) of that name."""
    frame = None if error is None else error.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code.co_name == function:
            return True
        frame = frame.tb_next
    return False


def call_tool(main: Callable[[], Any]) -> Any:
    """Call a tool's ``main`` and return what it returns. An error :func:`run` has already
    reported (logged) ends the process with exit code 1, or 130 after Ctrl-C, without Python
    printing it a second time. An error in the user's config (a config line that raises, an
    option that cannot merge: see :func:`~runnerx.config.error_report.config_error_text`)
    ends it with ``tools/train.py: <its message>`` and exit code 1, without runnerx's
    traceback; any other error propagates as usual, traceback and all."""
    script = main.__code__.co_filename
    try:
        return main()
    except (Exception, KeyboardInterrupt) as error:
        if getattr(error, _REPORTED, False):
            raise SystemExit(130 if isinstance(error, KeyboardInterrupt) else 1) from None
        text = config_error_text(error, own_files=[script])
        if text is None:
            raise
        tool = os.path.join(os.path.basename(os.path.dirname(script)), os.path.basename(script))
        raise SystemExit(f"{tool}: {text}") from None


def _exit_after_failure(print_traceback: bool = True) -> NoReturn:
    """End a failed rank of a distributed job at once, with exit code 1, after printing the
    error (unless :func:`report_failure` has) and finishing the checkpoint being written.
    Unwinding instead leaves the process group's pending work referenced by the traceback,
    and interpreter shutdown can block on it (a collective that timed out): the rank would
    never exit, and the launcher (torchrun, srun) would never learn to stop the others."""
    from runnerx.fileio import wait_for_pending_writes

    try:
        if print_traceback:
            traceback.print_exc()
        wait_for_pending_writes()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()  # the log files' last lines
        os._exit(1)


def _lost_a_peer(error: BaseException) -> str:
    """For an error that says this rank lost its connection to another (gloo's ``Connection
    closed by peer``, NCCL's aborted communicator, ...): where the error that ended the job
    is; else nothing."""
    import torch.distributed as dist

    text = str(error)
    network = getattr(dist, "DistNetworkError", ())
    lost = isinstance(error, network) or any(
        sign in text
        for sign in ("closed by peer", "reset by peer", "Broken pipe", "communicator was aborted")
    )
    if not lost:
        return ""
    return (
        " (this rank lost its connection to another, which probably failed first: look for "
        "'rank N failed:' in the job's output, followed by that rank's traceback)"
    )


def checkpoint_to_test(checkpoint: str, work_dir: str, resuming: bool = False) -> str:
    """The checkpoint ``tools/test.py CONFIG CHECKPOINT`` loads: ``checkpoint`` as given, or,
    when it is ``last`` or ``best`` and no such file exists, the one the run in ``work_dir``
    saved last (what its ``last_checkpoint`` names) or its best (the one ``best_*.pth`` that
    ``CheckpointHook(save_best=...)`` keeps in the work dir, or beside the last checkpoint
    when a local ``out_dir`` holds them; of the several that ``max_keep_best`` keeps, the
    best-scoring one); a FileNotFoundError says what is missing, also for a local path that
    does not exist (a URL or other ``scheme://`` path is left to the loader). ``resuming``:
    for ``tools/train.py --resume``, whose advice differs."""
    if os.path.exists(checkpoint) or "://" in checkpoint:
        return checkpoint
    if checkpoint not in ("last", "best"):
        raise FileNotFoundError(
            f"CHECKPOINT {checkpoint!r}: no such file; give an existing checkpoint file, a URL, "
            "or 'last' / 'best' for the work dir's last or best checkpoint"
        )
    from runnerx.checkpoint.runner_state import find_latest_checkpoint
    from runnerx.checkpoint.work_dir_checkpoints import best_checkpoints

    last = find_latest_checkpoint(work_dir)
    if checkpoint == "last":
        if last is None:
            raise FileNotFoundError(_no_last_checkpoint(work_dir, resuming))
        return last
    # --work-dir may be relative and last_checkpoint's folder absolute: the same folder
    distinct: dict[str, str] = {}
    for folder in [work_dir, *([os.path.dirname(last)] if last else [])]:
        distinct.setdefault(os.path.realpath(folder), folder)
    folders = list(distinct.values())
    best = best_checkpoints(folders)
    if len(best) > 1:  # max_keep_best > 1 keeps several: their records say which is best
        from runnerx.hooks.best_checkpoints import best_of_kept

        chosen = best_of_kept(best)
        best = [chosen] if chosen else best
    if len(best) != 1:
        found = f"several: {', '.join(best)}; give one of them" if best else "none"
        raise FileNotFoundError(
            f"'best': one best_*.pth checkpoint in {' or '.join(folders)} was expected (saved "
            f"by default_hooks.checkpoint.save_best), found {found}"
        )
    return best[0]


def _no_last_checkpoint(work_dir: str, resuming: bool) -> str:
    """Why ``last`` names nothing in ``work_dir``, and what to give instead: its newest best
    checkpoint, when ``save_best`` saved some (a run stopped before its first periodic
    checkpoint)."""
    from runnerx.checkpoint.work_dir_checkpoints import newest_best_checkpoint, resume_from_best

    newest = newest_best_checkpoint(work_dir)
    if newest is None:
        return (
            f"'last': {work_dir} has no last_checkpoint file (no run saved a checkpoint there); "
            "give a checkpoint path, or --work-dir of the training run"
            + (
                " (--resume with no value starts afresh when there is no checkpoint yet)"
                if resuming
                else ""
            )
        )
    if resuming:
        use = resume_from_best(newest)
    else:
        use = f"test it with tools/test.py CONFIG {newest}, or give 'best' for the best-scoring one"
    return (
        f"'last': {work_dir} has no last_checkpoint file (its run saved only best checkpoints, "
        f"save_best); the newest is {newest}: {use}"
    )


def build_runner(cfg: Config) -> Any:
    """``Runner.from_cfg(cfg)``, or the registered ``runner_type`` the config names."""
    from runnerx.registry import RUNNERS
    from runnerx.runner import Runner

    if "runner_type" not in cfg:
        return Runner.from_cfg(cfg)
    runner_class = RUNNERS.get(cfg.runner_type)
    if runner_class is None:
        raise KeyError(f"runner_type={cfg.runner_type!r} is not a registered runner")
    return runner_class.from_cfg(cfg)
