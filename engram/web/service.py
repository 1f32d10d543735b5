"""The corrections service of a request: built once here for every route that changes memory —
the API's (``engram.api``) and the inspector's (``engram.web.ui.changes``) — from the app's
pool, settings and sealer, so both doors write through the same checks."""

from __future__ import annotations

from fastapi import Request

from engram.service.corrections import Corrections
from engram.service.erasures import Erasures


def corrections_of(request: Request) -> Corrections:
    settings = request.app.state.settings
    return Corrections(
        request.app.state.pool,
        settings.kafka,
        policy_file=settings.formation.policy_file,
        sealer=request.app.state.sealer,
    )


def erasures_of(request: Request) -> Erasures:
    """The receipts of erasures, for the API's and the inspector's answers alike."""
    return Erasures(request.app.state.pool, request.app.state.settings.kafka)
