"""The inspector in a real browser: Debian's Chromium through chromedriver (selenium), against
``engram api`` and ``engram worker`` running as subprocesses on real Kafka and PostgreSQL.

One person's path through it: sign in with a pasted token, find a belief by asking a question,
open it and see its quote inside the conversation, correct it as changed and see the new
belief once formed, delete another; another principal's belief id is a 404 page; a quote
holding ``<`` and ``&`` and a message holding ``<script>`` are text, never a script; bo forgets
himself and sees it done.

With ``ENGRAM_INSPECTOR_SCREENSHOTS=<dir>`` it also saves every page at desktop and phone width
(``dev/inspector-screenshots.sh`` writes docs/inspector/ that way).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By

from engram.ingest.producer import EpisodeProducer
from engram.ingest.topics import ensure_topics
from engram.service.tokens import create_token
from engram.watermarks.waiting import wait_for_watermarks
from tests.support.browser import DESKTOP, PHONE, WAIT_S, Page, chromium
from tests.support.episodes import turn
from tests.support.http import first_ok, free_port
from tests.support.indexing import indexed_to_the_end
from tests.support.isolation import Isolated, running_engram, running_worker

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

HOSTILE = "<script>alert(1)</script>"
TOOL = "Q<ix&y>"
"""A tool name a page must escape that is no markup: a script tag as a claim's end is refused at
formation ("markup or code"), so the script rides in the message around the claim."""


def _turns(t: str) -> list[object]:
    user, assistant, tool = "user", "assistant", "tool"
    return [
        turn(t, "ana", "garden", "Hi! I live in Lisbon.", "Nice, Lisbon is lovely.", seq=0,
             roles=(user, assistant)),
        turn(t, "ana", "garden", "I speak Portuguese and English.", "Two languages!", seq=1,
             roles=(user, assistant)),
        turn(t, "ana", "garden", f"I use {TOOL} every day. {HOSTILE}", seq=2),
        turn(t, "ana", "garden", "What is the weather?",
             "Weather API: rain all week. I live in Moscow.", seq=3, roles=(user, tool)),
        turn(t, "bo", "garden", "I live in Cork.", seq=4),
    ]  # fmt: skip


async def _formed(isolated: Isolated, pool: asyncpg.Pool) -> None:
    """Append the turns and wait until the worker has formed and indexed every one."""
    kafka = isolated.kafka()
    await ensure_topics(kafka)
    async with EpisodeProducer(kafka) as producer:
        positions = await producer.publish_many(_turns(isolated.tenant))  # type: ignore[arg-type]
    await wait_for_watermarks(pool, positions, timeout_s=WAIT_S)
    await indexed_to_the_end(kafka, pool, timeout_s=WAIT_S)


def _shooter(page: Page) -> Callable[[str], None]:
    """Saves the page at desktop and phone width when screenshots were asked for."""
    folder = os.environ.get("ENGRAM_INSPECTOR_SCREENSHOTS")

    def shoot(name: str) -> None:
        if not folder:
            return
        Path(folder).mkdir(parents=True, exist_ok=True)
        for label, (width, height) in (("desktop", DESKTOP), ("phone", PHONE)):
            page.driver.set_window_size(width, height)
            full = page.driver.execute_script("return document.documentElement.scrollHeight")
            page.driver.set_window_size(width, max(height, min(int(full) + 140, 4000)))
            page.driver.save_screenshot(str(Path(folder) / f"{name}-{label}.png"))
        page.driver.set_window_size(*DESKTOP)

    return shoot


def _sign_in(page: Page, token: str) -> None:
    page.open("/ui/beliefs")
    page.wait_for("h1", "See what Engram remembers")
    page.one("#token").send_keys(token)
    page.one("form.stack button[type=submit]").click()
    page.wait_for("h1", "What Engram believes about you")


def _answer(page: Page, choice: str, **fields: str) -> None:
    """On a belief's page: choose an answer, fill its fields, see what it will do."""
    page.one(f"#choice-{choice}").click()
    for name, value in fields.items():
        page.one(f"#{name}").send_keys(value)
    page.one("section#correct button[type=submit], form[action$='/preview'] button").click()
    page.wait_for("h1", "Before you send")


def _ana_path(page: Page, token: str, shoot: Callable[[str], None]) -> None:
    page.open("/ui/sign-in")
    page.wait_for("h1")
    shoot("sign-in")
    _sign_in(page, token)
    assert "Up to date with everything you said until" in page.one("#freshness").text

    page.one("#q").send_keys("Where do I live?")
    page.one("form.question button").click()
    page.wait_for("h2", "What answers")
    shoot("beliefs-question")
    page.driver.find_element(By.LINK_TEXT, "You live in Lisbon").click()
    page.wait_for("h1", "You live in Lisbon")
    quoted = page.one(".message.quoted")
    assert quoted.find_element(By.TAG_NAME, "mark").text == "I live in Lisbon"
    assert quoted.text.endswith("Hi! I live in Lisbon.")
    after = page.all(".message.role-assistant")
    assert [m.find_element(By.TAG_NAME, "p").text for m in after] == ["Nice, Lisbon is lovely."]
    shoot("belief")

    _answer(page, "changed", replacement="Porto")
    assert page.one("#new-value").text == "Porto"
    assert page.one("#new-statement").text == "You live in Porto"
    shoot("correct-preview")
    page.one("#send").click()
    page.wait_for("h1", "You live in Porto")  # the applying page reloads until it has applied
    assert "Changed" in page.one("#notice").text

    page.open("/ui/beliefs")
    shoot("beliefs")
    page.driver.find_element(By.LINK_TEXT, "You speak English").click()
    page.wait_for("h1", "You speak English")
    _answer(page, "delete")
    page.one("#send").click()
    page.wait_for("#receipt-headline", "Deleted: belief")  # the receipt, once applied
    # These turns came from a bare producer, in clear: the receipt says they stay in the log.
    assert "in clear" in page.one("#receipt-log").text
    shoot("deleted")
    page.driver.find_element(By.LINK_TEXT, "Back to what Engram believes").click()
    page.wait_for("h1")
    statements = [a.text for a in page.all(".belief .statement")]
    assert "You speak English" not in statements and "You speak Portuguese" in statements

    page.driver.find_element(By.PARTIAL_LINK_TEXT, TOOL).click()
    page.wait_for("h1", f"You use {TOOL}")
    assert page.one(".message.quoted mark").text == f"I use {TOOL} every day"
    assert HOSTILE in page.one(".message.quoted").text
    assert page.driver.find_elements(By.TAG_NAME, "script") == []
    with pytest.raises(NoAlertPresentException):
        page.driver.switch_to.alert.accept()

    page.open("/ui/refused")
    moscow = page.wait_for(".refusal", "You live in Moscow")
    assert "you did not say it" in moscow.find_element(By.CSS_SELECTOR, ".reason").text
    shoot("refused")
    page.open("/ui/forget")
    page.wait_for("h1", "Forget me")
    shoot("forget")


def _another_principals_belief(page: Page, bo_belief: str, shoot: Callable[[str], None]) -> None:
    page.open(f"/ui/beliefs/{bo_belief}")
    page.wait_for("h1", "Nothing here")
    assert "Cork" not in page.driver.page_source
    shoot("not-found")


def _bo_forgets_himself(page: Page, token: str, shoot: Callable[[str], None]) -> None:
    _sign_in(page, token)
    page.open("/ui/forget")
    page.one("#confirm").send_keys("bo")
    page.one("form.stack button.danger").click()
    page.wait_for("#done", "keep no row about you")
    headline = page.one("#receipt-headline").text
    assert headline.startswith("Forgotten:") and "about bo deleted" in headline
    # bo's turns were appended in clear: the receipt never says nothing remains.
    assert "in clear" in page.one("#receipt-log").text
    shoot("forgotten")


async def test_a_person_finds_corrects_and_deletes_what_is_believed_in_a_real_browser(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t = isolated.tenant
    tokens = {who: (await create_token(pool, tenant=t, principal=who))[1] for who in ("ana", "bo")}
    port = free_port()
    env = {**isolated.env(), "ENGRAM_API_PORT": str(port)}
    base = f"http://127.0.0.1:{port}"
    with (
        running_engram(isolated, "api", log_path=tmp_path / "api.log", env=env),
        running_worker(isolated, log_path=tmp_path / "worker.log"),
    ):
        await first_ok(f"{base}/healthz")
        await _formed(isolated, pool)
        bo_belief = str(
            await pool.fetchval(
                "SELECT belief_id FROM belief WHERE tenant = $1 AND principal = 'bo'", t
            )
        )

        def in_the_browser() -> None:
            with chromium() as driver:
                page = Page(driver, base)
                shoot = _shooter(page)
                _ana_path(page, tokens["ana"], shoot)
                _another_principals_belief(page, bo_belief, shoot)
            with chromium() as driver:
                page = Page(driver, base)
                _bo_forgets_himself(page, tokens["bo"], _shooter(page))

        await asyncio.to_thread(in_the_browser)
    api_log = (tmp_path / "api.log").read_text()
    assert tokens["ana"] not in api_log and tokens["bo"] not in api_log
