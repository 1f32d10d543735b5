"""Rendering labeling sheets as rich tables, with an empty column for the labeler."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from engram.cli.evaluation.sample import FormedBelief, FormedMessage


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
