"""A Python client of the Engram API: :class:`AsyncEngram` and its blocking twin :class:`Engram`.

Built on httpx and typed with the HTTP contract (``engram.schemas.api``) and the event models
(``engram.schemas.episodes``) — the very models the server validates with, so a turn the client
builds is a turn the server accepts. It imports nothing else of Engram's (an import-linter
contract holds it to that), so an agent runtime can depend on it without the server's stack.

Answers 503 and 429 are retried, honouring ``Retry-After`` (bounded by ``max_retry_wait_s``
and ``retries``), and so is a connection that could not be made; other errors raise
:class:`EngramError` with the status and the server's detail, and no answer at all raises
:class:`EngramUnreachable` (never a raw httpx error). ``EngramError.retriable`` says which
may succeed if tried again. Appending twice after a 503 is safe: an episode's identity is its
``event_id``, and the same id appended twice forms once.

Without a ``Retry-After`` the client waits 1 s, then doubling, each wait at most
``max_retry_wait_s``: the shape of the server's one back-off (``infra.backoff.Backoff(1.0,
max_retry_wait_s)``). It keeps those few lines of its own rather than import it, because its
import contract allows it only ``schemas`` (the client must install without the server).

    async with AsyncEngram("http://127.0.0.1:8080", token=TOKEN) as engram:
        [where] = await engram.append_turns([turn])
        await engram.wait_formed(where)
        beliefs = await engram.beliefs()
        found = await engram.search("where do I live")
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter

from engram.schemas.api import (
    PROJECT_UNKNOWN,
    BeliefDetail,
    BeliefPage,
    BeliefView,
    CorrectionRequest,
    Freshness,
    LogPosition,
    RecallResults,
    RefusalPage,
    RefusalSummary,
    RefusalView,
    RememberedMessage,
    RememberRequest,
    RunDetail,
    RunPage,
    RunView,
    SearchMode,
    SearchResults,
    SessionDiagnosis,
    SessionMessage,
    SessionMessagePage,
    TurnsAccepted,
    UserModel,
    Whoami,
)
from engram.schemas.common import Role
from engram.schemas.corrections import CorrectionKind
from engram.schemas.episodes import MemoryRemembered, TurnAppended

RETRIED = frozenset({429, 503})
M = TypeVar("M")
Episode = TurnAppended | MemoryRemembered
P = TypeVar("P", BeliefPage, RefusalPage, RunPage)
PAGE_SIZE = 200


class EngramError(Exception):
    """The API refused a request; ``status`` is the HTTP status, ``detail`` its reason.

    ``retriable`` says whether the same request may succeed later: a 429 or 503 that outlasted
    the client's retries, or no answer at all (:class:`EngramUnreachable`)."""

    def __init__(self, status: int | None, detail: Any) -> None:
        super().__init__(detail if status is None else f"{status}: {detail}")
        self.status = status
        self.detail = detail

    @property
    def retriable(self) -> bool:
        return self.status in RETRIED


class EngramUnreachable(EngramError):
    """No answer came: the API is down, refused the connection, or did not answer in time.
    ``status`` is None, the httpx error is the ``__cause__``, and it is always retriable.

    A connection that could not be made is retried like a 503 (nothing reached the server)
    before this is raised; an error after the request was sent is raised at once, since the
    server may have acted on it: appending the same episodes again is safe (an ``event_id``
    forms once), and a correction can be checked with :meth:`AsyncEngram.belief` first."""

    def __init__(self, detail: str) -> None:
        super().__init__(None, detail)

    @property
    def retriable(self) -> bool:
        return True


class NotFormedYet(EngramError):
    """``wait_formed`` reached its timeout before the project formed through the offset."""


def _unreachable(
    base_url: httpx.URL, method: str, path: str, error: httpx.TransportError
) -> EngramUnreachable:
    reason = str(error) or type(error).__name__
    sent = not isinstance(error, httpx.ConnectError | httpx.ConnectTimeout)
    return EngramUnreachable(
        f"no answer from the Engram API at {base_url} to {method} {path} "
        f"({type(error).__name__}: {reason}); "
        + (
            "the request was sent and may have been applied; "
            if sent
            else "nothing reached it; is `engram api` running there? "
        )
        + "retry shortly"
    )


def _project_unknown(response: httpx.Response) -> str | None:
    """The detail of a freshness wait's 404 for a project the server knows nothing of yet."""
    if response.status_code != 404:
        return None
    try:
        body = response.json()
    except ValueError:
        return None
    detail = body.get("detail") if isinstance(body, dict) else None
    return detail if isinstance(detail, str) and detail.startswith(PROJECT_UNKNOWN) else None


def _retry_after(response: httpx.Response, fallback: float) -> float:
    value = response.headers.get("Retry-After", "")
    return float(value) if value.replace(".", "", 1).isdigit() else fallback


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        detail = response.json().get("detail")
    except ValueError:
        detail = response.text
    kind = NotFormedYet if response.status_code == 408 else EngramError
    raise kind(response.status_code, detail)


def _text(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return "true" if value is True else str(value)


def _query(**values: object) -> dict[str, str]:
    """Query parameters, leaving out what is unset (None) or off (False)."""
    return {key: _text(v) for key, v in values.items() if v is not None and v is not False}


class _Requests:
    """What both clients share: building requests and decoding answers."""

    def __init__(
        self,
        *,
        tenant: str | None,
        principal: str | None,
        retries: int,
        max_retry_wait_s: float,
    ) -> None:
        self.tenant = tenant
        self.principal = principal
        self.retries = retries
        self.max_retry_wait_s = max_retry_wait_s

    def who(self, principal: str | None) -> dict[str, str]:
        return _query(tenant=self.tenant, principal=principal or self.principal)

    def wait_s(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying ``response``; None when it is final."""
        if response.status_code not in RETRIED or attempt >= self.retries:
            return None
        return min(_retry_after(response, 2.0**attempt), self.max_retry_wait_s)


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _turns_body(turns: Iterable[Episode]) -> dict[str, Any]:
    return {"turns": [t.model_dump(mode="json") for t in turns]}


def _remember_body(
    *,
    principal: str | None,
    project: str,
    session: str,
    content: str,
    tenant: str | None,
    event_id: uuid.UUID | None,
    occurred_at: datetime,
) -> dict[str, Any]:
    request = RememberRequest(
        event_id=event_id or uuid.uuid4(),
        tenant=tenant,
        principal=principal,
        project=project,
        session=session,
        occurred_at=occurred_at,
        message=RememberedMessage(ordinal=0, role=Role.USER, content=content),
    )
    return request.model_dump(mode="json", exclude_none=True)


def _decode(model: type[M] | TypeAdapter[M], response: httpx.Response) -> M:
    _raise_for(response)
    if isinstance(model, TypeAdapter):
        return model.validate_json(response.content)
    assert issubclass(model, BaseModel)
    return model.model_validate_json(response.content)


async def every_item(
    read_page: Callable[..., Awaitable[BeliefPage | RefusalPage | RunPage]], **filters: Any
) -> AsyncIterator[Any]:
    """Every item of a paged list, reading page after page until ``next_cursor`` is None:
    ``async for belief in every_item(engram.beliefs_page, status="active")``."""
    cursor: str | None = None
    while True:
        page = await read_page(**filters, cursor=cursor)
        for item in page.items:
            yield item
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


class AsyncEngram:
    """The asynchronous client; use as ``async with``. ``principal`` and ``tenant`` default the
    calls that read or change one principal (a principal's token needs neither)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        tenant: str | None = None,
        principal: str | None = None,
        timeout_s: float = 30.0,
        retries: int = 5,
        max_retry_wait_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(token), timeout=timeout_s, transport=transport
        )
        self._r = _Requests(
            tenant=tenant, principal=principal, retries=retries, max_retry_wait_s=max_retry_wait_s
        )

    async def __aenter__(self) -> AsyncEngram:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = await self._http.request(method, path, **kwargs)
            except (httpx.ConnectError, httpx.ConnectTimeout) as error:  # nothing was sent
                if attempt >= self._r.retries:
                    raise _unreachable(self._http.base_url, method, path, error) from error
                wait = min(2.0**attempt, self._r.max_retry_wait_s)
            except httpx.TransportError as error:  # sent: the server may have acted on it
                raise _unreachable(self._http.base_url, method, path, error) from error
            else:
                found = self._r.wait_s(response, attempt)
                if found is None:
                    return response
                wait = found
            attempt += 1
            await asyncio.sleep(wait)

    async def append_turns(self, turns: Iterable[Episode]) -> list[LogPosition]:
        """Append episodes (validated whole by the server first); their log positions."""
        response = await self._send("POST", "/v1/turns", json=_turns_body(turns))
        return _decode(TurnsAccepted, response).appended

    async def remember(
        self,
        content: str,
        *,
        project: str,
        session: str = "remember",
        principal: str | None = None,
        event_id: uuid.UUID | None = None,
        occurred_at: datetime | None = None,
    ) -> LogPosition:
        """Explicit memory in the principal's own words: a ``memory.remember`` episode."""
        body = _remember_body(
            principal=principal or self._r.principal,
            project=project,
            session=session,
            content=content,
            tenant=self._r.tenant,
            event_id=event_id,
            occurred_at=occurred_at or datetime.now().astimezone(),
        )
        return _decode(LogPosition, await self._send("POST", "/v1/remember", json=body))

    async def wait_formed(
        self, position: LogPosition, *, timeout_s: float = 60.0, poll_s: float = 25.0
    ) -> Freshness:
        """Return once the project has formed through ``position`` (long-polls freshness;
        :class:`NotFormedYet` after ``timeout_s``).

        A project's first episode is unknown to the server until formation has read it, and
        the server says so at once (404) rather than waiting; since ``position`` came from an
        append, that means "not read yet", and this asks again, briefly, until ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        pause = 0.05
        while True:
            left = deadline - time.monotonic()
            params = _query(
                tenant=position.tenant,
                project=position.project,
                wait_for_offset=position.offset,
                timeout_s=max(min(poll_s, left), 0.1),
            )
            response = await self._send("GET", "/v1/freshness", params=params)
            unread = _project_unknown(response)
            if unread is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise NotFormedYet(response.status_code, unread)
                await asyncio.sleep(min(pause, left))
                pause = min(pause * 2, 1.0)
                continue
            if response.status_code != 408 or time.monotonic() >= deadline:
                return _decode(Freshness, response)

    async def freshness(self, project: str) -> Freshness:
        params = _query(tenant=self._r.tenant, project=project)
        return _decode(Freshness, await self._send("GET", "/v1/freshness", params=params))

    async def _page(self, model: type[P], path: str, params: dict[str, str]) -> P:
        return _decode(model, await self._send("GET", path, params=params))

    async def beliefs_page(
        self,
        *,
        principal: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
        all: bool = False,
        as_of: datetime | None = None,
        project: str | None = None,
        status: str | None = None,
        belief_type: str | None = None,
        relation: str | None = None,
        min_confidence: float | None = None,
    ) -> BeliefPage:
        """One page of beliefs; pass its ``next_cursor`` as ``cursor`` for the next."""
        params = {
            **self._r.who(principal),
            **_query(
                cursor=cursor,
                limit=limit,
                all=all,
                as_of=as_of,
                project=project,
                status=status,
                belief_type=belief_type,
                relation=relation,
                min_confidence=min_confidence,
            ),
        }
        return await self._page(BeliefPage, "/v1/beliefs", params)

    async def beliefs(self, **filters: Any) -> list[BeliefView]:
        """Every belief the filters of :meth:`beliefs_page` select, all pages read."""
        return [b async for b in every_item(self.beliefs_page, **filters)]

    async def belief(self, belief_id: uuid.UUID, *, principal: str | None = None) -> BeliefDetail:
        response = await self._send(
            "GET", f"/v1/beliefs/{belief_id}", params=self._r.who(principal)
        )
        return _decode(BeliefDetail, response)

    async def search(
        self,
        q: str,
        *,
        project: str | None = None,
        mode: SearchMode | str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        principal: str | None = None,
    ) -> SearchResults:
        """Current beliefs matching ``q``, best first, each with its evidence; pass
        ``next_cursor`` back as ``cursor`` for the next page. ``mode``: ``any`` (the server's
        default) reads ``q`` as a question, ``all`` as web-search syntax where every word must
        match (:class:`engram.schemas.api.SearchMode`)."""
        params = {
            **self._r.who(principal),
            **_query(
                q=q,
                project=project,
                mode=SearchMode(mode) if mode is not None else None,
                limit=limit,
                cursor=cursor,
            ),
        }
        return _decode(SearchResults, await self._send("GET", "/v1/search", params=params))

    async def recall(
        self,
        q: str,
        *,
        project: str | None = None,
        roles: Sequence[Role | str] = (),
        limit: int = 20,
        cursor: str | None = None,
        principal: str | None = None,
        semantic: bool = True,
        asked_at: datetime | None = None,
    ) -> RecallResults:
        """What answers ``q``: current beliefs (each with its quotes), then the messages that
        answer — the principal's own words unless ``roles`` names others (each message says its
        role); ``reflects`` says how far formation and the message index had got. Pass
        ``next_cursor`` back as ``cursor`` for the next page. ``semantic=False``: by words only.
        ``asked_at``: when the question is asked (default: the server's now), which "last week"
        or "two months ago" in it is read from."""
        params = {
            **self._r.who(principal),
            **_query(q=q, project=project, limit=limit, cursor=cursor, asked_at=asked_at),
            **({} if semantic else {"semantic": "false"}),
        }
        pairs = [*params.items(), *(("role", Role(r).value) for r in roles)]
        return _decode(RecallResults, await self._send("GET", "/v1/recall", params=pairs))

    async def refusals_page(
        self,
        *,
        principal: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
        reason: str | None = None,
        project: str | None = None,
        relation: str | None = None,
        since: datetime | None = None,
    ) -> RefusalPage:
        params = {
            **self._r.who(principal),
            **_query(
                cursor=cursor,
                limit=limit,
                reason=reason,
                project=project,
                relation=relation,
                since=since,
            ),
        }
        return await self._page(RefusalPage, "/v1/refusals", params)

    async def refusals(self, **filters: Any) -> list[RefusalView]:
        """Every refusal the filters of :meth:`refusals_page` select, all pages read."""
        return [r async for r in every_item(self.refusals_page, **filters)]

    async def refusal_summary(
        self,
        *,
        principal: str | None = None,
        reason: str | None = None,
        project: str | None = None,
        since: datetime | None = None,
    ) -> RefusalSummary:
        params = {**self._r.who(principal), **_query(reason=reason, project=project, since=since)}
        response = await self._send("GET", "/v1/refusals/summary", params=params)
        return _decode(RefusalSummary, response)

    async def runs_page(
        self,
        *,
        principal: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
        project: str | None = None,
        session: str | None = None,
        trigger: str | None = None,
        since: datetime | None = None,
    ) -> RunPage:
        params = {
            **self._r.who(principal),
            **_query(
                cursor=cursor,
                limit=limit,
                project=project,
                session=session,
                trigger=trigger,
                since=since,
            ),
        }
        return await self._page(RunPage, "/v1/runs", params)

    async def runs(self, **filters: Any) -> list[RunView]:
        """Every formation run the filters of :meth:`runs_page` select, all pages read."""
        return [r async for r in every_item(self.runs_page, **filters)]

    async def run(self, run_id: uuid.UUID, *, principal: str | None = None) -> RunDetail:
        response = await self._send("GET", f"/v1/runs/{run_id}", params=self._r.who(principal))
        return _decode(RunDetail, response)

    async def diagnosis(self, session: str, *, principal: str | None = None) -> SessionDiagnosis:
        response = await self._send(
            "GET", f"/v1/sessions/{session}/diagnosis", params=self._r.who(principal)
        )
        return _decode(SessionDiagnosis, response)

    async def whoami(self, *, principal: str | None = None) -> Whoami:
        """The tenant and principal the token acts for (an operator's: ``principal``)."""
        response = await self._send("GET", "/v1/whoami", params=self._r.who(principal))
        return _decode(Whoami, response)

    async def session_messages_page(
        self,
        session: str,
        *,
        project: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
        principal: str | None = None,
    ) -> SessionMessagePage:
        """One page of a session's messages, oldest first, as the message index holds them."""
        params = {**self._r.who(principal), **_query(project=project, cursor=cursor, limit=limit)}
        response = await self._send("GET", f"/v1/sessions/{session}/messages", params=params)
        return _decode(SessionMessagePage, response)

    async def session_messages(
        self, session: str, *, project: str | None = None, principal: str | None = None
    ) -> list[SessionMessage]:
        """Every message of a session, oldest first, all pages read."""
        found: list[SessionMessage] = []
        cursor: str | None = None
        while True:
            page = await self.session_messages_page(
                session, project=project, cursor=cursor, principal=principal
            )
            found.extend(page.items)
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    async def wait_indexed(
        self, position: LogPosition, *, timeout_s: float = 60.0, poll_s: float = 0.05
    ) -> Freshness:
        """Return once the message index has read the project through ``position`` (what
        :meth:`session_messages` and recall's messages show); :class:`NotFormedYet` after
        ``timeout_s``. Polls ``/v1/freshness``, from ``poll_s`` doubling to 1 s."""
        deadline = time.monotonic() + timeout_s
        pause = poll_s
        while True:
            fresh = await self.freshness(position.project)
            if fresh.indexed_offset is not None and fresh.indexed_offset >= position.offset:
                return fresh
            left = deadline - time.monotonic()
            if left <= 0:
                raise NotFormedYet(
                    None,
                    f"the message index of {position.project} has not read offset "
                    f"{position.offset} after {timeout_s} s; is `engram worker` (or "
                    "`engram indexer`) running?",
                )
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, 1.0)

    async def user_model(self, *, principal: str | None = None) -> UserModel:
        response = await self._send("GET", "/v1/user-model", params=self._r.who(principal))
        return _decode(UserModel, response)

    async def correct(
        self,
        belief_id: uuid.UUID,
        kind: CorrectionKind | str,
        *,
        replacement: str | None = None,
        project: str | None = None,
        principal: str | None = None,
    ) -> LogPosition:
        body = CorrectionRequest(
            kind=CorrectionKind(kind), replacement=replacement, project=project
        ).model_dump(mode="json", exclude_none=True)
        response = await self._send(
            "POST",
            f"/v1/beliefs/{belief_id}/corrections",
            params=self._r.who(principal),
            json=body,
        )
        return _decode(LogPosition, response)

    async def delete(self, belief_id: uuid.UUID, *, principal: str | None = None) -> LogPosition:
        response = await self._send(
            "DELETE", f"/v1/beliefs/{belief_id}", params=self._r.who(principal)
        )
        return _decode(LogPosition, response)


class Engram:
    """The blocking client: the same calls as :class:`AsyncEngram`, run on a private loop."""

    def __init__(self, base_url: str, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._async = AsyncEngram(base_url, **options)

    def __enter__(self) -> Engram:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._loop.run_until_complete(self._async.aclose())
        self._loop.close()

    def _run(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self._loop.run_until_complete(call(*args, **kwargs))

    def append_turns(self, turns: Iterable[Episode]) -> list[LogPosition]:
        result: list[LogPosition] = self._run(self._async.append_turns, turns)
        return result

    def remember(self, content: str, **options: Any) -> LogPosition:
        result: LogPosition = self._run(self._async.remember, content, **options)
        return result

    def wait_formed(self, position: LogPosition, **options: Any) -> Freshness:
        result: Freshness = self._run(self._async.wait_formed, position, **options)
        return result

    def freshness(self, project: str) -> Freshness:
        result: Freshness = self._run(self._async.freshness, project)
        return result

    def beliefs(self, **options: Any) -> list[BeliefView]:
        result: list[BeliefView] = self._run(self._async.beliefs, **options)
        return result

    def beliefs_page(self, **options: Any) -> BeliefPage:
        result: BeliefPage = self._run(self._async.beliefs_page, **options)
        return result

    def belief(self, belief_id: uuid.UUID, **options: Any) -> BeliefDetail:
        result: BeliefDetail = self._run(self._async.belief, belief_id, **options)
        return result

    def search(self, q: str, **options: Any) -> SearchResults:
        result: SearchResults = self._run(self._async.search, q, **options)
        return result

    def recall(self, q: str, **options: Any) -> RecallResults:
        result: RecallResults = self._run(self._async.recall, q, **options)
        return result

    def refusals(self, **options: Any) -> list[RefusalView]:
        result: list[RefusalView] = self._run(self._async.refusals, **options)
        return result

    def refusals_page(self, **options: Any) -> RefusalPage:
        result: RefusalPage = self._run(self._async.refusals_page, **options)
        return result

    def refusal_summary(self, **options: Any) -> RefusalSummary:
        result: RefusalSummary = self._run(self._async.refusal_summary, **options)
        return result

    def runs(self, **options: Any) -> list[RunView]:
        result: list[RunView] = self._run(self._async.runs, **options)
        return result

    def runs_page(self, **options: Any) -> RunPage:
        result: RunPage = self._run(self._async.runs_page, **options)
        return result

    def run(self, run_id: uuid.UUID, **options: Any) -> RunDetail:
        result: RunDetail = self._run(self._async.run, run_id, **options)
        return result

    def diagnosis(self, session: str, **options: Any) -> SessionDiagnosis:
        result: SessionDiagnosis = self._run(self._async.diagnosis, session, **options)
        return result

    def whoami(self, **options: Any) -> Whoami:
        result: Whoami = self._run(self._async.whoami, **options)
        return result

    def session_messages(self, session: str, **options: Any) -> list[SessionMessage]:
        result: list[SessionMessage] = self._run(self._async.session_messages, session, **options)
        return result

    def session_messages_page(self, session: str, **options: Any) -> SessionMessagePage:
        result: SessionMessagePage = self._run(
            self._async.session_messages_page, session, **options
        )
        return result

    def wait_indexed(self, position: LogPosition, **options: Any) -> Freshness:
        result: Freshness = self._run(self._async.wait_indexed, position, **options)
        return result

    def user_model(self, **options: Any) -> UserModel:
        result: UserModel = self._run(self._async.user_model, **options)
        return result

    def correct(
        self, belief_id: uuid.UUID, kind: CorrectionKind | str, **options: Any
    ) -> LogPosition:
        result: LogPosition = self._run(self._async.correct, belief_id, kind, **options)
        return result

    def delete(self, belief_id: uuid.UUID, **options: Any) -> LogPosition:
        result: LogPosition = self._run(self._async.delete, belief_id, **options)
        return result


__all__ = [
    "AsyncEngram",
    "Engram",
    "EngramError",
    "EngramUnreachable",
    "NotFormedYet",
    "every_item",
]
