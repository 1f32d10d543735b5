"""Rendering the inspector's pages: one Jinja2 environment, autoescaping every template and
showing every hidden character.

Every quote, statement and name on a page is someone's text, so the environment escapes every
value by default (``autoescape=True`` for all templates, whatever their name), and no template
marks anything safe. It also *shows* every value: each printed string passes through
:func:`engram.infra.visible.shown` (the environment's ``finalize``), so a right-to-left override
or a zero-width character in stored text appears as a visible marker instead of rearranging or
hiding what the page says. The one exception is a form field that must send back the exact text
it was given (a hidden replacement, the question box): the template writes it ``|verbatim``.
Templates isolate user text besides (``<bdi>``, ``dir="auto"``), so a right-to-left name never
reorders the sentence around it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from engram.infra.visible import shown
from engram.web.ui.words import confidence_words, reason_words, relation_label, when


class Verbatim(str):
    """A string printed exactly as it is: a form field's value that must come back unchanged."""

    __slots__ = ()


def verbatim(value: object) -> Verbatim:
    return Verbatim("" if value is None else value)


def visible(value: object) -> object:
    """What every ``{{ … }}`` prints: a string with its hidden characters shown (then escaped);
    a :class:`Verbatim` string, the template's own markup, and anything else as they are."""
    if isinstance(value, str) and not isinstance(value, Verbatim | Markup):
        return shown(value)
    return value


ENVIRONMENT = Environment(
    loader=PackageLoader("engram.web.ui", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    finalize=visible,
)
ENVIRONMENT.filters.update(
    confidence_words=confidence_words,
    reason_words=reason_words,
    relation_label=relation_label,
    verbatim=verbatim,
    when=when,
)


def render(
    request: Request,
    template: str,
    context: Mapping[str, Any],
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    """A page: ``template`` with ``context`` (which carries the viewer, the CSRF token and the
    freshness line where there is a viewer)."""
    body = ENVIRONMENT.get_template(template).render({"request_path": request.url.path, **context})
    return HTMLResponse(body, status_code=status_code, headers=dict(headers or {}))
