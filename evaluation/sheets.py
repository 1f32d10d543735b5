"""Rendering labeling sheets as rich tables, with an empty column for the labeler."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table

from engram.evaluation.coverage import CoverageReport
from engram.evaluation.sample import FormedBelief, FormedMessage


def render_beliefs(beliefs: list[FormedBelief], formed: int, console: Console) -> None:
    table = Table(title=f"{len(beliefs)} of {formed} formed beliefs (label: C / T / W)")
    for column in ("#", "statement", "conf", "quote", "label"):
        table.add_column(column)
    for number, belief in enumerate(beliefs, start=1):
        table.add_row(str(number), belief.statement, f"{belief.confidence:.2f}", belief.quote, "")
    console.print(table)


def render_messages(messages: list[FormedMessage], console: Console) -> None:
    table = Table(title=f"{len(messages)} user messages (label: durable facts / caught)")
    for column in ("#", "message", "formed", "facts", "caught"):
        table.add_column(column)
    for number, message in enumerate(messages, start=1):
        table.add_row(str(number), message.content, "\n".join(message.formed) or "-", "", "")
    console.print(table)


_COVERAGE_COLUMNS = (
    ("principal", "principal"),
    ("facts", "facts"),
    ("covered", "covered"),
    ("share", "share"),
    ("reachable", "reachable"),
    ("messages", "messages"),
    ("forming", "messages_forming"),
    ("forming share", "messages_forming_share"),
    ("beliefs", "beliefs"),
    ("beliefs / message", "beliefs_per_message"),
)


_TOP_DETAILS = 15


def _render_model(report: CoverageReport, console: Console) -> None:
    """The model arm's calls and answers, then refusals by reason and the commonest details."""
    if report.model is not None:
        for key, value in report.model.items():
            line = f"model {key}: {value}"
            console.print(f"[red]{line}[/red]" if key == "stale" and value else line)
    reasons: Counter[tuple[str, str]] = Counter()
    for (arm, reason, _), count in report.refusals.items():
        reasons[(arm, reason)] += count
    table = Table(title="refusals by reason")
    for column in ("arm", "reason", "count"):
        table.add_column(column)
    for (arm, reason), count in sorted(reasons.items()):
        table.add_row(arm, reason, str(count))
    console.print(table)
    details = Table(title=f"refusals: the {_TOP_DETAILS} commonest details")
    for column in ("arm", "reason", "detail", "count"):
        details.add_column(column)
    ranked = sorted(report.refusals.items(), key=lambda item: (-item[1], item[0]))
    for (arm, reason, detail), count in ranked[:_TOP_DETAILS]:
        details.add_row(arm, reason, detail, str(count))
    console.print(details)


def render_coverage(report: CoverageReport, console: Console) -> None:
    """The coverage table, then any uncovered facts drawn, each evidence message with what
    formation proposed, refused and abstained from."""
    table = Table(
        title=f"fact coverage ({report.arm} arm, policy {report.policy_version}): "
        "a proxy — read what forms"
    )
    for title, _ in _COVERAGE_COLUMNS:
        table.add_column(title, justify="left" if title == "principal" else "right")
    rows = [p.to_dict() for p in report.principals]
    for row in rows:
        table.add_row(*(_cell(row[key]) for _, key in _COVERAGE_COLUMNS))
    total = report.total.to_dict()
    table.add_row(*(f"[bold]{_cell(total[key])}[/bold]" for _, key in _COVERAGE_COLUMNS))
    console.print(table)
    console.print(
        "reachable: facts with an evidence message the principal spoke; forming: the "
        "principal's messages cited by a belief"
    )
    if report.unknown_evidence:
        console.print(f"[yellow]{report.unknown_evidence} evidence ids name no turn[/yellow]")
    _render_model(report, console)
    if not report.missed:
        return
    missed = Table(title=f"{len(report.missed)} uncovered facts and their evidence messages")
    for column in ("#", "fact", "role", "message", "proposed", "refused", "abstained"):
        missed.add_column(column)
    for number, item in enumerate(report.missed, start=1):
        if not item.messages:
            missed.add_row(str(number), item.fact.text, "-", "(no such turn)", "", "", "")
        for index, (message, abstained) in enumerate(
            zip(item.messages, item.abstained, strict=True)
        ):
            missed.add_row(
                str(number) if index == 0 else "",
                item.fact.text if index == 0 else "",
                message.role,
                message.content,
                "\n".join(message.proposed) or "-",
                "\n".join(message.refused) or "-",
                "\n".join(abstained) or "-",
            )
    console.print(missed)


def _cell(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
