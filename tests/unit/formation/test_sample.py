"""``engram eval sample``: labeling sheets drawn deterministically from formed turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.evaluation.command import eval_app
from engram.evaluation.sample import draw, draw_excluding, form_file, parse_earlier

TURNS = [
    {"role": "user", "content": "I own a canoe and I live in Tartu."},
    {"role": "assistant", "content": "I live in Riga and I own a boat."},
    {"role": "user", "content": "I ran a charity race last Saturday."},
    {"role": "user", "content": "Thanks, talk soon!"},
]


def _write_turns(path: Path) -> Path:
    lines = []
    for i, message in enumerate(TURNS):
        lines.append(
            json.dumps(
                {
                    "schema_version": 1,
                    "type": "turn.appended",
                    "event_id": f"00000000-0000-0000-0000-00000000000{i}",
                    "tenant": "t",
                    "principal": "p",
                    "project": "proj",
                    "session": "s",
                    "occurred_at": f"2024-05-08T12:00:0{i}+00:00",
                    "messages": [{"ordinal": 0, **message}],
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_sheet_holds_only_what_formed_and_only_user_messages(tmp_path: Path) -> None:
    formation = form_file(_write_turns(tmp_path / "turns.jsonl"))
    statements = [b.statement for b in formation.beliefs]
    assert "speaker owns canoe" in statements and "speaker lives in Tartu" in statements
    assert not any("Riga" in s or "boat" in s for s in statements)
    assert [m.content for m in formation.messages] == [
        TURNS[0]["content"],
        TURNS[2]["content"],
        TURNS[3]["content"],
    ]


def test_a_draw_is_the_same_for_the_same_seed_and_keeps_input_order() -> None:
    items = list(range(100))
    assert draw(items, 10, seed=3) == draw(items, 10, seed=3)
    assert draw(items, 10, seed=3) == sorted(draw(items, 10, seed=3))
    assert draw(items, 10, seed=3) != draw(items, 10, seed=4)
    assert draw(items, 500, seed=3) == items


def test_the_command_prints_a_json_sheet_of_n_beliefs(tmp_path: Path) -> None:
    path = _write_turns(tmp_path / "turns.jsonl")
    args = ["sample", "--input", str(path), "--n", "2", "--seed", "1", "--json"]
    first = CliRunner().invoke(eval_app, args)
    again = CliRunner().invoke(eval_app, args)
    assert first.exit_code == 0, first.output
    sheet = json.loads(first.output)
    assert len(sheet) == 2 and all(row["quote"] and row["label"] == "" for row in sheet)
    assert first.output == again.output


def test_the_recall_sheet_lists_user_messages_with_what_formed(tmp_path: Path) -> None:
    path = _write_turns(tmp_path / "turns.jsonl")
    result = CliRunner().invoke(
        eval_app, ["sample", "--input", str(path), "--messages", "3", "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows[2] == {
        "episode_id": "00000000-0000-0000-0000-000000000003",
        "ordinal": 0,
        "content": "Thanks, talk soon!",
        "formed": [],
        "abstained": [],
        "durable_facts": None,
        "caught": None,
    }
    assert "speaker participated in charity race (2024-05-04)" in rows[1]["formed"]


def test_an_unreadable_input_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(eval_app, ["sample", "--input", str(tmp_path / "missing")])
    assert result.exit_code == 2


def test_the_recall_sheet_shows_what_the_arm_abstained_from_and_why(tmp_path: Path) -> None:
    turns = tmp_path / "turns.jsonl"
    _write_turns(turns)
    text = turns.read_text().replace("Thanks, talk soon!", "I have a deep love for maps.")
    turns.write_text(text)
    (row,) = [m for m in form_file(turns).messages if "maps" in m.content]
    assert row.formed == ()
    assert row.abstained == ("I owns deep love (owns needs something ownable)",)


def test_a_sheet_excluding_earlier_seeds_shares_no_item_with_their_draws() -> None:
    items = list(range(300))
    earlier = [(12, 100), (99, 100)]
    fresh = draw_excluding(items, 100, seed=5, earlier=earlier)
    assert len(fresh) == 100 and fresh == sorted(fresh)
    drawn_earlier = set(draw(items, 100, 12)) | set(draw(items, 100, 99))
    assert not set(fresh) & drawn_earlier
    assert fresh == draw_excluding(items, 100, seed=5, earlier=earlier)


def test_excluding_nothing_draws_the_same_sheet_as_before() -> None:
    items = list(range(300))
    assert draw_excluding(items, 100, seed=8675) == draw(items, 100, seed=8675)


def test_when_earlier_draws_leave_too_few_items_the_sheet_holds_all_that_is_left() -> None:
    items = list(range(10))
    fresh = draw_excluding(items, 8, seed=1, earlier=[(2, 6)])
    assert fresh == [i for i in items if i not in draw(items, 6, 2)]


def test_earlier_sheets_are_read_as_seed_with_an_optional_count() -> None:
    assert parse_earlier("12, 99:150,,7", 100) == [(12, 100), (99, 150), (7, 100)]
    with pytest.raises(ValueError, match="'x1'"):
        parse_earlier("12,x1", 100)
    with pytest.raises(ValueError, match="negative"):
        parse_earlier("12:-3", 100)


def test_the_command_leaves_out_the_messages_of_excluded_seeds(tmp_path: Path) -> None:
    path = _write_turns(tmp_path / "turns.jsonl")
    base = ["sample", "--input", str(path), "--messages", "1", "--json"]
    earlier = json.loads(CliRunner().invoke(eval_app, [*base, "--seed", "3"]).output)
    result = CliRunner().invoke(eval_app, [*base, "--seed", "3", "--exclude-seeds", "3"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["content"] != earlier[0]["content"]


@pytest.mark.parametrize(
    "args", [["--exclude-seeds", "12"], ["--messages", "2", "--exclude-seeds", "twelve"]]
)
def test_exclusions_without_a_recall_sheet_or_with_a_bad_seed_exit_2(
    tmp_path: Path, args: list[str]
) -> None:
    path = _write_turns(tmp_path / "turns.jsonl")
    result = CliRunner().invoke(eval_app, ["sample", "--input", str(path), *args])
    assert result.exit_code == 2
    assert "--exclude-seeds" in result.output


def test_a_sheet_drawn_with_exclusions_is_left_out_by_its_items_not_its_seed() -> None:
    """Recomputing a seed redraws only a sheet that excluded nothing; items name any sheet."""
    items = list(range(300))
    earlier = draw_excluding(items, 100, seed=5, earlier=[(12, 100)])
    recomputed = set(draw(items, 100, 5))
    assert set(earlier) != recomputed  # the seed alone does not name that sheet
    fresh = draw_excluding(items, 100, 6, [(12, 100)], drawn_before=lambda i: i in set(earlier))
    seed_12 = set(draw(items, 100, 12))
    assert not set(fresh) & set(earlier) and not set(fresh) & seed_12


def test_the_command_leaves_out_the_messages_of_an_earlier_sheet_file(tmp_path: Path) -> None:
    path = _write_turns(tmp_path / "turns.jsonl")
    base = ["sample", "--input", str(path), "--messages", "2", "--json"]
    first = CliRunner().invoke(eval_app, [*base, "--seed", "3"])
    sheet = tmp_path / "sheet.json"
    sheet.write_text(first.output)
    result = CliRunner().invoke(eval_app, [*base, "--seed", "3", "--exclude", str(sheet)])
    assert result.exit_code == 0, result.output
    earlier = {row["content"] for row in json.loads(first.output)}
    assert not {row["content"] for row in json.loads(result.output)} & earlier


def test_an_exclusion_file_that_is_not_a_sheet_exits_2(tmp_path: Path) -> None:
    path = _write_turns(tmp_path / "turns.jsonl")
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a sheet"}')
    args = ["sample", "--input", str(path), "--messages", "1", "--exclude", str(bad)]
    result = CliRunner().invoke(eval_app, args)
    assert result.exit_code == 2 and "--exclude" in result.output
