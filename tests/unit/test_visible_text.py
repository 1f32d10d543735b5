"""Hidden characters in someone's text are shown, never applied: on the inspector's pages (the
Jinja environment's ``finalize``) and in the CLI's tables (plain text, never Rich markup)."""

from __future__ import annotations

from rich.console import Console

from engram.cli.output import cell
from engram.infra.visible import is_hidden, shown
from engram.web.ui.render import ENVIRONMENT


def test_a_right_to_left_override_is_shown_by_name() -> None:
    assert shown("You live in \u202eaksalA") == "You live in ⟨U+202E right-to-left override⟩aksalA"


def test_every_format_and_control_character_is_marked_but_those_text_needs() -> None:
    for char in ("\u200b", "\ufeff", "\u2066", "\U000e0041", "\x00", "\x1b", "\x7f", "\x85"):
        assert is_hidden(char) and char not in shown(f"a{char}b"), repr(char)
    for char in ("\t", "\n", "\r", "\u200c", "\u200d", "é", "\u0627", "🐈", " "):
        assert not is_hidden(char), repr(char)
    family = "👩\u200d👩\u200d👧"  # a joined emoji is one picture, and its words stay as said
    assert shown(family) is family
    plain = "I live in Lisbon."
    assert shown(plain) is plain


def test_a_page_shows_hidden_characters_yet_a_form_field_sends_back_what_was_typed() -> None:
    page = ENVIRONMENT.from_string(
        '<h1><bdi>{{ text }}</bdi></h1><input value="{{ text|verbatim }}"><title>{{ text }}</title>'
    ).render(text="\u202eaksalA<b>")
    assert "<h1><bdi>⟨U+202E right-to-left override⟩aksalA&lt;b&gt;</bdi></h1>" in page
    assert '<input value="\u202eaksalA&lt;b&gt;">' in page  # escaped still, not shown
    assert "<title>⟨U+202E right-to-left override⟩aksalA&lt;b&gt;</title>" in page


def test_a_table_cell_is_plain_text_with_hidden_characters_shown() -> None:
    console = Console(width=200, record=True, color_system=None)
    console.print(cell("[bold]tea[/] \x1b[31mred \u202eaksalA [/]"))
    printed = console.export_text()
    assert "[bold]tea[/]" in printed and "⟨U+001B⟩[31mred" in printed
    assert "⟨U+202E right-to-left override⟩aksalA" in printed and "\x1b" not in printed
