"""FileClient, MMEngine's deprecated front to the backends, against mmengine-lite's: the
client chosen by name, prefix and infer_client, parse_uri_prefix, the delegating methods on
the same files, its own registry, and its deprecation warnings."""

from pathlib import Path

import mmengine.fileio as theirs
import pytest

import runnerx.fileio as ours
import runnerx.logging.logger
from runnerx.fileio import FileClient


@pytest.fixture
def logged(monkeypatch):
    """The messages runnerx.fileio logs through print_log (as MMEngine's warnings go)."""
    messages = []
    monkeypatch.setattr(
        runnerx.logging.logger, "print_log", lambda msg, **kwargs: messages.append(msg)
    )
    return messages


@pytest.mark.parametrize(
    "uri",
    ["/data/a.png", "data/a.png", Path("a.png"), "s3://b/k", "cluster:s3://b/k", "https://h/x"],
)
def test_parse_uri_prefix_as_mmengine(uri):
    assert FileClient.parse_uri_prefix(uri) == theirs.FileClient.parse_uri_prefix(uri)


@pytest.mark.parametrize(
    "file_client_args, uri",
    [
        (None, "data/a.png"),
        (None, "http://host/a.png"),
        (None, "https://host/a.png"),
        (dict(backend="disk"), None),
        (dict(backend="disk"), "https://host/a.png"),
        (dict(backend="http"), None),
        (dict(prefix="https"), None),
    ],
)
def test_infer_client_chooses_the_backend_mmengine_chooses(
    file_client_args, uri, logged, restore_backends
):
    mine = FileClient.infer_client(file_client_args, uri)
    peer = theirs.FileClient.infer_client(file_client_args, uri)
    assert isinstance(mine, FileClient) and mine.name == peer.name
    assert type(mine.client).__name__ == type(peer.client).__name__
    assert FileClient.infer_client(file_client_args, uri) is mine  # same arguments, same client
    assert any('"FileClient" will be deprecated' in message for message in logged)


def test_the_disk_client_works_as_mmengines_on_the_same_files(
    tree, tmp_path, logged, restore_backends
):
    mine, peer = FileClient(), theirs.FileClient("disk")
    assert logged[-1].startswith('"HardDiskBackend" is the alias of "LocalBackend"')
    assert isinstance(mine.client, ours.HardDiskBackend) and mine.name == "HardDiskBackend"
    assert mine.allow_symlink is peer.allow_symlink is True
    assert logged[-1] == "allow_symlink will be deprecated in future"
    for kwargs in (dict(), dict(recursive=True), dict(list_dir=False, suffix=".py")):
        assert set(mine.list_dir_or_file(tree, **kwargs)) == set(
            peer.list_dir_or_file(tree, **kwargs)
        )
    for client, name in ((mine, "ours"), (peer, "theirs")):
        client.put(b"\x00\x01", tmp_path / name / "a.bin")
        client.put_text("ünï", str(tmp_path / name / "b.txt"))
        client.remove(tmp_path / name / "a.bin")
    assert (tmp_path / "ours/b.txt").read_bytes() == (tmp_path / "theirs/b.txt").read_bytes()
    assert mine.get_text(tmp_path / "ours/b.txt") == peer.get_text(tmp_path / "ours/b.txt")
    assert mine.get(tree / "a.py") == peer.get(tree / "a.py") == b"a.py"
    for path in (tree, tree / "a.py", tree / "nothing"):
        for query in ("exists", "isdir", "isfile"):
            assert getattr(mine, query)(path) == getattr(peer, query)(path)
    assert mine.join_path(tree, "sub") == peer.join_path(tree, "sub")
    with mine.get_local_path(tree / "a.py") as local, peer.get_local_path(tree / "a.py") as p:
        assert local == p == str(tree / "a.py")


def test_http_client_reads_a_real_server(http_server, logged):
    base, folder, _ = http_server
    (folder / "a.json").write_text('{"a": 1}')
    client = FileClient.infer_client(uri=f"{base}/a.json")
    assert client.get_text(f"{base}/a.json") == '{"a": 1}'
    assert client.allow_symlink is False


def test_unsupported_backends_and_prefixes_are_refused(logged):
    with pytest.raises(ValueError, match="'petrel' is not supported.*not on PyPI"):
        FileClient("petrel")
    with pytest.raises(ValueError):
        theirs.FileClient("nothing")
    with pytest.raises(ValueError, match="prefix 's3' is not supported"):
        FileClient.infer_client(uri="s3://bucket/key")
    with pytest.raises(ValueError, match="give file_client_args or uri"):
        FileClient.infer_client()


class Upper(ours.BaseStorageBackend):
    def __init__(self, suffix=""):
        self.suffix = suffix

    def get(self, filepath):
        return str(filepath).upper().encode() + self.suffix.encode()

    def get_text(self, filepath, encoding="utf-8"):
        return self.get(filepath).decode(encoding)


def test_register_backend_adds_to_file_client_only(logged, restore_backends):
    FileClient.register_backend("upper", Upper, prefixes="up")
    assert FileClient("upper", suffix="!").get("a") == b"A!"
    assert FileClient.infer_client(uri="up://k").get_text("up://k") == "UP://K"
    with pytest.raises(ValueError, match="prefix 'up'"):  # not get_file_backend's registry
        ours.get("up://k")
    with pytest.raises(KeyError, match="name 'upper' is already registered"):
        FileClient.register_backend("upper", Upper)
    with pytest.raises(KeyError):
        theirs.FileClient.register_backend("disk", theirs.LocalBackend)
    with pytest.raises(TypeError, match="not a subclass of BaseStorageBackend"):
        FileClient.register_backend("bad", object)
    cached = FileClient("upper")

    @FileClient.register_backend("upper", force=True)
    class Lower(Upper):
        def get(self, filepath):
            return str(filepath).lower().encode()

    assert FileClient("upper") is not cached  # clients of the replaced class are dropped
    assert FileClient("upper").get("A") == b"a"
