"""``engram policy show``: the formation policy in force, as the file that states it, and its version.

What it prints is a valid policy file: edit it, pass it back with ``--policy FILE`` (or set
``ENGRAM_FORMATION_POLICY_FILE``), and the version that would be stamped on what forms is
shown before anything forms. It connects to nothing, and never shows a credential: a policy
holds the model's name and endpoint origin, not how to authenticate.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from formation.policy import FormationPolicy
from infra.settings import load_settings
from policies.document import PolicyFileError, policy_summary, render_policy_yaml
from streams.prompt import PromptError
from streams.wiring import effective_policy

policy_app = typer.Typer(
    no_args_is_help=True, help="The formation policy: what decides what forms, and its version."
)


@policy_app.command("show")
def show(
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            dir_okay=False,
            help="A policy file to load and check (default: ENGRAM_FORMATION_POLICY_FILE, "
            "else the settings).",
        ),
    ] = None,
    json: Annotated[
        bool, typer.Option("--json", help="Version, policy and digests as one JSON object.")
    ] = False,
) -> None:
    """Print the effective formation policy in the YAML that --policy accepts, with its version."""
    effective = _load(policy)
    if json:
        summary = orjson.dumps(policy_summary(effective), option=orjson.OPT_INDENT_2)
        sys.stdout.write(summary.decode() + "\n")
    else:
        sys.stdout.write(render_policy_yaml(effective))


def _load(path: Path | None) -> FormationPolicy:
    """The policy, or exit 2 with the problem: a bad file must never be half applied.

    Every way a policy can be wrong is a ``ValueError``: the file (:class:`PolicyFileError`),
    the prompt (:class:`PromptError`) or the model settings (``ModelConfigurationError``, not
    named here so that a deterministic policy never pays for importing the model client).
    """
    try:
        return effective_policy(load_settings(), path)
    except (PolicyFileError, PromptError, ValueError) as error:
        typer.echo(f"policy refused: {error}", err=True)
        raise typer.Exit(2) from None
