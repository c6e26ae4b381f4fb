"""get_logger / get_run_logger / print_log: layout, colour on the console only, ranks, no
duplicate handlers, the current run's logger."""

import errno
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from termcolor.termcolor import can_colorize

import runnerx.logging.logger as logger_module
from runnerx.logging import get_logger, get_run_logger, make_logger_current, print_log

ROOT = Path(__file__).parents[2]
LINE = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} - (\S+) - (\w+) - (.*)$")


def run_logging_script(tmp_path: Path, **env: str) -> tuple[str, str]:
    """Log two lines in a fresh interpreter (termcolor decides once per process whether to
    colour); return (console output, log file text)."""
    log_file = tmp_path / "run" / "20261121_150405.log"
    script = textwrap.dedent(
        f"""
        from runnerx.logging import get_logger
        logger = get_logger('runnerx', log_file={str(log_file)!r})
        logger.info('info line')
        logger.warning('warning line')
        """
    )
    clean_env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**clean_env, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout, log_file.read_text()


def test_console_is_coloured_when_forced_and_the_file_never_is(tmp_path):
    console, log = run_logging_script(tmp_path, FORCE_COLOR="1")
    assert "\x1b[" in console
    assert "info line" in console and "warning line" in console
    assert "\x1b[" not in log
    lines = log.splitlines()
    assert [LINE.match(line).groups() for line in lines] == [
        ("runnerx", "INFO", "info line"),
        ("runnerx", "WARNING", "warning line"),
    ]


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1"}])
def test_console_is_plain_when_not_a_terminal_or_no_color(env, monkeypatch, capsys):
    for name in ("FORCE_COLOR", "NO_COLOR", "ANSI_COLORS_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    can_colorize.cache_clear()  # termcolor caches its answer per process
    try:
        get_logger(f"runnerx_test_plain_{len(env)}", rank=0).info("info line")
    finally:
        can_colorize.cache_clear()
    out = capsys.readouterr().out  # captured output is no terminal
    assert "\x1b[" not in out
    assert LINE.match(out.splitlines()[0]).groups()[1:] == ("INFO", "info line")


def test_calling_again_adds_no_handlers_and_a_new_file_replaces_the_old(tmp_path, capsys):
    first_file, second_file = tmp_path / "a.log", tmp_path / "b.log"
    logger = get_logger("runnerx_test_again", log_file=first_file, rank=0)
    logger.info("to a")
    assert get_logger("runnerx_test_again", log_file=first_file, rank=0) is logger
    assert len(logger.handlers) == 2
    get_logger("runnerx_test_again", rank=0)
    assert len(logger.handlers) == 2
    get_logger("runnerx_test_again", log_file=second_file, rank=0).info("to b")
    assert len(logger.handlers) == 2
    assert "to b" not in first_file.read_text() and "to a" in first_file.read_text()
    assert "to b" in second_file.read_text()
    assert capsys.readouterr().out.count("to a") == 1


def test_a_non_zero_rank_shows_warnings_only_and_writes_no_file(tmp_path, capsys):
    log_file = tmp_path / "rank1" / "run.log"
    logger = get_logger("runnerx_test_rank1", log_file=log_file, rank=1)
    logger.info("hidden")
    logger.warning("shown")
    logger.error("also shown")
    out = capsys.readouterr().out
    assert "hidden" not in out
    assert "shown" in out and "also shown" in out
    assert not log_file.parent.exists()


def test_log_level_is_respected_and_checked(tmp_path, capsys):
    logger = get_logger("runnerx_test_level", log_level="WARNING", rank=0)
    logger.info("quiet")
    logger.warning("loud")
    out = capsys.readouterr().out
    assert "quiet" not in out and "loud" in out
    with pytest.raises(ValueError, match="did you mean 'INFO'"):
        get_logger("runnerx_test_level", log_level="INF")


def test_print_log_uses_the_current_logger_a_named_one_or_print(tmp_path, capsys, monkeypatch):
    log_file = tmp_path / "current.log"
    get_logger("runnerx_test_print", log_file=log_file, rank=0)
    print_log("through the current logger")
    print_log("a warning", logger="runnerx_test_print", level=logging.WARNING)
    print_log("dropped", logger="silent")
    text = log_file.read_text()
    assert "INFO - through the current logger" in text
    assert "WARNING - a warning" in text
    assert "dropped" not in text

    capsys.readouterr()
    monkeypatch.setattr(logger_module, "_current_logger", None)
    print_log("plain print")
    assert capsys.readouterr().out == "plain print\n"
    with pytest.raises(TypeError, match="logging.Logger"):
        print_log("x", logger=42)


def test_print_log_to_a_name_no_logger_has_is_an_error_as_in_mmengine():
    logging.getLogger("runnerx_test_never_set_up").propagate = False  # pytest's root handler
    with pytest.raises(ValueError, match="no logger called 'runnerx_test_never_set_up'"):
        print_log("lost", logger="runnerx_test_never_set_up")


def test_run_loggers_keep_their_own_files_and_the_current_one_shows_runnerx_records(tmp_path):
    first = get_run_logger(tmp_path / "first.log", rank=0)
    second = get_run_logger(tmp_path / "second.log", rank=0)
    assert first is not second and first.name == second.name == "runnerx"
    make_logger_current(first)
    logging.getLogger("runnerx.optim.test").info("alpha from a runnerx module")
    print_log("bravo through print_log")
    second.info("charlie, the second run's own line")
    make_logger_current(second)
    logging.getLogger("runnerx.model.test").warning("delta from a runnerx module")
    first.info("echo, the first run's own line")
    first_text = (tmp_path / "first.log").read_text()
    second_text = (tmp_path / "second.log").read_text()
    for word in ("alpha", "bravo", "echo"):
        assert word in first_text and word not in second_text
    for word in ("charlie", "delta"):
        assert word in second_text and word not in first_text
    assert " - runnerx.optim.test - INFO - alpha" in first_text


def test_a_repeated_warning_shows_once_per_logger_as_mmengines_do(tmp_path, capsys):
    logger = get_logger("runnerx_test_repeats", log_file=tmp_path / "r.log", rank=0)
    assert logger.instance_name == "runnerx_test_repeats"  # MMEngine's attribute
    for _ in range(2):
        logger.warning("hello")
        logger.warning("epoch %d", 1)
        logger.info("info repeats")
        logger.error("error repeats")
    logger.warning("hello1")
    logger.warning("epoch %d", 2)  # the message, not the format string, is compared
    console, text = capsys.readouterr().out, (tmp_path / "r.log").read_text()
    for shown in (console, text):
        assert shown.count("WARNING - hello\n") == 1 and shown.count("WARNING - hello1\n") == 1
        assert shown.count("epoch 1\n") == 1 and shown.count("epoch 2\n") == 1
        assert shown.count("info repeats") == 2 and shown.count("error repeats") == 2
    get_logger("runnerx_test_repeats_other", rank=0).warning("hello")  # another logger
    run = get_run_logger(None, rank=0)  # another run's logger: its own
    make_logger_current(run)
    logging.getLogger("runnerx.optim.test_repeats").warning("hello")
    assert capsys.readouterr().out.count("WARNING - hello\n") == 2


def test_error_lines_name_where_they_were_logged_as_mmengines_do(tmp_path):
    from runnerx.logging import get_run_logger

    logger = get_run_logger(tmp_path / "run.log", "INFO", rank=0)

    def failing_step():
        logger.error("it broke")

    failing_step()
    logger.info("fine")
    lines = (tmp_path / "run.log").read_text().splitlines()
    assert re.search(
        r"ERROR - \S+test_logging_logger\.py - failing_step - \d+ - it broke$", lines[0]
    )
    assert lines[1].endswith("- runnerx - INFO - fine")


def test_a_runner_dropped_without_a_run_closes_its_log_file(tmp_path):
    import gc
    import warnings

    from runnerx.runner import Runner
    from tests.checkpoint.conftest import TinyNet

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dropped = Runner(model=TinyNet(), work_dir=str(tmp_path / "dropped"))
        handlers = dropped.logger.handlers
        (log_file,) = [h.baseFilename for h in handlers if hasattr(h, "baseFilename")]
        Runner(model=TinyNet(), work_dir=str(tmp_path / "current"))  # the current run now
        del dropped
        gc.collect()
    unclosed = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not [message for message in unclosed if log_file in message]
    assert Path(log_file).read_text()  # what it logged is there


class FullDisk:
    """A log file's stream on a full disk: nothing can be written, flushed or closed."""

    def write(self, *text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    flush = close = write


def test_a_log_file_that_cannot_be_written_says_so_once_in_one_line(tmp_path, capsys):
    logger = get_run_logger(tmp_path / "run.log", rank=0)
    (handler,) = [h for h in logger.handlers if hasattr(h, "baseFilename")]
    handler.stream.close()
    handler.stream = FullDisk()
    logger.info("Config:\nmodel = dict(type='Net')")
    try:
        raise ValueError("the run failed")
    except ValueError:
        logger.exception("train failed:")
    logger_module._close_handlers(logger.handlers)  # the flush on close fails too
    err = capsys.readouterr().err
    assert err == (
        f"runnerx: cannot write the log file {tmp_path / 'run.log'} ([Errno 28] No space left on "
        "device); lines may be missing from it, the console shows them\n"
    )


def test_closing_a_log_file_that_cannot_be_flushed_raises_nothing(tmp_path, capsys):
    logger = get_run_logger(tmp_path / "run.log", rank=0)
    (handler,) = [h for h in logger.handlers if hasattr(h, "baseFilename")]
    handler.stream.close()
    handler.stream = FullDisk()
    logger_module._close_handlers(logger.handlers)
    assert capsys.readouterr().err.count("cannot write the log file") == 1
