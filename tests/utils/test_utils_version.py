"""digit_version and get_git_hash; Timer and check_time."""

import subprocess
import time

import mmengine.utils as mm
import pytest
import torch

import runnerx.utils as rx

VERSIONS = [
    "1",
    "1.2",
    "1.2.3",
    "1.2.3.4",
    "1.2.3.4.5",
    "2.1.0a0",
    "2.1.0a1",
    "2.1.0b2",
    "2.1.0rc1",
    "2.1.0c1",
    "2.1.0.dev20230101",
    "2.1.0a1.dev2",
    "2.1.0.post1",
    "2.1.0rc1.post1",
    "2.1.0+cu121",
    "2.1.0a0+git123abc",
    "v1.0",
    "1.0-alpha2",
    torch.__version__,
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("length", [4, 2, 6])
def test_digit_version_agrees_with_mmengine(version, length):
    assert rx.digit_version(version, length) == mm.digit_version(version, length)


def test_digit_version_orders_releases():
    order = ["2.0.0", "2.1.0.dev1", "2.1.0a1", "2.1.0b1", "2.1.0rc1", "2.1.0", "2.1.0.post1"]
    digits = [rx.digit_version(version) for version in order]
    assert digits == sorted(digits) and len(set(digits)) == len(digits)


def test_digit_version_refuses_what_is_no_version():
    from packaging.version import InvalidVersion

    with pytest.raises(InvalidVersion):
        rx.digit_version("not a version")
    with pytest.raises(ValueError, match="parrots"):
        rx.digit_version("parrots")


def git(folder, *args):
    return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True)


def test_get_git_hash_in_a_repository_and_outside(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "f").write_text("x")
    git(repo, "add", "f")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "m")
    expected = git(repo, "rev-parse", "HEAD").stdout.strip()
    monkeypatch.chdir(repo)
    assert rx.get_git_hash() == expected == mm.get_git_hash()
    assert rx.get_git_hash(digits=7) == expected[:7]
    with pytest.raises(TypeError, match="digits"):
        rx.get_git_hash(digits="7")
    outside = tmp_path / "plain"
    outside.mkdir()
    monkeypatch.chdir(outside)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert rx.get_git_hash() == "unknown"  # MMEngine gives '' here
    assert rx.get_git_hash(fallback="none") == "none"
    monkeypatch.setenv("PATH", str(outside))  # no git at all
    assert rx.get_git_hash(fallback="no git") == "no git"


def test_timer_measures_and_prints(capsys):
    timer = rx.Timer()
    assert timer.is_running
    time.sleep(0.02)
    first = timer.since_last_check()
    time.sleep(0.01)
    assert 0.01 <= timer.since_last_check() < first + 1
    assert timer.since_start() >= 0.03
    with rx.Timer(print_tmpl="took {:.1f} s") as block:
        assert block.is_running
    assert capsys.readouterr().out == "took 0.0 s\n"
    assert not block.is_running
    with pytest.raises(rx.TimerError, match="not running"):
        block.since_start()
    stopped = rx.Timer(start=False)
    with pytest.raises(rx.TimerError):
        stopped.since_last_check()


def test_check_time_counts_from_the_previous_call():
    assert rx.check_time("utils_test_task") == 0
    time.sleep(0.01)
    assert rx.check_time("utils_test_task") >= 0.01
    assert rx.check_time("utils_test_task") < 0.01
