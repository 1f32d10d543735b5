"""A JSON body that cannot be read is a ``JSONDecodeError`` saying where (which FastAPI answers
as its 422), never the bare 400 a ``UnicodeDecodeError`` or ``RecursionError`` fell to."""

from __future__ import annotations

import json

import pytest

from engram.web.json_body import read_json


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
