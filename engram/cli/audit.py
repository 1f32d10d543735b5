"""``engram runs``, ``engram sessions diagnose`` and ``engram user-model``: the audit reads of
the API, from the command line, through the same query functions the API serves."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import typer

from engram.cli.beliefs import (
    REFUSAL_COLUMNS,
    GenerationOption,
    Json,
    OnlyProject,
    PageCursor,
    PageLimit,
    Principal,
    Since,
    Tenant,
)
from engram.cli.output import (
    Columns,
    PageAsked,
    console,
    field,
    one_of_principal,
    print_listed,
    print_rows,
    query_one,
)
from engram.projections.reads.diagnosis import diagnose_session
from engram.projections.reads.runs import RunFilter, page_runs, run_detail
from engram.projections.reads.user_model import user_model as read_user_model

runs_app = typer.Typer(no_args_is_help=True, help="Formation runs: what each consolidation did.")
sessions_app = typer.Typer(no_args_is_help=True, help="Why a session formed what it formed.")


def _counts(run: dict[str, Any]) -> str:
    counts = run["counts"]
    return " ".join(f"{name}={counts[name]}" for name in ("proposed", "committed", "refused"))


RUN_COLUMNS: Columns = {
    "run": lambda r: str(r["run_id"])[:8],
    "at": field("occurred_at"),
    "project": field("project"),
    "session": field("session"),
    "trigger": field("trigger"),
    "offset": field("source_offset"),
    "counts": _counts,
    "policy": lambda r: str(r["policy_version"])[:12],
}
BRIEF_COLUMNS: Columns = {c: field(c) for c in ("statement", "status", "confidence")}


@runs_app.command("list")
def runs_list(
    principal: Principal,
    tenant: Tenant = "default",
    project: OnlyProject = None,
    session: Annotated[str | None, typer.Option(help="Only this session.")] = None,
    trigger: Annotated[str | None, typer.Option(help="turn, explicit or correction.")] = None,
    since: Since = None,
    limit: PageLimit = 100,
    cursor: PageCursor = None,
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """List formation runs in event-time order: policy, source position, counts."""
    chosen = RunFilter(project=project, session=session, trigger=trigger, since=since)
    asked = PageAsked(tenant, principal, limit, cursor, generation, json)
    print_listed(page_runs, chosen, asked, what="runs", columns=RUN_COLUMNS)


@runs_app.command("show")
def runs_show(
    run_id: Annotated[uuid.UUID, typer.Argument(help="The run's id.")],
    principal: Principal,
    tenant: Tenant = "default",
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """One run: what it formed, reinforced and refused, its episode's attempts, the watermark."""
    detail = one_of_principal(
        lambda conn: run_detail(conn, tenant=tenant, principal=principal, run_id=run_id),
        generation,
        tenant=tenant,
        principal=principal,
        missing=f"run {run_id}",
    )
    if json:
        print_rows([detail], json=True, title="")
        return
    print_rows([detail["run"]], json=False, title="run", columns=RUN_COLUMNS)
    if detail["progress"] is not None:
        print_rows([detail["progress"]], json=False, title="episode progress")
    print_rows(detail["formed"], json=False, title="formed", columns=BRIEF_COLUMNS)
    print_rows(detail["reinforced"], json=False, title="reinforced", columns=BRIEF_COLUMNS)
    print_rows(detail["refusals"], json=False, title="refused", columns=REFUSAL_COLUMNS)
    fresh = detail["freshness"]
    console.print(
        f"{fresh['project']}: formed through {fresh['formed_offset']} of {fresh['log_offset']}"
        f" ({fresh['parked']} parked)"
    )


@sessions_app.command("diagnose")
def sessions_diagnose(
    session: Annotated[str, typer.Argument(help="The session's id.")],
    principal: Principal,
    tenant: Tenant = "default",
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """What a session formed, what was refused and why, attempts and parking (no messages)."""
    found = one_of_principal(
        lambda conn: diagnose_session(conn, tenant=tenant, principal=principal, session=session),
        generation,
        tenant=tenant,
        principal=principal,
        missing=f"session {session}",
    )
    if json:
        print_rows([found], json=True, title="")
        return
    print_rows(
        found["episodes"],
        json=False,
        title=f"episodes of session {session} ({found['parked']} parked)",
        columns={
            "episode": lambda e: str(e["episode_id"])[:8],
            "project": field("project"),
            "offset": field("offset"),
            "state": lambda e: e["progress"]["state"] if e["progress"] else "formed",
            "attempts": lambda e: str(e["progress"]["attempts"]) if e["progress"] else "-",
            "counts": lambda e: _counts(e) if e["counts"] else "-",
        },
    )
    print_rows(
        found["formed"],
        json=False,
        title="formed or reinforced",
        columns={
            **BRIEF_COLUMNS,
            "evidence": lambda f: "\n".join(f"“{e['quote']}”" for e in f["evidence"]),
        },
    )
    print_rows(found["refused_by_reason"], json=False, title="refused, by reason")


def user_model(
    principal: Principal,
    tenant: Tenant = "default",
    json: Json = False,
    generation: GenerationOption = None,
) -> None:
    """What holds about a person everywhere: user-scope attributes and preferences."""
    model = query_one(
        lambda conn: read_user_model(conn, tenant=tenant, principal=principal),
        generation,
        principal=(tenant, principal),
    )
    assert model is not None
    print_rows(
        model["entries"],
        json=json,
        title=f"user model of {tenant}/{principal}"
        + (" (truncated)" if model["truncated"] else ""),
        columns={
            c: field(c) for c in ("relation", "facet", "value", "confidence", "corroboration")
        },
    )
