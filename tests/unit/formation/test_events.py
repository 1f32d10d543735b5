"""Past events with grounded dates, ongoing activities, jobs, pets, groups and possessions."""

from __future__ import annotations

from datetime import date

import pytest

from engram.formation.deterministic.dates import ground
from tests.unit.formation.formed import EPISODE_DAY, formed


def test_a_past_event_forms_as_one_participation_carrying_its_grounded_date() -> None:
    """One belief per event: no ``occurred_on`` companion repeats the date the name carries."""
    assert formed("I ran a trail race last Saturday and loved it.") == {
        ("speaker", "participated_in", "trail race (2024-05-04)"),
    }


def test_a_leading_time_phrase_still_grounds_the_event() -> None:
    assert formed("Yesterday I went to a pottery class.") == {
        ("speaker", "participated_in", "pottery class (2024-05-07)"),
    }


def test_an_event_without_a_date_forms_without_one() -> None:
    assert formed("I attended a poetry slam.") == {("speaker", "participated_in", "poetry slam")}


@pytest.mark.parametrize(
    ("words", "grounded"),
    [
        ("yesterday", "2024-05-07"),
        ("last Wednesday", "2024-05-01"),
        ("last Sat", "2024-05-04"),
        ("last week", "2024-W18"),
        ("last month", "2024-04"),
        ("last year", "2023"),
        ("three years ago", "2021"),
        ("2 days ago", "2024-05-06"),
        ("a while ago", None),
    ],
)
def test_relative_dates_ground_in_the_episode_date_at_their_own_precision(
    words: str, grounded: str | None
) -> None:
    assert ground(f"I did it {words}", EPISODE_DAY) == grounded


def test_without_an_episode_date_nothing_is_grounded() -> None:
    assert ground("yesterday", None) is None
    assert ground("last year", date(2020, 1, 1)) == "2019"


@pytest.mark.parametrize(
    "content",
    [
        "I went to a lot of trouble for that.",
        "I went to an event and it was fun.",
        "I didn't go to the concert.",
        "I might go to the festival.",
    ],
)
def test_no_event_forms_without_a_named_event_that_happened(content: str) -> None:
    assert not {c for c in formed(content) if c[1] in {"participated_in", "occurred_on"}}


def test_joining_an_event_is_participation_not_employment() -> None:
    assert formed("I joined a darts tournament.") == {
        ("speaker", "participated_in", "darts tournament")
    }


def test_joining_a_group_is_membership() -> None:
    assert formed("I joined a running club.") == {("speaker", "member_of", "running club")}


def test_giving_a_talk_is_an_event_not_parting_with_something() -> None:
    assert formed("I gave a lecture on beetles.") == {
        ("speaker", "participated_in", "lecture on beetles")
    }


@pytest.mark.parametrize(
    ("content", "claim"),
    [
        ("I've been doing pilates lately.", ("speaker", "participated_in", "pilates")),
        ("I'm doing judo these days.", ("speaker", "participated_in", "judo")),
        ("I've been knitting a lot.", ("speaker", "participated_in", "knitting")),
        ("I play volleyball on Sundays.", ("speaker", "participated_in", "volleyball")),
        ("I took up rowing a year ago.", ("speaker", "learning", "rowing")),
        ("I lost my job as an accountant.", ("speaker", "no longer has_role", "accountant")),
        ("I teach pilates classes.", ("speaker", "has_role", "pilates teacher")),
        ("I adopted a kitten called Miso.", ("speaker", "owns", "kitten")),
        ("My cat Luna sleeps all day.", ("speaker", "owns", "cat")),
        ("My new hatchback is great.", ("speaker", "owns", "hatchback")),
        ("I finished my first screenplay.", ("speaker", "created", "first screenplay")),
        ("I graduated last month!", ("speaker", "participated_in", "graduation (2024-04)")),
        ("I can't find time for my pottery hobby.", ("speaker", "interested_in", "pottery")),
        ("My neighbour named Ruth waved.", ("speaker", "related_to", "Ruth")),
    ],
)
def test_durable_facts_people_tell_form_with_the_right_relation(
    content: str, claim: tuple[str, str, str]
) -> None:
    assert claim in formed(content)


@pytest.mark.parametrize(
    "content",
    [
        "I've been doing great, thanks.",
        "I've been thinking about it.",
        "I started caring less.",
        "I'm going to open my own bakery.",
        "My brother has a parrot named Kiwi.",
    ],
)
def test_look_alikes_of_activities_and_possessions_form_nothing(content: str) -> None:
    assert not {c for c in formed(content) if c[1] in {"participated_in", "learning", "owns"}}


@pytest.mark.parametrize(
    ("content", "claim"),
    [
        ("Lost my job as a welder last week.", ("speaker", "no longer has_role", "welder")),
        ("Ah yes- Pip, my hamster. He's sweet.", ("speaker", "owns", "hamster")),
        (
            "I volunteer at the food bank on weekends.",
            ("speaker", "participated_in", "volunteering at food bank"),
        ),
        (
            "Been a while, wanted to let you know I joined a rowing club!",
            ("speaker", "member_of", "rowing club"),
        ),
    ],
)
def test_subjectless_and_told_as_news_facts_still_form(
    content: str, claim: tuple[str, str, str]
) -> None:
    assert claim in formed(content)


@pytest.mark.parametrize(
    ("content", "claim"),
    [
        ("Cooking has always been a passion of mine.", ("speaker", "interested_in", "cooking")),
        ("My passion is calligraphy.", ("speaker", "interested_in", "calligraphy")),
        ("I'm passionate about urban gardening.", ("speaker", "interested_in", "urban gardening")),
        (
            "That photo is from my trip to the Dolomites last year.",
            ("speaker", "participated_in", "trip to Dolomites (2023)"),
        ),
        ("I've got lots of vinyl records- jazz mostly.", ("speaker", "owns", "vinyl records")),
        ("Just wanted to tell ya I joined a quiz team.", ("speaker", "member_of", "quiz team")),
    ],
)
def test_passions_trips_and_counted_possessions_form(
    content: str, claim: tuple[str, str, str]
) -> None:
    assert claim in formed(content)


def test_a_past_passion_is_history_and_a_planned_trip_forms_nothing() -> None:
    assert formed("Singing was my first passion.") == {
        ("speaker", "used to interested_in", "singing")
    }
    assert formed("My trip to Lisbon next month is booked.") == set()


def test_back_from_an_event_is_participation_and_a_superlative_is_not_its_name() -> None:
    assert formed("I just got back from the craziest costume party.") == {
        ("speaker", "participated_in", "costume party")
    }


def test_an_adjective_ending_in_est_is_not_taken_for_a_superlative() -> None:
    assert formed("I went to a forest retreat.") == {
        ("speaker", "participated_in", "forest retreat")
    }


def test_a_language_as_the_subject_of_learning_is_learned() -> None:
    assert formed("Learning Italian is slow going.") == {("speaker", "learning", "Italian")}


def test_off_to_an_activity_from_the_closed_list_is_participation() -> None:
    assert formed("I'm off to do some karate!") == {("speaker", "participated_in", "karate")}
    assert formed("I'm off to do some shopping!") == set()


def test_an_outing_in_a_photo_forms_only_with_a_date() -> None:
    assert formed("I filmed this clip on a bike ride last summer.") == {
        ("speaker", "participated_in", "bike ride (2023)"),
    }
    assert formed("I filmed this clip on a hike.") == set()
    assert formed("I was at a gig last night.") == {
        ("speaker", "participated_in", "gig (2024-05-07)"),
    }


@pytest.mark.parametrize(
    "content",
    [
        "I teach kids on weekends.",
        "I teach myself guitar.",
        "My cat Tigger passed away last spring.",
        "I'm volunteering for the first time.",
        "I went to the store yesterday.",
        "I did the dishes.",
        "I took a break last week.",
    ],
)
def test_look_alikes_of_jobs_pets_events_and_volunteering_form_nothing(content: str) -> None:
    assert formed(content) == set()


def test_a_new_possession_is_the_same_possession() -> None:
    assert formed("I got a new puppy!") == {("speaker", "owns", "puppy")}
    assert formed("I teach French at night school.") == {("speaker", "has_role", "French teacher")}


def test_we_at_an_event_means_the_speaker_took_part() -> None:
    assert formed("We went to a lantern festival last weekend.") == {
        ("speaker", "participated_in", "lantern festival (2024-W18)"),
    }
    assert formed("We had a great time at the county fair.") == {
        ("speaker", "participated_in", "county fair")
    }


def test_a_sentence_that_dropped_its_i_still_tells_an_event() -> None:
    assert formed("Went to a jazz gig last night.") == {
        ("speaker", "participated_in", "jazz gig (2024-05-07)"),
    }
    assert formed("I was beat, went to a gig anyway.") == set()


def test_a_trip_keeps_its_destination_even_after_a_time_phrase() -> None:
    assert ("speaker", "participated_in", "trip to Porto (2024-04)") in formed(
        "Took a quick trip last month to Porto for the food."
    )


def test_two_events_of_one_name_on_two_days_are_two_events_each_with_its_date() -> None:
    """Entities merge by name: the date in the name keeps the second parade from superseding
    the first one's date."""
    first = formed("I went to a pride parade last Saturday.")
    second = formed("I went to a pride parade yesterday.")
    assert first == {("speaker", "participated_in", "pride parade (2024-05-04)")}
    assert second == {("speaker", "participated_in", "pride parade (2024-05-07)")}


def test_an_undated_event_keeps_its_bare_name() -> None:
    assert formed("I attended a poetry slam.") == {("speaker", "participated_in", "poetry slam")}


def test_the_date_in_an_events_name_does_not_count_against_the_gates_word_limit() -> None:
    assert ("speaker", "participated_in", "book fair at the town hall (2024-05-04)") in formed(
        "I went to a book fair at the town hall last Saturday."
    )
