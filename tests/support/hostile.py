"""A seeded mix of hostile input for the doors and the topics, with the valid input it hides in.

Every input says which door it goes through — ``http`` (``engram api``), ``ingest`` (``engram
ingest FILE``), ``log`` (bytes written straight onto ``engram.episodes`` by a plain producer)
or ``claims`` (straight onto ``engram.claims``) — and what must become of it: ``forms`` (valid,
however odd: it is part of the valid set a clean run is compared against), ``refused`` (the
door answers 4xx, or the CLI names the line), ``dead_lettered`` (the worker dead-letters it and
goes on), ``set_aside`` (the projector sets it aside) or ``accounted`` (any of those, with a
reason: a judgement the suite leaves to the code, as long as something records it).

The mix is a function of the seed and the count alone, so a failure reruns identically.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import orjson

from engram.schemas.episodes import MAX_MESSAGE_CHARS, TurnAppended

Door = Literal["http", "ingest", "log", "claims"]
Expected = Literal["forms", "refused", "dead_lettered", "set_aside", "accounted"]

EPOCH = datetime(2026, 3, 1, tzinfo=UTC)
FACTS = [
    "I live in {city}.",
    "I use {tool} every day.",
    "I prefer {drink} in the morning.",
    "My name is {name}.",
    "I work at {company}.",
    "I moved to {city} last year.",
]
FILL = {
    "city": ["Lisbon", "Oslo", "Cork", "Zürich", "Kraków", "Porto", "Riga", "Turin"],
    "tool": ["Vim", "Emacs", "Figma", "Excel", "Blender"],
    "drink": ["tea", "coffee", "matcha", "cocoa"],
    "name": ["Ana Lima", "Bo Chen", "Chidi Okafor", "Dana Levi"],
    "company": ["Acme", "Globex", "Initech", "Umbrella"],
}


@dataclass(frozen=True)
class Input:
    kind: str
    door: Door
    expected: Expected
    tenant: str
    project: str
    body: bytes
    """The raw bytes sent: a JSON body, a JSON line, or a record's value."""
    episode: TurnAppended | None = None
    """For valid input, the episode itself: what the clean run appends."""


@dataclass
class Mix:
    valid: list[Input] = field(default_factory=list)
    hostile: list[Input] = field(default_factory=list)

    @property
    def all(self) -> list[Input]:
        return [*self.valid, *self.hostile]


def _episode(
    tenant: str,
    principal: str,
    project: str,
    text: str,
    *,
    seq: int,
    event_id: uuid.UUID | None = None,
    occurred_at: datetime | None = None,
    role: str = "user",
    author: str | None = None,
) -> TurnAppended:
    message: dict[str, Any] = {"ordinal": 0, "role": role, "content": text}
    if author is not None:
        message["author"] = author
    return TurnAppended.model_validate(
        {
            "event_id": event_id or uuid.uuid5(uuid.NAMESPACE_URL, f"{tenant}/{principal}/{seq}"),
            "tenant": tenant,
            "principal": principal,
            "project": project,
            "session": f"s{seq % 3}",
            "occurred_at": occurred_at or EPOCH + timedelta(minutes=seq),
            "messages": [message],
        }
    )


def _json(episode: TurnAppended) -> dict[str, Any]:
    value: dict[str, Any] = episode.model_dump(mode="json")
    return value


class _Maker:
    def __init__(self, seed: int, tenants: list[str]) -> None:
        self.rng = random.Random(seed)
        self.tenants = tenants
        self.seq = 0

    def fact(self) -> str:
        template = self.rng.choice(FACTS)
        return template.format(**{k: self.rng.choice(v) for k, v in FILL.items()})

    def place(self) -> tuple[str, str, str]:
        return (
            self.rng.choice(self.tenants),
            self.rng.choice(["ana", "bo"]),
            self.rng.choice(["garden", "atlas"]),
        )

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def valid(self, kind: str, door: Door, episode: TurnAppended) -> Input:
        body = orjson.dumps(_json(episode))
        return Input(kind, door, "forms", episode.tenant, episode.project, body, episode)

    def plain(self) -> TurnAppended:
        tenant, principal, project = self.place()
        return _episode(tenant, principal, project, self.fact(), seq=self.next_seq())


def _valid_odd(make: _Maker) -> list[tuple[str, TurnAppended]]:
    """Valid input that looks hostile: it must form (or be refused by formation, recorded) and
    appear in the clean run too."""
    t0, t1 = make.tenants[0], make.tenants[1]
    shared = uuid.uuid5(uuid.NAMESPACE_URL, "hostile/shared-event-id")
    odd: list[tuple[str, TurnAppended]] = [
        (
            "control_characters",
            _episode(t0, "ana", "garden", "I live in\x01 Oslo.\x07\x1b[31m", seq=9001),
        ),
        ("bidi_override", _episode(t0, "bo", "atlas", "I live in \u202eLisbon\u202c.", seq=9002)),
        ("zero_width", _episode(t1, "ana", "garden", "My name is Ana\u200d\u200bLima.", seq=9003)),
        ("emoji_pair", _episode(t1, "bo", "garden", "I prefer tea \U0001f375 always.", seq=9004)),
        (
            "max_length_message",
            _episode(t0, "ana", "atlas", ("I use Vim. " * 3000)[:MAX_MESSAGE_CHARS], seq=9005),
        ),
        (
            "earliest_event_time",
            _episode(
                t1,
                "ana",
                "atlas",
                "I live in Riga.",
                seq=9006,
                occurred_at=datetime(1900, 1, 1, tzinfo=UTC),
            ),
        ),
        (
            "latest_event_time",
            _episode(
                t1,
                "bo",
                "atlas",
                "I live in Turin.",
                seq=9007,
                occurred_at=datetime(2199, 12, 31, 23, 59, 59, tzinfo=UTC),
            ),
        ),
        (
            "unix_epoch_clock",
            _episode(
                t0,
                "ana",
                "garden",
                "I use Excel.",
                seq=9009,
                occurred_at=datetime(1970, 1, 1, tzinfo=UTC),
            ),
        ),
        (
            "assistant_author",
            _episode(
                t0,
                "bo",
                "garden",
                "You live in Cork.",
                seq=9008,
                role="assistant",
                author="\u202eBot",
            ),
        ),
    ]
    # One event id used by two tenants, two principals of one tenant and two projects of one
    # principal: each is its own episode and forms; the same episode twice forms once.
    for index, (tenant, principal, project, city) in enumerate(
        [
            (t0, "ana", "garden", "Oslo"),
            (t1, "ana", "garden", "Cork"),
            (t0, "bo", "garden", "Porto"),
            (t0, "ana", "atlas", "Riga"),
        ]
    ):
        episode = _episode(
            tenant, principal, project, f"I live in {city}.", seq=9100 + index, event_id=shared
        )
        odd.append(("colliding_event_id", episode))
    odd.append(("duplicate_in_tenant", odd[-4][1]))
    return odd


def _hostile_bodies(make: _Maker, max_event_bytes: int) -> dict[str, tuple[Expected, Any]]:
    """Each hostile kind: what must become of it at the HTTP door (``refused``) — the value is
    a function of the episode it spoils, giving bytes."""

    def spoil_message(**changes: Any) -> Any:
        def apply(body: dict[str, Any]) -> bytes:
            body["messages"][0].update(changes)
            return json.dumps(body).encode()

        return apply

    def spoil(**changes: Any) -> Any:
        def apply(body: dict[str, Any]) -> bytes:
            body.update(changes)
            return json.dumps(body).encode()

        return apply

    def raw(data: bytes) -> Any:
        return lambda _body: data

    def nested(depth: int) -> Any:
        return lambda _body: b'{"turns": ' + b"[" * depth + b"]" * depth + b"}"

    def text_bytes(content_escape: str) -> Any:
        def apply(body: dict[str, Any]) -> bytes:
            body["messages"][0]["content"] = "PLACEHOLDER"
            return json.dumps(body).encode().replace(b"PLACEHOLDER", content_escape.encode())

        return apply

    def huge(body: dict[str, Any]) -> bytes:
        message = body["messages"][0]
        content = "I use Vim. " * 2800  # ~30 kB: each message is valid, the episode is not
        count = min(64, max_event_bytes // len(content) + 2)
        body["messages"] = [{**message, "ordinal": i, "content": content} for i in range(count)]
        encoded = json.dumps(body).encode()
        assert len(encoded) > max_event_bytes
        return encoded

    return {
        "nul_in_content": ("refused", spoil_message(content="I live in Os\u0000lo.")),
        "nul_in_author": ("refused", spoil_message(role="assistant", author="B\u0000t")),
        "lone_surrogate": ("refused", text_bytes("I live in Lis\\ud800bon.")),
        "lone_low_surrogate": ("refused", text_bytes("\\udfff I like tea.")),
        "message_over_limit": ("refused", spoil_message(content="x" * (MAX_MESSAGE_CHARS + 1))),
        "event_over_limit": ("refused", huge),
        "deeply_nested_json": ("refused", nested(5000)),
        "unknown_schema_version": ("refused", spoil(schema_version=2)),
        "unknown_type": ("refused", spoil(type="turn.deleted")),
        "content_not_a_string": ("refused", spoil_message(content=12345)),
        "messages_not_a_list": ("refused", spoil(messages="I live in Oslo.")),
        "negative_ordinal": ("refused", spoil_message(ordinal=-1)),
        "ordinal_as_string": ("refused", spoil_message(ordinal="0")),
        "ordinal_as_float": ("refused", spoil_message(ordinal=0.0)),
        "ordinal_as_boolean": ("refused", spoil_message(ordinal=False)),
        "occurred_at_as_number": ("refused", spoil(occurred_at=1790000000)),
        "occurred_at_as_digits": ("refused", spoil(occurred_at="1790000000")),
        "occurred_at_with_a_space": ("refused", spoil(occurred_at="2026-01-01 10:00:00Z")),
        "schema_version_as_string": ("refused", spoil(schema_version="1")),
        "schema_version_as_boolean": ("refused", spoil(schema_version=True)),
        "event_id_without_hyphens": ("refused", spoil(event_id=uuid.UUID(int=7).hex)),
        "ordinal_over_64_bits": ("refused", spoil_message(ordinal=2**70)),
        "event_id_not_uuid": ("refused", spoil(event_id="not-a-uuid")),
        "naive_timestamp": ("refused", spoil(occurred_at="2026-01-01T10:00:00")),
        "year_10000": ("refused", spoil(occurred_at="10000-01-01T00:00:00Z")),
        "year_1": ("refused", spoil(occurred_at="0001-01-01T00:00:00Z")),
        "year_9999": ("refused", spoil(occurred_at="9999-12-31T23:59:59Z")),
        "year_1_east_of_utc": ("refused", spoil(occurred_at="0001-01-01T00:00:00+14:00")),
        "tenant_with_slash": ("refused", spoil(tenant="a/b")),
        "tenant_with_nul": ("refused", spoil(tenant="a\u0000b")),
        "extra_field": ("refused", spoil(admin=True)),
        "not_json": ("refused", raw(b"{not json")),
        "not_utf8": ("refused", raw(b'{"type": "turn.appended", "x": "\xff\xfe"}')),
        "empty_body": ("refused", raw(b"")),
        "json_null": ("refused", raw(b"null")),
        "top_level_array": ("refused", raw(b"[1, 2, 3]")),
    }


DOOR_OUTCOME: dict[Door, Expected] = {
    "http": "refused",
    "ingest": "refused",
    "log": "dead_lettered",
}


def generate(
    *, seed: int, hostile_count: int, valid_count: int, tenants: list[str], max_event_bytes: int
) -> Mix:
    """``valid_count`` plain valid turns plus the odd valid ones, and ``hostile_count`` hostile
    inputs drawn round-robin over every kind and door."""
    make = _Maker(seed, tenants)
    mix = Mix()
    doors: list[Door] = ["http", "log", "ingest"]
    for index in range(valid_count):
        mix.valid.append(make.valid("plain", doors[index % 3], make.plain()))
    for index, (kind, episode) in enumerate(_valid_odd(make)):
        mix.valid.append(make.valid(kind, doors[index % 2], episode))
    kinds = _hostile_bodies(make, max_event_bytes)
    names = sorted(kinds)
    plan = [(name, door) for name in names for door in doors]
    make.rng.shuffle(plan)
    for index in range(hostile_count):
        name, door = plan[index % len(plan)]
        _, spoiler = kinds[name]
        carrier = make.plain()
        body = spoiler(_json(carrier))
        if door == "ingest" and (b"\n" in body or not body):
            door = "log"  # a JSON line cannot carry a newline; an empty line is skipped
        expected: Expected = DOOR_OUTCOME[door]
        mix.hostile.append(Input(name, door, expected, carrier.tenant, carrier.project, body))
    for _ in range(max(1, hostile_count // 40)):
        carrier = make.plain()  # valid, but sent with another tenant's token: 403
        body = orjson.dumps(_json(carrier))
        mix.hostile.append(
            Input("other_tenants_token", "http", "refused", carrier.tenant, carrier.project, body)
        )
    for _ in range(max(1, hostile_count // 40)):
        carrier = make.plain()
        mix.hostile.append(
            Input(
                "claims_nul_in_quote", "claims", "set_aside", carrier.tenant, carrier.project, b""
            )
        )
    make.rng.shuffle(mix.hostile)
    return mix
