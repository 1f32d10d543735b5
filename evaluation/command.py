"""``engram eval formation``: score extractor arms on the labeled corpus.

Runs every case of a corpus file or folder through the deterministic arm, the model arm or
both, prints precision, recall and the safety counts (a rich table, or JSON with ``--json``),
and exits 1 when any arm formed something fabricated, forbidden, untrusted-owner or secret, or
failed. With ``--record`` it also writes the model arm's evaluation artifact, the evidence a
``model`` or ``both`` worker needs to start (:mod:`engram.streams.model.evidence`), and exits 1 when
that evidence does not pass. ``engram eval sample`` draws labeling sheets from real turns and
``engram eval coverage`` measures how many known facts formed a belief (:mod:`.coverage`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from engram.evaluation.answers import AnswersError, StaleAnswers, load_answers
from engram.evaluation.corpus import Case, CorpusError, load_corpus
from engram.evaluation.coverage import CoverageReport, Fact, FactsError, load_facts, measure
from engram.evaluation.evidence import corpus_digest, evaluate_model, record, score
from engram.evaluation.model_eval import (
    model_coverage,
    open_answers,
    replay_settings,
    replayed_cases,
    with_section,
    write_corpus_requests,
)
from engram.evaluation.recall import QuestionsError, evaluate
from engram.evaluation.replay import ReplayServer
from engram.evaluation.sample import (
    draw,
    draw_excluding,
    form_file,
    parse_earlier,
    sheet_keys,
)
from engram.evaluation.scoring import ArmReport, EvaluationReport, evaluate_arm
from engram.evaluation.sheets import render_beliefs, render_coverage, render_messages
from engram.formation.deterministic.arm import deterministic_arm
from engram.formation.policy import FormationPolicy
from engram.infra.settings import Settings, load_settings
from engram.ingest.jsonl import InvalidEpisodeLine
from engram.policies.document import PolicyFileError
from engram.policies.endpoint import ModelConfigurationError
from engram.policies.in_force import default_policy, effective_policy, model_policy
from engram.policies.prompt import PromptError
from engram.projections.messages.embeddings.wiring import embedder_from_settings
from engram.streams.model.evidence import Evidence, evidence_for, write_evidence
from engram.streams.wiring import evidence_path

_ANSWERS_HELP = (
    "A JSONL file of recorded model answers ({key, claims} a line, key = SHA-256 of role, "
    "NUL, message): the model arm answers from it instead of an endpoint."
)
_PROMPT_HELP = (
    "The SHA-256 of the prompt file the answers were recorded for, when the file has no "
    '{"prompt_sha256": ...} header line.'
)
_STALE_HELP = (
    "Use answers recorded for another prompt than the one in force; the report says they are stale."
)

eval_app = typer.Typer(
    help="Evaluate formation: a labeled corpus, sheets to label from real turns, or the "
    "coverage of known facts.",
    no_args_is_help=True,
)


@eval_app.callback()
def _group() -> None:
    """Evaluate formation against a labeled corpus."""


class ArmChoice(StrEnum):
    DETERMINISTIC = "deterministic"
    MODEL = "model"
    BOTH = "both"


def _model_policy() -> FormationPolicy:
    """The policy a model worker with these settings runs, or exit 2 saying what is wrong."""
    try:
        return model_policy(load_settings())
    except (ModelConfigurationError, PolicyFileError, PromptError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


async def run_evaluation(
    cases: list[Case], arm: ArmChoice, policy: FormationPolicy | None = None
) -> EvaluationReport:
    """``policy`` is the model policy, required when a model arm runs."""
    reports: list[ArmReport] = []
    if arm in (ArmChoice.DETERMINISTIC, ArmChoice.BOTH):
        reports.append(
            await evaluate_arm("deterministic", cases, deterministic_arm, default_policy())
        )
    if arm in (ArmChoice.MODEL, ArmChoice.BOTH):
        if policy is None:
            raise ValueError("the model arm needs the model policy")
        reports.append(await evaluate_model(load_settings(), policy, cases))
    return EvaluationReport(arms=reports)


def _record(cases: list[Case], output: Path | None, as_json: bool) -> None:
    """Evaluate both arms under the model policy, write the evidence, say whether it passes."""
    settings = load_settings()
    policy = _model_policy()
    evidence, reports = asyncio.run(record(settings, policy, cases))
    path = output or evidence_path(settings)
    write_evidence(evidence, path)
    report = EvaluationReport(arms=reports)
    if as_json:
        body = {**report.to_dict(), "evidence": evidence.model_dump(mode="json")}
        typer.echo(json.dumps({**body, "evidence_path": str(path)}, indent=2, sort_keys=True))
    else:
        render(report, Console())
        _render_evidence(evidence, path, Console())
    if not evidence.passed:
        raise typer.Exit(1)


def _render_evidence(evidence: Evidence, path: Path, console: Console) -> None:
    model = evidence.model
    console.print(
        f"evidence for policy {evidence.policy.fingerprint} (model {evidence.policy.model_name} "
        f"at {evidence.policy.model_origin}) written to {path}: coverage {model.coverage:.3f} "
        f"({model.covered_cases}/{model.positive_cases}), fabricated {model.fabricated}"
    )
    if evidence.passed:
        console.print("[green]passes: a model or both worker with this policy may start[/green]")
        return
    for failure in evidence.failures:
        console.print(f"[red]fails:[/red] {failure}")


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
    record_evidence: bool = typer.Option(
        False,
        "--record",
        help="With --arm model: write the evaluation artifact a model or both worker needs.",
    ),
    output: Path | None = typer.Option(
        None, "--output", help="Where --record writes (default ENGRAM_FORMATION_EVIDENCE_PATH)."
    ),
    answers: Path | None = typer.Option(None, "--answers", help=_ANSWERS_HELP),
    answers_prompt: str | None = typer.Option(None, "--answers-prompt", help=_PROMPT_HELP),
    accept_stale: bool = typer.Option(False, "--accept-stale", help=_STALE_HELP),
    write_requests: Path | None = typer.Option(
        None,
        "--write-requests",
        help="Write the request the model arm would send for every message of the corpus "
        "(JSONL: key, role, system, user), to have a model answer them; nothing is scored.",
    ),
) -> None:
    """Score the extractor arm(s) on a labeled corpus; exit 1 when anything unsafe formed."""
    try:
        cases = load_corpus(corpus)
    except CorpusError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if write_requests is not None:
        settings = replay_settings(load_settings())
        count = write_corpus_requests(
            cases, _arm_policy(settings, ArmChoice.MODEL), settings, write_requests
        )
        typer.echo(f"wrote {count} requests to {write_requests}")
        return
    if answers is not None:
        if arm is ArmChoice.DETERMINISTIC:
            typer.echo("error: --answers needs --arm model or --arm both", err=True)
            raise typer.Exit(2)
        _replayed_formation(
            cases, arm, answers, answers_prompt, accept_stale, record_evidence, output, as_json
        )
        return
    if record_evidence:
        if arm is not ArmChoice.MODEL:
            typer.echo("error: --record evaluates the model arm: use --arm model", err=True)
            raise typer.Exit(2)
        _record(cases, output, as_json)
        return
    policy = _model_policy() if arm is not ArmChoice.DETERMINISTIC else None
    report = asyncio.run(run_evaluation(cases, arm, policy))
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
    exclude_seeds: str = typer.Option(
        "",
        "--exclude-seeds",
        help="Earlier recall sheets as SEED[:COUNT],… (COUNT defaults to --messages), drawn "
        "without exclusions: their messages are recomputed and left out.",
    ),
    exclude: list[Path] = typer.Option(
        [],
        "--exclude",
        help="An earlier recall sheet's JSON (from --json; repeatable): its messages are left "
        "out. Use this for sheets that were themselves drawn with exclusions.",
    ),
) -> None:
    """Print a labeling sheet: N formed beliefs with quotes, or N user messages (recall)."""
    earlier = _earlier_sheets(exclude_seeds, messages)
    known = _earlier_files(exclude, messages)
    try:
        formed = form_file(source)
    except (OSError, InvalidEpisodeLine) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if messages is not None:
        drawn_messages = draw_excluding(
            formed.messages, messages, seed, earlier, lambda m: (m.episode_id, m.ordinal) in known
        )
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


def _earlier_sheets(text: str, messages: int | None) -> list[tuple[int, int]]:
    """The earlier recall sheets to leave out, or exit 2 saying what is wrong.

    Only message sheets can exclude: which messages a seed draws does not depend on the
    rules, but which beliefs it draws does, so an earlier belief sheet cannot be recomputed.
    """
    if not text:
        return []
    if messages is None:
        typer.echo("error: --exclude-seeds needs --messages (a recall sheet)", err=True)
        raise typer.Exit(2)
    try:
        return parse_earlier(text, messages)
    except ValueError as exc:
        typer.echo(f"error: --exclude-seeds: {exc}", err=True)
        raise typer.Exit(2) from exc


def _earlier_files(paths: list[Path], messages: int | None) -> frozenset[tuple[str, int]]:
    """The messages of earlier sheets' JSON files, or exit 2 saying which file is unreadable."""
    if paths and messages is None:
        typer.echo("error: --exclude needs --messages (a recall sheet)", err=True)
        raise typer.Exit(2)
    keys: set[tuple[str, int]] = set()
    for path in paths:
        try:
            keys |= sheet_keys(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            typer.echo(f"error: --exclude {path}: {exc}", err=True)
            raise typer.Exit(2) from exc
    return frozenset(keys)


@eval_app.command("coverage")
def coverage(
    turns: Path = typer.Option(..., "--turns", help="A JSONL file of turns (episodes)."),
    facts: Path = typer.Option(
        ..., "--facts", help="A JSONL file of facts: principal, fact, evidence_event_ids."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    show_missed: int = typer.Option(
        0,
        "--show-missed",
        min=0,
        help="Also list N uncovered facts (drawn for --seed) with what formation did with "
        "their evidence messages.",
    ),
    seed: int = typer.Option(0, "--seed", help="The draw of --show-missed."),
    policy_file: Path | None = typer.Option(
        None, "--policy", help="A policy file (default: the policy in force)."
    ),
    arm: ArmChoice | None = typer.Option(
        None,
        "--arm",
        help="model or both: run the model arm, from --answers or the configured endpoint "
        "(default: the policy in force).",
    ),
    answers: Path | None = typer.Option(None, "--answers", help=_ANSWERS_HELP),
    answers_prompt: str | None = typer.Option(None, "--answers-prompt", help=_PROMPT_HELP),
    accept_stale: bool = typer.Option(False, "--accept-stale", help=_STALE_HELP),
    over_http: bool = typer.Option(
        False,
        "--over-http",
        help="With --answers: serve them at the replay endpoint (127.0.0.1:8089) and ask it over "
        "HTTP as a worker does; the report adds the sizes of prompts and completions.",
    ),
) -> None:
    """Fact coverage, a proxy for recall: the share of facts one of whose evidence messages
    is cited by a belief of the principal, with the arm(s) of the policy and the resolution
    core in process. A belief from the right message can still be the wrong fact: read what
    forms."""
    try:
        known = load_facts(facts)
        if arm in (ArmChoice.MODEL, ArmChoice.BOTH):
            report = _model_coverage(
                turns,
                known,
                arm,
                (answers, answers_prompt, accept_stale, over_http),
                show_missed,
                seed,
            )
        else:
            if answers is not None:
                typer.echo("error: --answers needs --arm model or --arm both", err=True)
                raise typer.Exit(2)
            policy = _policy_in_force(policy_file)
            report = measure(turns, known, policy, show_missed=show_missed, seed=seed)
    except (OSError, InvalidEpisodeLine, FactsError, AnswersError, StaleAnswers) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        render_coverage(report, Console())


def _replayed_formation(
    cases: list[Case],
    arm: ArmChoice,
    answers: Path,
    answers_prompt: str | None,
    accept_stale: bool,
    record_evidence: bool,
    output: Path | None,
    as_json: bool,
) -> None:
    """The corpus with the model arm answered from recorded answers (and the deterministic
    arm beside it for ``both`` or ``--record``); with ``--record``, the evidence for the
    replay policy."""
    settings = replay_settings(load_settings())
    policy = _arm_policy(settings, ArmChoice.MODEL)
    try:
        source = open_answers(answers, answers_prompt, policy, accept_stale=accept_stale)
    except (OSError, AnswersError, StaleAnswers) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    plain = replace(policy, extractor_kind="deterministic")
    reports: list[ArmReport] = []
    if arm is ArmChoice.BOTH or record_evidence:
        reports.append(asyncio.run(evaluate_arm("deterministic", cases, deterministic_arm, plain)))
    model, calls = asyncio.run(replayed_cases(cases, policy, source))
    reports.append(model)
    report = EvaluationReport(arms=reports)
    about = {**source.describe(), "calls": calls.to_dict()}
    evidence = None
    if record_evidence:
        evidence = evidence_for(policy, corpus_digest(cases), score(model), score(reports[0]))
        if source.stale is not None:
            typer.echo("error: --record refuses stale answers: record them again", err=True)
            raise typer.Exit(2)
        path = output or evidence_path(settings)
        write_evidence(evidence, path)
    if as_json:
        body = {**report.to_dict(), "model": about}
        if evidence is not None:
            body["evidence"] = evidence.model_dump(mode="json")
        typer.echo(json.dumps(body, indent=2, sort_keys=True))
    else:
        render(report, Console())
        for key, value in about.items():
            typer.echo(f"model {key}: {value}")
    if evidence is not None and not evidence.passed:
        raise typer.Exit(1)
    if evidence is None and not report.ok:
        raise typer.Exit(1)


def _arm_policy(settings: Settings, arm: ArmChoice) -> FormationPolicy:
    """The policy a worker of kind ``arm`` (model or both) runs with these settings, or exit 2
    saying what is wrong."""
    forced = settings.formation.model_copy(update={"extractor": arm.value})
    try:
        return effective_policy(with_section(settings, formation=forced))
    except (ModelConfigurationError, PolicyFileError, PromptError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def _model_coverage(
    turns: Path,
    facts: list[Fact],
    arm: ArmChoice,
    given: tuple[Path | None, str | None, bool, bool],
    show_missed: int,
    seed: int,
) -> CoverageReport:
    """``given``: the answers file, its prompt digest, whether stale answers are accepted, and
    whether to ask them over HTTP."""
    answers, answers_prompt, accept_stale, over_http = given
    settings = load_settings()
    if answers is not None:
        settings = replay_settings(settings)
    policy = _arm_policy(settings, arm)
    source = (
        open_answers(answers, answers_prompt, policy, accept_stale=accept_stale)
        if answers is not None
        else None
    )
    return asyncio.run(
        model_coverage(
            turns,
            facts,
            policy,
            settings,
            source,
            show_missed=show_missed,
            seed=seed,
            over_http=over_http,
        )
    )


@eval_app.command("replay")
def replay(
    answers: Path = typer.Option(..., "--answers", help=_ANSWERS_HELP),
    answers_prompt: str | None = typer.Option(None, "--answers-prompt", help=_PROMPT_HELP),
    port: int = typer.Option(8089, "--port", help="The port on 127.0.0.1 to answer on."),
) -> None:
    """Serve recorded answers as an OpenAI-compatible endpoint on 127.0.0.1 (a worker's
    ENGRAM_MODEL_ENDPOINT), until interrupted."""
    try:
        recorded = load_answers(answers, answers_prompt)
    except (OSError, AnswersError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc

    async def serve() -> None:
        async with ReplayServer(recorded, port=port) as server:
            typer.echo(
                f"answering {len(recorded.claims)} recorded answers (prompt "
                f"{recorded.prompt_sha256[:12]}…) at {server.base_url}"
            )
            await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


@eval_app.command("recall")
def recall_questions(
    qa: Path = typer.Option(
        ...,
        "--qa",
        help="A JSONL file of questions: tenant, principal, question, answer, "
        "category, evidence_event_ids.",
    ),
    turns: Path | None = typer.Option(
        None,
        "--turns",
        help="Form these turns (JSONL episodes) in process into a scratch database first; "
        "without it, ask the configured database as it stands.",
    ),
    dense: bool = typer.Option(
        True,
        "--dense/--no-dense",
        help="Recall with its semantic list (the configured embedder, ENGRAM_EMBEDDING_*), "
        "beside recall without it and dense-only; --no-dense: lexical recall only.",
    ),
    translations: Path | None = typer.Option(
        None,
        "--translations",
        help="Also ask these translated questions (JSONL: qa_line, language, question) beside "
        "their English originals from --qa (needs --dense).",
    ),
    asked_at_end: bool = typer.Option(
        True,
        "--asked-at-end/--asked-now",
        help="Ask each question as of the principal's last message (the conversation's end; "
        "a question's own asked_at wins), or as of now.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Ask every question through recall and score what it returns on the evidence messages:
    recall@1/5/10 and MRR by category, the answer in returned beliefs, latency p50/p99, beside
    BM25 over the principal's own messages (and, with --dense, recall without its semantic list
    and dense-only) in the same run."""
    settings = load_settings()
    url = settings.database.url.get_secret_value()
    try:
        embedder = embedder_from_settings(settings.embedding) if dense else None
        report = asyncio.run(
            evaluate(
                url,
                qa,
                turns,
                embedder,
                asked_at_end=asked_at_end,
                translations=translations,
            )
        )
    except (OSError, InvalidEpisodeLine, QuestionsError, ModelConfigurationError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(json.dumps(report, indent=2, sort_keys=True))
    else:
        render_recall(report, Console())


_RECALL_COLUMNS = {
    "recall_at_1": "R@1",
    "recall_at_5": "R@5",
    "recall_at_10": "R@10",
    "mrr": "MRR",
    "answered": "answered",
}


def render_recall(report: dict[str, Any], console: Console) -> None:
    table = Table(title=f"evidence recall over {report['questions']} questions")
    table.add_column("group")
    table.add_column("n", justify="right")
    for title in _RECALL_COLUMNS.values():
        table.add_column(title, justify="right")
    table.add_column("BM25 R@10", justify="right")
    table.add_column("lexical-only R@10", justify="right")
    table.add_column("dense-only R@10", justify="right")
    table.add_column("answer in beliefs", justify="right")
    table.add_column("p50/p99 ms", justify="right")
    for group, ours in report["recall"].items():
        theirs = report["bm25_own_messages"][group]
        table.add_row(
            _group_name(report, group),
            str(ours["asked"]),
            *(f"{ours[c]:.3f}" for c in _RECALL_COLUMNS),
            f"{theirs['recall_at_10']:.3f}",
            _at_10(report, "recall_lexical_only", group),
            _at_10(report, "dense_own_messages", group),
            f"{ours['answer_in_beliefs']:.3f}",
            f"{ours['latency_ms_p50']:.0f}/{ours['latency_ms_p99']:.0f}",
        )
    console.print(table)
    console.print("groups: a category, all, and own_words_1_2_4 (categories 1, 2, 4 whose evidence")
    console.print("holds the principal's words); BM25: standard (k1 1.2, b 0.75, stop words")
    console.print(
        f"removed) over the principal's own messages; not counted: "
        f"{report.get('without_evidence', 0)} questions without evidence"
    )


def _group_name(report: dict[str, Any], group: str) -> str:
    """A category's number with the benchmark's name for it ("2 temporal"); other groups as
    they are."""
    name = report.get("categories", {}).get(group)
    return f"{group} {name}" if name else group


def _at_10(report: dict[str, Any], ranker: str, group: str) -> str:
    """A baseline's recall@10 for the table, or a dash when the run had no embedder."""
    tallies = report.get(ranker)
    return f"{tallies[group]['recall_at_10']:.3f}" if tallies else "-"


def _policy_in_force(path: Path | None) -> FormationPolicy:
    """The policy in force (or the file's), or exit 2 saying what is wrong with it."""
    try:
        return effective_policy(load_settings(), path)
    except (PolicyFileError, PromptError, ValueError) as exc:
        typer.echo(f"error: policy refused: {exc}", err=True)
        raise typer.Exit(2) from exc
