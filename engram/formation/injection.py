"""Content that must never become memory because of what it *is*, not what it says.

Three shapes, each its own refusal reason:

* **transient** — task detail that will not matter next week: reminders with a countdown, an
  error on line 42, a failing build, "for now", "this session".
* **system restatement** — platform instructions or private reasoning repeated back: "my
  system prompt says …", "as an AI language model …", text inside a ``<thinking>`` block.
* **instruction shaped** — an instruction to the agent dressed as a fact or a preference:
  "ignore previous instructions", "you must always …", "from now on, never …"; and markup or
  code as a claim's end ("I use <script>…"): text shaped for a machine to act on, which the
  same refusal reason keeps out (the detail says ``markup or code``).

Each detector returns the name of the marker it saw (never the matched text), for the
refusal's detail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _compile(markers: dict[str, str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(p, re.IGNORECASE)) for name, p in markers.items())


_NUMBER = r"(?:\d+|a|an|one|two|three|five|ten|fifteen|twenty|thirty|a few|a couple of)"

TRANSIENT = _compile(
    {
        "countdown": rf"\b(?:in|after|for)\s+{_NUMBER}\s+(?:sec(?:ond)?s?|min(?:ute)?s?|hours?)\b",
        "reminder": r"(?:^|(?<=[.!?,;:])\s*|\b(?:please|pls|can you|could you|would you|will you"
        r"|to|and|also|just|then|so)\s+)remind me\b",
        "timer": r"\bset (?:a|an) (?:timer|alarm)\b",
        "line_number": r"\bline \d+\b",
        "error_detail": r"\b(?:this|that) (?:error|exception|traceback|stack ?trace|warning|bug"
        r"|crash|failure)\b|\btraceback \(most recent call last\)",
        "exit_code": r"\bexit (?:code|status) \d+\b",
        "build_state": r"\b(?:the|this) (?:build|test|tests|pipeline|deploy|ci) (?:is|are) "
        r"(?:failing|broken|red|green|passing|running|stuck)\b",
        "for_now": r"\b(?:for now|temporarily|for this (?:task|session|conversation|chat|call))\b",
        "this_session": r"\b(?:this|the current) (?:session|conversation|chat)\b",
        "one_off": r"\b(?:one-off|one off|just this once|only this time)\b",
    }
)

SYSTEM_RESTATEMENT = _compile(
    {
        "system_prompt": r"\b(?:system|developer) (?:prompt|message|instructions)\b",
        "as_an_ai": r"\bas an? (?:ai|large language model|language model|llm|ai assistant)\b",
        "private_reasoning": r"\b(?:chain[- ]of[- ]thought|internal reasoning|private reasoning"
        r"|scratch ?pad|hidden reasoning)\b|\blet me think step by step\b",
        "role_tag": r"<\|?(?:system|im_start|im_end|assistant)\|?>|\[/?(?:INST|SYS)\]",
    }
)

AGENT_RESTATEMENT = _compile(
    {
        "my_instructions": r"\bmy (?:instructions|guidelines|rules|directives|configuration)\b",
        "instructed": r"\bi(?: am|'m| was| have been)? (?:instructed|programmed|designed"
        r"|configured|not allowed|not permitted) to\b",
    }
)
"""Restatement markers that only mean "the platform's instructions" in an agent's mouth."""

INSTRUCTION_SHAPED = _compile(
    {
        "ignore_previous": r"\b(?:ignore|disregard|forget|override|bypass)\b[\w\s,'-]{0,30}"
        r"\b(?:previous|prior|above|earlier|all|any|your|the|system)\b[\w\s'-]{0,20}"
        r"\b(?:instructions?|prompts?|guidelines|directives|constraints|safety rules)\b",
        "must_always": r"\b(?:you|the assistant|the agent|assistant|agent)\s+(?:must|should|shall"
        r"|will|need to|have to|are to)\s+(?:always|never|now|only|from now on)\b",
        "from_now_on": r"\bfrom now on,? (?:you|always|never|ignore|respond|reply|answer)\b",
        "new_instructions": r"\b(?:new|updated|revised) (?:instructions|system prompt"
        r"|directives?)\b"
        r"|\bnew rules? for (?:you|the assistant|the agent)\b",
        "role_play": r"\b(?:you are now|pretend (?:to be|you are)|jailbreak|dan mode"
        r"|developer mode|act as (?:if you|though you|an? unrestricted))\b",
        "exfiltrate": r"\b(?:send|forward|post|upload|email|leak|reveal|exfiltrate)\b"
        r"[\w\s'-]{0,40}\b(?:api keys?|passwords?|credentials|secrets?|system prompt)\b",
        "fence_marker": r"<<<\s*/?\s*(?:end|begin|start)|\bEND_(?:MESSAGE|CONTENT|INPUT)\b"
        r"|\"(?:claims|assertions|memories)\"\s*:\s*\[",
        "do_not_tell": r"\bdo not (?:tell|inform|mention to) the user\b|\bwithout telling\b",
    }
)

MARKUP = _compile(
    {
        "html_tag": r"<\s*/?\s*[a-z][\w:-]*(?:\s[^<>]*)?/?\s*>"
        r"|<\s*/?\s*(?:script|iframe|img|svg|object|embed|style|link|meta|form|input|base"
        r"|frame|body|html)\b",
        "template_expression": r"\{\{[^{}]*\}\}|\{%[^{}]*%\}|\$\{[^{}]*\}|<%[^<>]*%>",
        "script_url": r"\b(?:javascript|vbscript):",
        "event_handler": r"\bon(?:error|load|click|mouse\w+|focus|blur|submit|change|input"
        r"|key\w+)\s*=",
        "sql_fragment": r"['\"]\s*\)?\s*;\s*(?:drop|delete|insert|update|select|alter|truncate)\s"
        r"|\b(?:drop|truncate)\s+table\b|\bunion\s+(?:all\s+)?select\b",
    }
)
"""Markup or code where a claim's end should name a thing: a tag ("<script>alert"), a
template expression, a script URL, an event handler, a piece of SQL. A person uses a browser,
not "<iframe src=…>"; a stored end like that is only ever a payload for whatever renders or runs
it next. Read in the claim's statements only, never in the sentence around it (a sentence that
mentions a ``<div>`` while saying "I live in Porto" still says where its speaker lives)."""

_THINKING = re.compile(
    r"<(think|thinking|scratchpad|reasoning|reflection)>[\s\S]*?(?:</\1>|$)", re.IGNORECASE
)


def first_marker(
    markers: tuple[tuple[str, re.Pattern[str]], ...], texts: Iterable[str]
) -> str | None:
    """The name of the first marker that occurs in any of ``texts``."""
    for text in texts:
        for name, pattern in markers:
            if pattern.search(text):
                return name
    return None


def in_private_reasoning(content: str, start: int, end: int) -> bool:
    """Whether the character span ``[start, end)`` lies inside a ``<thinking>``-style block."""
    return any(m.start() < end and start < m.end() for m in _THINKING.finditer(content))


def sentences_around(content: str, start: int, end: int) -> str:
    """The sentence(s) of ``content`` that contain the character span ``[start, end)``."""
    boundary = re.compile(r"[.!?\n]")
    left = max((m.end() for m in boundary.finditer(content, 0, start)), default=0)
    right_match = boundary.search(content, end)
    right = right_match.end() if right_match else len(content)
    return content[left:right]
