"""runnerx.device: every query of mmengine.device, answering as MMEngine does on this machine."""

import mmengine.device as mm
import pytest

import runnerx.device as rx


@pytest.mark.parametrize("name", sorted(mm.__all__))
def test_every_mmengine_device_name_is_importable(name):
    assert name in rx.__all__ and callable(getattr(rx, name))


@pytest.mark.parametrize(
    "name",
    [name for name in sorted(mm.__all__) if name.startswith(("is_", "get_device"))],
)
def test_device_queries_answer_as_mmengine(name):
    assert getattr(rx, name)() == getattr(mm, name)()


def test_musa_memory_query_says_there_is_no_musa_device():
    assert not rx.is_musa_available()
    with pytest.raises(RuntimeError, match="does not run on MUSA"):
        rx.get_max_musa_memory()
