"""``engram eval recall``: real questions asked through recall, scored on their evidence messages.

Each question (JSONL: ``tenant``, ``principal``, ``question``, ``answer``, ``category``,
``evidence_event_ids``) is asked through :func:`engram.projections.reads.recall.recall` — the code behind
``GET /v1/recall``, ``engram recall`` and the MCP tool — in the generation serving the
principal, with its defaults (the principal's own words). A hit *holds* an evidence message when
it is that message, or a belief one of whose quotes comes from it. Reported, by category and
for categories 1, 2 and 4 together where an evidence message is the principal's own
(``evidence_by_principal``; the measure docs/retrieval.md reports):

- evidence recall@1, @5 and @10: the share of questions with a hit holding an evidence message
  among the first 1, 5, 10; MRR: the mean of 1/rank of the first such hit (0 past the tenth);
- ``answered``: the share that returned anything at all;
- ``answer_in_beliefs``: the share whose answer text appears (case-folded) in a returned
  belief's statement or object;
- latency p50 and p99 of the recall call, in milliseconds.

In the same run, on the same messages, the baselines: BM25 (:mod:`.bm25`) over the principal's
own messages as the index holds them (role ``user``), top ten; and, with an embedder, dense-only
(the principal's own messages nearest the question in the active embedding generation) and
recall without its semantic list (``recall_lexical_only``), so the semantic list's worth is read
in one run; and recall without its second stage (``recall_first_stage``: the first stage's
order, :func:`engram.projections.reads.recall.second_stage`), so the second stage's worth is too. With ``--turns`` the
conversations are formed in process — the deterministic arm under the default policy, projected
by the projector's own store and indexed by the indexer's own store, into a scratch database
created and dropped on the configured PostgreSQL, as ``bench/search_questions.py`` does —
and every message is embedded into the embedder's generation by the embedding follower's own
store (:mod:`engram.projections.messages.vectors`), which is then activated; otherwise the questions are
asked of the configured database as it stands (running services), semantically when the
embedder's generation is the active one.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

import asyncpg
import orjson

from engram.evaluation.bm25 import BM25, tokens
from engram.generations.reading import reading
from engram.infra.errors import EngramFailure
from engram.ingest.jsonl import read_episodes
from engram.policies.behaviour import form
from engram.policies.in_force import default_policy
from engram.projections.beliefs.store import ClaimsRecord, project_records
from engram.projections.messages.embeddings import store as embedding_store
from engram.projections.messages.embeddings.embedder import Embedder
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from engram.projections.messages.store import LogRecord, index_records
from engram.projections.messages.vectors import embed_messages, write_vectors
from engram.projections.migrate import migrate
from engram.projections.reads.recall import (
    OWN_WORDS,
    SemanticQuery,
    recall,
    semantic_messages,
    semantic_query,
)
from engram.projections.reads.search import UnsearchableQuery
from engram.schemas.api import RecalledBelief, RecallResults

TOP = 10
CUTS = (1, 5, 10)
OWN_WORDS_CATEGORIES = frozenset({1, 2, 4})
CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""LoCoMo's categories by number, as the benchmark's own evaluation code treats them
(``task_eval/evaluation.py``: 1 is scored as multi-hop, 2, 3 and 4 as single answers, 5 as
adversarial; its prompts add the conversation's date for 2; its tables order 4, 1, 2, 3, 5 as
the paper's single-hop, multi-hop, temporal, open-domain, adversarial). The paper's numbered
list reads otherwise; the data's numbers are these."""
EMBEDDED = frozenset(r.value for r in OWN_WORDS)
"""Whose messages the evaluation embeds: the principal's own, as the vectors' sink does by
default (``ENGRAM_EMBEDDING_ROLES``) and all recall's semantic list searches by default."""
CHUNK = 200
CLAIMS_TOPIC = "eval.claims"
EPISODES_TOPIC = "eval.episodes"


class QuestionsError(EngramFailure, ValueError):
    """A questions file that cannot be read as questions: names the line."""

    code = "invalid_questions"


@dataclass(frozen=True, slots=True)
class Question:
    tenant: str
    principal: str
    text: str
    answer: str
    category: int
    evidence: frozenset[str]
    own_evidence: bool
    """Whether an evidence message is the principal's own (``evidence_by_principal``)."""
    asked_at: datetime | None = None
    """When the question is asked (``asked_at``, RFC 3339), if the file says."""


def question_of(row: dict[str, object]) -> Question:
    """One line's question (``KeyError``, ``TypeError``, ``ValueError`` for one that is not)."""
    evidence = row["evidence_event_ids"]
    by_principal = row.get("evidence_by_principal")
    asked_at = row.get("asked_at")
    if not isinstance(evidence, list) or not isinstance(by_principal, list | None):
        raise TypeError("evidence_event_ids and evidence_by_principal are lists")
    return Question(
        tenant=str(row["tenant"]),
        principal=str(row["principal"]),
        text=str(row["question"]),
        answer=str(row["answer"]),
        category=int(str(row["category"])),
        evidence=frozenset(str(e) for e in evidence),
        own_evidence=any(by_principal or [True]),
        asked_at=datetime.fromisoformat(str(asked_at)) if asked_at else None,
    )


def load_questions(path: Path) -> list[Question]:
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            questions.append(question_of(orjson.loads(line)))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise QuestionsError(f"{path}:{number}: not a question ({exc})") from exc
    return questions


def first_rank(ranked: Sequence[frozenset[str]], evidence: frozenset[str]) -> int | None:
    """The place (from 1) of the first hit holding an evidence message, if any."""
    for place, held in enumerate(ranked, start=1):
        if held & evidence:
            return place
    return None


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, -(-int(share * 100) * len(ordered) // 100) - 1))
    return ordered[index]


@dataclass(slots=True)
class Tally:
    """One ranker's results over a set of questions."""

    ranks: list[int | None] = field(default_factory=list)
    answered: int = 0
    answer_in_beliefs: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    def add(self, rank: int | None, *, answered: bool, answer_in_beliefs: bool = False) -> None:
        self.ranks.append(rank)
        self.answered += answered
        self.answer_in_beliefs += answer_in_beliefs

    def to_dict(self) -> dict[str, object]:
        asked = len(self.ranks)

        def share(part: float) -> float:
            return round(part / asked, 4) if asked else 0.0

        result: dict[str, object] = {"asked": asked, "answered": share(self.answered)}
        for cut in CUTS:
            result[f"recall_at_{cut}"] = share(sum(r is not None and r <= cut for r in self.ranks))
        result["mrr"] = share(sum(1 / r for r in self.ranks if r is not None and r <= TOP))
        if self.latencies_ms:
            result["answer_in_beliefs"] = share(self.answer_in_beliefs)
            result["latency_ms_p50"] = round(percentile(self.latencies_ms, 0.50), 2)
            result["latency_ms_p99"] = round(percentile(self.latencies_ms, 0.99), 2)
        return result


@dataclass(slots=True)
class Report:
    recall: dict[str, Tally] = field(default_factory=dict)
    bm25: dict[str, Tally] = field(default_factory=dict)
    lexical: dict[str, Tally] = field(default_factory=dict)
    dense: dict[str, Tally] = field(default_factory=dict)
    first_stage: dict[str, Tally] = field(default_factory=dict)
    """Recall without its second stage (the first stage's order), on the same question."""
    unsearchable: int = 0
    without_evidence: int = 0
    """Questions with no evidence message: nothing could hold it, so they are not counted."""
    semantic_generation: str | None = None

    def tallies(self, question: Question, ranker: dict[str, Tally]) -> list[Tally]:
        """The tallies of ``ranker`` that ``question`` counts in: its category's, 'all', and
        'own_words_1_2_4' when it is of category 1, 2 or 4 and an evidence message is the
        principal's own (recall's measure: no ranking of the principal's words can reach the
        others)."""
        groups = ["all", str(question.category)]
        if question.category in OWN_WORDS_CATEGORIES and question.own_evidence:
            groups.append("own_words_1_2_4")
        return [ranker.setdefault(g, Tally()) for g in groups]

    def to_dict(self) -> dict[str, object]:
        report: dict[str, object] = {
            "categories": {str(number): name for number, name in CATEGORIES.items()},
            "unsearchable": self.unsearchable,
            "without_evidence": self.without_evidence,
            "semantic_generation": self.semantic_generation,
            "recall": {g: t.to_dict() for g, t in sorted(self.recall.items())},
            "recall_first_stage": {g: t.to_dict() for g, t in sorted(self.first_stage.items())},
            "bm25_own_messages": {g: t.to_dict() for g, t in sorted(self.bm25.items())},
        }
        if self.semantic_generation is not None:
            report["recall_lexical_only"] = {
                g: t.to_dict() for g, t in sorted(self.lexical.items())
            }
            report["dense_own_messages"] = {g: t.to_dict() for g, t in sorted(self.dense.items())}
        return report


def held(results: RecallResults) -> list[frozenset[str]]:
    """Per hit, the event ids of the messages it holds."""
    return [
        frozenset(str(e.episode_id) for e in hit.belief.evidence)
        if isinstance(hit, RecalledBelief)
        else frozenset({str(hit.event_id)})
        for hit in results.hits
    ]


def answer_in_beliefs(results: RecallResults, answer: str) -> bool:
    wanted = answer.casefold().strip()
    return bool(wanted) and any(
        wanted in hit.belief.statement.casefold() or wanted in hit.belief.object.casefold()
        for hit in results.hits
        if isinstance(hit, RecalledBelief)
    )


class OwnMessages:
    """BM25 over each principal's own messages in the index, built once per principal."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        self._built: dict[tuple[str, str], tuple[BM25, list[str]]] = {}

    async def top(self, question: Question) -> list[frozenset[str]]:
        who = (question.tenant, question.principal)
        if who not in self._built:
            async with reading(self._pool, principal=who) as conn:
                rows = await conn.fetch(
                    "SELECT episode_id::text AS event, content FROM message "
                    "WHERE tenant = $1 AND principal = $2 AND role = 'user' "
                    "ORDER BY source_partition, source_offset, message_ordinal",
                    *who,
                )
            index = BM25([tokens(r["content"]) for r in rows])
            self._built[who] = (index, [r["event"] for r in rows])
        index, events = self._built[who]
        return [frozenset({events[i]}) for i in index.top(tokens(question.text), TOP)]


_LAST_SAID = "SELECT max(occurred_at) FROM message WHERE tenant = $1 AND principal = $2"


class AskedAt:
    """When each question is asked: its own ``asked_at`` if the file gives one; else, with
    ``at_end``, just after the principal's last message (the benchmark asks its questions
    after the whole conversation, so "last year" means the year before its last session);
    else None, the clock's now."""

    def __init__(self, pool: asyncpg.Pool, *, at_end: bool) -> None:
        self._pool = pool
        self._at_end = at_end
        self._ends: dict[tuple[str, str], datetime | None] = {}

    async def of(self, question: Question) -> datetime | None:
        if question.asked_at is not None or not self._at_end:
            return question.asked_at
        who = (question.tenant, question.principal)
        if who not in self._ends:
            async with reading(self._pool, principal=who) as conn:
                self._ends[who] = await conn.fetchval(_LAST_SAID, *who)
        return self._ends[who]


async def measure(
    pool: asyncpg.Pool,
    questions: Iterable[Question],
    embedder: Embedder | None = None,
    *,
    semantic_weight: float | None = None,
    asked_at_end: bool = True,
) -> Report:
    """Every question through recall (semantically when ``embedder``'s generation is active;
    ``semantic_weight`` overrides the default weight of its list), and the baselines; each
    asked at :class:`AskedAt`'s date (``asked_at_end``: the conversation's end where the file
    gives none)."""
    report = Report()
    baseline = OwnMessages(pool)
    dates = AskedAt(pool, at_end=asked_at_end)
    for question in questions:
        if not question.evidence:
            report.without_evidence += 1
            continue
        if question.asked_at is None and asked_at_end:
            question = replace(question, asked_at=await dates.of(question))
        who = (question.tenant, question.principal)
        started = time.perf_counter()
        semantic: SemanticQuery | None = None
        try:
            async with reading(pool, principal=who) as conn:
                semantic = await semantic_query(conn, embedder, question.text)
                if semantic is not None and semantic_weight is not None:
                    semantic = replace(semantic, weight=semantic_weight)
                results = await _ask(conn, question, semantic)
                took_ms = (time.perf_counter() - started) * 1000
                first = await _ask(conn, question, semantic, reread=False)
        except UnsearchableQuery:
            report.unsearchable += 1
            results = first = RecallResults(hits=[], next_cursor=None, reflects=[])
            took_ms = (time.perf_counter() - started) * 1000
        rank = first_rank(held(results), question.evidence)
        in_beliefs = answer_in_beliefs(results, question.answer)
        for tally in report.tallies(question, report.recall):
            tally.add(rank, answered=bool(results.hits), answer_in_beliefs=in_beliefs)
            tally.latencies_ms.append(took_ms)
        for tally in report.tallies(question, report.first_stage):
            tally.add(first_rank(held(first), question.evidence), answered=bool(first.hits))
        found = await baseline.top(question)
        for tally in report.tallies(question, report.bm25):
            tally.add(first_rank(found, question.evidence), answered=bool(found))
        if semantic is not None:
            report.semantic_generation = semantic.generation
            await _semantic_baselines(pool, report, question, semantic)
    return report


async def _ask(
    conn: asyncpg.Connection,
    question: Question,
    semantic: SemanticQuery | None,
    foreign_lexical_weight: float | None = None,
    *,
    reread: bool = True,
) -> RecallResults:
    return await recall(
        conn,
        tenant=question.tenant,
        principal=question.principal,
        query=question.text,
        limit=TOP,
        semantic=semantic,
        asked_at=question.asked_at,
        foreign_lexical_weight=foreign_lexical_weight,
        reread=reread,
    )


@dataclass(frozen=True, slots=True)
class Translation:
    """A question of the questions file (its line, from 1) asked in another language."""

    qa_line: int
    language: str
    text: str


def load_translations(path: Path) -> list[Translation]:
    """``qa_line``, ``language``, ``question`` a line (the English is the questions file's own:
    only the translation, written for this evaluation, is kept in the project)."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
            found.append(Translation(int(row["qa_line"]), str(row["language"]), row["question"]))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise QuestionsError(f"{path}:{number}: not a translation ({exc})") from exc
    return found


FOREIGN_WEIGHTS = {"default": None, "unadjusted": 1.0, "words_off": 0.0}
"""The lexical list's weight for a translated question: recall's default for a question in
another language, the same as an English question's, and none (meaning alone)."""


async def measure_translations(
    pool: asyncpg.Pool,
    qa: Path,
    translations: Sequence[Translation],
    embedder: Embedder,
    *,
    asked_at_end: bool = True,
) -> dict[str, object]:
    """Each translated question and its English original through recall (semantically): per
    language, of the questions whose English version holds an evidence message in the first
    five, the share whose translation does too (``kept_top5``), at each of
    :data:`FOREIGN_WEIGHTS`, and the translations' evidence recall."""
    lines = qa.read_text(encoding="utf-8").splitlines()
    dates = AskedAt(pool, at_end=asked_at_end)
    by_language: dict[str, dict[str, list[tuple[int | None, int | None]]]] = {}
    for translation in translations:
        english = question_of(orjson.loads(lines[translation.qa_line - 1]))
        if asked_at_end:
            english = replace(english, asked_at=await dates.of(english))
        asked = replace(english, text=translation.text)
        who = (english.tenant, english.principal)
        async with reading(pool, principal=who) as conn:
            meaning = await semantic_query(conn, embedder, english.text)
            rank_en = first_rank(held(await _ask(conn, english, meaning)), english.evidence)
            meaning = await semantic_query(conn, embedder, asked.text)
            for arm, weight in FOREIGN_WEIGHTS.items():
                found = await _ask(conn, asked, meaning, weight)
                rank = first_rank(held(found), asked.evidence)
                arms = by_language.setdefault(translation.language, {})
                arms.setdefault(arm, []).append((rank_en, rank))
    report: dict[str, object] = {}
    for language, arms in sorted(by_language.items()):
        summary: dict[str, object] = {}
        for arm, pairs in arms.items():
            english_top5 = [r for e, r in pairs if e is not None and e <= 5]
            kept = sum(r is not None and r <= 5 for r in english_top5)
            summary[arm] = {
                "asked": len(pairs),
                "english_top5": len(english_top5),
                "kept_top5": round(kept / len(english_top5), 4) if english_top5 else 0.0,
                **{
                    f"recall_at_{cut}": round(
                        sum(r is not None and r <= cut for _, r in pairs) / len(pairs), 4
                    )
                    for cut in CUTS
                },
                "english_recall_at_5": round(len(english_top5) / len(pairs), 4),
            }
        report[language] = summary
    return report


async def _semantic_baselines(
    pool: asyncpg.Pool, report: Report, question: Question, semantic: SemanticQuery
) -> None:
    """Recall without its semantic list, and dense-only over the principal's own messages."""
    started = time.perf_counter()
    async with reading(pool, principal=(question.tenant, question.principal)) as conn:
        try:
            lexical = await _ask(conn, question, None)
        except UnsearchableQuery:  # only stop words: by meaning it is answered, by words not
            lexical = RecallResults(hits=[], next_cursor=None, reflects=[])
    took_ms = (time.perf_counter() - started) * 1000
    async with reading(pool, principal=(question.tenant, question.principal)) as conn:
        nearest, _ = await semantic_messages(
            conn,
            semantic,
            tenant=question.tenant,
            principal=question.principal,
            role_names=[r.value for r in OWN_WORDS],
            project=None,
        )
    rank = first_rank(held(lexical), question.evidence)
    for tally in report.tallies(question, report.lexical):
        tally.add(
            rank,
            answered=bool(lexical.hits),
            answer_in_beliefs=answer_in_beliefs(lexical, question.answer),
        )
        tally.latencies_ms.append(took_ms)
    dense = [frozenset({str(episode)}) for (episode, _), _score in nearest[:TOP]]
    for tally in report.tallies(question, report.dense):
        tally.add(first_rank(dense, question.evidence), answered=bool(dense))


async def form_into(
    conn: asyncpg.Connection, turns: Path, embedder: Embedder | None = None
) -> tuple[int, int]:
    """Form, project and index every episode of ``turns`` in offset order (one partition), and
    with ``embedder`` embed its messages into that model's generation and activate it; the
    batches projected and the messages indexed."""
    generation = EmbeddingGeneration.of(embedder.model) if embedder is not None else None
    if generation is not None:
        await embedding_store.register(conn, generation)
    policy = default_policy()
    episodes = list(read_episodes(turns))
    records = [ClaimsRecord(form(e, policy, offset), offset) for offset, e in enumerate(episodes)]
    log = [LogRecord(0, offset, e.model_dump_json().encode()) for offset, e in enumerate(episodes)]
    indexed = 0
    for start in range(0, len(records), CHUNK):
        chunk = records[start : start + CHUNK]
        await project_records(
            conn, chunk, topic=CLAIMS_TOPIC, partition=0, read_through=chunk[-1].offset
        )
        indexed += await index_records(conn, EPISODES_TOPIC, 0, log[start : start + CHUNK])
        if embedder is not None and generation is not None:
            part = log[start : start + CHUNK]
            vectors = await embed_messages(embedder, generation, part, EMBEDDED)
            await write_vectors(conn, generation.name, EPISODES_TOPIC, 0, part, vectors, EMBEDDED)
    if generation is not None:
        await embedding_store.mark_built(conn, generation.name)
        await embedding_store.activate(conn, generation.name)
    return len(records), indexed


@asynccontextmanager
async def scratch_database(admin_url: str, prefix: str = "recall_eval_") -> AsyncIterator[str]:
    """A new, migrated database on the server of ``admin_url``, named ``prefix`` and a random
    suffix (the benches that form in process use it too); dropped afterwards."""
    name = prefix + secrets.token_hex(4)
    conn = await asyncpg.connect(admin_url)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    url = f"{admin_url.rpartition('/')[0]}/{name}"
    try:
        conn = await asyncpg.connect(url)
        try:
            await migrate(conn)
        finally:
            await conn.close()
        yield url
    finally:
        conn = await asyncpg.connect(admin_url)
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.close()


async def evaluate(
    database_url: str,
    qa: Path,
    turns: Path | None,
    embedder: Embedder | None = None,
    *,
    asked_at_end: bool = True,
    translations: Path | None = None,
) -> dict[str, object]:
    """The whole run: questions loaded first (a bad file fails before any database work)."""
    questions = load_questions(qa)
    translated = load_translations(translations) if translations is not None else []
    if turns is None:
        return await _measure_at(
            database_url, questions, embedder, asked_at_end, qa=qa, translated=translated
        )
    async with scratch_database(database_url) as url:
        conn = await asyncpg.connect(url)
        try:
            batches, messages = await form_into(conn, turns, embedder)
            await conn.execute("ANALYZE")
        finally:
            await conn.close()
        formed = {"turns": str(turns), "batches": batches, "messages_indexed": messages}
        measured = await _measure_at(
            url, questions, embedder, asked_at_end, qa=qa, translated=translated
        )
        return {**formed, **measured}


async def _measure_at(
    url: str,
    questions: list[Question],
    embedder: Embedder | None,
    asked_at_end: bool,
    *,
    qa: Path,
    translated: Sequence[Translation] = (),
) -> dict[str, object]:
    pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
    try:
        report = await measure(pool, questions, embedder, asked_at_end=asked_at_end)
        languages: dict[str, object] = {}
        if translated and embedder is not None:
            languages = await measure_translations(
                pool, qa, translated, embedder, asked_at_end=asked_at_end
            )
    finally:
        await pool.close()
    asked = "the principal's last message" if asked_at_end else "now"
    extra = {"translated": languages} if languages else {}
    return {"questions": len(questions), "asked_at": asked, **report.to_dict(), **extra}
