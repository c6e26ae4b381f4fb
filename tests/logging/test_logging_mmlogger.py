"""MMLogger's entry points: the current logger is the running Runner's, get_instance sets one
up with its file, and building MMLogger directly says what to use."""

import logging

import pytest

from runnerx.logging import MMLogger, get_run_logger, make_logger_current, print_log


def test_get_current_instance_is_the_current_run_logger(tmp_path):
    run_logger = get_run_logger(tmp_path / "run.log", "INFO", rank=0)
    make_logger_current(run_logger)
    MMLogger.get_current_instance().info("from code written for MMEngine")
    assert MMLogger.get_current_instance() is run_logger
    assert "from code written for MMEngine" in (tmp_path / "run.log").read_text()


def test_get_instance_sets_up_a_named_logger_with_its_file(tmp_path):
    logger = MMLogger.get_instance("mmlogger_test", log_file=str(tmp_path / "x.log"))
    logger.info("a line")
    assert MMLogger.check_instance_created("mmlogger_test")
    assert not MMLogger.check_instance_created("mmlogger_never_made")
    assert MMLogger.get_current_instance() is logger
    assert logger.instance_name == logger.name == "mmlogger_test"
    assert logging.getLogger("mmlogger_test") is logger  # the standard logger of that name
    assert " - mmlogger_test - INFO - a line" in (tmp_path / "x.log").read_text()


def test_logger_name_names_the_lines_and_the_instance_stays_found_by_its_name(tmp_path):
    mm_logging = pytest.importorskip("mmengine.logging")
    logger = MMLogger.get_instance(
        "mmlogger_instance", logger_name="mmlogger_lines", log_file=str(tmp_path / "x.log")
    )
    theirs = mm_logging.MMLogger.get_instance("mmlogger_instance", logger_name="mmlogger_lines")
    assert (logger.name, logger.instance_name) == (theirs.name, theirs.instance_name)
    assert MMLogger.get_instance("mmlogger_instance") is logger
    assert MMLogger.check_instance_created("mmlogger_instance")
    assert logging.getLogger("mmlogger_lines") is not logger  # a logger of its own
    print_log("found by its instance name", logger="mmlogger_instance")
    assert (
        " - mmlogger_lines - INFO - found by its instance name" in (tmp_path / "x.log").read_text()
    )
    with pytest.warns(UserWarning, match="ignores logger_name='other'"):
        assert MMLogger.get_instance("mmlogger_instance", logger_name="other") is logger
    assert logger.name == "mmlogger_lines"


def test_building_mmlogger_directly_names_what_to_use():
    with pytest.raises(TypeError, match=r"MMLogger.get_instance\(name"):
        MMLogger("name")


def test_get_instance_refuses_an_unknown_keyword_naming_a_close_one(tmp_path):
    with pytest.raises(TypeError, match=r"\['log_fle'\].*did you mean 'log_file'"):
        MMLogger.get_instance("mmlogger_misspelt", log_fle=str(tmp_path / "x.log"))
    assert not (tmp_path / "x.log").exists()


def test_file_handler_cfg_writes_with_that_handler_as_mmengines(tmp_path):
    path = tmp_path / "rotating.log"
    cfg = dict(type="RotatingFileHandler", maxBytes=300, backupCount=2)
    logger = MMLogger.get_instance("mmlogger_rotating", log_file=str(path), file_handler_cfg=cfg)
    for index in range(12):
        logger.info(f"line {index}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "rotating.log",
        "rotating.log.1",
        "rotating.log.2",
    ]
    assert "INFO - line 11" in path.read_text()  # the plain layout, as in the default file
    assert cfg == dict(type="RotatingFileHandler", maxBytes=300, backupCount=2)  # not changed
    same = MMLogger.get_instance("mmlogger_rotating", log_file=str(path), file_handler_cfg=cfg)
    assert len(same.handlers) == 2  # the console and the one file handler
    for _ in range(2):
        same.warning("repeated")  # shown once, in this handler's file too
    assert "WARNING - repeated" in path.read_text()
    assert sum(p.read_text().count("repeated") for p in tmp_path.iterdir()) == 1
    with pytest.raises(ValueError, match="did you mean 'RotatingFileHandler'") as caught:
        MMLogger.get_instance(
            "mmlogger_bad_handler",
            log_file=str(tmp_path / "b.log"),
            file_handler_cfg=dict(type="RotatingFileHandlr"),
        )
    assert isinstance(caught.value, AssertionError)  # MMEngine asserts on a missing type
