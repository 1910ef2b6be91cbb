"""The admin in a real headless browser: a curator logs in, edits a fact, and search sees the edit.

Drives Debian's ``chromium`` with its ``chromedriver`` (``make browser`` installs both) against
pytest-django's ``live_server``. Selenium Manager is kept offline: the driver and browser paths
are given, so nothing is downloaded at run time.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from memories.models import Knowledge
from memories.services.api_keys import api_key_create
from memories.services.knowledge import knowledge_add

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOT = Path("/tmp/admin_after_save.png")
WAIT_SECONDS = 15

OLD_TEXT = "Alice plays the violin."
NEW_TEXT = "Alice plays the cello in an orchestra."

SEARCH = """
query($i: SearchInput!) {
  search(input: $i) {
    __typename
    ... on SearchResult { hits { kind content } }
    ... on OperationInfo { messages { kind field message } }
  }
}
"""


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[webdriver.Chrome]:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not (os.path.isfile(path) and os.access(path, os.X_OK))]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} not found: run `make browser` "
            "(apt-get install chromium chromium-driver) before the browser tests.",
            pytrace=False,
        )
    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(WAIT_SECONDS)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(tmp_path / "chromium-profile", ignore_errors=True)


def log_in(browser: webdriver.Chrome, live_server_url: str, username: str, password: str) -> None:
    """Log into the admin as a person does, and wait for the page after it (the index)."""
    browser.get(f"{live_server_url}/admin/login/")
    browser.find_element(By.ID, "id_username").send_keys(username)
    browser.find_element(By.ID, "id_password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "#login-form [type=submit]").click()
    WebDriverWait(browser, WAIT_SECONDS).until(ec.presence_of_element_located((By.ID, "user-tools")))


def _wait_for_embedding(knowledge_id: int, content: str, timeout: float = 20.0) -> Knowledge:
    """The row once it holds ``content`` and a vector (the re-embedding runs on the server's commit)."""
    deadline = time.monotonic() + timeout
    while True:
        row = Knowledge.objects.get(pk=knowledge_id)
        if row.content == content and row.embedding is not None:
            return row
        if time.monotonic() > deadline:
            pytest.fail(f"knowledge {knowledge_id} not re-embedded within {timeout}s: {row.content!r}")
        time.sleep(0.2)


def test_curator_edits_knowledge_in_the_browser_and_search_sees_it(live_server, browser, client):
    curator = User.objects.create_superuser("curator", "curator@example.com", "s3cret-pass")
    knowledge = knowledge_add(user_external_id="alice", content=OLD_TEXT)
    knowledge.refresh_from_db()
    assert knowledge.embedding is not None, "the new fact should be embedded on commit (django-q2 sync mode)"
    wait = WebDriverWait(browser, WAIT_SECONDS)

    # Log in.
    log_in(browser, live_server.url, "curator", "s3cret-pass")
    assert "Memory service" in browser.title

    # Edit the fact's text and save.
    browser.get(f"{live_server.url}/admin/memories/knowledge/{knowledge.pk}/change/")
    content = wait.until(ec.visibility_of_element_located((By.ID, "id_content")))
    assert content.get_property("value") == OLD_TEXT
    content.clear()
    content.send_keys(NEW_TEXT)
    browser.find_element(By.NAME, "_save").click()

    # Back on the change list, with the success message and the new text listed.
    success = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "ul.messagelist li.success")))
    assert "was changed successfully" in success.text
    assert browser.current_url.rstrip("/").endswith("/admin/memories/knowledge")
    assert NEW_TEXT in browser.find_element(By.ID, "result_list").text
    # The admin's stylesheet was served and applied (not a bare HTML page).
    header_bg = browser.find_element(By.ID, "header").value_of_css_property("background-color")
    assert header_bg not in ("rgba(0, 0, 0, 0)", "transparent"), "admin CSS did not load"
    browser.save_screenshot(str(SCREENSHOT))

    edited = _wait_for_embedding(knowledge.pk, NEW_TEXT)
    assert list(edited.embedding) != list(knowledge.embedding)
    latest = edited.history.latest()
    assert latest.content == NEW_TEXT
    assert latest.history_user == curator

    # Search over the real GraphQL endpoint ranks the new text and no longer knows the old one.
    _, secret = api_key_create(name="t", all_users=True)
    response = client.post(
        "/graphql/",
        data=json.dumps(
            {"query": SEARCH, "variables": {"i": {"userId": "alice", "query": "Which instrument does Alice play?"}}}
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert "errors" not in body, body
    result = body["data"]["search"]
    assert result["__typename"] == "SearchResult", result
    knowledge_hits = [hit["content"] for hit in result["hits"] if hit["kind"] == "KNOWLEDGE"]
    assert knowledge_hits, result
    assert knowledge_hits[0] == NEW_TEXT
    assert all(OLD_TEXT not in hit["content"] for hit in result["hits"])
