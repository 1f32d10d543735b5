"""Parsing a first-person clause into subject, modifiers, verb and the rest.

"I no longer have my watch" is subject "I", modifiers ("no longer",), verb ``have`` in its
base form and rest "my watch". Tense comes from the verb form and the auxiliaries; negation
from the modifiers. The families decide what the rest means for each verb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Form = Literal["base", "past", "gerund"]

_SPEC: dict[str, tuple[str, ...]] = {
    # lemma: base, third person, past, gerund, extra past participles
    "have": ("have", "has", "had", "having"),
    "own": ("own", "owns", "owned", "owning"),
    "buy": ("buy", "buys", "bought", "buying"),
    "get": ("get", "gets", "got", "getting", "gotten"),
    "drive": ("drive", "drives", "drove", "driving", "driven"),
    "sell": ("sell", "sells", "sold", "selling"),
    "lose": ("lose", "loses", "lost", "losing"),
    "give": ("give", "gives", "gave", "giving", "given"),
    "live": ("live", "lives", "lived", "living"),
    "move": ("move", "moves", "moved", "moving"),
    "relocate": ("relocate", "relocates", "relocated", "relocating"),
    "work": ("work", "works", "worked", "working"),
    "join": ("join", "joins", "joined", "joining"),
    "prefer": ("prefer", "prefers", "preferred", "preferring"),
    "rather": ("rather",),
    "like": ("like", "likes", "liked", "liking"),
    "love": ("love", "loves", "loved", "loving"),
    "enjoy": ("enjoy", "enjoys", "enjoyed", "enjoying"),
    "adore": ("adore", "adores", "adored", "adoring"),
    "hate": ("hate", "hates", "hated", "hating"),
    "dislike": ("dislike", "dislikes", "disliked", "disliking"),
    "detest": ("detest", "detests", "detested", "detesting"),
    "avoid": ("avoid", "avoids", "avoided", "avoiding"),
    "stand": ("stand", "stands", "stood", "standing"),
    "speak": ("speak", "speaks", "spoke", "speaking", "spoken"),
    "use": ("use", "uses", "used", "using"),
    "switch": ("switch", "switches", "switched", "switching"),
    "migrate": ("migrate", "migrates", "migrated", "migrating"),
    "manage": ("manage", "manages", "managed", "managing"),
    "lead": ("lead", "leads", "led", "leading"),
    "report": ("report", "reports", "reported", "reporting"),
    "learn": ("learn", "learns", "learned", "learning", "learnt"),
    "study": ("study", "studies", "studied", "studying"),
    "plan": ("plan", "plans", "planned", "planning"),
    "intend": ("intend", "intends", "intended", "intending"),
    "finish": ("finish", "finishes", "finished", "finishing"),
    "complete": ("complete", "completes", "completed", "completing"),
    "ship": ("ship", "ships", "shipped", "shipping"),
    "fix": ("fix", "fixes", "fixed", "fixing"),
    "wrap": ("wrap", "wraps", "wrapped", "wrapping"),
    "deploy": ("deploy", "deploys", "deployed", "deploying"),
    "merge": ("merge", "merges", "merged", "merging"),
    "release": ("release", "releases", "released", "releasing"),
    "launch": ("launch", "launches", "launched", "launching"),
    "build": ("build", "builds", "built", "building"),
    "create": ("create", "creates", "created", "creating"),
    "write": ("write", "writes", "wrote", "writing", "written"),
    "design": ("design", "designs", "designed", "designing"),
    "go": ("go", "goes", "went", "going", "gone"),
    "stop": ("stop", "stops", "stopped", "stopping"),
    "quit": ("quit", "quits", "quit", "quitting"),
    "decide": ("decide", "decides", "decided", "deciding"),
    "agree": ("agree", "agrees", "agreed", "agreeing"),
    "choose": ("choose", "chooses", "chose", "choosing", "chosen"),
    "pick": ("pick", "picks", "picked", "picking"),
    "settle": ("settle", "settles", "settled", "settling"),
    "opt": ("opt", "opts", "opted", "opting"),
}


def _verb_table() -> dict[str, tuple[str, Form]]:
    table: dict[str, tuple[str, Form]] = {}
    for lemma, forms in _SPEC.items():
        for index, surface in enumerate(forms):
            form: Form = ("base", "base", "past", "gerund")[index] if index < 4 else "past"
            table.setdefault(surface, (lemma, form))
    return table


VERBS: dict[str, tuple[str, Form]] = _verb_table()

_CONTRACTIONS = {"'m": "am", "'ve": "have", "'d": "would", "'ll": "will", "'re": "are"}
_MODIFIERS = (
    "no longer",
    "used to",
    "kind of",
    "sort of",
    "do not",
    "does not",
    "did not",
    "will not",
    "would not",
    "can not",
    "cannot",
    "have not",
    "has not",
    "had not",
    "am not",
    "are not",
    "was not",
    "were not",
    "going to",
    "gonna",
    "pretty much",
    "don't",
    "doesn't",
    "didn't",
    "won't",
    "wouldn't",
    "can't",
    "couldn't",
    "shouldn't",
    "haven't",
    "hasn't",
    "hadn't",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "not",
    "never",
    "really",
    "also",
    "just",
    "actually",
    "currently",
    "now",
    "still",
    "usually",
    "always",
    "mostly",
    "definitely",
    "absolutely",
    "totally",
    "honestly",
    "generally",
    "strongly",
    "personally",
    "mainly",
    "only",
    "much",
    "recently",
    "finally",
    "already",
    "officially",
    "even",
    "do",
    "does",
    "did",
    "will",
    "would",
    "could",
    "should",
    "might",
    "may",
    "must",
    "can",
    "am",
    "are",
    "was",
    "were",
    "been",
    "be",
    "both",
    "all",
    "ever",
    "newly",
    "happily",
    "far",
    "mostly",
    "typically",
    "normally",
    "tend to",
    "fully",
    "slightly",
    "very",
    "so",
    "definitely",
)
_MODIFIER = re.compile(
    r"(?:"
    + "|".join(re.escape(m) for m in sorted(set(_MODIFIERS), key=len, reverse=True))
    + r")(?=\s)",
    re.IGNORECASE,
)
_SUBJECT = re.compile(
    r"(?P<subject>I|[Ww]e|[Tt]he team|[Oo]ur team)(?P<contraction>'m|'ve|'d|'ll|'re)?(?=\s)"
)
_PERFECT_AUX = frozenset({"have", "has", "had"})
_NEGATIONS = frozenset(
    {
        "not",
        "never",
        "no longer",
        "do not",
        "does not",
        "did not",
        "will not",
        "would not",
        "can not",
        "cannot",
        "have not",
        "has not",
        "had not",
        "am not",
        "are not",
        "was not",
        "were not",
        "don't",
        "doesn't",
        "didn't",
        "won't",
        "wouldn't",
        "can't",
        "couldn't",
        "shouldn't",
        "haven't",
        "hasn't",
        "hadn't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
    }
)
_FUTURE = frozenset({"will", "going to", "gonna", "will not", "won't"})
_PAST_AUX = frozenset({"did", "was", "were", "used to", "had", "didn't", "did not"})


@dataclass(frozen=True, slots=True)
class Predicate:
    """A first-person (or project) clause, parsed."""

    subject: str
    modifiers: tuple[str, ...]
    lemma: str | None
    form: Form | None
    rest: str

    @property
    def negated(self) -> bool:
        return any(m in _NEGATIONS for m in self.modifiers)

    @property
    def perfect(self) -> bool:
        return any(m in _PERFECT_AUX for m in self.modifiers) and "had" not in self.modifiers

    @property
    def future(self) -> bool:
        return any(m in _FUTURE for m in self.modifiers)

    @property
    def copula(self) -> bool:
        return any(
            m
            in {
                "am",
                "are",
                "was",
                "were",
                "been",
                "am not",
                "are not",
                "was not",
                "were not",
                "isn't",
                "aren't",
                "wasn't",
                "weren't",
            }
            for m in self.modifiers
        )

    def tense(self) -> str:
        """Present, past or future, from the auxiliaries and the verb form."""
        if self.future:
            return "future"
        if self.perfect:
            return "present"
        if any(m in _PAST_AUX for m in self.modifiers) or self.form == "past":
            return "past"
        return "present"


def parse_predicate(text: str) -> Predicate | None:
    """Parse ``text`` (apostrophes normalised) when it starts with a first-person subject."""
    subject = _SUBJECT.match(text)
    if subject is None:
        return None
    modifiers: list[str] = []
    if subject.group("contraction"):
        modifiers.append(_CONTRACTIONS[subject.group("contraction")])
    position = subject.end()
    while True:
        position = _skip_space(text, position)
        word = _next_word(text, position)
        if word in {"have", "has", "had", "'ve"} and _next_is_participle(text, position):
            modifiers.append("have" if word == "'ve" else word)
            position += len(word)
            continue
        modifier = _MODIFIER.match(text, position)
        if modifier is None or (word in VERBS and word not in {"used", "do", "did"}):
            break
        modifiers.append(modifier.group().lower())
        position = modifier.end()
    word = _next_word(text, position)
    lemma, form = VERBS.get(word, (None, None))
    rest = text[position + len(word) :].strip() if lemma else text[position:].strip()
    return Predicate(subject.group("subject"), tuple(modifiers), lemma, form, rest)


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


_WORD = re.compile(r"[A-Za-z']+")


def _next_word(text: str, position: int) -> str:
    match = _WORD.match(text, position)
    return match.group().lower() if match else ""


def _next_is_participle(text: str, position: int) -> bool:
    following = text[position:].split(maxsplit=2)
    if len(following) < 2:
        return False
    lemma_form = VERBS.get(following[1].lower())
    return following[1].lower() in {"been", "got", "gotten"} or (
        lemma_form is not None and lemma_form[1] == "past"
    )
