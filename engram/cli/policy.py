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

from engram.cli.output import console, err
from engram.formation.policy import FormationPolicy
from engram.infra.settings import load_settings
from engram.policies.behaviour import (
    behaviour_digest,
    behaviour_file,
    committed_behaviour_digest,
    pinned_corpus,
    render_behaviour_file,
)
from engram.policies.document import PolicyFileError, policy_summary, render_policy_yaml
from engram.policies.in_force import effective_policy
from engram.policies.prompt import PromptError

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


@policy_app.command("behaviour")
def behaviour(
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Write the digest to engram/policies/behaviour.sha256 (a change of behaviour).",
        ),
    ] = False,
    corpus: Annotated[
        Path, typer.Option(help="The labelled corpus that leads the pinned corpus.")
    ] = Path("tests/corpus"),
) -> None:
    """Compute the behaviour digest (the formation and resolution cores over the pinned corpus)
    and compare it with the committed one; with --write, commit the new one.

    A change that alters what forms changes the digest, and so the policy version: say in the
    release that it needs a re-derivation (docs/rederivation.md). Run from a checkout."""
    if not corpus.is_dir():
        err.print(f"[red]no corpus at {corpus}[/red]: run from a checkout of Engram")
        raise typer.Exit(2)
    episodes = pinned_corpus(corpus)
    computed = behaviour_digest(episodes)
    committed = committed_behaviour_digest()
    if write:
        behaviour_file().write_text(render_behaviour_file(computed, episodes), encoding="utf-8")
        console.print(f"wrote {computed} to {behaviour_file()}")
        if computed != committed:
            console.print(
                f"the policy version changes ({committed[:12]} -> {computed[:12]}): a release "
                "with this change needs a re-derivation (docs/rederivation.md)"
            )
        return
    console.print(f"computed  {computed}\ncommitted {committed}")
    if computed != committed:
        err.print(
            "[red]the cores' behaviour changed[/red]: run `engram policy behaviour --write` and "
            "say in the release that it needs a re-derivation"
        )
        raise typer.Exit(1)
