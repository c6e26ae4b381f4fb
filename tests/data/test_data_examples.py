"""The example datasets: digits splits and byte-level text windows."""

import os
import subprocess
import sys

import pytest
import torch

from runnerx.data import CharTextDataset, DigitsDataset
from runnerx.registry import DATASETS


def test_example_datasets_are_registered():
    assert DATASETS.get("DigitsDataset") is DigitsDataset
    assert DATASETS.get("CharTextDataset") is CharTextDataset


def test_digits_splits_add_up_are_disjoint_and_deterministic():
    train, val = DigitsDataset("train"), DigitsDataset("val")
    assert len(train) + len(val) == 1797 and len(val) == round(1797 * 0.2)
    assert set(train.indices.tolist()).isdisjoint(val.indices.tolist())
    again = DigitsDataset("train")
    assert torch.equal(again.indices, train.indices) and torch.equal(again.images, train.images)
    assert not torch.equal(DigitsDataset("train", seed=1).indices, train.indices)
    assert torch.equal(DigitsDataset("test").indices, val.indices)
    assert len(DigitsDataset("val", val_ratio=0.5)) == round(1797 * 0.5)


def test_digits_items_are_scaled_images_and_labels():
    dataset = DigitsDataset("val")
    item = dataset[3]
    assert item["inputs"].shape == (1, 8, 8) and item["inputs"].dtype == torch.float32
    assert item["data_samples"].shape == () and item["data_samples"].dtype == torch.int64
    assert float(dataset.images.min()) == 0.0 and float(dataset.images.max()) == 1.0
    assert set(dataset.labels.tolist()) == set(range(10))
    assert dataset.metainfo == dict(classes=tuple("0123456789"))


def test_digits_matches_sklearn():
    from sklearn.datasets import load_digits

    digits = load_digits()
    dataset = DigitsDataset("train")
    original = int(dataset.indices[5])
    assert int(dataset[5]["data_samples"]) == digits.target[original]
    expected = torch.tensor(digits.images[original], dtype=torch.float32) / 16
    assert torch.allclose(dataset[5]["inputs"][0], expected)


@pytest.mark.parametrize("dataset_type", [DigitsDataset, CharTextDataset])
def test_a_bad_split_lists_the_valid_ones(dataset_type):
    with pytest.raises(ValueError, match="split must be one of \\('train', 'val', 'test'\\)"):
        dataset_type("training")


def test_loading_the_digits_leaves_pythons_random_stream_as_it_was():
    """A seeded run draws the same numbers whether or not this process imported sklearn yet
    (its import pulls in rich, which draws from `random`)."""
    code = (
        "import random; from runnerx.data.examples.digits import load_digits_tensors; "
        "random.seed(0); expected = random.random(); random.seed(0); load_digits_tensors(); "
        "import sys; assert 'sklearn' in sys.modules; print(random.random() == expected)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "True", result.stderr[-3000:]


def test_runnerx_data_imports_sklearn_only_when_needed_and_says_how_to_install_it(tmp_path):
    (tmp_path / "sklearn").mkdir()
    (tmp_path / "sklearn" / "__init__.py").write_text("raise ImportError('no sklearn here')\n")
    code = (
        "import sys\n"
        "from runnerx.data import DigitsDataset\n"
        "print('sklearn imported:', 'sklearn' in sys.modules)\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "try:\n    DigitsDataset()\nexcept ImportError as err:\n    print(err)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert "sklearn imported: False" in result.stdout
    assert "pip install scikit-learn" in result.stdout and "runnerx[examples]" in result.stdout


def test_char_text_reads_the_standard_library_in_windows_shifted_by_one():
    dataset = CharTextDataset("train", block_size=16, max_chars=50_000)
    assert dataset.vocab_size == 256
    assert len(dataset) == (int(50_000 * 0.9) - 1) // 16
    first, second = dataset[0], dataset[1]
    assert first["inputs"].shape == (16,) and first["inputs"].dtype == torch.int64
    assert first["data_samples"].dtype == torch.int64
    assert torch.equal(first["inputs"][1:], first["data_samples"][:-1])
    assert first["data_samples"][-1] == second["inputs"][0]  # windows follow each other
    with open(os.path.join(os.path.dirname(os.__file__), "__future__.py"), "rb") as file:
        start = file.read(16)
    assert bytes(first["inputs"].tolist()) == start  # the sorted file order starts here
    assert torch.equal(dataset[-1]["inputs"], dataset[len(dataset) - 1]["inputs"])
    with pytest.raises(IndexError):
        dataset[len(dataset)]


def test_char_text_val_is_the_rest_and_root_and_pattern_select_files(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.py").write_bytes(b"0123456789")
    (tmp_path / "b" / "c.py").write_bytes(b"abcdefghij")
    (tmp_path / "b" / "skip.txt").write_bytes(b"XXXXXXXXXX")
    (tmp_path / "site-packages").mkdir()
    (tmp_path / "site-packages" / "d.py").write_bytes(b"YYYYYYYYYY")
    train = CharTextDataset("train", block_size=4, val_ratio=0.5, root=tmp_path)
    val = CharTextDataset("val", block_size=4, val_ratio=0.5, root=tmp_path)
    assert bytes(train.data.tolist()) == b"0123456789"
    assert bytes(val.data.tolist()) == b"abcdefghij"
    assert len(val) == 2 and bytes(val[1]["data_samples"].tolist()) == b"fghi"
    only_b = CharTextDataset("train", block_size=4, val_ratio=0.0, root=tmp_path, pattern="b/*")
    assert bytes(only_b.data.tolist()) == b"abcdefghijXXXXXXXXXX"
    with pytest.raises(FileNotFoundError, match="no text"):
        CharTextDataset(root=tmp_path, pattern="*.rs")
