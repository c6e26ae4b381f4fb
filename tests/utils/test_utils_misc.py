"""runnerx.utils.misc and deprecation: the same answers as mmengine.utils on the same inputs."""

import logging
import warnings
from collections import OrderedDict, namedtuple

import mmengine.utils as mm
import numpy as np
import pytest

import runnerx.logging.logger as logger_module
import runnerx.utils as rx

SEQS = [
    ["a", "b"],
    ("a", "b"),
    [1, "b"],
    [],
    (),
    "abc",
    [1, 2.0],
    {"a": 1},
    [True, 1],
    range(3),
    None,
]
TYPES = [str, int, (int, float), object]
SEQ_TYPES = [None, list, tuple, str]


def test_every_name_of_mmengine_utils_is_here():
    assert set(mm.__all__) <= set(rx.__all__)
    namespace = {}
    exec("from runnerx.utils import *", namespace)
    assert set(mm.__all__) <= set(namespace)


@pytest.mark.parametrize("seq", SEQS, ids=repr)
def test_sequence_checks_agree_with_mmengine(seq):
    for expected_type in TYPES:
        for seq_type in SEQ_TYPES:
            ours = rx.is_seq_of(seq, expected_type, seq_type)
            assert ours == mm.is_seq_of(seq, expected_type, seq_type), (expected_type, seq_type)
        assert rx.is_list_of(seq, expected_type) == mm.is_list_of(seq, expected_type)
        assert rx.is_tuple_of(seq, expected_type) == mm.is_tuple_of(seq, expected_type)
    assert rx.is_str(seq) == mm.is_str(seq)


def test_a_seq_type_that_is_not_a_type_is_refused():
    with pytest.raises(TypeError, match="seq_type must be a type"):
        rx.is_seq_of([1], int, seq_type="list")


@pytest.mark.parametrize("value", [3, 2.5, (1, 2), [4, 5, 6], "ab", None, np.int64(7)], ids=repr)
def test_ntuples_agree_with_mmengine(value):
    for ours, theirs in [
        (rx.to_1tuple, mm.to_1tuple),
        (rx.to_2tuple, mm.to_2tuple),
        (rx.to_3tuple, mm.to_3tuple),
        (rx.to_4tuple, mm.to_4tuple),
        (rx.to_ntuple(5), mm.to_ntuple(5)),
    ]:
        assert ours(value) == theirs(value)


def test_casts_slices_and_concat_agree_with_mmengine():
    assert list(rx.iter_cast(["1", "2"], int)) == list(mm.iter_cast(["1", "2"], int))
    assert rx.list_cast("123", int) == mm.list_cast("123", int)
    assert rx.tuple_cast([1.5, 2.5], str) == mm.tuple_cast([1.5, 2.5], str)
    with pytest.raises(TypeError):
        rx.iter_cast(5, int)
    with pytest.raises(TypeError):
        rx.iter_cast([1], "int")
    items = list(range(10))
    for lens in (2, 5, [1, 2, 3, 4], [10], [0, 10]):
        assert rx.slice_list(items, lens) == mm.slice_list(items, lens)
    with pytest.raises(ValueError, match="add up to 9"):
        rx.slice_list(items, [4, 5])
    with pytest.raises(ValueError, match="does not divide"):
        rx.slice_list(items, 3)
    nested = [[1, 2], (3,), [], range(4, 6)]
    assert rx.concat_list(nested) == mm.concat_list(nested)


def test_apply_to_agrees_with_mmengine_and_keeps_container_types():
    Point = namedtuple("Point", "x y")
    data = OrderedDict(
        a=[np.array(1), 2, (np.array([3, 4]), "s")],
        b=Point(np.array(5.0), {"c": np.array(6)}),
        d=None,
    )

    def is_array(x):
        return isinstance(x, np.ndarray)

    ours = rx.apply_to(data, is_array, lambda x: x.tolist())
    theirs = mm.apply_to(data, is_array, lambda x: x.tolist())
    assert ours == theirs
    assert type(ours) is OrderedDict and type(ours["b"]) is Point
    assert type(ours["a"][2]) is tuple
    assert ours["b"].y == {"c": 6}


class Base:
    def step(self):
        pass

    def keep(self):
        pass

    name = "base"


class Derived(Base):
    def step(self):
        pass


def test_method_checks_agree_with_mmengine():
    for method in ("step", "keep"):
        for derived in (Derived, Derived(), Base):
            ours = rx.is_method_overridden(method, Base, derived)
            assert ours == mm.is_method_overridden(method, Base, derived)
    assert rx.is_method_overridden("step", Base, Derived())
    with pytest.raises(TypeError, match="base_class must be a class"):
        rx.is_method_overridden("step", Base(), Derived)
    for obj, method in [
        (Derived(), "step"),
        (Derived(), "name"),
        (Derived(), "missing"),
        (1, "bit_length"),
    ]:
        assert rx.has_method(obj, method) == mm.has_method(obj, method)


@pytest.mark.parametrize(
    "name",
    [
        "os",
        "os.path",
        "os.path.join",
        "collections.OrderedDict",
        "torch.optim.SGD",
        "torch.optim.sgd.SGD",
        "torch.nn.functional.relu",
        "json.decoder.JSONDecoder.decode",
        "runnerx.utils.misc.apply_to",
        "no_such_module_xyz",
        "os.no_such_name",
        "os.path.join.no_attribute",
        "runnerx.no_such_module",
        "torch.optim.SGD.sgd",  # no attribute of the class, though torch.optim.sgd exists
    ],
)
def test_get_object_from_string_agrees_with_mmengine(name):
    assert rx.get_object_from_string(name) is mm.get_object_from_string(name)


def test_get_object_from_string_prefers_an_attribute_to_a_submodule(tmp_path, monkeypatch):
    package = tmp_path / "utils_ops_pkg"
    package.mkdir()
    (package / "nms.py").write_text("def nms():\n    return 'function'\n")
    (package / "__init__.py").write_text("from .nms import nms\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = rx.get_object_from_string("utils_ops_pkg.nms")
    assert callable(found) and found() == "function"
    assert found is mm.get_object_from_string("utils_ops_pkg.nms")


def test_import_modules_from_strings_is_runnerx_custom_imports_one():
    import os.path

    from runnerx.config import import_modules_from_strings

    assert rx.import_modules_from_strings is import_modules_from_strings
    assert rx.import_modules_from_strings(["os.path", "json"])[0] is os.path
    with pytest.warns(UserWarning, match="no_such_module_xyz"):
        assert rx.import_modules_from_strings("no_such_module_xyz", True) is None


def test_deprecated_api_warning_renames_old_arguments():
    @rx.deprecated_api_warning({"old": "new"}, cls_name="Thing")
    def make(new=1, other=2):
        return new, other

    with pytest.warns(DeprecationWarning, match='"old" is deprecated in `Thing.make`'):
        assert make(old=5, other=3) == (5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert make(7) == (7, 2)  # the new name, positionally: no warning
    with pytest.raises(TypeError, match="both 'old' and 'new'"):
        make(old=1, new=2)

    @rx.deprecated_api_warning({"old": "new"})
    def still_old(old=1):
        return old

    with pytest.warns(DeprecationWarning, match="still_old"):
        assert still_old(4) == 4


def test_deprecated_function_logs_each_call_and_notes_the_docstring(caplog, monkeypatch):
    @rx.deprecated_function("0.2.0", "0.4.0", "use new_thing instead")
    def old_thing(x):
        """Double x.

        More words.
        """
        return 2 * x

    logger = logging.getLogger("utils_deprecation_test")
    monkeypatch.setattr(logger_module, "_current_logger", logger)  # where 'current' logs
    with caplog.at_level(logging.WARNING, logger="utils_deprecation_test"):
        assert old_thing(3) == 6
        assert old_thing(4) == 8
    assert len(caplog.records) == 2
    assert "is deprecated in version 0.2.0 and will be removed in version 0.4.0" in caplog.text
    assert "Please use new_thing instead." in caplog.text
    assert old_thing.__doc__.startswith(".. deprecated:: 0.2.0")
    assert "Double x." in old_thing.__doc__ and "More words." in old_thing.__doc__


def test_prerequisite_decorators():
    @rx.requires_package(["json", "no_such_package_xyz"])
    def needs_packages():
        return "ran"

    @rx.requires_package("json")
    def needs_json():
        return "ran"

    @rx.requires_executable("no_such_program_xyz")
    def needs_program():
        return "ran"

    @rx.requires_executable(["sh"])
    def needs_sh():
        return "ran"

    with pytest.raises(RuntimeError, match='"no_such_package_xyz" are required in method "needs_'):
        needs_packages()
    with pytest.raises(RuntimeError, match="no_such_program_xyz"):
        needs_program()
    assert needs_json() == needs_sh() == "ran"
