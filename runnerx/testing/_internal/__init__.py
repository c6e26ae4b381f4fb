"""Test helpers that MMEngine keeps in ``mmengine.testing._internal``: MultiProcessTestCase,
whose test methods run in ``world_size`` processes."""

from .distributed import TEST_SKIPS, MultiProcessTestCase, TestSkip

__all__ = ["TEST_SKIPS", "MultiProcessTestCase", "TestSkip"]
