"""Everything the formation core decides over three corpora, as one canonical dump: a safety net.

A change meant to make the core cheaper must not change a single output. This runs
:class:`engram.streams.formation_stage.FormationStage` (the deterministic arm, then the pure core; no
Kafka) over:

  (corpus)  every case of the labeled corpus in ``tests/corpus`` (formation, red team, frozen),
            each as the one episode ``engram eval`` makes of it;
  (bench)   ``bench/throughput.py``'s synthetic turns (``--bench-turns``);
  (real)    a ``turn.appended`` JSONL file such as ``../shared/data/locomo-dev.jsonl``, formed
            twice: as written, and with ``user`` and ``assistant`` swapped, so both speakers of
            each conversation are the principal once (evaluation data: read, never copied).

and writes one line per episode: the claims batch as canonical JSON (sorted keys), plus the
deterministic arm's abstentions for each user message (what ``engram eval sample`` shows).
Nothing timed is in it. The policy is ``FormationPolicy()`` with no source digest, so its
version (and every identity named with it) does not move when the code does; two checkouts
whose dumps differ formed something differently.

    .venv/bin/python bench/core_outputs.py --out /tmp/after.jsonl \
        --input ../shared/data/locomo-dev.jsonl [--compare /tmp/before.jsonl]

Prints JSON: lines per corpus, the dump's SHA-256, and (with ``--compare``) the first lines
that differ. Exits 1 when the dumps differ.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's code, not an installed copy's

from bench.throughput import synthetic_turns  # noqa: E402
from engram.evaluation.corpus import corpus_files, load_file  # noqa: E402
from engram.evaluation.scoring import episode_for  # noqa: E402
from engram.formation.deterministic import Abstention, trace  # noqa: E402
from engram.formation.policy import FormationPolicy  # noqa: E402
from engram.ingest.jsonl import read_episodes  # noqa: E402
from engram.schemas.claims import SourcePosition  # noqa: E402
from engram.schemas.common import Role  # noqa: E402
from engram.schemas.episodes import MemoryRemembered, Message, TurnAppended, episode_messages  # noqa: E402
from engram.streams.formation_stage import FormationStage  # noqa: E402

Episode = TurnAppended | MemoryRemembered
_SWAP = {Role.USER: Role.ASSISTANT, Role.ASSISTANT: Role.USER}


def corpus_episodes(root: Path) -> Iterator[Episode]:
    for path in corpus_files(root):
        for case in load_file(path):
            yield episode_for(case)


def swapped(episode: Episode) -> Episode:
    """The same turn with the other speaker as the principal."""
    if not isinstance(episode, TurnAppended):
        return episode
    messages = [
        Message(ordinal=m.ordinal, role=_SWAP.get(m.role, m.role), content=m.content)
        for m in episode.messages
    ]
    return episode.model_copy(update={"messages": messages})


def real_episodes(path: Path) -> Iterator[Episode]:
    episodes = list(read_episodes(path))
    yield from episodes
    yield from (swapped(e) for e in episodes)


def dump_lines(corpus: str, episodes: Iterable[Episode]) -> Iterator[str]:
    stage = FormationStage(FormationPolicy())
    for offset, episode in enumerate(episodes):
        source = SourcePosition(topic=corpus, partition=0, offset=offset)
        batch = asyncio.run(stage.form(episode, source))
        abstained = [
            [(a.clause, a.claim, a.reason) for a in _abstentions(episode, m)]
            for m in episode_messages(episode)
            if m.role is Role.USER
        ]
        record = {"corpus": corpus, "batch": batch.model_dump(mode="json"), "abstained": abstained}
        yield json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _abstentions(episode: Episode, message: Message) -> list[Abstention]:
    return list(trace(message.content, occurred_on=episode.occurred_at.date()).abstentions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--input", type=Path, help="a turn.appended JSONL file (real text)")
    parser.add_argument("--corpus", type=Path, default=REPO / "tests" / "corpus")
    parser.add_argument("--bench-turns", type=int, default=1500)
    parser.add_argument("--compare", type=Path, help="an earlier dump that must be identical")
    args = parser.parse_args()
    sources: list[tuple[str, Iterable[Episode]]] = [
        ("corpus", corpus_episodes(args.corpus)),
        ("bench", synthetic_turns(args.bench_turns, "bench")),
    ]
    if args.input is not None:
        sources.append(("real", real_episodes(args.input)))
    counts: dict[str, int] = {}
    digest = hashlib.sha256()
    with args.out.open("w", encoding="utf-8") as out:
        for corpus, episodes in sources:
            for line in dump_lines(corpus, episodes):
                out.write(line + "\n")
                digest.update(line.encode() + b"\n")
                counts[corpus] = counts.get(corpus, 0) + 1
    report: dict[str, object] = {"lines": counts, "sha256": digest.hexdigest()}
    if args.compare is not None:
        report["differences"] = _differences(args.compare, args.out)
    print(json.dumps(report, indent=2))
    if report.get("differences"):
        sys.exit(1)


def _differences(before: Path, after: Path, limit: int = 5) -> list[str]:
    """Line numbers (and a prefix) of the first lines that differ, and a length mismatch."""
    old = before.read_text(encoding="utf-8").splitlines()
    new = after.read_text(encoding="utf-8").splitlines()
    found = [
        f"line {i + 1}: {a[:300]} != {b[:300]}"
        for i, (a, b) in enumerate(zip(old, new, strict=False))
        if a != b
    ]
    if len(old) != len(new):
        found.append(f"{len(old)} lines before, {len(new)} after")
    return found[:limit]


if __name__ == "__main__":
    main()
