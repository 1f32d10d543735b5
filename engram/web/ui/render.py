"""Rendering the inspector's pages: one Jinja2 environment, autoescaping every template.

Every quote, statement and name on a page is someone's text, so the environment escapes every
value by default (``autoescape=True`` for all templates, whatever their name), and no template
marks anything safe. Helpers the templates call are registered here, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined

from engram.web.ui.words import confidence_words, reason_words, relation_label, when

ENVIRONMENT = Environment(
    loader=PackageLoader("engram.web.ui", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
ENVIRONMENT.filters.update(
    confidence_words=confidence_words,
    reason_words=reason_words,
    relation_label=relation_label,
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
