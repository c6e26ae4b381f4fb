"""Fixtures for the Runner tests."""

from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.fixture
def digits_cfg(tmp_path):
    """The digits example config, with its work dir in tmp_path."""
    from runnerx import Config

    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path / "work")
    return cfg
