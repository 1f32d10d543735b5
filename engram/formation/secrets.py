"""Secret-shaped content: credentials, keys and tokens, found where they are and redacted.

A secret is looked for in two views of a text. The *plain* view is the text itself. The
*joined* view undoes the common ways of splitting a secret so a pattern can see it whole:
spelled separators ("sk dash proj dash …" becomes ``sk-proj-…``), a separator standing alone
between spaces ("ghp _ abc…"), runs of single characters ("s k - a b c 1 2 3 …"), and a key
written in chunks after a known prefix ("sk-abcd efgh ijkl …"). Every character of the joined
view remembers where it came from, so a match found there redacts the original words.

Code blocks need no special case: the patterns do not care about fences or indentation, and
``NAME=value`` assignments (``DB_PASSWORD=…``, ``export GITHUB_TOKEN=…``) are covered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engram.formation.screening import NeedleIndex, Screened, screened


@dataclass(frozen=True, slots=True)
class Finding:
    """A sensitive substring: its kind and character offsets in the text it was found in."""

    kind: str
    start: int
    end: int


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def _is_mixed_base64(value: str) -> bool:
    """A 40-character AWS secret key: upper, lower and digits all present."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


# fmt: off
_NOT_A_VALUE = frozenset((
    "stored", "saved", "set", "required", "missing", "wrong", "invalid", "expired", "correct",
    "incorrect", "changed", "same", "different", "not", "in", "on", "at", "the", "a", "an", "my",
    "your", "our", "their", "still", "now", "being", "too", "very", "ok", "okay", "fine",
    "empty", "blank", "there", "here", "somewhere", "secure", "safe", "hidden", "long", "short",
    "strong", "weak", "protected", "rotated", "revoked", "leaked", "unknown", "needed",
    "important", "confidential", "private",
))
# fmt: on
"""Words after "my password is" that describe the password rather than being it."""


def _is_credential_value(value: str) -> bool:
    word = value.strip("\"'`.,;").lower()
    return len(word) >= 3 and word not in _NOT_A_VALUE


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: Screened
    accept: Callable[[str], bool] | None = None
    group: int = 0


def _rule(
    kind: str, pattern: str, accept: Callable[[str], bool] | None = None, group: int = 0
) -> _Rule:
    return _Rule(kind, screened(pattern), accept, group)


_WORD = r"(?<![A-Za-z0-9_])"
"""A start that is not inside a longer identifier (``\\b`` treats ``_`` as a word char)."""

_RULES: tuple[_Rule, ...] = (
    _rule("anthropic_api_key", _WORD + r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{20,}"),
    _rule("openai_api_key", _WORD + r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}"),
    _rule("stripe_key", _WORD + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _rule("stripe_webhook_secret", _WORD + r"whsec_[A-Za-z0-9]{24,}"),
    _rule(
        "aws_access_key_id",
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}"
        r"(?![A-Z0-9])",
    ),
    _rule(
        "aws_secret_access_key",
        r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        accept=_is_mixed_base64,
    ),
    _rule("github_token", _WORD + r"gh[pousr]_[A-Za-z0-9]{30,}"),
    _rule("github_token", _WORD + r"github_pat_[A-Za-z0-9_]{22,}"),
    _rule("gitlab_token", _WORD + r"gl(?:pat|ptt|dt|rt|cbt|oas|soat|ft|imt)-[A-Za-z0-9_-]{20,}"),
    _rule("slack_token", _WORD + r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    _rule("slack_webhook", r"hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/\w+"),
    _rule("google_api_key", _WORD + r"AIza[0-9A-Za-z_-]{30,}"),
    _rule("google_oauth", _WORD + r"(?:GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[0-9A-Za-z_-]{20,})"),
    _rule("twilio_key", _WORD + r"SK[0-9a-fA-F]{32}(?![0-9a-fA-F])"),
    _rule("npm_token", _WORD + r"npm_[A-Za-z0-9]{36}"),
    _rule("pypi_token", _WORD + r"pypi-AgE[A-Za-z0-9_-]{40,}"),
    _rule("huggingface_token", _WORD + r"hf_[A-Za-z0-9]{30,}"),
    _rule("sendgrid_key", _WORD + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    _rule("digitalocean_token", _WORD + r"do[por]_v1_[a-f0-9]{64}"),
    _rule("shopify_token", _WORD + r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    _rule("mailgun_key", _WORD + r"key-[0-9a-zA-Z]{32}"),
    _rule("jwt", _WORD + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    _rule(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?",
    ),
    _rule("private_key", r"PuTTY-User-Key-File-\d+:[^\n]*"),
    _rule("connection_string", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:[^\s@/]+@[^\s]*"),
    _rule("connection_string", r"(?i)(?<![a-z])(?:password|pwd)\s*=\s*[^;\s\"']+"),
    _rule("bearer_token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*"),
    _rule(
        "password",
        r"(?i)(?<![a-z])(?:pass(?:word|wd|phrase|code)|pin(?:\s*(?:code|number))?"
        r"|(?:locker|door|gate|garage|alarm|safe|access|security)\s+code)s?(?![a-z])"
        r"(?:\s+for\s+(?:the\s+)?[\w.@-]+(?:\s+app)?)?\s*(?:'s|is|was|[:=]|->"
        r"|(?:to|should|will|would|must|shall)\s+be|set\s+to)\s*[\"'`]?(\S+)",
        accept=_is_credential_value,
        group=1,
    ),
    _rule(
        "password",
        r"(?i)(?<![a-z])(?:use|used|using|chose|picked|set)\s+[\"'`]?(\S+?)[\"'`]?\s+as\s+"
        r"(?:my|our|the)\s+(?:\w+\s+)?(?:pass(?:word|wd|phrase|code)|pin)s?(?![a-z])",
        accept=_is_credential_value,
        group=1,
    ),
    _rule(
        "credential",
        r"(?i)(?<![a-z])(?:api[\s_-]?key|secret[\s_-]?key|client[\s_-]?secret|access[\s_-]?key"
        r"|access[\s_-]?token|auth[\s_-]?token|refresh[\s_-]?token|session[\s_-]?token"
        r"|private[\s_-]?key|signing[\s_-]?key)s?(?![a-z])\s*(?:'s|is|was|[:=]|->)\s*[\"'`]?"
        r"(\S+)",
        accept=_is_credential_value,
        group=1,
    ),
    _rule(
        "credential",
        r"(?i)(?<![a-z])(?:secret|token)(?![a-z])\s*(?:is|[:=])\s*[\"'`]?"
        r"([A-Za-z0-9_\-./+=]{8,})",
        accept=_has_digit,
        group=1,
    ),
)
_RULE_INDEX = NeedleIndex.of([rule.pattern for rule in _RULES])
"""Every rule's needles, found in one pass over a text: a rule none of whose needles is in it
is not searched (:class:`~formation.screening.NeedleIndex`)."""

_GENERIC = frozenset({"credential", "password", "connection_string", "aws_secret_access_key"})
"""Kinds named after where a secret sits rather than what it is; a specific kind wins a tie."""

_SPELLED = {"dash": "-", "hyphen": "-", "minus": "-", "underscore": "_"}
_SEPARATORS = frozenset({"-", "_", "."})
_PREFIX = re.compile(
    r"^(?:sk-|sk_|rk_|gh[pousr]_|github_pat_|gl[a-z]{1,4}-|xox[a-z]-|AKIA|ASIA|AIza|npm_|hf_"
    r"|eyJ|whsec_|SG\.|pypi-|GOCSPX-|ya29\.)"
)
_CHUNK = re.compile(r"^[A-Za-z0-9_.-]+[,;:!?)]?$")
_TRAILING = ",;:!?)"
# fmt: off
_PROSE = frozenset((
    "a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "is", "it", "of", "on", "or",
    "so", "the", "to", "with",
))
# fmt: on
_SINGLE_RUN = 4
_MAX_JOINED = 256
_SINGLE = r"[^\s" + re.escape(_TRAILING) + r"][" + re.escape(_TRAILING) + r"]*"
_MAY_JOIN = re.compile(
    r"^\s|\s$|\s\s|[^\S ]"  # whitespace that a single space would replace
    r"|(?<!\S)(?:"  # a token that is spelled or a separator alone
    + "|".join(re.escape(t) for t in sorted({*_SPELLED, *_SEPARATORS}))
    + r")(?!\S)"
    r"|[-_]\s"  # a token that ends in a separator before the next one
    r"|(?<!\S)(?:" + _PREFIX.pattern.removeprefix("^") + r")"  # a token with a known prefix
    r"|(?<!\S)" + _SINGLE + r"(?:\s+" + _SINGLE + r"){" + str(_SINGLE_RUN - 1) + r"}(?!\S)",
    re.IGNORECASE,
)
"""Where :func:`joined_view` might differ from the text. Without any of these it glues no
tokens and spells nothing out, so it is the text itself: its tokens joined by the single spaces
that were already between them. Checked against :func:`joined_view` on the corpus and on
generated texts (``tests/unit/formation/test_secrets_joined.py``)."""


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _token_text(token: str) -> str:
    return _SPELLED.get(token.lower(), token)


def _glues(left: str, right: str, *, in_single_run: bool, in_prefixed: bool) -> bool:
    if left in _SEPARATORS or right in _SEPARATORS:
        return True
    if left.endswith(("-", "_")) and _CHUNK.match(right):
        return True
    chunk = bool(_CHUNK.match(right)) and right.lower() not in _PROSE
    return in_single_run or (in_prefixed and chunk)


def _single_runs(tokens: list[tuple[str, int, int]]) -> set[int]:
    """Indices of gaps (between token i and i+1) inside runs of single characters."""
    gaps: set[int] = set()
    run: list[int] = []
    for i, (text, _, _) in enumerate([*tokens, ("", 0, 0)]):
        if len(_token_text(text).rstrip(_TRAILING)) == 1:
            run.append(i)
            continue
        if len(run) >= _SINGLE_RUN:
            gaps.update(run[:-1])
        run = []
    return gaps


def joined_view(text: str) -> tuple[str, list[int]]:
    """The text with split secrets rejoined, and each character's index in ``text``."""
    tokens = _tokens(text)
    single_gaps = _single_runs(tokens)
    out: list[str] = []
    where: list[int] = []
    prefixed_length = -1
    for i, (raw, start, end) in enumerate(tokens):
        piece = _token_text(raw)
        if i > 0:
            left = _token_text(tokens[i - 1][0])
            joined = prefixed_length >= 0 and prefixed_length < _MAX_JOINED
            if not _glues(left, piece, in_single_run=i - 1 in single_gaps, in_prefixed=joined):
                out.append(" ")
                where.append(start - 1)
                prefixed_length = -1
        if prefixed_length < 0 and _PREFIX.match(piece):
            prefixed_length = 0
        if prefixed_length >= 0:
            prefixed_length += len(piece)
        spelled = piece != raw
        out.append(piece)
        where.extend([start] * len(piece) if spelled else range(start, end))
    return "".join(out), where


def _findings(text: str) -> Iterator[Finding]:
    for rule in _RULE_INDEX.chosen(text, _RULES):
        for match in rule.pattern.finditer(text):
            if rule.accept is not None and not rule.accept(match.group(rule.group)):
                continue
            yield Finding(rule.kind, match.start(rule.group), match.end(rule.group))


_TOLD_BY_CONTEXT = tuple(rule for rule in _RULES if rule.group)
"""The rules that know a secret by the words around it ("my password is …", "… as my
password"), not by its shape: their value can leave the context behind in a cut clause."""
_CONTEXT_INDEX = NeedleIndex.of([rule.pattern for rule in _TOLD_BY_CONTEXT])


def secrets_by_context(text: str) -> list[Finding]:
    """The secrets of ``text`` only its context shows, in the plain view: what a statement or a
    quote cut from ``text`` may carry without the words that made it a secret."""
    found: list[Finding] = []
    for rule in _CONTEXT_INDEX.chosen(text, _TOLD_BY_CONTEXT):
        for match in rule.pattern.finditer(text):
            if rule.accept is None or rule.accept(match.group(rule.group)):
                found.append(Finding(rule.kind, match.start(rule.group), match.end(rule.group)))
    return found


def find_secrets(text: str) -> list[Finding]:
    """Every secret-shaped substring of ``text``, in either view, as offsets into ``text``."""
    found = set(_findings(text))
    if _MAY_JOIN.search(text) is None:
        return _ordered(found)  # the joined view is the text: nothing more to find
    joined, where = joined_view(text)
    if joined != text:
        for f in _findings(joined):
            found.add(Finding(f.kind, where[f.start], where[f.end - 1] + 1))
    return _ordered(found)


def _ordered(found: set[Finding]) -> list[Finding]:
    return sorted(found, key=lambda f: (f.start, -f.end, f.kind in _GENERIC, f.kind))
