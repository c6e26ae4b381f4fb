"""runnerx.testing's comparison helpers give MMEngine's answers (mmengine-lite's
mmengine.testing is the oracle) on the same inputs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from runnerx import testing

mm_testing = pytest.importorskip("mmengine.testing")


class Example:
    a, b, c = 1, ("wvi", 3), [4.5, 3.14]
    t = torch.tensor([4, 5])

    def method(self):
        return self.b


SUBSET_CASES = [
    ({"a": 1, "b": (4, 6)}, {"b": (4, 6)}),
    ({"a": 1, "b": (4, 6)}, {"b": (6, 4)}),
    ({"a": 1, "b": (4, 6)}, {"b": None}),
    ({"a": 1}, {"z": 1}),
    ({"d": np.array([[5, 3], [1, 2]])}, {"d": np.array([[5, 3], [1, 2]])}),
    ({"d": np.array([[5, 3], [1, 2]])}, {"d": np.array([[5, 3], [6, 2]])}),
    ({"d": torch.tensor([5, 3, 5])}, {"d": torch.tensor([5, 3, 5])}),
    ({"d": torch.tensor([5, 3, 5])}, {"d": torch.tensor([5, 5, 5])}),
    ({"d": torch.tensor([5, 3, 5])}, {"d": torch.tensor([[5, 3, 5], [4, 1, 2]])}),
    ({"d": torch.tensor([5, 3, 5])}, {"d": torch.tensor([[5, 3, 5], [5, 3, 5]])}),
]
ATTRS_CASES = [
    {"a": 1, "b": ("wvi", 3), "c": [4.5, 3.14]},
    {"c": [4.5, 3.14, 2]},
    {"bc": 54},
    {"method": Example.method},
    {"t": torch.tensor([4, 5])},
    {"t": torch.tensor([4, 6])},
]
MODULES = [
    nn.Conv3d(3, 4, 3),
    nn.BatchNorm3d(4),
    nn.SyncBatchNorm(4),
    nn.GroupNorm(2, 4),
    nn.LayerNorm(4),
    nn.InstanceNorm2d(4),
    nn.Sigmoid(),
]


@pytest.mark.parametrize(("obj", "subset"), SUBSET_CASES)
def test_assert_dict_contains_subset(obj, subset):
    expected = mm_testing.assert_dict_contains_subset(obj, subset)
    assert testing.assert_dict_contains_subset(obj, subset) == expected


def test_the_subset_cases_hold_and_fail():
    results = {testing.assert_dict_contains_subset(o, s) for o, s in SUBSET_CASES}
    assert results == {True, False}


@pytest.mark.parametrize("attrs", ATTRS_CASES)
def test_assert_attrs_equal(attrs):
    expected = mm_testing.assert_attrs_equal(Example, attrs)
    assert testing.assert_attrs_equal(Example, attrs) == expected


@pytest.mark.parametrize("keys", [["a", "c"], ["a", "z"], [], ["c", "b", "a"]])
def test_assert_dict_has_keys_and_assert_keys_equal(keys):
    obj = {"a": 1, "b": 2, "c": 3}
    assert testing.assert_dict_has_keys(obj, keys) == mm_testing.assert_dict_has_keys(obj, keys)
    result = testing.assert_keys_equal(list(obj), keys)
    assert result == mm_testing.assert_keys_equal(list(obj), keys)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: type(m).__name__)
def test_assert_is_norm_layer(module):
    assert testing.assert_is_norm_layer(module) == mm_testing.assert_is_norm_layer(module)


def filled(module: nn.Module, **values: float) -> nn.Module:
    """``module`` with each named parameter set to a constant."""
    for name, value in values.items():
        nn.init.constant_(getattr(module, name), value)
    return module


@pytest.mark.parametrize(
    "module",
    [
        filled(nn.Conv2d(3, 4, 3), weight=0, bias=0),
        filled(nn.Conv2d(3, 4, 3), weight=0, bias=0.5),
        filled(nn.Linear(8, 4, bias=False), weight=0),
        filled(nn.Linear(8, 4, bias=False), weight=0.01),
        filled(nn.Linear(8, 4, bias=False), weight=1e-9),  # zero up to 1e-8
    ],
)
def test_assert_params_all_zeros(module):
    expected = mm_testing.assert_params_all_zeros(module)
    assert testing.assert_params_all_zeros(module) == expected


def outcome(function, *args, **kwargs) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # mmengine-lite calls a deprecated torch function
            function(*args, **kwargs)
    except Exception as error:
        return type(error).__name__
    return "close"


@pytest.mark.parametrize(
    ("actual", "expected", "kwargs"),
    [
        (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-6]), {}),
        (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.01]), {}),
        (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.01]), dict(rtol=1e-2, atol=1e-2)),
        (torch.tensor([1.0, 2.0]), [1.0, 2.0], {}),
        ([1, 2], [1, 2], {}),
        (torch.tensor([1, 2]), torch.tensor([1.0, 2.0]), {}),  # dtypes may differ
        (torch.tensor([1.0, math.nan]), torch.tensor([1.0, math.nan]), {}),
        (torch.tensor([1.0, math.nan]), torch.tensor([1.0, math.nan]), dict(equal_nan=False)),
        (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]), dict(rtol=1e-3)),  # atol missing
        (torch.ones(2, dtype=torch.float16), torch.full((2,), 1.0005), {}),
        (np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]), {}),
        (torch.ones(2), torch.ones(3), {}),
    ],
)
def test_assert_allclose(actual, expected, kwargs):
    got = outcome(testing.assert_allclose, actual, expected, **kwargs)
    assert got == outcome(mm_testing.assert_allclose, actual, expected, **kwargs)


def test_assert_allclose_says_where_the_values_differ():
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        testing.assert_allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]))


def test_check_python_script_runs_it_as_main_with_its_arguments(tmp_path, capsys):
    script = tmp_path / "hello.py"
    script.write_text(
        "import argparse, sys\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('name')\n"
        "if __name__ == '__main__':\n"
        "    print(f'hello {parser.parse_args().name} from {sys.argv[0]}')\n"
    )
    testing.check_python_script(f"python {script} 'big world'")
    assert capsys.readouterr().out == f"hello big world from {script}\n"
    testing.check_python_script(f"{script} zz")
    assert capsys.readouterr().out == f"hello zz from {script}\n"
    with pytest.raises(SystemExit):  # argparse refuses the extra argument
        testing.check_python_script(f"{script} li zz")
