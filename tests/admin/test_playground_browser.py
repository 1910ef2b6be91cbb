"""The playground in a real headless browser: a curator opens it from the admin index, asks for the
context of a message, sees the memory found with its scores and the prompt, and stores the turn.

Uses the Chromium setup of ``tests.admin.test_admin_browser`` (``make browser`` installs it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from memories.models import Message
from memories.services.knowledge import knowledge_add
from memories.services.messages import MessageIn, messages_add
from tests.admin.test_admin_browser import WAIT_SECONDS, browser, log_in  # noqa: F401 - the Chromium fixture

pytestmark = pytest.mark.slow

SCREENSHOT = Path("/tmp/admin_playground.png")
FACT = "Alice has a guinea pig named Oscar."
ASKED = "What is my guinea pig called?"


def test_curator_sees_the_context_a_bot_would_get_and_stores_the_turn(live_server, browser):  # noqa: F811
    User.objects.create_superuser("curator", "curator@example.com", "s3cret-pass")
    messages_add(
        user_external_id="alice", session_external_id="s1", messages=[MessageIn(role="user", content="Good morning!")]
    )
    knowledge_add(user_external_id="alice", content=FACT)
    wait = WebDriverWait(browser, WAIT_SECONDS)

    log_in(browser, live_server.url, "curator", "s3cret-pass")
    wait.until(ec.presence_of_element_located((By.ID, "playground-module")))

    # From the index to the playground.
    browser.find_element(By.LINK_TEXT, "Playground").click()
    Select(wait.until(ec.visibility_of_element_located((By.ID, "id_user")))).select_by_value("alice")
    browser.find_element(By.ID, "id_message").send_keys(ASKED)
    browser.find_element(By.ID, "id_store").click()
    browser.find_element(By.NAME, "_run").click()

    # The context: the window, the fact found (kind, score, relevance), the prompt, and the stored turn.
    memories = wait.until(ec.visibility_of_element_located((By.ID, "playground-memories")))
    fact_row = memories.find_element(By.CSS_SELECTOR, "tr.memory-knowledge")
    cells = [td.text for td in fact_row.find_elements(By.TAG_NAME, "td")]
    assert cells[1] == "knowledge"
    assert 0 < float(cells[2]) <= 1  # cosine similarity to the message
    assert float(cells[3]) > 0  # relevance
    assert cells[-1] == FACT
    assert "Good morning!" in browser.find_element(By.ID, "playground-window").text
    assert browser.find_element(By.ID, "playground-session").text == "s1"
    assert FACT in browser.find_element(By.ID, "playground-prompt").text
    names, counts = browser.find_element(By.ID, "playground-tokens").text.lower().split("\n")
    tokens = dict(zip(names.split(), map(int, counts.split()), strict=True))
    assert tokens["prompt"] > tokens["memories"] > 0
    stored = Message.objects.get(content=ASKED)
    assert browser.find_element(By.ID, "playground-stored").text == f"Stored as message #{stored.pk} in session s1."
    header_bg = browser.find_element(By.ID, "header").value_of_css_property("background-color")
    assert header_bg not in ("rgba(0, 0, 0, 0)", "transparent"), "admin CSS did not load"
    browser.save_screenshot(str(SCREENSHOT))
