"""Shared fixtures for the config tests: the folder of example config trees."""

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data() -> Path:
    """The folder of config trees the tests read."""
    return DATA
