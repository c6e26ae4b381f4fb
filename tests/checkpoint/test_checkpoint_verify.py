"""A resume and load_from refuse a checkpoint whose bytes changed after torch.save wrote them:
torch stores CRC-32s in its zip archive but does not check them when loading."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest


def flip_a_byte_of(path: Path, entry_suffix: str) -> None:
    """Invert one byte in the middle of the data of the archive entry ending in
    ``entry_suffix`` (headers untouched, so only the CRC can tell)."""
    with zipfile.ZipFile(path) as archive:
        info = next(i for i in archive.infolist() if i.filename.endswith(entry_suffix))
    data = bytearray(path.read_bytes())
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26 :][:4])
    start = info.header_offset + 30 + name_length + extra_length
    data[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_resume_from_a_checkpoint_with_a_flipped_byte_is_refused(make_runner, tmp_path):
    runner = make_runner(max_epochs=1)
    runner.train()
    checkpoint = Path(runner.work_dir) / "epoch_1.pth"
    resumed = make_runner(max_epochs=2, work_dir=str(tmp_path / "again"), resume=str(checkpoint))
    flip_a_byte_of(checkpoint, "/data/0")  # a weight: torch.load would not notice
    with pytest.raises(RuntimeError, match=r"epoch_1.pth is corrupted: its entry .*/data/0"):
        resumed.train()


def test_an_intact_checkpoint_resumes(make_runner, tmp_path):
    runner = make_runner(max_epochs=1)
    runner.train()
    checkpoint = Path(runner.work_dir) / "epoch_1.pth"
    resumed = make_runner(max_epochs=2, work_dir=str(tmp_path / "again"), resume=str(checkpoint))
    resumed.train()
    assert resumed.epoch == 2


def test_load_from_a_checkpoint_with_a_flipped_byte_is_refused(make_runner, tmp_path):
    # load_from is what tools/test.py sets: a corrupted weight would spoil the score silently
    runner = make_runner(max_epochs=1)
    runner.train()
    checkpoint = Path(runner.work_dir) / "epoch_1.pth"
    flip_a_byte_of(checkpoint, "/data/0")
    loading = make_runner(max_epochs=1, work_dir=str(tmp_path / "again"), load_from=str(checkpoint))
    with pytest.raises(RuntimeError, match=r"epoch_1.pth is corrupted: .* load_from another copy"):
        loading.train()
