"""Helpers for testing your own components (MMEngine's ``mmengine.testing``): comparison
helpers and :class:`RunnerTestCase`, which builds real Runners on toy components."""

from .compare import (
    assert_allclose,
    assert_attrs_equal,
    assert_dict_contains_subset,
    assert_dict_has_keys,
    assert_is_norm_layer,
    assert_keys_equal,
    assert_params_all_zeros,
    check_python_script,
)
from .runner_test_case import RunnerTestCase

__all__ = [
    "RunnerTestCase",
    "assert_allclose",
    "assert_attrs_equal",
    "assert_dict_contains_subset",
    "assert_dict_has_keys",
    "assert_is_norm_layer",
    "assert_keys_equal",
    "assert_params_all_zeros",
    "check_python_script",
]
