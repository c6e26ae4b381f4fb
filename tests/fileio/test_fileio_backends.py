"""The storage backends against mmengine-lite's (same calls on the same files, same results):
get_file_backend's choice, LocalBackend's methods, HTTPBackend on a real local server,
LmdbBackend on a real LMDB database; and a user's backend reached through the functions,
load/dump and list_from_file, registered by prefix and by name."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import mmengine.fileio as theirs
import pytest

import runnerx.fileio as ours
from runnerx.fileio import BaseStorageBackend, get_file_backend, register_backend
from runnerx.fileio.paths import local_path

LIST_CASES = [
    dict(),
    dict(recursive=True),
    dict(list_dir=False, recursive=True),
    dict(list_file=False, recursive=True),
    dict(list_dir=False, suffix=(".txt", ".py"), recursive=True),
]


@pytest.mark.parametrize(
    "uri, backend_args",
    [
        ("/data/a.png", None),
        (Path("data/a.png"), None),
        ("http://host/a.png", None),
        ("https://host/a.png", {}),
        (None, dict(backend="local")),
        ("https://host/a.png", dict(backend="local")),
        ("data/a.png", dict(backend="http")),
    ],
)
def test_get_file_backend_chooses_the_class_mmengine_chooses(uri, backend_args):
    mine = get_file_backend(uri, backend_args=backend_args)
    peer = theirs.get_file_backend(uri, backend_args=backend_args)
    assert type(mine).__name__ == type(peer).__name__
    assert isinstance(mine, ours.BaseStorageBackend) and mine.name == peer.name


def test_get_file_backend_singletons_and_errors():
    one = get_file_backend("a/b", enable_singleton=True)
    assert get_file_backend("c/d", enable_singleton=True) is one
    assert get_file_backend("a/b") is not one
    with pytest.raises(ValueError, match="give uri, or name the backend"):
        get_file_backend()
    with pytest.raises(ValueError):
        theirs.get_file_backend()
    with pytest.raises(TypeError, match="the path must be a str or a Path, not 3"):
        get_file_backend(3)
    with pytest.raises(ValueError, match=r"'locl'.*did you mean 'local'\?"):
        get_file_backend("a", backend_args=dict(backend="locl"))
    message = r"'petrel'.*not on PyPI.*register_backend\('petrel', MyBackend\)"
    with pytest.raises(ValueError, match=message):
        ours.get("a", backend_args=dict(backend="petrel"))
    message = r"'s3://b/k' has the prefix 's3'.*'petrel'.*prefixes='s3'\)"
    with pytest.raises(ValueError, match=message):
        ours.exists("s3://b/k")


@pytest.mark.parametrize("kwargs", LIST_CASES)
def test_local_backend_lists_as_mmengine(tree, kwargs):
    mine = set(ours.LocalBackend().list_dir_or_file(tree, **kwargs))
    assert mine == set(theirs.LocalBackend().list_dir_or_file(tree, **kwargs)) and mine


def test_local_backend_reads_writes_and_copies_as_mmengine(tree, tmp_path):
    for backend, name in ((ours.LocalBackend(), "ours"), (theirs.LocalBackend(), "theirs")):
        out = tmp_path / name
        backend.put(b"\x00bytes", out / "new/blob.bin")
        backend.put_text("ünï\n", str(out / "text.txt"))
        backend.put_text("é", out / "latin.txt", encoding="latin-1")
        assert backend.copyfile(tree / "a.py", out) == str(out / "a.py")
        assert backend.copyfile_from_local(tree / "b.txt", out / "b.txt") == out / "b.txt"
        assert backend.copyfile_to_local(str(tree / "b.txt"), str(out / "c.txt")) == str(
            out / "c.txt"
        )
        assert backend.copytree(tree / "sub", out / "sub") == out / "sub"
        assert backend.copytree_from_local(tree / "sub", out / "sub2") == out / "sub2"
        assert backend.copytree_to_local(tree / "sub", out / "sub3") == out / "sub3"
        assert backend.copy_if_symlink_fails(tree / "sub", out / "link") is True
        backend.remove(out / "sub2/c.py")
        backend.rmtree(out / "sub3")
        with pytest.raises(FileNotFoundError):
            backend.remove(out / "missing")
        with pytest.raises(IsADirectoryError):
            backend.remove(out / "sub")
    listing = {
        name: sorted(ours.LocalBackend().list_dir_or_file(tmp_path / name, recursive=True))
        for name in ("ours", "theirs")
    }
    assert listing["ours"] == listing["theirs"]
    for relative in listing["ours"]:
        if (tmp_path / "ours" / relative).is_file():
            assert (tmp_path / "ours" / relative).read_bytes() == (
                tmp_path / "theirs" / relative
            ).read_bytes()
    assert os.readlink(tmp_path / "ours/link") == str(tree / "sub")

    mine, peer = ours.LocalBackend(), theirs.LocalBackend()
    text = tmp_path / "ours/latin.txt"
    assert mine.get(text) == peer.get(text) == b"\xe9"
    assert mine.get_text(text, encoding="latin-1") == peer.get_text(text, "latin-1") == "é"
    for path in (tree, tree / "a.py", tree / "nothing", str(tree / "sub")):
        for query in ("exists", "isfile", "isdir"):
            assert getattr(mine, query)(path) == getattr(peer, query)(path)
    assert mine.join_path(tree, "sub", "c.py") == peer.join_path(tree, "sub", "c.py")
    with mine.get_local_path(tree / "a.py") as local, peer.get_local_path(tree / "a.py") as p:
        assert local == p == tree / "a.py"


@pytest.mark.parametrize("lib", [ours, theirs], ids=["runnerx", "mmengine"])
def test_copy_if_symlink_fails_copies_where_symlinks_fail(tree, tmp_path, monkeypatch, lib):
    def refuse(src, dst):
        raise PermissionError("no symlinks on this file system")

    monkeypatch.setattr(os, "symlink", refuse)
    assert lib.copy_if_symlink_fails(tree / "a.py", tmp_path / "a.py") is False
    assert lib.copy_if_symlink_fails(str(tree / "sub"), str(tmp_path / "sub")) is False
    assert (tmp_path / "a.py").read_text() == "a.py" and not (tmp_path / "a.py").is_symlink()
    assert sorted(os.listdir(tmp_path / "sub")) == [".e.py", "c.py", "deep"]


def test_copy_functions_as_mmengine_on_local_paths(tree, tmp_path):
    for lib, name in ((ours, "ours"), (theirs, "theirs")):
        out = tmp_path / name
        out.mkdir()
        assert lib.copyfile_from_local(tree / "a.py", out) == str(out / "a.py")
        assert lib.copyfile_to_local(str(tree / "b.txt"), str(out)) == str(out / "b.txt")
        assert lib.copytree_from_local(tree / "sub", out / "s1") == out / "s1"
        assert lib.copytree_to_local(str(tree / "sub"), str(out / "s2")) == str(out / "s2")
        assert lib.copy_if_symlink_fails(tree / "empty", out / "link") is True
    assert sorted(ours.list_dir_or_file(tmp_path / "ours", recursive=True)) == sorted(
        theirs.list_dir_or_file(tmp_path / "theirs", recursive=True)
    )
    with pytest.raises(NotImplementedError, match="LocalBackend .* no generate_presigned_url"):
        ours.generate_presigned_url(str(tree / "a.py"))


def test_http_backend_reads_as_mmengine(http_server):
    base, folder, requests = http_server
    (folder / "classes.txt").write_text("cät\ndog\n")
    url = f"{base}/classes.txt"
    mine, peer = get_file_backend(url), theirs.get_file_backend(url)
    assert isinstance(mine, ours.HTTPBackend)
    assert mine.get(url) == peer.get(url) == "cät\ndog\n".encode()
    assert mine.get_text(url) == peer.get_text(url) == "cät\ndog\n"
    with mine.get_local_path(url) as local:
        assert local.endswith(".txt") and Path(local).read_text() == "cät\ndog\n"
    assert not Path(local).exists()
    assert ours.get(url, backend_args=dict(backend="http")) == "cät\ndog\n".encode()
    assert requests.count("/classes.txt") == 6  # each read is a request: nothing cached


class MemoryBackend(BaseStorageBackend):
    """A user's backend: files in a dict shared by the instances of one ``store`` name."""

    stores: dict = {}

    def __init__(self, store="default"):
        self.files = self.stores.setdefault(store, {})

    def get(self, filepath):
        return self.files[str(filepath)]

    def get_text(self, filepath, encoding="utf-8"):
        return self.get(filepath).decode(encoding)

    def put(self, obj, filepath):
        self.files[str(filepath)] = obj

    def put_text(self, obj, filepath):
        self.put(obj.encode(), filepath)

    def exists(self, filepath):
        return str(filepath) in self.files

    def copyfile_to_local(self, src, dst):
        Path(dst).write_bytes(self.get(src))
        return dst


def test_a_registered_backend_serves_the_functions_and_load_dump(tmp_path, restore_backends):
    MemoryBackend.stores.clear()
    register_backend("memory", MemoryBackend, prefixes=["mem"])
    ours.put(b"\x01", "mem://bucket/a.bin")
    assert MemoryBackend.stores["default"] == {"mem://bucket/a.bin": b"\x01"}
    assert ours.get("mem://bucket/a.bin") == b"\x01" and ours.exists("mem://bucket/a.bin")
    ours.dump(dict(a=[1, 2]), "mem://bucket/a.json")
    ours.dump(dict(b=(1, 2)), "mem://bucket/b.pkl")
    assert ours.load("mem://bucket/a.json") == dict(a=[1, 2])
    assert ours.load("mem://bucket/b.pkl") == dict(b=(1, 2))
    ours.put_text("cat\ndog\n", "mem://bucket/classes.txt")
    assert ours.list_from_file("mem://bucket/classes.txt") == ["cat", "dog"]
    assert ours.copyfile_to_local("mem://bucket/a.bin", tmp_path / "a.bin") == tmp_path / "a.bin"
    assert (tmp_path / "a.bin").read_bytes() == b"\x01"

    by_name = dict(backend="memory", store="other")  # options go to the constructor
    ours.put_text("x", "any/key", backend_args=by_name)
    assert MemoryBackend.stores["other"] == {"any/key": b"x"}
    assert ours.get_text("any/key", backend_args=by_name) == "x"
    assert (
        get_file_backend(backend_args=by_name, enable_singleton=True).files
        is (MemoryBackend.stores["other"])
    )
    with pytest.raises(NotImplementedError, match="MemoryBackend .* no isdir .*exists, get"):
        ours.isdir("mem://bucket")
    with pytest.raises(ValueError, match=r"\{'shelf': 1\} do not fit MemoryBackend\(store="):
        ours.get("k", backend_args=dict(backend="memory", shelf=1))
    with pytest.raises(ValueError, match="different stores"):
        ours.copyfile(tmp_path / "a.bin", "mem://bucket/c.bin")
    with pytest.raises(ValueError, match="MemoryBackend storage backend; save_checkpoint"):
        local_path("mem://bucket/x.pth", None, "save_checkpoint")


def test_register_backend_checks_and_replaces(restore_backends):
    @register_backend("memory2", prefixes="mem2")
    class Other(MemoryBackend):
        pass

    assert ours.backends.registry_utils.backends["memory2"] is Other
    with pytest.raises(ValueError, match="name 'memory2' and prefix 'mem2' is already"):
        register_backend("memory2", MemoryBackend, prefixes="mem2")
    with pytest.raises(ValueError, match="prefix 'http' is already"):
        register_backend("web", MemoryBackend, prefixes=["http"])
    assert "web" not in ours.backends.registry_utils.backends  # nothing half-registered
    MemoryBackend.stores.clear()
    Other.stores.clear()
    ours.put(b"first", "mem2://k")
    register_backend("memory2", MemoryBackend, force=True, prefixes="mem2")
    assert isinstance(get_file_backend("mem2://k", enable_singleton=True), MemoryBackend)
    assert type(get_file_backend("mem2://k", enable_singleton=True)) is MemoryBackend
    with pytest.raises(TypeError, match="not a subclass of BaseStorageBackend"):
        register_backend("bad", dict)
    with pytest.raises(TypeError, match="prefixes must be a str or a list of str"):
        register_backend("bad", MemoryBackend, prefixes=3)


def test_lmdb_backend_reads_a_real_database(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    db_path = str(tmp_path / "train.lmdb")
    with lmdb.open(db_path, map_size=1 << 20) as env, env.begin(write=True) as txn:
        txn.put(b"img/0001.png", b"\x89PNG-0001")
        txn.put(b"label.txt", b"cat")
    args = dict(backend="lmdb", db_path=db_path)
    # LMDB opens a database once per process, so mmengine's backend is done before ours opens
    peer = theirs.get_file_backend(backend_args=args)
    expected = peer.get("img/0001.png")
    del peer
    mine = get_file_backend(backend_args=args, enable_singleton=True)
    assert isinstance(mine, ours.LmdbBackend)
    assert mine.get("img/0001.png") == expected == b"\x89PNG-0001"
    assert ours.get("label.txt", backend_args=args) == b"cat"  # the same backend object
    with pytest.raises(FileNotFoundError, match="no key 'nothing' in"):
        mine.get("nothing")
    with pytest.raises(NotImplementedError, match="LmdbBackend stores bytes"):
        ours.get_text("label.txt", backend_args=args)
    # a dataloader worker's copy (pickled, another process) opens the database itself
    code = "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read()).get('label.txt'))"
    result = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(mine), capture_output=True, check=False
    )
    assert result.stdout.decode().strip() == "b'cat'", result.stderr.decode()[-2000:]


def test_lmdb_backend_says_how_to_install_lmdb(monkeypatch):
    monkeypatch.setitem(sys.modules, "lmdb", None)
    with pytest.raises(ImportError, match="pip install lmdb"):
        ours.LmdbBackend("x.lmdb")


def test_importing_fileio_imports_no_lmdb_nor_urllib_request():
    code = (
        "import sys, runnerx.fileio; "
        "print([m for m in ('lmdb', 'urllib.request', 'torch') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr
