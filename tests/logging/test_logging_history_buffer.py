"""HistoryBuffer: statistics, bounded memory, exact global statistics, no sync on update."""

import math
import tracemalloc

import numpy as np
import pytest
import torch

from runnerx.logging import HistoryBuffer


class CountingTensor(torch.Tensor):
    """A tensor that counts the calls that would copy it to the host (a sync on CUDA); it
    stands for a tensor on an accelerator (CPU tensors are read one ``item()`` each)."""

    conversions: list[str] = []

    @property
    def is_cpu(self) -> bool:
        return False

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("item", "tolist", "__float__", "__int__", "cpu", "numpy"):
            cls.conversions.append(name)
        return super().__torch_function__(func, types, args, kwargs or {})


def counting(value: float) -> CountingTensor:
    return torch.tensor(value).as_subclass(CountingTensor)


@pytest.fixture(autouse=True)
def _reset_conversions():
    CountingTensor.conversions = []


def test_window_and_global_mean_use_counts_like_mmengine():
    buffer = HistoryBuffer()
    buffer.update(1.0)
    buffer.update(6.0, count=2)  # a value counts for `count` observations: (1 + 6) / 3
    buffer.update(3.0)
    assert buffer.mean() == pytest.approx(10 / 4)
    assert buffer.mean(2) == pytest.approx(9 / 3)
    assert buffer.mean(1) == 3.0
    assert buffer.mean(window_size=2) == pytest.approx(3.0)  # MMEngine's keyword
    assert buffer.mean(100) == pytest.approx(10 / 4)


def test_min_max_current_with_a_mix_of_floats_and_tensors():
    buffer = HistoryBuffer()
    for value in (3.0, torch.tensor(-1.5), 7, torch.tensor(2, dtype=torch.int64), 0.5):
        buffer.update(value)
    buffer.update(torch.tensor([4.0], dtype=torch.bfloat16))  # one element of any shape
    assert buffer.current() == 4.0
    assert isinstance(buffer.current(), float)
    assert (buffer.min(), buffer.max()) == (-1.5, 7.0)
    assert (buffer.min(3), buffer.max(3)) == (0.5, 4.0)
    assert buffer.count == 6
    assert buffer.mean() == pytest.approx((3 - 1.5 + 7 + 2 + 0.5 + 4) / 6)
    assert buffer.statistics("max", 2) == 4.0
    assert buffer.statistics("current") == 4.0


def test_memory_is_bounded_and_global_statistics_stay_exact():
    buffer = HistoryBuffer(max_length=100)
    values = [math.sin(i) * 10 for i in range(5000)]
    values[3] = -50.0  # extremes that leave the buffer long before the end
    values[7] = 60.0
    for value in values:
        buffer.update(value)
        assert len(buffer) <= 100
    assert len(buffer) == 100
    assert buffer.count == 5000
    assert buffer.mean() == pytest.approx(sum(values) / 5000, rel=1e-12)
    assert (buffer.min(), buffer.max()) == (-50.0, 60.0)
    assert buffer.mean(10) == pytest.approx(sum(values[-10:]) / 10)
    # a window longer than what is kept but shorter than the history: the kept values
    assert buffer.mean(1000) == pytest.approx(sum(values[-100:]) / 100)


def test_tensors_about_to_be_dropped_unread_are_materialised_first():
    buffer = HistoryBuffer(max_length=8)
    values = [float(i % 13) for i in range(300)]
    for value in values:
        buffer.update(torch.tensor(value))
    assert buffer.mean() == pytest.approx(sum(values) / 300)
    assert buffer.max() == 12.0


def test_update_never_converts_a_tensor_and_a_read_converts_once():
    buffer = HistoryBuffer()
    for step in range(50):
        buffer.update(counting(float(step)))
    assert CountingTensor.conversions == []
    assert buffer.mean(10) == pytest.approx(sum(range(40, 50)) / 10)
    assert CountingTensor.conversions == ["tolist"]  # all 50 pending values in one transfer
    buffer.current(), buffer.max(), buffer.count
    assert CountingTensor.conversions == ["tolist"]


def test_per_update_work_does_not_grow_with_the_history():
    buffer = HistoryBuffer(max_length=100_000)  # keeps everything: nothing is ever dropped

    def allocations_of(updates: int) -> tuple[int, int]:
        """(bytes still held, peak bytes) allocated by ``updates`` updates."""
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        for step in range(updates):
            buffer.update(float(step))
        current, peak = tracemalloc.get_traced_memory()
        return current - before, peak - before

    tracemalloc.start()
    try:
        early_held, early_peak = allocations_of(2_048)
        for step in range(36_000):
            buffer.update(float(step))
        late_held, late_peak = allocations_of(2_048)
    finally:
        tracemalloc.stop()
    assert buffer.count == 40_096
    # copying the history on an update (as MMEngine does) would peak at >= 8 bytes * 38,000
    assert late_peak <= early_peak + 8_192
    assert late_held <= early_held + 8_192


def test_state_dict_is_plain_numbers_and_round_trips():
    buffer = HistoryBuffer(max_length=5)
    for step in range(12):
        buffer.update(torch.tensor(float(step)), count=1 + step % 2)
    state = buffer.state_dict()
    assert all(type(value) is float for value in state["values"])
    restored = HistoryBuffer.from_state_dict(state)
    assert restored.mean() == buffer.mean()
    assert restored.mean(3) == buffer.mean(3)
    assert (restored.min(), restored.max(), restored.count) == (0.0, 11.0, 12)
    restored.update(100.0)
    assert restored.current() == 100.0 and restored.count == 13


@pytest.mark.parametrize(
    ("value", "error"),
    [("1.0", TypeError), (None, TypeError), (torch.ones(3), (ValueError, TypeError))],
)
def test_bad_values_are_refused(value, error):
    # a tensor of several values is a ValueError and MMEngine's TypeError both
    for expected in error if isinstance(error, tuple) else (error,):
        with pytest.raises(expected):
            HistoryBuffer().update(value)


def test_reading_an_empty_buffer_or_a_bad_window_says_so():
    with pytest.raises(ValueError, match="no values yet"):
        HistoryBuffer().mean()
    buffer = HistoryBuffer()
    buffer.update(1.0)
    with pytest.raises(ValueError, match="positive int"):
        buffer.mean(0)
    with pytest.raises(KeyError, match="method_name"):  # MMEngine's exception type
        buffer.statistics("median")


def test_appended_values_count_like_updates_and_keep_their_order():
    appended, updated = HistoryBuffer(max_length=6), HistoryBuffer(max_length=6)
    append = appended.appender()
    values = [3.0, torch.tensor(-1.0), 7.0, torch.tensor(2.5), 0.5, 4.0, torch.tensor(1.0)]
    for value in values:
        append(value)
        updated.update(value)
    assert len(appended) == 6 and appended.count == 7  # seen before anything is read
    appended.update(9.0, count=2)  # after the appended values, whatever their number
    updated.update(9.0, count=2)
    for read in ("current", "mean", "min", "max"):
        assert getattr(appended, read)() == getattr(updated, read)()
    assert appended.mean(3) == updated.mean(3) == pytest.approx((4.0 + 1.0 + 9.0) / 4)
    assert appended.state_dict() == updated.state_dict()


def test_appending_converts_nothing_and_one_read_converts_every_buffer_at_once():
    from runnerx.logging.history_buffer import fold_buffers

    loss, loss_cls, time = HistoryBuffer(), HistoryBuffer(), HistoryBuffer()
    for step in range(20):
        loss.appender()(counting(float(step)))
        loss_cls.appender()(counting(step / 2))
        time.appender()(0.25)
    assert CountingTensor.conversions == []
    fold_buffers([loss, loss_cls, time])
    assert CountingTensor.conversions == ["tolist"]  # two buffers' tensors, one transfer
    assert loss.mean(4) == pytest.approx((16 + 17 + 18 + 19) / 4)
    assert loss_cls.max() == 9.5 and time.mean() == 0.25
    assert CountingTensor.conversions == ["tolist"]
    assert type(loss.current()) is float


def test_limit_unread_folds_only_what_piled_up():
    buffer = HistoryBuffer(max_length=8)
    append = buffer.appender()
    for step in range(7):
        append(counting(float(step)))
    buffer.limit_unread()  # 7 unread of at most 8: nothing to do, nothing converted
    assert CountingTensor.conversions == []
    for step in range(7, 300):
        append(counting(float(step)))
    buffer.limit_unread()  # far more than the buffer keeps: counted before they are dropped
    assert CountingTensor.conversions == ["tolist"]
    assert len(buffer) == 8 and buffer.count == 300
    assert buffer.mean() == pytest.approx(sum(range(300)) / 300)
    assert (buffer.min(), buffer.max()) == (0.0, 299.0)


def test_load_state_dict_in_place_keeps_the_appenders_recording_into_it():
    saved = HistoryBuffer()
    for value in (1.0, 2.0, 3.0):
        saved.update(value)
    buffer = HistoryBuffer()
    append = buffer.appender()
    append(100.0)  # recorded before the load: replaced by what was saved
    buffer.load_state_dict(saved.state_dict())
    append(4.0)
    assert buffer.count == 4 and buffer.mean() == 2.5 and buffer.current() == 4.0


def test_mmengines_constructor_data_and_registered_statistics(monkeypatch):
    # MMEngine's logging design page: HistoryBuffer(log_history, count_history, max_length)
    mm_logging = pytest.importorskip("mmengine.logging")
    ours = HistoryBuffer([1, 2, 3, 4], [1, 1, 2, 1], max_length=10)
    theirs = mm_logging.HistoryBuffer([1, 2, 3, 4], [1, 1, 2, 1], max_length=10)
    for got, expected in zip(ours.data, theirs.data, strict=True):
        assert np.array_equal(got, expected)
    assert ours.mean() == pytest.approx(theirs.mean())
    assert ours.statistics("mean", 2) == pytest.approx(theirs.statistics("mean", 2))
    # registered for this test only
    monkeypatch.setattr(HistoryBuffer, "_custom_statistics", {})

    @HistoryBuffer.register_statistics
    def weighted_sum(self, window_size=None):
        values, counts = self.data
        return float((values * counts)[-(window_size or len(values)) :].sum())

    assert ours.statistics("weighted_sum", 2) == 3 * 2 + 4 * 1
    with pytest.raises(KeyError, match="weighted_sum"):  # MMEngine's exception type
        ours.statistics("median")


def test_float_counts_are_mmengines_and_survive_a_weights_only_checkpoint(tmp_path):
    mm_logging = pytest.importorskip("mmengine.logging")
    ours, theirs = HistoryBuffer(), mm_logging.HistoryBuffer()
    for value, count in ((3.0, 1.5), (4.0, 2.0), (1.0, 0.5)):  # counts as floats: MMEngine's
        ours.update(value, count)
        theirs.update(value, count)
    ours.update(2.0, np.int64(2))
    theirs.update(2.0, 2)
    for got, expected in zip(ours.data, theirs.data, strict=True):
        assert np.array_equal(got, expected)
    assert ours.mean() == theirs.mean() and ours.mean(2) == theirs.mean(2)
    torch.save(ours.state_dict(), tmp_path / "buffer.pth")  # counts stay plain numbers
    loaded = HistoryBuffer.from_state_dict(torch.load(tmp_path / "buffer.pth", weights_only=True))
    assert loaded.mean() == ours.mean()
    with pytest.raises(TypeError, match="count must be a number"):
        ours.update(1.0, count="2")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (7, 7),
        (True, True),
        (np.int64(2), 2),
        (np.bool_(False), False),
        (torch.tensor(5), 5),
        (torch.tensor(True), True),
        (2.5, 2.5),
        (torch.tensor(2.5), 2.5),
    ],
    ids=["int", "bool", "np-int", "np-bool", "int-tensor", "bool-tensor", "float", "tensor"],
)
def test_current_as_recorded_keeps_ints_and_bools(value, shown):
    buffer = HistoryBuffer()
    buffer.update(1.5)
    buffer.update(value)
    got = buffer.current_as_recorded()
    assert got == shown and type(got) is type(shown)
    assert type(buffer.current()) is float  # every other read stays a float


def test_current_as_recorded_is_a_float_once_a_newer_value_is():
    buffer = HistoryBuffer()
    buffer.update(7)
    assert type(buffer.current_as_recorded()) is int
    buffer.appender()(8.0)  # appended after the int, read later
    assert type(buffer.current_as_recorded()) is float
    buffer.update(9)
    buffer.appender()(10.0)  # appended before anything was read
    assert buffer.current_as_recorded() == 10.0
    assert type(buffer.current_as_recorded()) is float
    buffer.update(11)
    buffer.load_state_dict(buffer.state_dict())  # the state holds floats only
    assert type(buffer.current_as_recorded()) is float


def test_update_takes_mmengines_keyword():
    buffer = HistoryBuffer()
    buffer.update(log_val=3.0, count=2)
    buffer.update(log_val=torch.tensor(5.0))
    assert buffer.current() == 5.0 and buffer.mean() == pytest.approx(8.0 / 3)


def test_histories_of_different_lengths_are_refused_naming_both():
    with pytest.raises(
        ValueError, match="log_history has 3 values but count_history 2 counts"
    ) as bad:
        HistoryBuffer([1, 2, 3], [1, 1])
    assert isinstance(bad.value, AssertionError)  # what MMEngine raises


@pytest.mark.parametrize("kind", [np.array, list, torch.tensor])
def test_a_nested_history_is_read_row_by_row_as_mmengine_flattens_it(kind):
    mm_logging = pytest.importorskip("mmengine.logging")
    values, counts = [[4.0, 1.0, 2.0, 8.0]], [[1, 2, 1, 3]]
    buffer = HistoryBuffer(kind(values), kind(counts), max_length=4)
    theirs = mm_logging.HistoryBuffer(np.array(values), np.array(counts), max_length=4)
    for each in (buffer, theirs):
        each.update(5.0)  # MMEngine's buffer flattens its history here
    assert [a.tolist() for a in buffer.data] == [a.tolist() for a in theirs.data]
    assert buffer.data[0].tolist() == [1.0, 2.0, 8.0, 5.0]
    assert buffer.mean() == pytest.approx(20.0 / 8) and buffer.min() == 1.0


def test_a_one_element_numpy_array_is_taken_as_mmengine_takes_it():
    # a metric returning np.array([0.75]): NumPy 2 refuses float() of it, MMEngine uses .item()
    buffer = HistoryBuffer()
    buffer.update(np.array([0.75]))
    buffer.update(np.array([[0.25]]))
    assert buffer.current() == 0.25 and buffer.mean() == 0.5
    with pytest.raises(TypeError):
        buffer.update(np.array([0.5, 0.5]))
