"""A JSON body that cannot be read is a ``JSONDecodeError`` saying where (which FastAPI answers
as its 422), never the bare 400 a ``UnicodeDecodeError`` or ``RecursionError`` fell to."""

from __future__ import annotations

import json

import pytest

from engram.web.json_body import UnusableNumbers, read_json


def test_a_body_that_is_not_utf8_names_the_byte_line_and_column() -> None:
    with pytest.raises(json.JSONDecodeError) as error:
        read_json(b'{"a": 1,\n "b": "\xc3\xa9\xff"}')
    assert error.value.msg == "the body is not UTF-8: byte 0xff (byte 18) at line 2, column 9"
    assert error.value.pos == 17  # in characters: é is one


def test_a_body_nested_past_what_python_reads_is_named() -> None:
    with pytest.raises(json.JSONDecodeError, match="nest too deeply"):
        read_json(b"[" * 100_000 + b"]" * 100_000)


def test_a_syntax_error_says_its_line_and_column() -> None:
    with pytest.raises(json.JSONDecodeError) as error:
        read_json(b'{"a": 1,\n  x}')
    assert (
        error.value.msg == "Expecting property name enclosed in double quotes at line 2, column 3"
    )


def test_valid_json_is_read_as_it_is() -> None:
    assert read_json('{"a": ["é", 1]}'.encode()) == {"a": ["é", 1]}


def test_numbers_no_field_can_hold_are_named_where_they_are() -> None:
    with pytest.raises(UnusableNumbers) as error:
        read_json(b'{"a": [1, NaN, {"b": 1e400}], "c": -Infinity, "d": ' + b"9" * 5000 + b"}")
    found = [(e["loc"], e["input"]) for e in error.value.errors]
    assert found[:3] == [
        (["body", "a", 1], "NaN"),
        (["body", "a", 2, "b"], "1e400"),
        (["body", "c"], "-Infinity"),
    ]
    assert found[3][0] == ["body", "d"] and "(5000 characters)" in found[3][1]
    assert all(len(str(e["input"])) < 80 for e in error.value.errors)


def test_finite_floats_and_long_but_readable_integers_are_read() -> None:
    assert read_json(b'{"a": 1e308, "b": -0.0, "c": 12345678901234567890}') == {
        "a": 1e308,
        "b": -0.0,
        "c": 12345678901234567890,
    }
