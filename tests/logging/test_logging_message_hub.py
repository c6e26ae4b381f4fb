"""MessageHub: named instances, scalars, runtime info, state_dict round trip."""

import json
import logging

import pytest
import torch

from runnerx.logging import MessageHub


def test_get_instance_creates_once_and_makes_current():
    first = MessageHub.get_instance("hub_test_a")
    second = MessageHub.get_instance("hub_test_b")
    assert MessageHub.get_current_instance() is second
    assert MessageHub.get_instance("hub_test_a") is first
    assert MessageHub.get_current_instance() is first
    assert first.instance_name == "hub_test_a"


def test_current_instance_defaults_to_a_runnerx_hub(monkeypatch):
    monkeypatch.setattr(MessageHub, "_instances", {})
    monkeypatch.setattr(MessageHub, "_current", None)
    hub = MessageHub.get_current_instance()
    assert hub.instance_name == "runnerx"
    assert MessageHub.get_current_instance() is hub


def test_scalars_keep_tensors_until_read():
    hub = MessageHub("scalars")
    hub.update_scalar("train/loss", torch.tensor(2.0))
    hub.update_scalars({"train/loss": torch.tensor(4.0), "train/acc": {"value": 3.0, "count": 2}})
    assert hub.get_scalar("train/loss").mean() == 3.0
    assert hub.get_scalar("train/acc").mean() == 1.5
    assert list(hub.log_scalars) == ["train/loss", "train/acc"]


def test_missing_scalar_error_names_the_key_a_close_match_and_the_known_keys():
    hub = MessageHub("missing")
    hub.update_scalar("train/loss", 1.0)
    hub.update_scalar("train/lr", 0.1)
    with pytest.raises(KeyError) as error:
        hub.get_scalar("train/los")
    message = str(error.value)
    assert "'train/los'" in message and "Did you mean 'train/loss'" in message
    assert "['train/loss', 'train/lr']" in message


def test_a_bad_value_names_its_key_and_leaves_no_empty_buffer():
    hub = MessageHub("bad")
    with pytest.raises(TypeError, match="'train/name'"):
        hub.update_scalar("train/name", "resnet")
    assert "train/name" not in hub.log_scalars


def test_runtime_info():
    hub = MessageHub("info")
    hub.update_info("epoch", 3)
    hub.update_info_dict({"iter": 30, "max_iters": 100})
    assert (hub.get_info("epoch"), hub.get_info("iter"), hub.get_info("max_iters")) == (3, 30, 100)
    assert hub.get_info("missing") is None
    assert hub.get_info("missing", default=7) == 7
    assert hub.pop_info("iter") == 30 and "iter" not in hub.runtime_info


@pytest.mark.parametrize("update", ["update_scalar", "update_info"])
@pytest.mark.parametrize("first", [False, True])
def test_a_key_keeps_the_resumed_flag_it_was_first_given(update, first):
    hub = MessageHub(f"resumed_flag_{update}_{first}")
    getattr(hub, update)("k", 1, resumed=first)
    getattr(hub, update)("k", 2, resumed=first)  # the same flag again is fine
    message = f"'k' was recorded with resumed={first}, so it cannot be updated with resumed="
    with pytest.raises(ValueError, match=message) as raised:
        getattr(hub, update)("k", 3, resumed=not first)
    assert isinstance(raised.value, AssertionError)  # what MMEngine raises
    assert hub.state_dict()["resumed_keys"]["k"] is first  # the flag stays what it was
    other = "update_info" if update == "update_scalar" else "update_scalar"
    with pytest.raises(ValueError, match=message):  # one flag per key, scalar or info
        getattr(hub, other)("k", 4, resumed=not first)


def test_state_dict_round_trip_through_a_weights_only_checkpoint(tmp_path):
    hub = MessageHub("saved", max_length=20)
    for step in range(50):
        hub.update_scalar("train/loss", torch.tensor(float(step)))
        hub.update_scalar("train/time", 0.5, resumed=False)
    hub.update_info("epoch", 2)
    hub.update_info("eta", 10.0, resumed=False)
    state = hub.state_dict()
    json.dumps(state)  # plain numbers, lists and dicts only
    assert set(state["log_scalars"]) == {"train/loss"}
    assert state["runtime_info"] == {"epoch": 2}

    torch.save(state, tmp_path / "hub.pth")
    loaded = torch.load(tmp_path / "hub.pth", weights_only=True)
    resumed = MessageHub("resumed")
    resumed.load_state_dict(loaded)
    loss = resumed.get_scalar("train/loss")
    assert loss.mean(10) == pytest.approx(sum(range(40, 50)) / 10)
    assert loss.mean() == pytest.approx(sum(range(50)) / 50)
    assert loss.count == 50
    assert resumed.get_info("epoch") == 2
    resumed.update_scalar("train/loss", 100.0)
    assert loss.current() == 100.0


def test_loads_the_message_hub_of_an_mmengine_checkpoint():
    mmengine_logging = pytest.importorskip("mmengine.logging")
    theirs = mmengine_logging.MessageHub("mmengine_source")
    for value in (1.0, 2.0, 6.0):
        theirs.update_scalar("train/loss", value)
    theirs.update_info("epoch", 4)
    ours = MessageHub("from_mmengine")
    ours.load_state_dict(theirs.state_dict())
    assert ours.get_scalar("train/loss").mean(2) == theirs.get_scalar("train/loss").mean(2)
    assert ours.get_scalar("train/loss").mean() == pytest.approx(3.0)
    assert ours.get_info("epoch") == 4


def test_a_key_keeps_its_buffer_object_through_load_state_dict():
    from runnerx.logging import ScalarRecorder

    source = MessageHub("hub_source")
    for value in (1.0, 2.0, 3.0):
        source.update_scalar("train/time", value)
    hub = MessageHub("hub_target")
    recorder = ScalarRecorder(hub)
    append = recorder.appender("train/time")
    assert hub.scalar_buffer("train/time") is hub.log_scalars["train/time"]
    buffer = hub.get_scalar("train/time")
    hub.load_state_dict(source.state_dict())  # a resume
    assert hub.get_scalar("train/time") is buffer
    append(6.0)
    assert buffer.count == 4 and buffer.mean() == 3.0


def test_a_bad_value_leaves_a_buffer_that_existed_before():
    hub = MessageHub("bad_after_scalar_buffer")
    buffer = hub.scalar_buffer("train/loss")  # empty: an appender will fill it
    with pytest.raises(TypeError, match="'train/loss'"):
        hub.update_scalar("train/loss", "nan")
    assert hub.log_scalars["train/loss"] is buffer


def test_scalar_recorder_appends_to_a_message_hub_and_calls_update_scalar_on_others():
    from runnerx.logging import ScalarRecorder

    hub = MessageHub("recorder")
    recorder = ScalarRecorder(hub)
    append = recorder.appender("train/loss")
    for step in range(1500):  # nobody reads: limit_unread keeps the unread values bounded
        append(torch.tensor(float(step)))
        if step % 256 == 255:
            recorder.limit_unread()
    buffer = hub.get_scalar("train/loss")
    assert buffer._unread + len(buffer._pending) < 1024 + 256
    assert buffer.count == 1500 and buffer.mean() == pytest.approx(1499 / 2)

    class DuckHub:  # e.g. a test double with update_scalar only
        def __init__(self):
            self.updates = []

        def update_scalar(self, key, value):
            self.updates.append((key, value))

    duck = DuckHub()
    ScalarRecorder(duck).appender("train/time")(0.5)
    assert duck.updates == [("train/time", 0.5)]


def test_mmengines_constructor_arguments_start_a_hub_with_scalars_and_info():
    from runnerx.logging import HistoryBuffer

    loss = HistoryBuffer([3.0, 1.0], [1, 1])
    hub = MessageHub.get_instance(
        "hub_from_arguments",
        log_scalars={"train/loss": loss},
        runtime_info={"epoch": 2, "eta": 5.0},
        resumed_keys={"train/loss": True, "eta": False},
    )
    assert hub.get_scalar("train/loss") is loss and loss.mean() == 2.0
    assert hub.get_info("epoch") == 2
    state = hub.state_dict()
    assert set(state["log_scalars"]) == {"train/loss"}
    assert state["runtime_info"] == {"epoch": 2}  # 'eta' was not to be resumed
    with pytest.raises(
        TypeError, match=r"log_scalars\['a'\] must be a HistoryBuffer, got int"
    ) as bad:
        MessageHub("bad_scalars", log_scalars={"a": 1})
    assert isinstance(bad.value, AssertionError)  # what MMEngine raises
    with pytest.raises(ValueError, match="resumed_keys names 'iters'") as bad:
        MessageHub("bad_keys", runtime_info={"iter": 1}, resumed_keys={"iters": False})
    assert isinstance(bad.value, AssertionError)


@pytest.mark.parametrize(
    ("log_dict", "error", "message"),
    [
        ({"train/a": []}, TypeError, "'train/a'.*got list"),
        ({"train/b": torch.ones(3)}, ValueError, "'train/b'.*one value"),
        ({"train/c": {"count": 1}}, KeyError, "'train/c' is a dict without a 'value' entry"),
        ([("train/d", 1.0)], TypeError, "log_dict must be a dict, got list"),
    ],
)
def test_bad_scalars_are_also_mmengines_assertion_errors(log_dict, error, message):
    hub = MessageHub("bad_update_scalars")
    with pytest.raises(error, match=message) as bad:
        hub.update_scalars(log_dict)
    assert isinstance(bad.value, AssertionError)  # MMEngine asserts on each of them
    assert hub.log_scalars == {}


class _Uncopyable:
    def __deepcopy__(self, memo):
        raise RuntimeError("holds a lock")


@pytest.fixture
def hub_warnings(monkeypatch):
    """The messages message_hub.py logs (caplog misses them once a Runner's logger has
    taken over the 'runnerx' logger, which does not propagate)."""
    logger = logging.getLogger("runnerx.logging.message_hub")
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger.addHandler(handler)
    monkeypatch.setattr(logger, "level", logging.WARNING)
    yield records
    logger.removeHandler(handler)


def test_runtime_info_that_cannot_be_copied_is_saved_and_loaded_as_it_is(hub_warnings):
    handle, epoch = _Uncopyable(), [3]
    hub = MessageHub("uncopyable_info")
    hub.update_info("handle", handle)
    hub.update_info("epoch", epoch)
    state = hub.state_dict()
    assert state["runtime_info"]["handle"] is handle  # MMEngine: a reference, not a failure
    assert state["runtime_info"]["epoch"] == epoch and state["runtime_info"]["epoch"] is not epoch
    assert ["'handle' cannot be copied" in r.getMessage() for r in hub_warnings] == [True]
    resumed = MessageHub("uncopyable_info_resumed")
    resumed.load_state_dict(state)
    assert resumed.get_info("handle") is handle


def test_loading_skips_a_saved_scalar_that_is_no_buffer(hub_warnings):
    saved = MessageHub("source_of_b")
    saved.update_scalar("b", 2.0)
    state = saved.state_dict()
    state["log_scalars"]["a"] = 1  # what an old MMEngine checkpoint may hold
    hub = MessageHub("skips_bad_scalar")
    hub.load_state_dict(state)
    assert "a" not in hub.log_scalars and hub.get_scalar("b").current() == 2.0
    assert ["'a' is not a scalar buffer" in r.getMessage() for r in hub_warnings] == [True]
