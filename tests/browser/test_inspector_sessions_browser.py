"""The inspector's sessions and layout in a real browser (Debian's Chromium through selenium),
against ``engram api`` as a subprocess on real Kafka and PostgreSQL, with a second site on
loopback: the API at ``127.0.0.1``, another site at ``localhost`` (another host, so another
*site*: ports alone would leave both on one site and ``SameSite`` would not apply).

- A link on the other site opens the belief it points to for a signed-in person; followed while
  signed out, it leads through sign-in to that belief.
- The other site's auto-submitting forms (sign out, delete a belief) arrive without the session
  cookie and with a foreign ``Origin``: refused, nothing changed, and the session survives.
- A session cookie saved before signing out opens nothing after it.
- At a phone's width (390 px) no page is wider than the screen with a 12,000-character word in
  a refusal, in the message a quote is shown in, and a 174-character place name in a heading;
  a stored right-to-left override is shown as a marker, never applied.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import asyncpg
import pytest

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.service.tokens import create_token
from engram.web.ui.session import SESSION_COOKIE
from tests.support.browser import DESKTOP, PHONE, Page, chromium
from tests.support.episodes import turn
from tests.support.http import first_ok, free_port
from tests.support.indexing import index_everything
from tests.support.isolation import Isolated, running_engram
from tests.support.projecting import batch_of, claim, project_all

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

WORD = "Llanfair" + "o" * 11_992
"""A 12,000-character word."""
PLACE = "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch" * 3
"""A 174-character place name: admitted (a 12,000-character one is refused as a name)."""
REVERSED = "\u202eaksalA"
"""Shown as stored, it reads "Alaska"."""


async def _seed(isolated: Isolated, pool: asyncpg.Pool) -> dict[str, str]:
    """ana lives in a long-named place, said she lives in a 12,000-character one (refused),
    uses Vim (said beside the long word) and uses what reads as Alaska; the turns are on the
    log and in the message index. Returns the beliefs' ids by what they are about."""
    t = isolated.tenant
    kafka = isolated.kafka(partitions=1)
    await ensure_topics(kafka)
    said = [
        (f"I live in {PLACE}.", claim("I", "lives_in", PLACE, f"I live in {PLACE}")),
        (f"I live in {WORD}.", claim("I", "lives_in", WORD, f"I live in {WORD}")),
        (f"I use Vim. {WORD}", claim("I", "uses", "Vim", "I use Vim")),
        (f"I use {REVERSED}.", claim("I", "uses", REVERSED, f"I use {REVERSED}")),
    ]
    turns = [turn(t, "ana", "p", text, seq=seq) for seq, (text, _) in enumerate(said)]
    batches = [
        batch_of(episode, proposal, offset=seq)
        for seq, (episode, (_, proposal)) in enumerate(zip(turns, said, strict=True))
    ]
    await project_all(kafka, pool, batches)
    async with EpisodeProducer(kafka) as producer:
        await producer.publish_many(turns)
    await index_everything(kafka, pool, timeout_s=90)
    rows = await pool.fetch(
        "SELECT object_text, belief_id FROM belief WHERE tenant = $1 AND principal = 'ana'", t
    )
    found = {row["object_text"]: str(row["belief_id"]) for row in rows}
    assert set(found) == {PLACE, "Vim", REVERSED}, found
    assert await pool.fetchval("SELECT count(*) FROM refusal WHERE tenant = $1", t) == 1
    return {"place": found[PLACE], "vim": found["Vim"], "reversed": found[REVERSED]}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        del format, args


@contextlib.contextmanager
def _other_site(folder: Path) -> Iterator[str]:
    """A static site on loopback, reached as ``localhost`` (another site than 127.0.0.1)."""
    port = free_port()
    server = ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(_Quiet, directory=str(folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{port}"
    finally:
        server.shutdown()
        server.server_close()


def _write_other_site(folder: Path, api: str, beliefs: dict[str, str]) -> None:
    """A link to a belief, and two pages whose forms submit themselves to the inspector."""
    folder.mkdir()
    place = f"{api}/ui/beliefs/{beliefs['place']}"
    (folder / "link.html").write_text(f'<a id="link" href="{place}">what it remembers</a>')
    for name, action, fields in (
        ("sign-out", "/ui/sign-out", {"csrf": "guessed"}),
        ("delete", f"/ui/beliefs/{beliefs['vim']}/send", {"csrf": "guessed", "choice": "delete"}),
    ):
        inputs = "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in fields.items())
        (folder / f"{name}.html").write_text(
            f'<form id="f" method="post" action="{api}{action}">{inputs}</form>'
            '<script>document.getElementById("f").submit()</script>'
        )


def _sign_in(page: Page, token: str) -> None:
    page.wait_for("h1", "See what Engram remembers")
    page.one("#token").send_keys(token)
    page.one("form.stack button[type=submit]").click()


def _links_and_posts_from_another_site(
    page: Page, other: str, token: str, beliefs: dict[str, str]
) -> None:
    page.driver.get(f"{other}/link.html")
    page.one("#link").click()  # signed out: through sign-in, then to the linked belief
    _sign_in(page, token)
    page.wait_for("h1", "You live in Llanfair")
    assert page.driver.current_url.endswith(f"/ui/beliefs/{beliefs['place']}")

    page.driver.get(f"{other}/link.html")
    page.one("#link").click()  # signed in: straight to it, the session intact
    page.wait_for("h1", "You live in Llanfair")

    for attack in ("sign-out", "delete"):
        page.driver.get(f"{other}/{attack}.html")
        page.wait_for("h1", "That form was not sent")
    page.open("/ui/beliefs")
    page.wait_for("h1", "What Engram believes about you")  # still signed in
    statements = [a.text for a in page.all(".belief .statement")]
    assert "You use Vim" in statements, statements  # not deleted


def _no_page_is_wider_than_a_phone(page: Page, beliefs: dict[str, str]) -> None:
    page.driver.set_window_size(*PHONE)
    screen = int(page.driver.execute_script("return window.innerWidth"))
    assert screen <= PHONE[0]
    for path, heading in (
        ("/ui/beliefs", "What Engram believes"),
        ("/ui/refused", "What Engram chose not to remember"),
        (f"/ui/beliefs/{beliefs['place']}", "You live in Llanfair"),
        (f"/ui/beliefs/{beliefs['vim']}", "You use Vim"),
        (f"/ui/beliefs/{beliefs['reversed']}", "You use"),
    ):
        page.open(path)
        page.wait_for("h1", heading)
        wide = int(page.driver.execute_script("return document.documentElement.scrollWidth"))
        assert wide <= screen, f"{path} is {wide} px wide on a {screen} px screen"
    page.open("/ui/refused")
    refused = page.wait_for(".refusal blockquote")
    assert WORD in refused.text.replace("\n", "")  # all of it there, wrapped
    page.open(f"/ui/beliefs/{beliefs['reversed']}")
    heading = page.wait_for("h1", "You use").text
    assert heading == "You use ⟨U+202E right-to-left override⟩aksalA", heading
    page.driver.set_window_size(*DESKTOP)


def _sign_out_ends_every_copy(page: Page) -> None:
    page.open("/ui/beliefs")
    saved = page.driver.get_cookie(SESSION_COOKIE)
    assert saved is not None and saved["sameSite"] == "Lax" and saved["httpOnly"]
    page.one("form.sign-out button").click()
    page.wait_for("h1", "See what Engram remembers")
    assert page.driver.get_cookie(SESSION_COOKIE) is None
    page.driver.add_cookie({"name": SESSION_COOKIE, "value": saved["value"], "path": "/ui"})
    page.open("/ui/beliefs")
    page.wait_for("h1", "See what Engram remembers")  # the copy opens nothing


async def test_sessions_links_from_elsewhere_and_a_phone_screen_in_a_real_browser(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    beliefs = await _seed(isolated, pool)
    _, token = await create_token(pool, tenant=isolated.tenant, principal="ana")
    port = free_port()
    env = {**isolated.env(partitions=1), "ENGRAM_API_PORT": str(port)}
    api = f"http://127.0.0.1:{port}"
    _write_other_site(tmp_path / "site", api, beliefs)
    with (
        running_engram(isolated, "api", log_path=tmp_path / "api.log", env=env),
        _other_site(tmp_path / "site") as other,
    ):
        await first_ok(f"{api}/healthz")

        def in_the_browser() -> None:
            with chromium() as driver:
                page = Page(driver, api)
                _links_and_posts_from_another_site(page, other, token, beliefs)
                _no_page_is_wider_than_a_phone(page, beliefs)
                _sign_out_ends_every_copy(page)

        await asyncio.to_thread(in_the_browser)
    assert await pool.fetchval("SELECT count(*) FROM ui_session") == 0
    assert token not in (tmp_path / "api.log").read_text()
