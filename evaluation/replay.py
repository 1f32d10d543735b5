"""A replay endpoint: recorded answers served over HTTP as an OpenAI-compatible model.

``POST /v1/chat/completions`` reads the request as the model arm sends it — the system prompt,
then one user turn holding the date, the context block, ``Speaker: <role>`` and the message
between its fence markers — looks the message up in the answers (:func:`.answers.answer_key`)
and answers a chat completion whose content is the recorded claims envelope. A message the file
does not answer gets ``{"claims": []}`` and is counted. So a worker pointed at it
(``ENGRAM_MODEL_ENDPOINT``) forms what the in-process harness forms from the same file.

It also measures what the arm sends: the characters of every request's system prompt and user
turn and of every reply, and whether the system prompt came first and byte-identical to the
first one seen (a prefix an endpoint can cache).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from engram.evaluation.answers import RecordedAnswers

_MESSAGE = re.compile(
    r"Speaker: (?P<role>[a-z]+)\n<<<MESSAGE (?P<fence>[0-9a-f]{24})>>>\n(?P<text>.*)\n"
    r"<<<END (?P=fence)>>>\Z",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Sent:
    """One request as the replay endpoint saw it: sizes, and what it looked up."""

    role: str
    system_chars: int
    user_chars: int
    reply_chars: int
    answered: bool


CHARS_PER_TOKEN = 4
"""A rough estimate for English text and JSON: tokens are about a quarter of the characters."""


@dataclass(slots=True)
class ReplayLog:
    """Every request served, and whether every system prompt was the first one's bytes."""

    sent: list[Sent] = field(default_factory=list)
    system_prompt: str | None = None
    system_first_and_identical: bool = True

    def sizes(self) -> dict[str, object]:
        """What the arm sent and got back per request: characters (mean, p50, p95, max) and
        tokens estimated at :data:`CHARS_PER_TOKEN` characters each."""
        if not self.sent:
            return {"requests": 0}
        system = self.sent[0].system_chars
        return {
            "requests": len(self.sent),
            "system_prompt_first_and_identical": self.system_first_and_identical,
            "system_chars": system,
            "user_chars": _spread([s.user_chars for s in self.sent]),
            "prompt_chars": _spread([system + s.user_chars for s in self.sent]),
            "completion_chars": _spread([s.reply_chars for s in self.sent]),
            "prompt_tokens_estimate_mean": round(
                sum(system + s.user_chars for s in self.sent) / len(self.sent) / CHARS_PER_TOKEN
            ),
            "completion_tokens_estimate_mean": round(
                sum(s.reply_chars for s in self.sent) / len(self.sent) / CHARS_PER_TOKEN
            ),
        }


def _spread(values: list[int]) -> dict[str, int]:
    ordered = sorted(values)

    def at(share: float) -> int:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    return {
        "mean": round(sum(ordered) / len(ordered)),
        "p50": at(0.5),
        "p95": at(0.95),
        "max": ordered[-1],
    }


def parse_request(body: dict[str, Any]) -> tuple[str, str, str, str]:
    """(system prompt, user turn, role, message text) of a request; ValueError when the body is
    not what the model arm sends."""
    messages = body.get("messages")
    if not isinstance(messages, list) or len(messages) != 2:
        raise ValueError("expected two messages: the system prompt, then the user turn")
    system, user = messages
    if system.get("role") != "system" or user.get("role") != "user":
        raise ValueError("expected the system prompt first, then the user turn")
    found = _MESSAGE.search(str(user.get("content", "")))
    if found is None:
        raise ValueError("the user turn holds no fenced message")
    return str(system["content"]), str(user["content"]), found["role"], found["text"]


def completion(content: str, model: str) -> dict[str, Any]:
    """A chat completion whose one choice says ``content``."""
    return {
        "id": "replay",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def replay_app(answers: RecordedAnswers, log: ReplayLog) -> web.Application:
    """The aiohttp application that answers from ``answers`` and writes to ``log``."""

    async def chat(request: web.Request) -> web.Response:
        try:
            body = await request.json()
            system, user, role, text = parse_request(body)
        except (ValueError, json.JSONDecodeError, AttributeError) as exc:
            error = {"error": {"message": str(exc), "type": "bad_request"}}
            return web.json_response(error, status=400)
        if log.system_prompt is None:
            log.system_prompt = system
        elif system != log.system_prompt:
            log.system_first_and_identical = False
        reply = answers.reply(role, text)
        content = reply if reply is not None else json.dumps({"claims": []})
        log.sent.append(Sent(role, len(system), len(user), len(content), reply is not None))
        return web.json_response(completion(content, str(body.get("model", ""))))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    return app


class ReplayServer:
    """The replay endpoint on 127.0.0.1 (a free port unless one is given), as a context."""

    def __init__(self, answers: RecordedAnswers, *, port: int = 0) -> None:
        self.log = ReplayLog()
        self._runner = web.AppRunner(
            replay_app(answers, self.log), shutdown_timeout=1.0, access_log=None
        )
        self._port = port
        self.base_url = ""
        self.origin = ""

    async def __aenter__(self) -> ReplayServer:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._port)
        await site.start()
        port = self._runner.addresses[0][1]
        self.origin = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.origin}/v1"
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._runner.cleanup()
