"""The path functions and list_from_file / dict_from_file against mmengine-lite's on real
files (same calls, same results and error types), plus backend_args refusals and atomic
puts."""

import os
from pathlib import Path

import mmengine.fileio as theirs
import pytest

import runnerx.fileio as ours

LIBS = pytest.mark.parametrize("lib", [ours, theirs], ids=["runnerx", "mmengine"])


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(recursive=True),
        dict(list_dir=False),
        dict(list_dir=False, recursive=True),
        dict(list_file=False, recursive=True),
        dict(list_dir=False, suffix=".py", recursive=True),
        dict(list_dir=False, suffix=(".txt", ".py")),
        dict(list_dir=False, suffix=(".txt",), recursive=True),
    ],
)
@pytest.mark.parametrize("as_path", [False, True])
def test_list_dir_or_file_as_mmengine(tree, kwargs, as_path):
    root = tree if as_path else str(tree)
    mine = sorted(ours.list_dir_or_file(root, **kwargs))
    assert mine == sorted(theirs.list_dir_or_file(root, **kwargs))
    assert mine  # every case lists something


@LIBS
def test_list_dir_or_file_argument_errors(tree, lib):
    with pytest.raises(TypeError, match="suffix"):
        list(lib.list_dir_or_file(tree, suffix=".py"))
    with pytest.raises(TypeError, match="suffix"):
        list(lib.list_dir_or_file(tree, list_dir=False, suffix=[".py"]))


def test_reads_writes_and_queries_as_mmengine(tree, tmp_path):
    for lib, name in ((ours, "ours"), (theirs, "theirs")):
        lib.put(b"\x00\x01bytes", tmp_path / name / "new/blob.bin")
        lib.put_text("ünï\nline 2\n", str(tmp_path / name / "text.txt"))
    for relative in ("new/blob.bin", "text.txt"):
        assert (tmp_path / "ours" / relative).read_bytes() == (
            tmp_path / "theirs" / relative
        ).read_bytes()
    text = tmp_path / "ours/text.txt"
    assert ours.get(text) == theirs.get(text) == text.read_bytes()
    assert ours.get_text(str(text)) == theirs.get_text(str(text)) == "ünï\nline 2\n"
    assert ours.get_text(text, encoding="latin-1") == theirs.get_text(text, encoding="latin-1")

    for path in (tree, tree / "a.py", tree / "nothing", str(tree / "sub")):
        for query in ("exists", "isfile", "isdir"):
            assert getattr(ours, query)(path) == getattr(theirs, query)(path)
    assert ours.join_path(str(tree), "sub", "c.py") == theirs.join_path(str(tree), "sub", "c.py")
    assert ours.join_path(tree, Path("sub")) == theirs.join_path(tree, Path("sub"))
    with ours.get_local_path(tree / "a.py") as local, theirs.get_local_path(tree / "a.py") as peer:
        assert local == peer == str(tree / "a.py")
    assert (tree / "a.py").exists()  # a local file is not removed afterwards


def test_copy_and_remove_as_mmengine(tree, tmp_path):
    for lib, name in ((ours, "ours"), (theirs, "theirs")):
        out = tmp_path / name
        out.mkdir()
        assert lib.copyfile(tree / "a.py", out) == theirs.join_path(out, "a.py")
        assert lib.copyfile(str(tree / "b.txt"), str(out / "a.py")) == str(out / "a.py")
        assert (out / "a.py").read_text() == "b.txt"  # replaced
        assert lib.copytree(str(tree / "sub"), str(out / "sub")) == str(out / "sub")
        with pytest.raises(FileExistsError):
            lib.copytree(tree / "sub", out / "sub")
        with pytest.raises(FileNotFoundError):
            lib.remove(out / "missing")
        with pytest.raises(IsADirectoryError):
            lib.remove(out / "sub")
        lib.remove(out / "sub/c.py")
        lib.rmtree(out / "sub/deep")
    listing = {
        name: sorted(ours.list_dir_or_file(tmp_path / name, recursive=True))
        for name in ("ours", "theirs")
    }
    assert listing["ours"] == listing["theirs"] == ["a.py", "sub"]


def test_a_failed_put_leaves_the_old_file(tmp_path):
    path = tmp_path / "a.bin"
    ours.put(b"old", path)
    with pytest.raises(TypeError):
        ours.put("a str is not bytes", path)
    with pytest.raises(TypeError):
        ours.put_text(b"bytes are not a str", path)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["a.bin"]


@pytest.mark.parametrize(
    "call",
    [
        lambda args: ours.get("/tmp/x", backend_args=args),
        lambda args: ours.put_text("x", "/tmp/x", backend_args=args),
        lambda args: ours.exists("/tmp/x", backend_args=args),
        lambda args: list(ours.list_dir_or_file("/tmp", backend_args=args)),
        lambda args: ours.copyfile("/tmp/x", "/tmp/y", backend_args=args),
        lambda args: ours.list_from_file("/tmp/x", backend_args=args),
    ],
)
def test_other_backends_are_refused_by_name(call):
    with pytest.raises(ValueError, match="'memcached' storage backend"):
        call(dict(backend="memcached", server_list_cfg="x"))
    with pytest.raises(ValueError, match="'petrel' storage backend"):
        call(dict(backend="petrel"))
    with pytest.raises(
        ValueError, match=r"\{'path_mapping': \{'a': 'b'\}\} do not fit LocalBackend"
    ):
        call(dict(path_mapping={"a": "b"}))
    with pytest.raises(TypeError, match="backend_args must be a dict"):
        call("local")


def test_uris_of_other_backends_are_refused_by_name():
    with pytest.raises(ValueError, match="'s3://b/k'.*'petrel' storage backend"):
        ours.exists("s3://b/k")
    with pytest.raises(ValueError, match="'cluster:s3://b/k'.*'petrel'"):
        ours.get("cluster:s3://b/k")
    with pytest.raises(NotImplementedError, match="HTTPBackend storage backend, which has no isf"):
        ours.isfile("https://host/a.json")


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"1 cat\r\n2 dog big\n\n3 bird  red\tsmall\n4 fish")
    return str(path)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(prefix="id:"),
        dict(offset=2),
        dict(max_num=2),
        dict(offset=1, max_num=-1),
        dict(offset=9),
        dict(offset=1, max_num=2, prefix="/"),
    ],
)
def test_list_from_file_as_mmengine(text_file, kwargs):
    assert ours.list_from_file(text_file, **kwargs) == theirs.list_from_file(text_file, **kwargs)


def test_dict_from_file_as_mmengine(text_file, tmp_path):
    path = tmp_path / "map.txt"
    path.write_text("1 cat\n2 dog big\n3 bird  red\tsmall\n")
    for key_type in (str, int):
        mine = ours.dict_from_file(str(path), key_type=key_type)
        assert mine == theirs.dict_from_file(str(path), key_type=key_type)
    assert mine == {1: "cat", 2: ["dog", "big"], 3: ["bird", "red", "small"]}
    with pytest.raises(AssertionError):
        theirs.dict_from_file(text_file)
    with pytest.raises(AssertionError, match=r"lines\.txt:3: dict_from_file needs a key and"):
        ours.dict_from_file(text_file)
