"""MMLogger's entry points: the current logger is the running Runner's, get_instance sets one
up with its file, and building MMLogger directly says what to use."""

import pytest

from runnerx.logging import MMLogger, get_run_logger, make_logger_current


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
    assert " - mmlogger_test - INFO - a line" in (tmp_path / "x.log").read_text()


def test_building_mmlogger_directly_names_what_to_use():
    with pytest.raises(TypeError, match=r"MMLogger.get_instance\(name"):
        MMLogger("name")
