"""Fixtures of the fileio tests: a small file tree (restore_backends: tests/conftest.py)."""

import pytest


@pytest.fixture
def tree(tmp_path):
    """root/ a.py b.txt .hidden.py sub/{c.py, deep/d.txt, .e.py} .git/f.py empty/"""
    root = tmp_path / "root"
    for name in ("a.py", "b.txt", ".hidden.py", "sub/c.py", "sub/deep/d.txt", "sub/.e.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    (root / ".git").mkdir()
    (root / ".git/f.py").write_text("f")
    (root / "empty").mkdir()
    return root
