"""runnerx.utils.path and package_utils: the same results as mmengine.utils on a real tree."""

import os
from pathlib import Path

import mmengine.utils as mm
import pytest

import runnerx.utils as rx


@pytest.fixture
def tree(tmp_path):
    for relative in [
        "a.jpg",
        "b.PNG",
        "c.txt",
        ".hidden.jpg",
        "sub/d.jpg",
        "sub/e.Jpg",
        "sub/deeper/f.png",
        ".dot_dir/g.jpg",
    ]:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(relative)
    return tmp_path


@pytest.mark.parametrize("suffix", [None, ".jpg", (".jpg", ".png"), ".JPG", "txt"])
@pytest.mark.parametrize("recursive", [False, True])
@pytest.mark.parametrize("case_sensitive", [True, False])
def test_scandir_finds_what_mmengine_finds(tree, suffix, recursive, case_sensitive):
    for root in (str(tree), tree):
        ours = sorted(rx.scandir(root, suffix, recursive, case_sensitive))
        theirs = sorted(mm.scandir(root, suffix, recursive, case_sensitive))
        assert ours == theirs


def test_scandir_refuses_bad_arguments_at_once(tree):
    with pytest.raises(TypeError, match="dir_path"):
        rx.scandir(3)
    with pytest.raises(TypeError, match="suffix"):
        rx.scandir(tree, suffix=[".jpg"])


def test_mkdir_check_file_and_symlink(tmp_path, monkeypatch):
    target = tmp_path / "x" / "y"
    rx.mkdir_or_exist(target)
    rx.mkdir_or_exist(str(target))  # exists: fine
    assert target.is_dir()
    monkeypatch.setenv("HOME", str(tmp_path))
    rx.mkdir_or_exist("~/from_home")
    assert (tmp_path / "from_home").is_dir()
    rx.mkdir_or_exist("")  # the current folder: nothing to do

    file = target / "f.txt"
    file.write_text("hi")
    rx.check_file_exist(file)
    with pytest.raises(FileNotFoundError, match='file ".*missing.txt" does not exist'):
        rx.check_file_exist(target / "missing.txt")
    with pytest.raises(FileNotFoundError, match="^no such input$"):
        rx.check_file_exist(target, msg_tmpl="no such input")  # a folder is no file

    link = tmp_path / "link"
    rx.symlink(file, link)
    other = tmp_path / "other.txt"
    other.write_text("other")
    rx.symlink(other, link)  # overwrite=True replaces the link
    assert link.read_text() == "other"
    with pytest.raises(FileExistsError):
        rx.symlink(file, link, overwrite=False)


def test_fopen_is_filepath_and_is_abs(tmp_path):
    path = tmp_path / "f.txt"
    with rx.fopen(path, "w") as file:
        file.write("text")
    with rx.fopen(str(path)) as file:
        assert file.read() == "text"
    with pytest.raises(ValueError, match="str or a Path"):
        rx.fopen(3)
    for value in ["a", Path("a"), 3, None, b"a"]:
        assert rx.is_filepath(value) == mm.is_filepath(value)
    for value in ["/a/b", "a/b", "http://x", "https://x", "s3://b/k", "ftp://x", ""]:
        assert rx.is_abs(value) == mm.is_abs(value)


@pytest.mark.filterwarnings("ignore:pkg_resources is deprecated")  # MMEngine's import
@pytest.mark.parametrize("package", ["rich", "numpy", "mmengine-lite", "PyYAML", "no_such_pkg_x"])
def test_is_installed_and_installed_path_agree_with_mmengine(package):
    assert rx.is_installed(package) == mm.is_installed(package)
    if rx.is_installed(package):
        assert rx.get_installed_path(package) == mm.get_installed_path(package)
    else:
        with pytest.raises(ModuleNotFoundError, match="not installed"):
            rx.get_installed_path(package)
        from pkg_resources import DistributionNotFound

        with pytest.raises(DistributionNotFound, match="not installed"):  # MMEngine's type
            rx.get_installed_path(package)


def test_installed_path_of_an_editable_install_is_its_source_folder():
    import runnerx

    assert rx.get_installed_path("runnerx") == os.path.dirname(runnerx.__file__)


def test_call_command_and_install_package_of_an_installed_one(tmp_path):
    rx.call_command(["sh", "-c", f"echo ran > {tmp_path / 'out'}"])
    assert (tmp_path / "out").read_text() == "ran\n"
    rx.install_package("rich")  # installed already: pip is not run


def test_find_vcs_root_finds_the_nearest_marked_folder_as_mmengine(tmp_path):
    from mmengine.utils.path import find_vcs_root as mm_find_vcs_root

    from runnerx.utils.path import find_vcs_root

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "inner" / ".hg").mkdir(parents=True)
    source = tmp_path / "repo" / "pkg" / "inner" / "module.py"
    source.write_text("")
    for path, markers in [
        (source, (".git",)),  # a file: its folder and up
        (source.parent, (".git", ".hg")),  # the nearest marker wins
        (tmp_path / "repo", (".git",)),  # the folder itself
        (tmp_path, ("no-such-marker",)),  # up to the root: none
    ]:
        found = find_vcs_root(str(path), markers)
        assert found == mm_find_vcs_root(str(path), markers)
    assert find_vcs_root(str(source)) == str(tmp_path / "repo")
    assert find_vcs_root(str(source.parent), (".git", ".hg")) == str(source.parent)
    assert find_vcs_root(str(tmp_path), ("no-such-marker",)) is None
