"""load and dump against mmengine-lite's (same calls, same files, strings and objects), plus
what runnerx adds: safe pickles and YAML unless unsafe_load=True, atomic dumps, clear errors,
http(s) reads, and annotation files read through the same load."""

import collections
import io
import json
import os
import pickle
from pathlib import Path

import mmengine.fileio as theirs
import numpy as np
import pytest

import runnerx.fileio as ours
from runnerx.data import BaseDataset
from runnerx.fileio import UnsafePickleError, dump, file_handlers, load

DATA = dict(
    name="cat",
    ids=[1, 2, 3],
    nested=dict(score=0.5, ok=True, none=None),
    empty=[],
    text="ünïcode",
)
FORMATS = ["json", "yaml", "yml", "pkl", "pickle"]


@pytest.mark.parametrize("suffix", FORMATS)
def test_dump_writes_the_file_mmengine_writes_and_both_load_it(tmp_path, suffix):
    mine, theirs_path = tmp_path / f"ours/a.{suffix}", tmp_path / f"theirs.{suffix}"
    assert dump(DATA, mine) is None  # a Path, into a folder that does not exist yet
    theirs.dump(DATA, str(theirs_path))
    assert mine.read_bytes() == theirs_path.read_bytes()
    assert load(str(theirs_path)) == theirs.load(str(mine)) == load(mine) == DATA


@pytest.mark.parametrize("file_format", FORMATS)
def test_dump_without_a_file_returns_what_mmengine_returns(file_format):
    text = dump(DATA, file_format=file_format, **({"indent": 2} if file_format == "json" else {}))
    expected = theirs.dump(
        DATA, file_format=file_format, **({"indent": 2} if file_format == "json" else {})
    )
    assert text == expected
    assert isinstance(text, bytes if file_format in ("pkl", "pickle") else str)


@pytest.mark.parametrize("file_format", ["json", "yaml", "pickle"])
def test_open_files_and_file_format_over_the_suffix(tmp_path, file_format):
    binary = file_format == "pickle"
    buffer = io.BytesIO() if binary else io.StringIO()
    dump(DATA, buffer, file_format=file_format)
    buffer.seek(0)
    assert load(buffer, file_format=file_format) == DATA
    assert buffer.getvalue() == theirs.dump(DATA, file_format=file_format)

    odd_name = tmp_path / "data.txt"  # the suffix says nothing; file_format decides
    dump(DATA, odd_name, file_format=file_format)
    assert load(odd_name, file_format=file_format) == theirs.load(str(odd_name), file_format)


def test_values_json_lacks_are_converted_as_mmengine_converts_them():
    obj = dict(s={3}, r=range(2), a=np.arange(4).reshape(2, 2), f=np.float32(0.5), i=np.int64(7))
    assert dump(obj, file_format="json") == theirs.dump(obj, file_format="json")
    with pytest.raises(TypeError, match="object cannot be written as JSON"):
        dump(dict(x=object()), file_format="json")


def test_plain_data_pickles_round_trip_like_mmengine(tmp_path):
    obj = dict(
        array=np.arange(6.0).reshape(2, 3),
        ints=np.array([1, 2], dtype=np.int16),
        scalar=np.float64(2.5),
        raw=b"\x00bytes",
        values=(1, 2.0, 3j, None, {1, 2}, frozenset("ab")),
        ordered=collections.OrderedDict(b=1, a=2),
        counts=collections.defaultdict(list, x=[1]),
    )
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        path = tmp_path / f"p{protocol}.pkl"
        theirs.dump(obj, str(path), protocol=protocol)
        mine, expected = load(path), theirs.load(str(path))
        assert mine.keys() == expected.keys()
        for key, value in expected.items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(mine[key], value)
                assert mine[key].dtype == value.dtype
            else:
                assert mine[key] == value and type(mine[key]) is type(value)


class RunsCode:
    """Unpickling this calls eval on code that creates a marker file (what a malicious pickle
    could run)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return eval, (f"open({self.marker!r}, 'w').close() or 'ran'",)


def test_a_malicious_pickle_is_refused_without_running_unless_unsafe_load(tmp_path):
    marker, path = tmp_path / "marker", tmp_path / "evil.pkl"
    dump(dict(payload=[RunsCode(marker)]), path)
    for source in (path, str(path)):
        with pytest.raises(UnsafePickleError, match=r"builtins\.eval") as caught:
            load(source)
        assert not marker.exists()
    message = str(caught.value)
    assert str(path) in message and "Nothing in it was run" in message
    assert "unsafe_load=True" in message and caught.value.name == "builtins.eval"
    with open(path, "rb") as file, pytest.raises(UnsafePickleError):
        load(file, file_format="pickle")
    assert not marker.exists()

    assert load(path, unsafe_load=True) == dict(payload=["ran"])  # MMEngine's behaviour
    assert marker.exists()


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_cpu_tensors_load_safely_as_dump_results_writes_them(tmp_path, protocol):
    import torch

    batch = torch.arange(6.0).reshape(2, 3)
    results = [dict(pred_score=batch[1], gt_label=torch.tensor(3), half=batch.bfloat16()[0])]
    path = tmp_path / "preds.pkl"
    path.write_bytes(pickle.dumps(results, protocol=protocol))
    (loaded,) = load(path)
    for key, value in results[0].items():
        assert torch.equal(loaded[key], value) and loaded[key].dtype == value.dtype


class StorageRunsCode:
    """Pickles as a tensor storage whose bytes hold a pickle that runs code."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import torch

        buffer = io.BytesIO()
        torch.save(RunsCode(self.marker), buffer)
        return torch.storage._load_from_bytes, (buffer.getvalue(),)


def test_a_tensor_storage_that_would_run_code_is_refused(tmp_path):
    marker, path = tmp_path / "marker", tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps([StorageRunsCode(marker)], protocol=2))
    with pytest.raises(pickle.UnpicklingError):
        load(path)
    assert not marker.exists()


def test_a_malicious_yaml_is_refused_without_running_unless_unsafe_load(tmp_path):
    marker, path = tmp_path / "marker", tmp_path / "evil.yaml"
    path.write_text(f"x: !!python/object/apply:os.mkdir [{str(marker)!r}]\n")
    with pytest.raises(ValueError, match=r"refused to load .*evil\.yaml.*os\.mkdir") as caught:
        load(path)
    assert not marker.exists() and "unsafe_load=True" in str(caught.value)
    load(path, unsafe_load=True)
    assert marker.exists()


def test_yaml_tuples_round_trip_as_in_mmengine(tmp_path):
    obj = dict(size=(224, 224), steps=[(1, "a")])
    dump(obj, tmp_path / "a.yaml")
    assert load(tmp_path / "a.yaml") == theirs.load(str(tmp_path / "a.yaml")) == obj


def test_a_failed_dump_leaves_the_old_file_as_it_was(tmp_path):
    path = tmp_path / "results.json"
    dump(DATA, path)
    before = path.read_bytes()
    # json.dump writes the first chunks before it meets the object it cannot write
    broken = dict(rows=[dict(i=i) for i in range(1000)], last=object())
    with pytest.raises(TypeError):
        dump(broken, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["results.json"]  # no temporary file left

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("cannot pickle")

    dump(DATA, tmp_path / "state.pkl")
    with pytest.raises(RuntimeError, match="cannot pickle"):
        dump([list(range(1000)), Unpicklable()], tmp_path / "state.pkl")
    assert load(tmp_path / "state.pkl") == DATA


def test_errors_say_what_was_wrong_with_mmengine_error_types(tmp_path):
    (tmp_path / "a.txt").write_text("{}")
    for call in (
        lambda lib: lib.load(str(tmp_path / "a.txt")),
        lambda lib: lib.dump(DATA, str(tmp_path / "b.txt")),
        lambda lib: lib.load(io.StringIO("{}")),
        lambda lib: lib.dump(DATA, io.StringIO()),
        lambda lib: lib.dump(DATA, 3),
        lambda lib: lib.load(3, file_format="json"),
    ):
        with pytest.raises(TypeError):
            call(theirs)
        with pytest.raises(TypeError, match="unsupported format 'txt'|file_format=|not 3"):
            call(ours)
    with pytest.raises(ValueError, match="file_format must be given"):
        dump(DATA)
    with pytest.raises(ValueError):
        theirs.dump(DATA)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        load(tmp_path / "missing.json")

    (tmp_path / "bad.json").write_text('{"a": 1,\n "b": }')
    with pytest.raises(ValueError, match=r"bad\.json:2: invalid JSON"):
        load(tmp_path / "bad.json")
    (tmp_path / "bad.yaml").write_text("a: [1, 2\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: invalid YAML"):
        load(tmp_path / "bad.yaml")


def test_backend_args_and_file_client_args(tmp_path):
    path = tmp_path / "a.json"
    dump(DATA, path, backend_args=dict(backend="local"))
    assert load(path, backend_args=dict(backend="local")) == DATA
    assert load(path, file_client_args=dict(backend="disk")) == DATA
    with pytest.raises(ValueError, match="cannot be set at the same time"):
        load(path, file_client_args=dict(backend="disk"), backend_args=dict(backend="local"))
    with pytest.raises(ValueError, match="'petrel' storage backend"):
        load(path, backend_args=dict(backend="petrel"))
    with pytest.raises(ValueError, match="do not fit LmdbBackend.*'db_path'"):
        dump(DATA, path, file_client_args=dict(backend="lmdb"))
    with pytest.raises(ValueError, match="s3://bucket/a.json.*'petrel' storage backend"):
        load("s3://bucket/a.json")


@pytest.fixture
def restore_handlers():
    """Leaves file_handlers as it was, whatever the test registers."""
    saved = dict(file_handlers)
    yield
    file_handlers.clear()
    file_handlers.update(saved)


def test_register_handler_adds_a_format_for_load_dump_and_annotation_files(
    tmp_path, restore_handlers
):
    @ours.register_handler(["lines", "lst"], separator=";")
    class LinesHandler(ours.BaseFileHandler):
        def __init__(self, separator):
            self.separator = separator

        def load_from_fileobj(self, file, **kwargs):
            return file.read().split(self.separator)

        def dump_to_fileobj(self, obj, file, **kwargs):
            file.write(self.dump_to_str(obj))

        def dump_to_str(self, obj, **kwargs):
            return self.separator.join(obj)

    dump(["a", "b"], tmp_path / "x.lst")
    assert (tmp_path / "x.lst").read_text() == "a;b"
    assert load(tmp_path / "x.lst") == ["a", "b"]
    assert dump(["c"], file_format="lines") == "c"
    with pytest.raises(TypeError, match="not a subclass of BaseFileHandler"):
        ours.register_handler("x")(dict)
    with pytest.raises(TypeError, match="file_formats must be a str or a list of str"):
        ours.register_handler(("a", "b"))

    @ours.register_handler("ann")
    class JsonAnnotations(ours.JsonHandler):
        pass

    annotations = dict(metainfo=dict(v=1), data_list=[dict(x=1)])
    (tmp_path / "data.ann").write_text(json.dumps(annotations))
    dataset = BaseDataset(ann_file=str(tmp_path / "data.ann"), data_prefix=dict())
    assert dataset.get_data_info(0) == dict(x=1, sample_idx=0)


@pytest.fixture
def http_root(tmp_path):
    """A folder served over http on localhost; yields (folder, base URL)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_http_urls_are_read_as_mmengine_reads_them(http_root):
    folder, base = http_root
    dump(DATA, folder / "a.json")
    dump(DATA, folder / "a.pkl")
    (folder / "classes.txt").write_text("cat\ndog\n")
    assert load(f"{base}/a.json") == theirs.load(f"{base}/a.json") == DATA
    assert load(f"{base}/a.pkl") == DATA
    assert ours.get(f"{base}/a.pkl") == (folder / "a.pkl").read_bytes()
    assert ours.get_text(f"{base}/classes.txt") == theirs.get_text(f"{base}/classes.txt")
    assert ours.list_from_file(f"{base}/classes.txt", prefix="c/") == ["c/cat", "c/dog"]
    with ours.get_local_path(f"{base}/a.json") as local:
        assert local.endswith(".json") and load(local) == DATA
    assert not Path(local).exists()

    dump(dict(payload=RunsCode(folder / "marker")), folder / "evil.pkl")
    with pytest.raises(UnsafePickleError, match=f"{base}/evil.pkl"):
        load(f"{base}/evil.pkl")
    assert not (folder / "marker").exists()
    with pytest.raises(NotImplementedError, match="HTTPBackend storage backend, which has no put"):
        dump(DATA, f"{base}/b.json")
    with pytest.raises(NotImplementedError, match="HTTPBackend .* no put_text .*get_text"):
        ours.put_text("x", f"{base}/b.txt")
