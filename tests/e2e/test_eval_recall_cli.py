"""``engram eval recall`` as a person runs it: questions about a conversation it forms in a
scratch database, scored on their evidence messages beside BM25; a bad questions file is exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_cli import engram
from tests.support.isolation import Isolated

pytestmark = pytest.mark.e2e

SAID = [
    "I adopted a greyhound called Pixel last spring.",
    "My sister teaches violin lessons in Porto.",
    "I am learning to bake sourdough bread.",
]


def _turn(tenant: str, seq: int, content: str) -> dict[str, object]:
    return {
        "schema_version": 1,
        "type": "turn.appended",
        "event_id": f"00000000-0000-4000-8000-{seq:012d}",
        "tenant": tenant,
        "principal": "ana",
        "project": "eval",
        "session": "s1",
        "occurred_at": f"2026-11-0{seq + 1}T10:00:00Z",
        "messages": [{"ordinal": 0, "role": "user", "content": content}],
    }


def _question(tenant: str, text: str, seq: int, category: int) -> dict[str, object]:
    return {
        "tenant": tenant,
        "principal": "ana",
        "project": "eval",
        "question": text,
        "answer": "x",
        "category": category,
        "evidence_event_ids": [f"00000000-0000-4000-8000-{seq:012d}"],
        "evidence_by_principal": [True],
    }


def test_eval_recall_scores_questions_on_their_evidence_beside_bm25(
    isolated: Isolated, tmp_path: Path
) -> None:
    t = isolated.tenant
    turns, qa = tmp_path / "turns.jsonl", tmp_path / "qa.jsonl"
    turns.write_text("".join(json.dumps(_turn(t, i, s)) + "\n" for i, s in enumerate(SAID)))
    questions = [
        _question(t, "What is the name of the greyhound Ana adopted?", 0, 4),
        _question(t, "Which instrument does her sister teach?", 1, 1),
        _question(t, "What kind of bread is she baking?", 2, 3),
    ]
    qa.write_text("".join(json.dumps(q) + "\n" for q in questions))

    translations = tmp_path / "translations.jsonl"
    translated = {"qa_line": 1, "language": "pt", "question": "Como se chama o galgo da Ana?"}
    translations.write_text(json.dumps(translated, ensure_ascii=False) + "\n")
    ran = engram(
        isolated,
        "eval",
        "recall",
        "--qa",
        str(qa),
        "--turns",
        str(turns),
        "--translations",
        str(translations),
        "--json",
    )
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    assert report["asked_at"] == "the principal's last message"
    portuguese = report["translated"]["pt"]
    assert set(portuguese) == {"default", "unadjusted", "words_off"}
    assert portuguese["default"]["asked"] == 1 and portuguese["default"]["english_top5"] == 1
    assert (report["batches"], report["messages_indexed"], report["questions"]) == (3, 3, 3)
    own = report["recall"]["own_words_1_2_4"]
    assert own["asked"] == 2 and own["recall_at_10"] == 1.0
    assert report["recall"]["all"]["answered"] == 1.0
    assert report["bm25_own_messages"]["all"]["recall_at_10"] == 1.0
    assert sorted(report["recall"]) == ["1", "3", "4", "all", "own_words_1_2_4"]

    table = engram(isolated, "eval", "recall", "--qa", str(qa), "--turns", str(turns))
    assert table.returncode == 0 and "own_words_1_2_4" in table.stdout.decode()

    qa.write_text('{"tenant": "t"}\n')
    bad = engram(isolated, "eval", "recall", "--qa", str(qa))
    assert bad.returncode == 2 and "qa.jsonl:1: not a question" in bad.stderr.decode()
