"""Fixtures of the parallel tests."""

import logging

import pytest

from runnerx.logging import logger as logger_module


@pytest.fixture
def current_log(monkeypatch, logged_warnings):
    """The WARNINGs logged through the current logger (``print_log(logger='current')``, where
    a run's notes go to its log file) while the test runs: a logger of the test's own is
    made current."""
    name = "parallel_current_log"
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger(name))
    return logged_warnings(name)
