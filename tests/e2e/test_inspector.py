"""The inspector's pages (``/ui``) over the live API's app, against real Kafka and PostgreSQL:
signing in keeps the token out of the cookie and every URL, every form needs its CSRF token,
another principal's belief is a 404 page, user text is escaped, the headers are strict, and a
correction is checked and shown before it is appended."""

from __future__ import annotations

import asyncio
import re
import secrets
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg
import httpx2
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from engram.api import create_api
from engram.infra.settings import ApiSettings, DatabaseSettings, KafkaSettings, Settings
from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.service.tokens import create_token, revoke_token
from engram.web.ui.security import CONTENT_SECURITY_POLICY
from engram.web.ui.session import MAKE_A_SECRET, SESSION_COOKIE, UiSecretTooWeak
from tests.e2e.test_api_ingest import _log_records
from tests.support.episodes import turn
from tests.support.indexing import index_everything
from tests.support.isolation import REPO, Isolated
from tests.support.projecting import batch_of, claim, project_all, seed_two_principals

pytestmark = pytest.mark.e2e

WAIT_S = 60
UI_SECRET = secrets.token_urlsafe(48)
HOSTILE = "<script>alert('x')</script>"
TOOL = "Q<ix&y>"
"""A tool name with the characters a page must escape that is still no markup: a script tag as
the claim's end is refused at formation (``instruction_shaped``, "markup or code"), so the
script stays in the message around the claim, where the page must escape it too."""
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def _settings(isolated: Isolated, kafka: KafkaSettings) -> Settings:
    return Settings(
        kafka=kafka,
        database=DatabaseSettings(url=isolated.database_url),
        api=ApiSettings(ui_secret=SecretStr(UI_SECRET)),
    )


async def _seed(isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool) -> dict[str, str]:
    """ana lives in Lisbon and uses a tool whose name needs escaping, told in a message with a
    script tag in it; bo lives in Cork. The turns are on the log and in the message index.
    Tokens: ana, bo, the operator."""
    t = isolated.tenant
    await ensure_topics(kafka)
    await seed_two_principals(kafka, pool, t)
    hostile = turn(t, "ana", "p", f"I use {TOOL} at work. {HOSTILE}", seq=2)
    await project_all(
        kafka, pool, [batch_of(hostile, claim("I", "uses", TOOL, f"I use {TOOL}"), offset=2)]
    )
    turns = [
        turn(t, "ana", "p", "I live in Lisbon.", seq=0),
        turn(t, "bo", "p", "I live in Cork.", seq=1),
        hostile,
    ]
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(turns)
    await index_everything(kafka, pool, timeout_s=WAIT_S)
    tokens = {who: (await create_token(pool, tenant=t, principal=who))[1] for who in ("ana", "bo")}
    tokens["operator"] = (await create_token(pool, tenant=t, principal=None))[1]
    return tokens


@contextmanager
def _browser(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_api(settings), follow_redirects=False) as client:
        yield client


def _csrf(page: httpx2.Response) -> str:
    found = _CSRF.search(page.text)
    assert found, page.text
    return found.group(1)


def _sign_in(client: TestClient, token: str, principal: str = "") -> httpx2.Response:
    form = client.get("/ui/sign-in")
    return client.post(
        "/ui/sign-in", data={"csrf": _csrf(form), "token": token, "principal": principal}
    )


def _belief_ids(page: httpx2.Response) -> list[str]:
    return re.findall(r'href="/ui/beliefs/([0-9a-f-]{36})"', page.text)


async def test_signing_in_seals_the_token_into_a_strict_cookie_and_never_a_url(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> None:
        with _browser(_settings(isolated, kafka)) as client:
            assert client.get("/ui/beliefs").headers["location"] == "/ui/sign-in"
            refused = _sign_in(client, "engram_not-a-token")
            assert refused.status_code == 401 and "not accepted" in refused.text
            signed = _sign_in(client, tokens["ana"])
            assert signed.status_code == 303 and signed.headers["location"] == "/ui/beliefs"
            cookie = signed.headers["set-cookie"]
            assert SESSION_COOKIE in cookie and tokens["ana"] not in cookie
            for attribute in ("HttpOnly", "SameSite=lax", "Path=/ui"):
                assert attribute.lower() in cookie.lower()
            listed = client.get("/ui/beliefs")
            assert listed.status_code == 200
            assert "You live in Lisbon" in listed.text and tokens["ana"] not in listed.text
            assert listed.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert listed.headers["x-frame-options"] == "DENY"
            assert listed.headers["cache-control"] == "no-store"
            # projected straight from claims: formation's backlog has read nothing of ana's
            assert 'id="freshness">Nothing you said has been read yet.' in listed.text
            signed_out = client.post("/ui/sign-out", data={"csrf": _csrf(listed)})
            assert signed_out.status_code == 303
            assert client.get("/ui/beliefs").status_code == 303

    await asyncio.to_thread(scenario)


async def test_a_revoked_token_ends_its_session_at_once(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await seed_two_principals(kafka, pool, t)
    record, token = await create_token(pool, tenant=t, principal="ana")

    def signed_in(client: TestClient) -> int:
        return client.get("/ui/beliefs").status_code

    with _browser(_settings(isolated, kafka)) as client:
        assert (await asyncio.to_thread(_sign_in, client, token)).status_code == 303
        assert await asyncio.to_thread(signed_in, client) == 200
        assert await revoke_token(pool, record.token_id)
        assert await asyncio.to_thread(signed_in, client) == 303


async def test_every_form_needs_its_csrf_token(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> None:
        with _browser(_settings(isolated, kafka)) as client:
            bare = client.post("/ui/sign-in", data={"token": tokens["ana"]})
            assert bare.status_code == 403 and SESSION_COOKIE not in bare.headers.get(
                "set-cookie", ""
            )
            assert _sign_in(client, tokens["ana"]).status_code == 303
            [lisbon, *_] = _belief_ids(client.get("/ui/beliefs?q=Lisbon"))
            for path, data in (
                (f"/ui/beliefs/{lisbon}/send", {"choice": "delete"}),
                (f"/ui/beliefs/{lisbon}/send", {"choice": "delete", "csrf": "forged"}),
                ("/ui/forget", {"confirm": "ana"}),
                ("/ui/sign-out", {}),
            ):
                answer = client.post(path, data=data)
                assert answer.status_code == 403, (path, data)
                assert "Nothing was changed" in answer.text
            page = client.get(f"/ui/beliefs/{lisbon}")
            other_site = client.post(
                f"/ui/beliefs/{lisbon}/send",
                data={"choice": "delete", "csrf": _csrf(page)},
                headers={"Origin": "https://evil.example"},
            )
            assert other_site.status_code == 403
            assert client.get(f"/ui/beliefs/{lisbon}").status_code == 200  # nothing was deleted

    await asyncio.to_thread(scenario)


async def test_another_principals_belief_is_a_404_page_for_a_principal_and_for_ids(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> None:
        settings = _settings(isolated, kafka)
        with _browser(settings) as bo:
            assert _sign_in(bo, tokens["bo"]).status_code == 303
            [cork] = _belief_ids(bo.get("/ui/beliefs"))
        with _browser(settings) as ana:
            assert _sign_in(ana, tokens["ana"]).status_code == 303
            for path in (f"/ui/beliefs/{cork}", f"/ui/beliefs/{uuid.uuid4()}", "/ui/beliefs/x"):
                answer = ana.get(path)
                assert answer.status_code == 404 and "Nothing here" in answer.text, path
                assert "Cork" not in answer.text
            nowhere = ana.get("/ui/no-such-page")
            assert nowhere.status_code == 404 and "not a page of the inspector" in nowhere.text
            assert ana.get("/v1/no-such-route").json() == {"detail": "Not Found"}
            preview = ana.post(
                f"/ui/beliefs/{cork}/preview",
                data={"choice": "untrue", "csrf": _csrf(ana.get("/ui/beliefs"))},
            )
            assert preview.status_code == 404 and "Cork" not in preview.text
        with _browser(settings) as operator:
            assert _sign_in(operator, tokens["operator"]).status_code == 422
            assert _sign_in(operator, tokens["operator"], "bo").status_code == 303
            seen = operator.get(f"/ui/beliefs/{cork}")
            assert seen.status_code == 200 and "bo lives in Cork" in seen.text

    await asyncio.to_thread(scenario)


async def test_a_quote_is_shown_in_its_message_and_user_text_is_escaped(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> None:
        with _browser(_settings(isolated, kafka)) as client:
            assert _sign_in(client, tokens["ana"]).status_code == 303
            [lisbon] = _belief_ids(client.get("/ui/beliefs?q=Where+do+I+live"))
            page = client.get(f"/ui/beliefs/{lisbon}")
            assert "<mark>I live in Lisbon</mark>." in page.text
            listed = client.get("/ui/beliefs")
            assert TOOL not in listed.text and "Q&lt;ix&amp;y&gt;" in listed.text
            [tool] = [i for i in _belief_ids(listed) if i != lisbon]
            detail = client.get(f"/ui/beliefs/{tool}")
            assert HOSTILE not in detail.text and TOOL not in detail.text
            assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in detail.text
            assert "<mark>I use Q&lt;ix&amp;y&gt;</mark>" in detail.text

    await asyncio.to_thread(scenario)


async def test_a_correction_is_checked_and_shown_before_it_is_appended(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> None:
        with _browser(_settings(isolated, kafka)) as client:
            assert _sign_in(client, tokens["ana"]).status_code == 303
            [lisbon] = _belief_ids(client.get("/ui/beliefs?q=Lisbon"))
            page = client.get(f"/ui/beliefs/{lisbon}")
            csrf = _csrf(page)
            empty = client.post(
                f"/ui/beliefs/{lisbon}/preview", data={"csrf": csrf, "choice": "changed"}
            )
            assert empty.status_code == 422 and "needs the new value" in empty.text
            shown = client.post(
                f"/ui/beliefs/{lisbon}/preview",
                data={"csrf": csrf, "choice": "changed", "replacement": "Porto"},
            )
            assert shown.status_code == 200 and "From now on" in shown.text
            elsewhere = client.post(
                f"/ui/beliefs/{lisbon}/preview", data={"csrf": csrf, "choice": "not_here"}
            )
            assert "Project: <strong><bdi>p</bdi></strong>" in elsewhere.text  # where learned
            assert "Porto" in shown.text and "/send" in shown.text
            sent = client.post(
                f"/ui/beliefs/{lisbon}/send",
                data={"csrf": csrf, "choice": "changed", "replacement": "Porto"},
            )
            assert sent.status_code == 303
            following = client.get(sent.headers["location"])
            assert following.status_code == 202 and 'http-equiv="refresh"' in following.text

    await asyncio.to_thread(scenario)


async def test_forgetting_needs_the_typed_name_and_is_followed_past_the_session(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> None:
        with _browser(_settings(isolated, kafka)) as client:
            assert client.get("/ui/forgetting").headers["location"] == "/ui/sign-in"
            assert _sign_in(client, tokens["ana"]).status_code == 303
            form = client.get("/ui/forget")
            wrong = client.post("/ui/forget", data={"csrf": _csrf(form), "confirm": "bo"})
            assert wrong.status_code == 422 and "nothing was sent" in wrong.text
            sent = client.post("/ui/forget", data={"csrf": _csrf(form), "confirm": "ana"})
            assert sent.status_code == 303 and sent.headers["location"] == "/ui/forgetting"
            assert tokens["ana"] not in sent.headers["set-cookie"]
            following = client.get("/ui/forgetting")  # no worker here: it stays pending
            assert following.status_code == 202 and "Forgetting" in following.text

    await asyncio.to_thread(scenario)


async def test_hostile_input_at_every_door_gets_a_page_never_a_crash(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    """Control characters, NUL bytes, huge and malformed bodies, forged cookies and filters out
    of range: each answer is a 4xx page (or the page itself), never a 500, and ana's session and
    beliefs are unharmed."""
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> None:
        settings = _settings(isolated, kafka)
        with _browser(settings) as client:
            form = _csrf(client.get("/ui/sign-in"))
            for token in ("\x00", "engram_\x00\x1b[31m", "é" * 5000, tokens["ana"] + "\x00"):
                answer = client.post("/ui/sign-in", data={"csrf": form, "token": token})
                assert 400 <= answer.status_code < 500, (repr(token[:20]), answer.status_code)
                assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")
            huge = client.post(
                "/ui/sign-in", data={"csrf": form, "token": "x" * (settings.api.max_body_bytes + 1)}
            )
            assert huge.status_code == 413
            garbage = client.post(
                "/ui/sign-in",
                content=b"\xff\xfe\x00not a form",
                headers={"content-type": "application/x-www-form-urlencoded"},
            )
            assert 400 <= garbage.status_code < 500
            client.cookies.set(SESSION_COOKIE, "forged.\x7f" + "A" * 3000, path="/ui")
            assert client.get("/ui/beliefs").status_code == 303  # back to sign-in
            client.cookies.clear()

            assert _sign_in(client, tokens["ana"]).status_code == 303
            for path in (
                "/ui/beliefs?q=%00%1b%5B31m",
                "/ui/beliefs?q=" + "where " * 2000,
                "/ui/beliefs?confidence=-1e999",
                "/ui/beliefs?status=%00&relation=%ff&project=" + "p" * 5000,
                "/ui/beliefs/%00",
                "/ui/refused?project=%00",
            ):
                answer = client.get(path)
                assert answer.status_code < 500, (path[:60], answer.status_code)
                assert "\x00" not in answer.text
            listed = client.get("/ui/beliefs")
            assert listed.status_code == 200 and "You live in Lisbon" in listed.text

    await asyncio.to_thread(scenario)


async def test_signing_out_ends_the_session_for_every_copy_of_its_cookie(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    """The cookie holds a random session id (never the token; PostgreSQL keeps only its
    hash): one copied before sign-out opens nothing after it, and its forms are refused."""
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> tuple[str, str]:
        settings = _settings(isolated, kafka)
        with _browser(settings) as client:
            assert _sign_in(client, tokens["ana"]).status_code == 303
            saved = client.cookies.get(SESSION_COOKIE)
            assert saved and tokens["ana"] not in saved
            csrf = _csrf(client.get("/ui/forget"))
            assert client.post("/ui/sign-out", data={"csrf": csrf}).status_code == 303
        with _browser(settings) as copy:
            copy.cookies.set(SESSION_COOKIE, saved, path="/ui")
            assert copy.get("/ui/beliefs").headers["location"] == "/ui/sign-in"
            assert copy.get("/ui/forget").status_code == 303
            forged = copy.post("/ui/forget", data={"csrf": csrf, "confirm": "ana"})
            assert forged.status_code in (303, 403) and "/ui/forgetting" not in str(
                forged.headers.get("location")
            )
            copy.cookies.set(SESSION_COOKIE, saved, path="/ui")  # stale, and still sent
            assert _sign_in(copy, tokens["ana"]).status_code == 303  # the form is the presession's
            assert _sign_in(copy, tokens["ana"]).status_code == 303  # ends the one it replaces
            fresh = _csrf(copy.get("/ui/beliefs"))
            assert copy.post("/ui/sign-out", data={"csrf": fresh}).status_code == 303
        return saved, csrf

    saved, _ = await asyncio.to_thread(scenario)
    stored = [row["session_hash"] for row in await pool.fetch("SELECT * FROM ui_session")]
    assert saved not in stored and stored == [], "every sign-in ended: no session row is left"
    assert not any(b"principal.forgotten" in record for record in await _log_records(kafka))


async def test_a_link_from_elsewhere_opens_its_page_and_never_signs_anyone_out(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    """A request that arrives without the cookie (another site's post, a link followed while
    signed out) is sent to sign in, and clears nothing; signing in then lands on the page the
    link pointed to."""
    tokens = await _seed(isolated, kafka, pool)

    def scenario() -> None:
        with _browser(_settings(isolated, kafka)) as client:
            assert _sign_in(client, tokens["ana"]).status_code == 303
            [lisbon, *_] = _belief_ids(client.get("/ui/beliefs?q=Lisbon"))
            held = client.cookies.get(SESSION_COOKIE)
            client.cookies.clear()  # what a SameSite cookie leaves off another site's request
            link = client.get(f"/ui/beliefs/{lisbon}")
            assert link.status_code == 303
            assert link.headers["location"] == f"/ui/sign-in?next=%2Fui%2Fbeliefs%2F{lisbon}"
            assert SESSION_COOKIE not in link.headers.get("set-cookie", "")
            posted = client.post(
                f"/ui/beliefs/{lisbon}/send",
                data={"choice": "delete"},
                headers={"Origin": "http://127.0.0.1:9"},
            )
            assert posted.status_code == 403 and "Nothing was changed" in posted.text
            assert SESSION_COOKIE not in posted.headers.get("set-cookie", "")
            client.cookies.set(SESSION_COOKIE, held or "", path="/ui")
            assert client.get(f"/ui/beliefs/{lisbon}").status_code == 200  # it survived
            client.cookies.clear()
            form = client.get(link.headers["location"])
            assert f'name="next" value="/ui/beliefs/{lisbon}"' in form.text
            signed = client.post(
                "/ui/sign-in",
                data={"csrf": _csrf(form), "token": tokens["ana"], "next": f"/ui/beliefs/{lisbon}"},
            )
            assert signed.headers["location"] == f"/ui/beliefs/{lisbon}"
            client.cookies.clear()
            form = client.get("/ui/sign-in?next=//evil.example/")
            assert 'name="next"' not in form.text
            elsewhere = client.post(
                "/ui/sign-in",
                data={"csrf": _csrf(form), "token": tokens["ana"], "next": "//evil.example/"},
            )
            assert elsewhere.headers["location"] == "/ui/beliefs"

    await asyncio.to_thread(scenario)


async def test_revoking_or_forgetting_ends_the_sessions_in_postgresql(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    tokens = await _seed(isolated, kafka, pool)

    def signed_in(token: str, principal: str = "") -> TestClient:
        client = TestClient(create_api(_settings(isolated, kafka)), follow_redirects=False)
        client.__enter__()
        assert _sign_in(client, token, principal).status_code == 303
        return client

    ana = await asyncio.to_thread(signed_in, tokens["ana"])
    operator = await asyncio.to_thread(signed_in, tokens["operator"], "ana")
    try:
        assert await pool.fetchval("SELECT count(*) FROM ui_session") == 2
        forgot = await asyncio.to_thread(
            lambda: ana.post(
                "/ui/forget", data={"csrf": _csrf(ana.get("/ui/forget")), "confirm": "ana"}
            )
        )
        assert forgot.status_code == 303  # sent: ana's own session ends at once
        assert (await asyncio.to_thread(ana.get, "/ui/beliefs")).status_code == 303
        assert await pool.fetchval("SELECT count(*) FROM ui_session WHERE NOT operator") == 0
        [operator_token] = [
            r["token_id"] for r in await pool.fetch("SELECT token_id FROM ui_session")
        ]
        assert await revoke_token(pool, operator_token)
        assert await pool.fetchval("SELECT count(*) FROM ui_session") == 0
        assert (await asyncio.to_thread(operator.get, "/ui/beliefs")).status_code == 303
    finally:
        for client in (ana, operator):
            client.__exit__(None, None, None)


@pytest.mark.parametrize("weak", ["x", "password1234" * 4])
def test_a_weak_ui_secret_stops_the_api_saying_how_to_make_one(
    isolated: Isolated, weak: str
) -> None:
    """Too short, or long but patterned (48 characters of a repeated password): either holds
    less than 32 random bytes, and the API does not start."""
    with pytest.raises(UiSecretTooWeak, match="at least 256 bits"):
        create_api(Settings(api=ApiSettings(ui_secret=SecretStr(weak))))
    started = subprocess.run(
        [sys.executable, "-m", "engram", "api", "--port", "0"],
        cwd=REPO,
        env={**isolated.env(), "ENGRAM_API_UI_SECRET": weak, "COLUMNS": "500"},
        capture_output=True,
        timeout=60,
        check=False,
    )
    said = started.stderr.decode()
    assert started.returncode == 2, said
    assert "ENGRAM_API_UI_SECRET must hold at least 256 bits (32 bytes) of randomness" in said
    assert MAKE_A_SECRET in said and "Traceback" not in said


async def test_hidden_characters_are_shown_and_user_text_isolated(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    """A right-to-left override stored in an object is shown as a marker naming it, never
    applied: the page does not read "You live in Alaska"."""
    t = isolated.tenant
    await ensure_topics(kafka)
    said = "I live in \u202eaksalA."
    episode = turn(t, "ana", "p", said, seq=0)
    await project_all(
        kafka, pool, [batch_of(episode, claim("I", "lives_in", "\u202eaksalA", said[:-1]))]
    )
    _, token = await create_token(pool, tenant=t, principal="ana")

    def scenario() -> None:
        with _browser(_settings(isolated, kafka)) as client:
            assert _sign_in(client, token).status_code == 303
            listed = client.get("/ui/beliefs")
            shown = "You live in ⟨U+202E right-to-left override⟩aksalA"
            assert f"<bdi>{shown}</bdi>" in listed.text and "\u202e" not in listed.text
            [alaska] = _belief_ids(listed)
            page = client.get(f"/ui/beliefs/{alaska}")
            assert f'<h1 class="statement"><bdi>{shown}</bdi></h1>' in page.text
            assert "\u202e" not in page.text
            csrf = _csrf(page)
            preview = client.post(
                f"/ui/beliefs/{alaska}/preview",
                data={"csrf": csrf, "choice": "changed", "replacement": "\u202eokkoroM"},
            )
            assert 'name="replacement" value="\u202eokkoroM"' in preview.text  # sent back as typed
            assert "⟨U+202E right-to-left override⟩okkoroM</bdi>" in preview.text

    await asyncio.to_thread(scenario)
