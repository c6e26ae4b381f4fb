"""MMEngine's comparison helpers for unit tests (``mmengine.testing``).

``assert_allclose`` raises on a mismatch; the other ``assert_*`` helpers *return* whether the
check holds, as MMEngine's do, so a test writes ``assert assert_dict_has_keys(d, ['a'])``::

    from runnerx.testing import assert_allclose, assert_dict_contains_subset

    assert_allclose(model(x), expected, rtol=1e-3, atol=1e-3)
    assert assert_dict_contains_subset(metrics, {'accuracy': 1.0})
"""

from __future__ import annotations

import runpy
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from unittest.mock import patch

import numpy as np
import torch
from torch import nn

from runnerx.utils.dl_utils.misc import is_norm

#: tolerances (rtol, atol) by dtype when none are given: those of torch.testing.assert_allclose
#: (which MMEngine calls; deprecated in torch), with assert_close's for bfloat16
_TOLERANCES = {
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1e-4, 1e-5),
    torch.float64: (1e-5, 1e-8),
}


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str | Callable[[str], str] | None = "",
) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` (tensors, arrays, numbers
    or nested lists of them) are close. Their dtypes may differ; NaNs equal each other unless
    ``equal_nan=False``. Give ``rtol`` and ``atol`` together, or neither to use the defaults
    of the less precise dtype (float32: ``rtol=1e-4, atol=1e-5``)."""
    actual = torch.as_tensor(actual)
    if not isinstance(expected, torch.Tensor):
        expected = torch.as_tensor(expected, dtype=actual.dtype)
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"assert_allclose: give rtol and atol together or neither, got rtol={rtol}, atol={atol}"
        )
    if rtol is None:
        defaults = [_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(d[0] for d in defaults), max(d[1] for d in defaults)
    torch.testing.assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )


def _differs(value: Any, expected: Any) -> bool:
    """Whether ``value != expected`` anywhere; tensors and arrays are compared elementwise
    (broadcast), and ones whose shapes cannot be compared differ."""
    try:
        result = value != expected
    except (RuntimeError, ValueError):
        return True
    if isinstance(result, (torch.Tensor, np.ndarray)):
        return bool(result.any())
    return bool(result)


def assert_dict_contains_subset(dict_obj: Mapping, expected_subset: Mapping) -> bool:
    """Whether ``dict_obj`` has every key of ``expected_subset``, each with an equal value
    (tensors and arrays: equal in every element)."""
    return all(
        key in dict_obj and not _differs(dict_obj[key], value)
        for key, value in expected_subset.items()
    )


def assert_attrs_equal(obj: Any, expected_attrs: Mapping[str, Any]) -> bool:
    """Whether ``obj`` has every attribute named in ``expected_attrs``, each equal to the
    value given there."""
    return all(
        hasattr(obj, name) and not _differs(getattr(obj, name), value)
        for name, value in expected_attrs.items()
    )


def assert_dict_has_keys(obj: Mapping, expected_keys: Iterable) -> bool:
    """Whether every key in ``expected_keys`` is a key of ``obj``."""
    return set(expected_keys) <= set(obj.keys())


def assert_keys_equal(result_keys: Iterable, target_keys: Iterable) -> bool:
    """Whether the two collections hold the same keys, in any order."""
    return set(result_keys) == set(target_keys)


def assert_is_norm_layer(module: nn.Module) -> bool:
    """Whether ``module`` is a batch, instance, group or layer norm layer."""
    return is_norm(module)


def assert_params_all_zeros(module: nn.Module) -> bool:
    """Whether ``module.weight`` (and ``module.bias``, when it has one) is all zeros, up to
    1e-8."""
    tensors = [module.weight, getattr(module, "bias", None)]
    return all(t is None or not t.detach().abs().gt(1e-8).any() for t in tensors)


def check_python_script(cmd: str) -> None:
    """Run a script in this process as ``__main__``, with ``cmd``'s words as ``sys.argv``,
    so that coverage tools see it: ``check_python_script('python tools/train.py cfg.py')``
    (the leading ``python`` is optional). The script's ``SystemExit`` propagates."""
    args = shlex.split(cmd)
    if args and args[0] == "python":
        args = args[1:]
    if not args:
        raise ValueError(f"check_python_script: no script in the command {cmd!r}")
    with patch.object(sys, "argv", args):
        runpy.run_path(args[0], run_name="__main__")
