"""Preference facets: the topic a preference is about, from a closed map of keys.

A preference with a facet is single-valued per facet, so "I prefer tabs" and later "I prefer
spaces" compete for one current value. An object outside the map gets a stable key derived
from its own normalised text (``topic:green tea``), never one that depends on dict order.
"""

from __future__ import annotations

import re

FACET_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "answer style",
        (
            "concise",
            "brief",
            "terse",
            "short answers",
            "short replies",
            "short responses",
            "long answers",
            "detailed",
            "verbose",
            "bullet points",
            "bullet lists",
            "bullets",
            "step-by-step",
            "step by step",
            "tl;dr",
            "tldr",
            "summaries",
            "walls of text",
            "explanations",
            "examples",
            "answers",
            "replies",
            "responses",
        ),
    ),
    ("interface theme", ("dark mode", "dark theme", "light mode", "light theme", "high contrast")),
    (
        "indentation style",
        ("tabs", "spaces", "space indentation", "-space indentation", "indentation", "indents"),
    ),
    (
        "measurement units",
        ("metric", "imperial", "celsius", "fahrenheit", "kilometres", "kilometers", "miles"),
    ),
    ("date format", ("iso dates", "iso 8601", "24-hour", "24 hour clock", "12-hour", "am/pm")),
    (
        "editor",
        (
            "vim",
            "neovim",
            "emacs",
            "vs code",
            "vscode",
            "visual studio code",
            "intellij",
            "pycharm",
            "sublime",
            "helix",
            "zed",
            "nano",
            "webstorm",
            "goland",
        ),
    ),
    (
        "programming language",
        (
            "python",
            "rust",
            "golang",
            "typescript",
            "javascript",
            "java",
            "kotlin",
            "c++",
            "ruby",
            "haskell",
            "elixir",
            "scala",
            "swift",
            "c#",
            "clojure",
            "ocaml",
            "php",
            "perl",
            "julia",
            "zig",
        ),
    ),
    (
        "communication channel",
        (
            "email",
            "e-mail",
            "slack",
            "phone calls",
            "calls",
            "text messages",
            "texts",
            "microsoft teams",
            "zoom",
            "discord",
            "signal",
            "whatsapp",
            "telegram",
            "video calls",
            "async updates",
        ),
    ),
    (
        "beverage",
        ("coffee", "tea", "espresso", "latte", "cappuccino", "matcha", "decaf", "flat white"),
    ),
    ("operating system", ("linux", "macos", "mac os", "windows", "ubuntu", "fedora")),
    ("meeting time", ("morning meetings", "afternoon meetings", "meetings in the morning")),
)

_COMPILED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (
        facet,
        re.compile(
            r"(?<![\w+#])(?:" + "|".join(re.escape(k) for k in keywords) + r")(?![\w+#])",
            re.IGNORECASE,
        ),
    )
    for facet, keywords in FACET_KEYWORDS
)

STYLE_FACETS: frozenset[str] = frozenset(
    {"answer style", "interface theme", "indentation style", "measurement units", "date format"}
)
"""Facets where "I use X" states a preference rather than a tool in use."""


def facet_for(obj: str) -> str | None:
    """The closed-map facet an object belongs to, or ``None`` when it is in none."""
    for facet, pattern in _COMPILED:
        if pattern.search(obj):
            return facet
    return None


def preference_facet(obj: str) -> str:
    """The facet a preference is filed under: from the map, else ``topic:<object>``."""
    return facet_for(obj) or "topic:" + " ".join(obj.lower().split())
