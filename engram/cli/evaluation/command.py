"""``engram eval formation``: score extractor arms on the labeled corpus.

Runs every case of a corpus file or folder through the deterministic arm, the model arm or
both, prints precision, recall and the safety counts (a rich table, or JSON with ``--json``),
and exits 1 when any arm formed something fabricated, forbidden, untrusted-owner or secret, or
failed.
"""

from __future__ import annotations

import asyncio
import json
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from engram.cli.evaluation.corpus import Case, CorpusError, load_corpus
from engram.cli.evaluation.sample import draw, form_file
from engram.cli.evaluation.scoring import ArmReport, EvaluationReport, evaluate_arm
from engram.cli.evaluation.sheets import render_beliefs, render_messages
from engram.shared.settings import load_settings
from formation.deterministic.arm import deterministic_arm
from ingest.jsonl import InvalidEpisodeLine
from streams.wiring import build_policy, default_policy

eval_app = typer.Typer(
    help="Evaluate formation: a labeled corpus, or sheets to label from real turns.",
    no_args_is_help=True,
)


@eval_app.callback()
def _group() -> None:
    """Evaluate formation against a labeled corpus."""


class ArmChoice(StrEnum):
    DETERMINISTIC = "deterministic"
    MODEL = "model"
    BOTH = "both"


async def _model_report(cases: list[Case]) -> ArmReport:
    # Lazy: the openai client costs ~1 s at import; only the model arm pays it.
    from streams.model_extractor import build_model_extractor

    settings = load_settings()
    extractor = build_model_extractor(settings)
    policy = build_policy(
        settings,
        prompt_digest=extractor.prompt_digest,
        model_identity=extractor.identity,
        extractor_kind="model",
    )
    try:
        return await evaluate_arm("model", cases, extractor.propose, policy)
    finally:
        await extractor.aclose()


async def run_evaluation(cases: list[Case], arm: ArmChoice) -> EvaluationReport:
    reports: list[ArmReport] = []
    if arm in (ArmChoice.DETERMINISTIC, ArmChoice.BOTH):
        reports.append(
            await evaluate_arm("deterministic", cases, deterministic_arm, default_policy())
        )
    if arm in (ArmChoice.MODEL, ArmChoice.BOTH):
        reports.append(await _model_report(cases))
    return EvaluationReport(arms=reports)


_ROWS = (
    ("cases", "cases"),
    ("expected claims", "expected"),
    ("extracted (not allowed)", "extracted"),
    ("matched", "matched"),
    ("precision", "precision"),
    ("recall", "recall"),
    ("fabricated", "fabricated"),
    ("forbidden", "forbidden"),
    ("untrusted owner", "untrusted_owner"),
    ("secrets", "secrets"),
    ("arm errors", "errors"),
)


def render(report: EvaluationReport, console: Console) -> None:
    summary = Table(title="formation quality")
    summary.add_column("measure")
    rows = [arm.to_dict() for arm in report.arms]
    for arm in report.arms:
        summary.add_column(arm.arm, justify="right")
    for title, key in _ROWS:
        summary.add_row(title, *(str(row[key]) for row in rows))
    console.print(summary)
    for arm in report.arms:
        diffs = arm.to_dict()["diffs"]
        if not diffs:
            continue
        table = Table(title=f"{arm.arm}: cases that differ from their labels")
        for column in ("case", "kind", "claim"):
            table.add_column(column)
        for diff in diffs:
            for kind, claims in diff.items():
                if kind == "case":
                    continue
                for claim in claims if isinstance(claims, list) else [claims]:
                    table.add_row(diff["case"], kind, claim)
        console.print(table)
    console.print("[green]ok[/green]" if report.ok else "[red]not ok[/red]")


@eval_app.command("formation")
def formation(
    corpus: Path = typer.Option(..., "--corpus", help="A corpus YAML file or a folder of them."),
    arm: ArmChoice = typer.Option(ArmChoice.DETERMINISTIC, "--arm", help="Which arm(s) to run."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Score the extractor arm(s) on a labeled corpus; exit 1 when anything unsafe formed."""
    try:
        cases = load_corpus(corpus)
    except CorpusError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    report = asyncio.run(run_evaluation(cases, arm))
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        render(report, Console())
    if not report.ok:
        raise typer.Exit(1)


@eval_app.command("sample")
def sample(
    source: Path = typer.Option(..., "--input", help="A JSONL file of turns (episodes)."),
    n: int = typer.Option(200, "--n", min=0, help="How many formed beliefs to draw."),
    seed: int = typer.Option(0, "--seed", help="The draw's seed: same input and seed, same sheet."),
    messages: int | None = typer.Option(
        None, "--messages", min=0, help="Draw N user messages with what formed (recall sheet)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the sheet as JSON."),
) -> None:
    """Print a labeling sheet: N formed beliefs with quotes, or N user messages (recall)."""
    try:
        formed = form_file(source)
    except (OSError, InvalidEpisodeLine) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if messages is not None:
        drawn_messages = draw(formed.messages, messages, seed)
        if as_json:
            typer.echo(json.dumps([m.to_dict() for m in drawn_messages], indent=2))
        else:
            render_messages(drawn_messages, Console())
        return
    drawn = draw(formed.beliefs, n, seed)
    if as_json:
        typer.echo(json.dumps([b.to_dict() for b in drawn], indent=2))
    else:
        render_beliefs(drawn, len(formed.beliefs), Console())
