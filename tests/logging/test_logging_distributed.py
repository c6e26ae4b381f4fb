"""Two real processes (gloo on CPU): rank 1 logs warnings only, writes no log or vis files,
draws no progress bar."""

import os
import socket
import sys

import pytest
import torch.distributed as dist


def run_rank(rank: int, folder: str) -> str:
    """Log, plot and draw a bar on this rank; return the bar's text as the rank's result."""
    dist.init_process_group("gloo", rank=rank, world_size=2)
    from runnerx.logging import LocalVisBackend, ProgressBar, Visualizer, get_logger

    # the console handler writes to sys.stdout as it is when the logger is made
    sys.stdout = open(os.path.join(folder, f"console_rank{rank}.txt"), "w")  # noqa: SIM115
    log_file = os.path.join(folder, f"logs_rank{rank}", "run.log")
    logger = get_logger("runnerx_dist_test", log_file=log_file)  # rank from the process group
    logger.info("an info line")
    logger.warning("a warning line")
    # at DEBUG level every rank keeps a file of its own, as MMEngine's logging docs show
    debug_file = os.path.join(folder, "debug", "run.log")
    debug_logger = get_logger("runnerx_dist_debug", log_file=debug_file, log_level="DEBUG")
    debug_logger.debug(f"a debug line of rank {rank}")
    # MMLogger.get_instance(..., distributed=True): a file per rank at any level
    from runnerx.logging import MMLogger

    every_rank = MMLogger.get_instance(
        "runnerx_dist_every", log_file=os.path.join(folder, "every", "run.log"), distributed=True
    )
    every_rank.info(f"an info line of rank {rank}")

    visualizer = Visualizer(
        vis_backends=[dict(type="LocalVisBackend")],
        save_dir=os.path.join(folder, f"vis_rank{rank}"),
    )
    visualizer.add_scalars({"loss": 1.0}, step=1)
    LocalVisBackend(os.path.join(folder, f"backend_rank{rank}")).add_scalar("a", 1.0)

    class Terminal:
        def __init__(self) -> None:
            self.text = ""

        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> None:
            self.text += text

        def flush(self) -> None:
            pass

    terminal = Terminal()
    bar = ProgressBar(2, stream=terminal)
    bar.update()
    bar.update()
    bar.close()
    sys.stdout.flush()
    return terminal.text


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, spawn_ranks):
    """The folder the two ranks wrote to, and what each drew as a progress bar."""
    folder = tmp_path_factory.mktemp("dist")
    return folder, spawn_ranks(run_rank, folder, world_size=2, timeout=120)


@pytest.fixture(scope="module")
def ranks_folder(ranks):
    return ranks[0]


def test_rank0_logs_everything_to_console_and_file(ranks_folder):
    console = (ranks_folder / "console_rank0.txt").read_text()
    assert "an info line" in console and "a warning line" in console
    assert "[rank" not in console
    log = (ranks_folder / "logs_rank0" / "run.log").read_text()
    assert " - runnerx_dist_test - INFO - an info line" in log
    assert "\x1b[" not in log


def test_rank1_shows_warnings_only_and_writes_no_log_file(ranks_folder):
    console = (ranks_folder / "console_rank1.txt").read_text()
    assert " - [rank 1] a warning line" in console  # the ranks share torchrun's console
    assert "an info line" not in console
    assert not (ranks_folder / "logs_rank1").exists()


def test_only_rank0_writes_vis_data(ranks_folder):
    scalars = ranks_folder / "vis_rank0" / "vis_data" / "scalars.json"
    assert scalars.read_text() == '{"loss": 1.0, "step": 1}\n'
    assert (ranks_folder / "backend_rank0" / "scalars.json").exists()
    assert not (ranks_folder / "vis_rank1").exists()
    assert not (ranks_folder / "backend_rank1").exists()


def test_only_rank0_draws_the_progress_bar(ranks):
    bars = ranks[1]
    assert "2/2" in bars[0]
    assert bars[1] == ""


def test_at_debug_level_every_rank_writes_its_own_file_named_as_mmengine_names_it(ranks_folder):
    # <stem>_<host>_device<LOCAL_RANK, 0 when unset as here>_rank<rank>.log
    host = socket.gethostname()
    files = sorted(path.name for path in (ranks_folder / "debug").iterdir())
    assert files == [f"run_{host}_device0_rank{rank}.log" for rank in (0, 1)]
    for rank in (0, 1):
        text = (ranks_folder / "debug" / f"run_{host}_device0_rank{rank}.log").read_text()
        assert f"DEBUG - a debug line of rank {rank}" in text


def test_mmlogger_distributed_gives_every_rank_its_own_file(ranks_folder):
    host = socket.gethostname()
    for rank in (0, 1):
        text = (ranks_folder / "every" / f"run_{host}_device0_rank{rank}.log").read_text()
        assert f"INFO - an info line of rank {rank}" in text
