"""Curation at 1,280 px in headless Chromium: the review queue, the knowledge list and a user's facts show
every column whole (measured on the rendered page), and screenshots are kept for a person to look at.

Uses the Chromium setup of ``tests.admin.test_admin_browser`` (``make browser`` installs it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from memories.models import EndUser
from tests.admin.test_admin_browser import WAIT_SECONDS, browser, log_in  # noqa: F401 - the Chromium fixture
from tests.graphql.documents import CREATE_SUMMARIES, msg

pytestmark = pytest.mark.slow

WIDTH = 1280
SCREENSHOTS = Path("/tmp")
LONG_TURN = (
    "So, a bit of news about me: after a long search and three rounds of interviews I work as a senior "
    "pediatric nurse at Saint Luke's International Hospital in Tsukiji now, on the night shift for the first "
    "few months, which is tiring but I love the team."
)

# The header cells a table shows cut off: past the right edge of the box that scrolls it or of the window.
CUT_OFF = """
const table = document.querySelector(arguments[0]);
const box = table.parentElement;
const right = Math.min(document.documentElement.clientWidth, box.getBoundingClientRect().right);
const cut = [...table.querySelectorAll("thead th")]
  .filter((th) => th.getBoundingClientRect().right > right + 1)
  .map((th) => th.textContent.trim());
return {cut, table: table.scrollWidth, box: box.clientWidth, page: document.documentElement.scrollWidth,
        window: document.documentElement.clientWidth, columns: table.querySelectorAll("thead th").length};
"""


def _no_column_cut_off(browser, table: str, name: str) -> dict:  # noqa: F811
    measured = browser.execute_script(CUT_OFF, table)
    browser.save_screenshot(str(SCREENSHOTS / f"{name}_{WIDTH}.png"))
    assert measured["columns"] > 0, measured
    assert measured["cut"] == [], measured
    assert measured["table"] <= measured["box"], measured  # nothing to scroll to inside the list
    assert measured["page"] <= measured["window"], measured  # nor across the page
    return measured


def test_curation_pages_show_every_column_at_1280_px(live_server, browser, add_messages, gql):  # noqa: F811
    add_messages("mei", "s1", [msg("I am allergic to peanuts.", "2024-05-01T10:00:00Z")])
    add_messages("mei", "2024-05-08-evening", [msg(LONG_TURN, "2024-05-08T10:00:00Z")])
    add_messages("mei", "s3", [msg("I live in Tokyo.", "2024-05-09T10:00:00Z")])
    add_messages("mei", "s4", [msg("I moved to Osaka last week.", "2024-06-01T10:00:00Z")])
    assert "errors" not in gql(CREATE_SUMMARIES, {"userId": "mei"})
    User.objects.create_superuser("curator", "curator@example.com", "s3cret-pass")
    browser.set_window_size(WIDTH, 900)
    wait = WebDriverWait(browser, WAIT_SECONDS)
    log_in(browser, live_server.url, "curator", "s3cret-pass")
    assert browser.execute_script("return window.innerWidth") == WIDTH

    browser.get(f"{live_server.url}/admin/memories/facttoreview/")
    queue = _no_column_cut_off(browser, "#result_list", "review_queue")
    assert queue["columns"] == 7  # the action box, fact, content, user, slot, source turn, status
    first = browser.find_element(By.CSS_SELECTOR, "#result_list tbody tr")
    assert first.find_element(By.CSS_SELECTOR, "input[name$='-content']").get_attribute("type") == "text"
    assert first.size["height"] < 80  # compact: a line or two, not a ten-line box
    first.find_element(By.CSS_SELECTOR, "td.field-fact_page a").click()
    wait.until(ec.visibility_of_element_located((By.ID, "id_content")))
    assert "/admin/memories/knowledge/" in browser.current_url

    browser.get(f"{live_server.url}/admin/memories/knowledge/")
    _no_column_cut_off(browser, "#result_list", "knowledge_list")

    mei = EndUser.objects.get(external_id="mei")
    browser.get(f"{live_server.url}/admin/memories/enduser/{mei.pk}/facts/")
    _no_column_cut_off(browser, "#current-facts table", "user_facts")
    _no_column_cut_off(browser, "#fact-history table", "user_facts")
    assert "Osaka" in browser.find_element(By.ID, "current-facts").text
    assert "Tokyo" in browser.find_element(By.ID, "fact-history").text
