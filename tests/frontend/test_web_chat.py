"""The example chat page (``examples/web-chat``) in headless Chromium against the live service: a user
tells a fact in one session and the next session's turn shows it among the memories the bot gets.

The page is served by its own backend (``server.py``), on the origin the service's CORS allow-list
names; it calls the service across origins with a user token, and the API key stays in the backend.
Uses the Chromium setup of ``tests.admin.test_admin_browser`` (``make browser`` installs it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.admin.test_admin_browser import browser  # noqa: F401 - the Chromium fixture
from tests.frontend.conftest import ROOT
from tests.ops.live import request, wait_for

pytestmark = pytest.mark.slow

SCREENSHOT = Path("/tmp/web_chat.png")
PROCESSING_SECONDS = 90


@pytest.fixture
def page(service, backend_key) -> Iterator[str]:
    """The page's URL, served by ``examples/web-chat/server.py`` with the backend's key."""
    env = {**os.environ, "MEMORY_URL": service.url, "MEMORY_API_KEY": backend_key, "PAGE_PORT": str(service.page_port)}
    served = subprocess.Popen(
        [sys.executable, "examples/web-chat/server.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: request(service.page_port, "GET", "/").status == 200, 30, "the chat page's server")
        yield service.page_origin + "/"
    finally:
        served.terminate()
        served.wait(timeout=30)


def _until(browser, seconds: float, check, what: str) -> None:  # noqa: F811
    """Wait for ``check(browser)``; on a time-out, fail with what the page shows."""
    try:
        WebDriverWait(browser, seconds).until(check)
    except TimeoutException:
        shown = {name: browser.find_element(By.ID, name).text for name in ("error", "status", "turns", "memories")}
        browser.save_screenshot(str(SCREENSHOT))
        pytest.fail(f"timed out waiting for {what}; the page shows {shown} (screenshot: {SCREENSHOT})")


def _say(browser, text: str) -> None:  # noqa: F811
    replies = len(browser.find_elements(By.CSS_SELECTOR, "#turns li.assistant"))
    browser.find_element(By.ID, "message").send_keys(text + "\n")
    _until(browser, 30, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#turns li.assistant")) > replies, "a reply")


def test_a_fact_told_in_one_session_is_shown_in_the_next(page, browser, backend_key):  # noqa: F811
    browser.get(page)
    browser.find_element(By.ID, "user").send_keys("web-mei\n")
    _until(browser, 30, ec.visibility_of_element_located((By.ID, "message")), "the chat to open")

    _say(browser, "My favourite food is okonomiyaki, Hiroshima style.")
    first_session = browser.find_element(By.ID, "session").text
    browser.find_element(By.ID, "new-session").click()  # summarised now; its facts follow
    _until(browser, 30, lambda b: b.find_element(By.ID, "session").text != first_session, "a new session")
    _until(
        browser,
        PROCESSING_SECONDS,
        lambda b: b.find_element(By.ID, "status").get_attribute("data-processed") == "true",
        "the worker to process the first session",
    )

    _say(browser, "What is my favourite food?")
    memories = browser.find_element(By.ID, "memories").text
    assert "okonomiyaki" in memories
    assert "okonomiyaki" in browser.find_element(By.ID, "prompt").text
    assert "okonomiyaki" in browser.find_elements(By.CSS_SELECTOR, "#turns li.assistant")[-1].text
    assert browser.find_element(By.ID, "error").get_attribute("hidden") is not None
    browser.save_screenshot(str(SCREENSHOT))

    # The browser only ever held a user token: the key is nowhere in what it loaded or kept.
    stored = browser.execute_script("return JSON.stringify([localStorage, sessionStorage, document.cookie])")
    assert backend_key not in browser.page_source + stored
    log = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name).join(' ')")
    assert "/token" in log
    assert "/graphql/" in log
