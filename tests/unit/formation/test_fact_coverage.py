"""``engram eval coverage``: a fact is covered when a belief of its principal cites one of its
evidence messages, after formation and resolution in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.evaluation.command import eval_app
from engram.evaluation.coverage import Fact, FactsError, load_facts, measure
from engram.policies.in_force import default_policy

TURNS = [
    ("user", "I live in Tallinn and I own a kayak."),
    ("assistant", "I live in Vilnius and I work at Globex."),
    ("user", "Thanks, see you soon!"),
    ("user", "I own a kayak, by the way."),
]
"""Message 0 forms two beliefs; 1 is the other speaker's (refused: not the principal's words);
2 forms nothing; 3 repeats a belief of 0 (resolution reinforces it: no new belief)."""


def _event(i: int) -> str:
    return f"00000000-0000-0000-0000-00000000000{i}"


def _write(
    tmp_path: Path,
    facts: dict[str, list[int]],
    rows: list[tuple[str, str]] = TURNS,
    *,
    same_instant: bool = False,
) -> tuple[Path, Path]:
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        "".join(
            json.dumps(
                {
                    "schema_version": 1,
                    "type": "turn.appended",
                    "event_id": _event(i),
                    "tenant": "t",
                    "principal": "p",
                    "project": "proj",
                    "session": "s",
                    "occurred_at": f"2024-05-08T12:00:0{0 if same_instant else i}+00:00",
                    "messages": [{"ordinal": 0, "role": role, "content": content}],
                }
            )
            + "\n"
            for i, (role, content) in enumerate(rows)
        )
    )
    path = tmp_path / "facts.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "principal": "p",
                    "project": "proj",
                    "session": 1,
                    "fact": name,
                    "evidence_event_ids": [_event(i) for i in evidence],
                }
            )
            + "\n"
            for name, evidence in facts.items()
        )
    )
    return turns, path


def _covered(tmp_path: Path, evidence: list[int]) -> bool:
    turns, facts = _write(tmp_path, {"the fact": evidence})
    (row,) = measure(turns, load_facts(facts), default_policy()).principals
    assert row.facts == 1
    return row.covered == 1


def test_a_fact_whose_message_forms_a_belief_is_covered(tmp_path: Path) -> None:
    assert _covered(tmp_path, [0])


def test_a_fact_whose_message_forms_nothing_is_not_covered(tmp_path: Path) -> None:
    assert not _covered(tmp_path, [2])


def test_a_fact_whose_message_forms_only_the_other_speakers_claims_is_not_covered(
    tmp_path: Path,
) -> None:
    turns, facts = _write(tmp_path, {"the fact": [1]})
    report = measure(turns, load_facts(facts), default_policy(), show_missed=1)
    assert report.total.covered == 0
    ((message,),) = [m.messages for m in report.missed]
    assert message.role == "assistant" and message.proposed == ()
    assert message.refused and all("not_spoken_by_principal" in r for r in message.refused)


def test_a_repeat_that_only_reinforces_still_covers_its_fact(tmp_path: Path) -> None:
    assert _covered(tmp_path, [3])


def test_a_candidate_resolution_refuses_does_not_cover_its_fact(tmp_path: Path) -> None:
    rows = [("user", "I live in Tartu."), ("user", "I live in Narva.")]
    turns, facts = _write(tmp_path, {"first": [0], "second": [1]}, rows, same_instant=True)
    report = measure(turns, load_facts(facts), default_policy(), show_missed=1)
    assert (report.total.covered, report.total.beliefs) == (1, 1)
    ((message,),) = [m.messages for m in report.missed]
    assert message.proposed == ("speaker lives in Narva",)
    assert message.refused == ("speaker lives in Narva (conflicting_value)",)


def test_one_covered_evidence_message_is_enough(tmp_path: Path) -> None:
    assert _covered(tmp_path, [2, 1, 0])


def test_messages_beliefs_and_reach_are_counted_for_the_principal(tmp_path: Path) -> None:
    turns, facts = _write(tmp_path, {"a": [0], "b": [1], "c": [2], "d": [9]})
    report = measure(turns, load_facts(facts), default_policy())
    assert report.total.to_dict() == {
        "principal": "all",
        "facts": 4,
        "covered": 1,
        "share": 0.25,
        "reachable": 2,
        "messages": 3,
        "messages_forming": 2,
        "messages_forming_share": 0.6667,
        "beliefs": 2,
        "beliefs_per_message": 0.6667,
    }
    assert report.unknown_evidence == 1


def test_the_command_prints_json_of_a_known_shape(tmp_path: Path) -> None:
    turns, facts = _write(tmp_path, {"a": [0], "b": [1], "c": [2]})
    args = ["coverage", "--turns", str(turns), "--facts", str(facts), "--json"]
    result = CliRunner().invoke(eval_app, [*args, "--show-missed", "5"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert set(body) == {
        "arm",
        "policy_version",
        "total",
        "principals",
        "unknown_evidence",
        "missed",
        "refusals_by_reason",
        "refusals_by_detail",
    }
    assert body["arm"] == "deterministic"
    assert body["policy_version"] == default_policy().version
    assert [p["principal"] for p in body["principals"]] == ["p"]
    assert body["total"]["covered"] == 1 and body["total"]["share"] == 0.3333
    assert [m["fact"] for m in body["missed"]] == ["b", "c"]
    evidence = body["missed"][0]["evidence"][0]
    assert set(evidence) == {
        "episode_id",
        "ordinal",
        "role",
        "content",
        "proposed",
        "refused",
        "abstained",
    }
    plain = CliRunner().invoke(eval_app, args[:-1])
    assert plain.exit_code == 0 and "read what forms" in plain.output


def test_the_missed_sample_is_the_same_for_the_same_seed(tmp_path: Path) -> None:
    turns, facts = _write(tmp_path, {name: [2] for name in "abcdefgh"})
    known = load_facts(facts)
    one = measure(turns, known, default_policy(), show_missed=3, seed=7).missed
    again = measure(turns, known, default_policy(), show_missed=3, seed=7).missed
    assert [m.fact.text for m in one] == [m.fact.text for m in again]
    assert len(one) == 3


def test_a_malformed_facts_file_names_its_line_and_the_command_exits_2(tmp_path: Path) -> None:
    turns, facts = _write(tmp_path, {"a": [0]})
    facts.write_text(facts.read_text() + '{"principal": "p"}\n')
    with pytest.raises(FactsError, match=":2:"):
        load_facts(facts)
    result = CliRunner().invoke(
        eval_app, ["coverage", "--turns", str(turns), "--facts", str(facts)]
    )
    assert result.exit_code == 2


def test_facts_are_read_with_their_evidence(tmp_path: Path) -> None:
    _, facts = _write(tmp_path, {"a": [0, 2]})
    assert load_facts(facts) == [Fact("p", "proj", "a", (_event(0), _event(2)))]
