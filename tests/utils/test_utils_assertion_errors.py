"""Bad arguments that MMEngine's utils reject with ``assert``: runnerx names the mistake and
raises an error that is also an AssertionError, so ``except AssertionError`` written for
MMEngine still catches it. mmengine-lite is run on the same calls as the oracle."""

import io

import mmengine.utils as mm
import mmengine.utils.dl_utils as mm_dl
import pytest
import torch

import runnerx.utils as rx
import runnerx.utils.dl_utils as rx_dl


def _plain(x, y=0):
    return x + y


def _time_counter_without_warm_up(dl):
    dl.TimeCounter(warmup_interval=0)


def _time_counter_block_without_tag(dl):
    with dl.TimeCounter():
        pass


def _renamed_argument_passed_twice(utils):
    decorated = utils.deprecated_api_warning({"old": "new"}, cls_name="f")(lambda new=None: new)
    decorated(old=1, new=2)


def _manager_without_name_argument(utils):
    class NoName(utils.ManagerMixin):
        def __init__(self, size=1):
            super().__init__("x")


def _manager(utils):
    class Named(utils.ManagerMixin):
        def __init__(self, name="", **kwargs):
            super().__init__(name)

    return Named


# what MMEngine asserts: (the call on a utils package, or None; the call on a dl_utils package)
CASES = {
    "TimeCounter warmup_interval >= 1": (None, _time_counter_without_warm_up),
    "TimeCounter block needs a tag": (None, _time_counter_block_without_tag),
    "is_seq_of seq_type is a type": (lambda u: u.is_seq_of([1], int, seq_type="list"), None),
    "slice_list lens divides the list": (lambda u: u.slice_list([1, 2, 3], 2), None),
    "is_method_overridden base_class is a class": (
        lambda u: u.is_method_overridden("f", object(), object),
        None,
    ),
    "deprecated_api_warning old and new name": (_renamed_argument_passed_twice, None),
    "ProgressBar.update num_tasks > 0": (
        lambda u: u.ProgressBar(3, file=io.StringIO()).update(0),
        None,
    ),
    "track_progress tasks tuple is (iterable, int)": (
        lambda u: u.track_progress(_plain, ([1, 2], "two"), file=io.StringIO()),
        None,
    ),
    "digit_version not parrots": (lambda u: u.digit_version("1.1.0parrots"), None),
    "ManagerMixin __init__ takes name": (_manager_without_name_argument, None),
    "ManagerMixin name is a str": (lambda u: _manager(u)(name=1), None),
    "ManagerMixin name is not empty": (lambda u: _manager(u)(name=""), None),
    "get_instance name is a str": (lambda u: _manager(u).get_instance(1), None),
    "tensor2imgs 4-dim tensor": (None, lambda dl: dl.tensor2imgs(torch.zeros(3, 4, 4))),
    "tensor2imgs 1 or 3 channels": (None, lambda dl: dl.tensor2imgs(torch.zeros(1, 2, 4, 4))),
    "tensor2imgs mean and std per channel": (
        None,
        lambda dl: dl.tensor2imgs(torch.zeros(1, 3, 4, 4), mean=(0, 0), std=(1, 1)),
    ),
    "tensor2imgs to_bgr needs 3 channels": (
        None,
        lambda dl: dl.tensor2imgs(torch.zeros(1, 1, 4, 4), mean=(0,), std=(1,)),
    ),
}


@pytest.fixture(autouse=True)
def _fresh_time_counters(monkeypatch):
    monkeypatch.setattr(rx_dl.TimeCounter, "instance_dict", {})
    monkeypatch.setattr(mm_dl.TimeCounter, "instance_dict", {})


@pytest.mark.parametrize("case", list(CASES))
def test_what_mmengine_asserts_is_an_assertion_error_of_the_specific_type(case):
    on_utils, on_dl_utils = CASES[case]
    call = on_utils or on_dl_utils
    ours, theirs = (rx, mm) if on_utils else (rx_dl, mm_dl)
    with pytest.raises(AssertionError):
        call(theirs)
    with pytest.raises(AssertionError) as caught:
        call(ours)
    assert isinstance(caught.value, (TypeError, ValueError))
    assert str(caught.value)  # says what was wrong (MMEngine's asserts often say nothing)
