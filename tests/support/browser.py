"""A real Chromium for the inspector's browser tests: Debian's ``chromium`` driven through its
``chromedriver`` by selenium (``dev/browser.sh`` installs both; nothing is downloaded), and an
``engram api`` + ``engram worker`` pair to point it at."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import (
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = Path(os.environ.get("ENGRAM_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("ENGRAM_CHROMEDRIVER", "/usr/bin/chromedriver"))
WAIT_S = 90

DESKTOP = (1280, 900)
PHONE = (390, 844)


def require_browser() -> None:
    """Fail (not skip) without the browser: `make test` installs it with dev/browser.sh."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    assert not missing, f"{', '.join(missing)} missing: run `bash dev/browser.sh ensure`"


@contextmanager
def chromium(size: tuple[int, int] = DESKTOP) -> Iterator[WebDriver]:
    """A headless Chromium of its own profile, closed (and its profile removed) on exit."""
    require_browser()
    profile = tempfile.mkdtemp(prefix="engram-chromium-")
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # the suite may run as root in a container
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={size[0]},{size[1]}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


DETACHED = (
    "does not belong to the document",  # Chromium: the node went with the page that held it
    "stale element reference",
)


def detached(error: WebDriverException) -> bool:
    """Whether ``error`` says only that an element left the page (a self-reloading page drops
    its nodes between finding one and reading its text): a wait reads that as "not yet" and
    looks again. Chromium reports it as a plain ``WebDriverException`` ("Node with given id does
    not belong to the document"), not as ``StaleElementReferenceException``."""
    if isinstance(error, StaleElementReferenceException):
        return True
    message = (error.msg or str(error)).lower()
    return any(sign in message for sign in DETACHED)


@dataclass(frozen=True)
class Page:
    """A driver with the waits the tests use: every wait is a condition with a deadline."""

    driver: WebDriver
    base: str

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)

    def one(self, css: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def wait_for(self, css: str, text: str | None = None, timeout_s: float = WAIT_S) -> WebElement:
        """The first element matching ``css`` (whose text holds ``text``), once there."""

        def found(driver: WebDriver) -> WebElement | bool:
            try:
                for element in driver.find_elements(By.CSS_SELECTOR, css):
                    if text is None or text in element.text:
                        return element
            except WebDriverException as error:
                if not detached(error):
                    raise
            return False  # not there yet, or gone with a page that reloaded itself: look again

        try:
            element = WebDriverWait(self.driver, timeout_s, poll_frequency=0.1).until(found)
        except TimeoutException:
            shown = self.driver.find_element(By.TAG_NAME, "body").text[:600]
            raise AssertionError(
                f"{css} holding {text!r} not shown within {timeout_s}s at "
                f"{self.driver.current_url}; the page says: {shown}"
            ) from None
        assert isinstance(element, WebElement)
        return element

    def heading(self) -> str:
        return self.one("h1").text
