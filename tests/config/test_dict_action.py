import argparse
import math
import os

import pytest

from runnerx.config.dict_action import DictAction, parse_option_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        ("-1", -1),
        ("+3", 3),
        ("1_000", 1000),
        ("0.5", 0.5),
        ("1e-3", 0.001),
        ("1.", 1.0),
        ("inf", math.inf),
        ("true", True),
        ("True", True),
        ("FALSE", False),
        ("None", None),
        ("none", "none"),
        ("abc", "abc"),
        ("model.x", "model.x"),
        ("/tmp/work dir", "/tmp/work dir"),
        ("  padded  ", "padded"),
        ("", ""),
    ],
)
def test_scalars(text, expected):
    value = parse_option_value(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1,2]", [1, 2]),
        ("[1, 2]", [1, 2]),
        ("(1,2)", (1, 2)),
        ("(1)", (1,)),
        ("(1,)", (1,)),
        ("[]", []),
        ("[ ]", []),
        ("()", ()),
        ("a,b,1", ["a", "b", 1]),
        ("x,", ["x"]),
        ("1,", [1]),
        ("[1,2,]", [1, 2]),
        ("(a, b, )", ("a", "b")),
        ("a,,b", ["a", "", "b"]),
        ("[(1,2),(3,4)]", [(1, 2), (3, 4)]),
        ("[[a,b],c]", [["a", "b"], "c"]),
        ("[(1, 2, 3), [a, b], c]", [(1, 2, 3), ["a", "b"], "c"]),
        ("[[[[1]]]]", [[[[1]]]]),
        ("([],())", ([], ())),
        ("[1,2],[3]", [[1, 2], [3]]),
        ("[true, None, 0.5, x]", [True, None, 0.5, "x"]),
    ],
)
def test_containers(text, expected):
    assert parse_option_value(text) == expected
    assert repr(parse_option_value(text)) == repr(expected)  # tuple vs list matters


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"1"', "1"),
        ("'None'", "None"),
        ("'a,b'", "a,b"),
        ('"[1,2]"', "[1,2]"),
        ("' spaced out '", " spaced out "),
        ("['a,b', \"(c)\", 3]", ["a,b", "(c)", 3]),
        ("('x',)", ("x",)),
        ("'it''", None),
        ('"it\'s"', "it's"),
        ("don't", "don't"),
        ("''", ""),
        ("f(a,b)", "f(a,b)"),
        ("[f(a,b), g]", ["f(a,b)", "g"]),
    ],
)
def test_quotes_and_brackets_inside_text(text, expected):
    if expected is None:
        with pytest.raises(ValueError):
            parse_option_value(text)
    else:
        assert parse_option_value(text) == expected


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("[1,2", 1, "'[' is never closed"),
        ("1,2]", 4, "']' has no matching opening bracket"),
        ("[1,2)", 5, "expected ']' to close '['"),
        ("[(1,2]", 6, "expected ')' to close '('"),
        ("'abc", 1, "quote ' is never closed"),
        ('["abc]', 2, 'quote " is never closed'),
        ("[1]x", 4, "expected ',' or the end of the value"),
        ("['a' b]", 6, "expected ',' or ']'"),
        ("f(a", 2, "'(' is never closed"),
    ],
)
def test_unbalanced_input_is_a_value_error_pointing_at_the_spot(text, column, message):
    with pytest.raises(ValueError) as info:
        parse_option_value(text)
    text_shown = str(info.value)
    assert message in text_shown
    assert f"column {column}" in text_shown
    assert repr(text) in text_shown
    caret_line = text_shown.splitlines()[-1]
    assert caret_line.index("^") - 4 == column - 1


def test_code_is_never_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    payloads = [
        "__import__('os').system('touch PWNED')",
        "[__import__('os').system('touch PWNED')]",
        'exec(\'open("PWNED", "w")\')',
    ]
    assert parse_option_value(payloads[0]) == payloads[0]
    assert parse_option_value(payloads[1]) == [payloads[0]]
    assert parse_option_value(payloads[2]) == payloads[2]
    assert not os.path.exists("PWNED")


ORACLE_INPUTS = [
    "1", "-1", "1_000", "0", "1e-3", "0.5", "-2.5", "1.", "True", "false", "TRUE",
    "None", "abc", "model.x", "a_b", "[1,2]", "(1,2)", "a,b", "a,b,1", "[(1,2),(3,4)]",
    "[[a,b],c]", "[(1,2,3),[a,b],c]", "[]", "()", "1,", "[1,2,]", "(1)", "(1,)",
    "[true,None,x]", "((1,2),)", "[,]", "a,,b",
]  # fmt: skip


@pytest.mark.parametrize("text", ORACLE_INPUTS)
def test_matches_mmengine(text):
    mmengine_config = pytest.importorskip("mmengine.config")
    expected = mmengine_config.DictAction._parse_iterable(text)
    value = parse_option_value(text)
    assert value == expected
    assert repr(value) == repr(expected)


def make_parser(**kwargs) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="train")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, **kwargs)
    return parser


def test_action_parses_key_value_items():
    args = make_parser().parse_args(
        ["--cfg-options", "model.backbone.depth=50", "x.0.y=2", "pipe=[1,(2,3)]", "eq=a=b"]
    )
    assert args.cfg_options == {
        "model.backbone.depth": 50,
        "x.0.y": 2,
        "pipe": [1, (2, 3)],
        "eq": "a=b",
    }
    assert type(args.cfg_options) is dict


def test_action_without_the_flag_leaves_default():
    assert make_parser().parse_args([]).cfg_options is None


def test_repeated_flags_accumulate_without_touching_the_default():
    default = {"keep": 1}
    parser = make_parser(default=default)
    args = parser.parse_args(["--cfg-options", "a=1", "b=x", "--cfg-options", "a=2", "c=[]"])
    assert args.cfg_options == {"keep": 1, "a": 2, "b": "x", "c": []}
    assert default == {"keep": 1}


@pytest.mark.parametrize("item", ["novalue", "=5"])
def test_item_without_key_value_form_is_a_usage_error(item, capsys):
    with pytest.raises(SystemExit) as info:
        make_parser().parse_args(["--cfg-options", "a=1", item])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--cfg-options" in err
    assert "key=value" in err
    assert repr(item) in err


def test_unparsable_value_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        make_parser().parse_args(["--cfg-options", "a=[1,2"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "a: cannot parse option value '[1,2'" in err
