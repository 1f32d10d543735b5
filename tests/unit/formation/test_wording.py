"""Statements a person reads: the principal by name or as "you", every relation in words."""

from __future__ import annotations

import pytest

from engram.formation.vocabulary import RELATIONS
from engram.formation.wording import (
    WORDING,
    YOU,
    Person,
    readable_refusal,
    readable_statement,
    relation_words,
)

ANA = Person("ana")


def _about_principal(relation: str, obj: str, person: Person, **kw: object) -> str:
    return readable_statement(
        subject="speaker",
        subject_is_principal=True,
        relation=relation,
        obj=obj,
        facet=kw.get("facet"),  # type: ignore[arg-type]
        retracted=bool(kw.get("retracted", False)),
        person=person,
    )


class TestEveryRelationIsInWords:
    def test_every_relation_of_the_vocabulary_has_words_and_none_other(self) -> None:
        assert set(WORDING) == {r.name for r in RELATIONS}

    @pytest.mark.parametrize("relation", [r.name for r in RELATIONS])
    @pytest.mark.parametrize("person", [YOU, ANA])
    @pytest.mark.parametrize("retracted", [False, True])
    def test_no_statement_shows_a_raw_relation_or_the_word_speaker(
        self, relation: str, person: Person, retracted: bool
    ) -> None:
        text = _about_principal(relation, "Lisbon", person, retracted=retracted)
        assert "_" not in text
        assert "speaker" not in text
        assert text.endswith("Lisbon")

    @pytest.mark.parametrize("relation", [r.name for r in RELATIONS])
    def test_a_label_has_no_underscore(self, relation: str) -> None:
        assert "_" not in relation_words(relation)


class TestThePrincipal:
    def test_the_demo_name_reads_as_a_name_not_speaker_has_name(self) -> None:
        assert _about_principal("has_name", "Ana Lima", ANA) == "ana's name is Ana Lima"
        assert _about_principal("has_name", "Ana Lima", YOU) == "Your name is Ana Lima"

    def test_you_take_the_second_person(self) -> None:
        assert _about_principal("lives_in", "Lisbon", YOU) == "You live in Lisbon"
        assert _about_principal("lives_in", "Lisbon", ANA) == "ana lives in Lisbon"
        assert _about_principal("learning", "German", YOU) == "You are learning German"
        assert _about_principal("born_in", "Porto", YOU) == "You were born in Porto"
        assert _about_principal("born_in", "Porto", ANA) == "ana was born in Porto"

    def test_a_name_ending_in_s_takes_an_apostrophe_alone(self) -> None:
        assert _about_principal("has_role", "nurse", Person("james")) == "james' role is nurse"

    def test_a_retraction_says_no_longer(self) -> None:
        assert (
            _about_principal("lives_in", "Lisbon", YOU, retracted=True)
            == "You no longer live in Lisbon"
        )
        assert (
            _about_principal("member_of", "the choir", ANA, retracted=True)
            == "ana is no longer a member of the choir"
        )
        assert _about_principal("created", "a film", YOU, retracted=True) == (
            "You did not make a film"
        )

    def test_a_family_relation_is_named_by_its_facet(self) -> None:
        assert _about_principal("related_to", "Maria", YOU, facet="sister") == (
            "Your sister is Maria"
        )
        assert _about_principal("related_to", "Maria", ANA, facet="sister") == (
            "ana's sister is Maria"
        )

    def test_a_relative_told_without_a_name_is_not_named_after_the_kin_word(self) -> None:
        assert _about_principal("related_to", "husband", YOU, facet="husband") == (
            "You have a husband"
        )
        assert _about_principal("related_to", "aunt", ANA, facet="aunt") == "ana has an aunt"
        assert _about_principal("related_to", "spouse", YOU, facet="spouse") == "You are married"
        assert _about_principal("related_to", "fiancé", ANA, facet="fiancé") == "ana is engaged"
        assert _about_principal("related_to", "child", YOU, facet="child") == "You are a parent"
        assert _about_principal("related_to", "spouse", YOU, facet="spouse", retracted=True) == (
            "You are no longer married"
        )
        assert _about_principal(
            "related_to", "girlfriend", YOU, facet="girlfriend", retracted=True
        ) == ("You no longer have a girlfriend")

    def test_a_late_relative_has_died_with_the_date_when_known(self) -> None:
        assert _about_principal("related_to", "father", YOU, facet="late father (2023)") == (
            "Your father has died (2023)"
        )
        assert _about_principal("related_to", "Rosa", ANA, facet="late mother") == (
            "ana's mother Rosa has died"
        )

    def test_another_facet_says_what_it_is_about(self) -> None:
        assert _about_principal("prefers", "oat milk", ANA, facet="coffee") == (
            "ana prefers oat milk (about coffee)"
        )

    def test_the_principal_as_the_object_is_you_too(self) -> None:
        text = readable_statement(
            subject="Maria",
            subject_is_principal=False,
            relation="knows",
            obj="speaker",
            facet=None,
            retracted=False,
            person=YOU,
        )
        assert text == "Maria knows you"

    def test_another_subject_stays_in_the_third_person(self) -> None:
        text = readable_statement(
            subject="Max",
            subject_is_principal=False,
            relation="instance_of",
            obj="dog",
            facet=None,
            retracted=False,
            person=YOU,
        )
        assert text == "Max is a kind of dog"


class TestRefusals:
    def test_the_demo_refusal_reads_as_a_sentence(self) -> None:
        assert readable_refusal("I lives_in Moscow", "lives_in", YOU) == "You live in Moscow"
        assert readable_refusal("I lives_in Moscow", "lives_in", ANA) == "ana lives in Moscow"

    def test_a_redaction_keeps_its_words(self) -> None:
        assert readable_refusal("[redacted:health]", "has_condition", YOU) == "[redacted:health]"

    def test_a_statement_without_its_relation_is_left_as_proposed(self) -> None:
        assert readable_refusal("my password is hunter2", "has_contact", YOU) == (
            "my password is hunter2"
        )

    def test_a_relation_outside_the_vocabulary_is_read_with_spaces(self) -> None:
        assert readable_refusal("I likes_colour blue", "likes_colour", YOU) == (
            "You: likes colour blue"
        )
