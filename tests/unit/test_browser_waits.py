"""The browser tests' waits (tests/support/browser.py) read an element that a self-reloading page
dropped as "not yet", and anything else the driver says as the failure it is."""

from __future__ import annotations

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

from tests.support.browser import detached


def test_chromiums_detached_node_is_not_yet() -> None:
    # What Chromium answers for a node of a page that reloaded itself: a plain WebDriverException.
    said = 'unknown error: unhandled inspector error: {"code":-32000,"message":"Node with given id does not belong to the document"}'
    assert detached(WebDriverException(said))


def test_a_stale_element_is_not_yet() -> None:
    assert detached(
        StaleElementReferenceException("stale element reference: element is not attached")
    )


def test_a_browser_that_is_gone_is_a_failure() -> None:
    assert not detached(WebDriverException("chrome not reachable"))
    assert not detached(WebDriverException("invalid selector: An invalid or illegal selector"))
