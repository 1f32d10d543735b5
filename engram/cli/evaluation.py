"""``engram eval``: the evaluation harness, where it is installed.

The harness (``evaluation/`` in the repository, importable as ``engram.evaluation``) scores
formation on a labeled corpus, records the evidence a model arm needs, draws labeling sheets and
measures the coverage of known facts and recall. It is a tool for developing Engram, not part of
the product: the wheel leaves it out (``pyproject.toml``), so a deployment carries none of its
code. A checkout's install (``make install``: an editable install of the repository) has it.

The command line finds it by name when the CLI is built: with it, ``engram eval`` is its
commands; without it, ``engram eval`` says where the harness comes from and exits 2.
"""

from __future__ import annotations

import importlib
import importlib.util

import typer

HARNESS = "engram.evaluation"
MISSING = (
    "the evaluation harness is not installed: it comes with a checkout of the Engram repository "
    "(evaluation/; `make install` installs it), not with the wheel"
)


def add_eval(app: typer.Typer) -> None:
    """Add ``eval`` to ``app``: the harness's commands, or one that says the harness is
    missing (whatever arguments it is given)."""
    help_text = "Evaluate formation against a labeled corpus."
    if importlib.util.find_spec(HARNESS) is None:
        app.command(
            "eval", help=f"{help_text} Needs the harness of a checkout.", context_settings=_ANY
        )(_missing)
        return
    harness = importlib.import_module(f"{HARNESS}.command").eval_app
    if not isinstance(harness, typer.Typer):
        raise TypeError(f"{HARNESS}.command.eval_app is not a typer application")
    app.add_typer(harness, name="eval", help=help_text)


_ANY = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


def _missing() -> None:
    typer.echo(f"error: {MISSING}", err=True)
    raise typer.Exit(2)
