"""Jobs told as events: a new job, a hire or a promotion is the speaker's job now."""

from __future__ import annotations

import pytest

from tests.unit.formation.formed import formed


@pytest.mark.parametrize(
    ("content", "claim"),
    [
        ("I started a new job at the county library!", ("works_at", "county library")),
        ("Guess what, I just landed a job at Orbital Foods.", ("works_at", "Orbital Foods")),
        ("I got hired at Northwind last month.", ("works_at", "Northwind")),
        ("Finally started working at the botanical garden.", ("works_at", "botanical garden")),
        ("I got a job as a barista.", ("has_role", "barista")),
        ("I got promoted to head chef last week!", ("has_role", "head chef")),
        ("I was hired as a paramedic in March.", ("has_role", "paramedic")),
    ],
)
def test_a_job_told_as_what_happened_forms_the_job(content: str, claim: tuple[str, str]) -> None:
    assert ("speaker", *claim) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I got promoted!",
        "I applied for a job at the aquarium.",
        "I got my first job at a diner when I was sixteen.",
        "I got a summer job at the pool.",
        "Back in college I got a job at a bookshop.",
        "I'd love to get a job at the observatory.",
        "My sister got hired at the observatory.",
        "I got a job offer at the harbour but said no.",
        "I got promoted to a better desk.",
    ],
)
def test_a_job_wanted_past_refused_or_someone_elses_forms_no_job(content: str) -> None:
    assert not {c for c in formed(content) if c[1] in {"works_at", "has_role"}}


def test_a_duration_after_a_role_is_not_an_employer() -> None:
    claims = formed("I've been working as a tutor for two years.")
    assert ("speaker", "has_role", "tutor") in claims
    assert not {c for c in claims if c[1] == "works_at"}


@pytest.mark.parametrize(
    ("content", "business"),
    [
        ("Restocking my store took all weekend.", "store"),
        ("Things are slow at my flower shop this month.", "flower shop"),
    ],
)
def test_a_business_the_speaker_runs_is_owned(content: str, business: str) -> None:
    assert ("speaker", "owns", business) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I picked up bread at my local bakery.",
        "My favorite cafe closed.",
        "I'm saving up to open my own salon.",
        "I'm packing for my business trip.",
        "My business partner called.",
        "My cousin's shop is doing well.",
    ],
)
def test_a_venture_visited_planned_or_only_a_modifier_is_not_owned(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "owns"}


def test_a_position_on_a_team_is_a_role_and_the_team_no_employer() -> None:
    claims = formed("I'm a goalkeeper for the team now.")
    assert ("speaker", "has_role", "goalkeeper") in claims
    assert not {c for c in claims if c[1] == "works_at"}


@pytest.mark.parametrize(
    ("content", "claim"),
    [
        ("The daycare I work at closed early today.", ("works_at", "daycare")),
        (
            "I baked for the animal shelter I volunteer at.",
            ("participated_in", "volunteering at animal shelter"),
        ),
    ],
)
def test_a_place_told_in_a_relative_clause_is_where_the_speaker_works(
    content: str, claim: tuple[str, str]
) -> None:
    assert ("speaker", *claim) in formed(content)


@pytest.mark.parametrize(
    "content", ["Is the clinic you work at nice?", "The clinic my sister works at is closing."]
)
def test_a_place_someone_else_works_at_is_not_the_speakers(content: str) -> None:
    assert not {c for c in formed(content) if c[1] in {"works_at", "participated_in"}}


@pytest.mark.parametrize(
    ("content", "ended"),
    [
        ("I got laid off from Acme last week.", ("no longer works_at", "Acme")),
        ("I got fired from the warehouse.", ("no longer works_at", "warehouse")),
        ("I was let go by Brightline Logistics.", ("no longer works_at", "Brightline Logistics")),
        ("I got laid off from my job as a nurse.", ("no longer has_role", "nurse")),
    ],
)
def test_a_job_lost_is_retracted(content: str, ended: tuple[str, str]) -> None:
    assert formed(content) == {("speaker", *ended)}


@pytest.mark.parametrize("content", ["I was laid off yesterday.", "I got laid off from work."])
def test_a_job_lost_without_an_employer_or_role_forms_nothing(content: str) -> None:
    assert formed(content) == set()


@pytest.mark.parametrize(
    ("content", "held"),
    [
        ("I coach a youth swim team.", "coach"),
        ("I spend my mornings coaching swimmers.", "coach"),
        ("Coaching swimmers every morning keeps me busy.", "coach"),
        ("I've been teaching third graders for years.", "teacher"),
        ("I tutor high school students.", "tutor"),
        ("I train beginners at the climbing gym.", "trainer"),
    ],
)
def test_work_told_as_what_the_speaker_does_is_a_role(content: str, held: str) -> None:
    assert ("speaker", "has_role", held) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I teach my kids to swim.",
        "I coach my son's soccer team.",
        "I want to coach a team someday.",
        "When I was in college I tutored students.",
        "I'm training for a marathon.",
        "My job is pretty stressful.",
        "My job is so demanding.",
    ],
)
def test_a_parent_a_wish_a_past_job_or_a_judgement_is_no_role(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "has_role"}


@pytest.mark.parametrize(
    ("content", "business"),
    [
        ("Running my biz is hard work.", "business"),
        ("I'm growing my dance studio's following.", "dance studio"),
        ("I spent all week in my pottery studio.", "pottery studio"),
    ],
)
def test_a_business_told_as_biz_or_a_trade_studio_is_owned(content: str, business: str) -> None:
    assert ("speaker", "owns", business) in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I cleaned my studio apartment.",
        "I painted it in my studio.",
        "I went to my yoga studio this morning.",
        "I want to open my biz someday.",
        "I finally went for my biz dreams.",
    ],
)
def test_a_flat_a_room_a_gym_or_a_plan_is_no_business_owned(content: str) -> None:
    assert not {c for c in formed(content) if c[1] == "owns"}
