"""A token's grant decides whom a request is about: outside it is 404 (reads) or 403
(appends), never a peek at whether anything is there."""

from __future__ import annotations

import uuid

from fastapi import HTTPException

from engram.service.tokens import Grant
from engram.web.auth import Caller

ANA = Caller(Grant("acme", "ana", uuid.uuid4()))
OPERATOR = Caller(Grant("acme", None, uuid.uuid4()))
DEV = Caller(None)


def _status(call: object, *args: str | None) -> int:
    try:
        call(*args)  # type: ignore[operator]
    except HTTPException as refused:
        return refused.status_code
    return 200


def test_a_principals_token_defaults_to_itself_and_finds_nobody_else() -> None:
    assert ANA.principal(None, None) == ("acme", "ana")
    assert ANA.principal("acme", "ana") == ("acme", "ana")
    assert _status(ANA.principal, "acme", "bo") == 404
    assert _status(ANA.principal, "other", "ana") == 404
    assert _status(ANA.tenant, "other") == 404


def test_an_operator_names_any_principal_of_its_tenant_and_no_other_tenant() -> None:
    assert OPERATOR.principal(None, "bo") == ("acme", "bo")
    assert _status(OPERATOR.principal, None, None) == 422
    assert _status(OPERATOR.principal, "other", "bo") == 404


def test_appending_for_someone_else_is_forbidden_not_hidden() -> None:
    ANA.append("acme", "ana")
    OPERATOR.append("acme", "bo")
    assert _status(ANA.append, "acme", "bo") == 403
    assert _status(OPERATOR.append, "other", "bo") == 403
    assert ANA.writer(None, None) == ("acme", "ana")


def test_development_mode_takes_the_principal_from_the_query() -> None:
    assert DEV.principal(None, "bo") == ("default", "bo")
    assert _status(DEV.principal, None, None) == 422
    DEV.append("anyone", "at-all")
