"""Logging into the admin: throttled (django-axes), and cookies and HSTS for HTTPS from the environment."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.ops.live import ROOT, environment

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"


@pytest.fixture
def admin_user() -> None:
    get_user_model().objects.create_superuser("admin", "admin@example.com", "the-right-password")


def _logged_in(client: Client) -> bool:
    return client.get("/admin/").status_code == 200


def test_wrong_passwords_lock_the_login_out_even_for_the_right_one(admin_user, client, settings):
    answers = [client.post(LOGIN, {"username": "admin", "password": "a guess"}) for _ in range(100)]
    assert {a.status_code for a in answers[: settings.AXES_FAILURE_LIMIT - 1]} == {200}  # the form again
    assert {a.status_code for a in answers[settings.AXES_FAILURE_LIMIT - 1 :]} == {429}

    answer = client.post(LOGIN, {"username": "admin", "password": "the-right-password"})

    assert answer.status_code == 429
    assert not _logged_in(client)
    # Another address is not locked out with it: behind a proxy, neither is another username.
    elsewhere = Client(REMOTE_ADDR="192.0.2.7")
    assert elsewhere.post(LOGIN, {"username": "admin", "password": "the-right-password"}).status_code == 302
    assert _logged_in(elsewhere)


def test_the_lockout_ends_after_its_time(admin_user, client, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(LOGIN, {"username": "admin", "password": "a guess"})
    settings.AXES_COOLOFF_TIME = timedelta(0)  # as if it had passed

    assert client.post(LOGIN, {"username": "admin", "password": "the-right-password"}).status_code == 302
    assert _logged_in(client)


def test_a_right_password_before_the_limit_resets_the_count(admin_user, client, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post(LOGIN, {"username": "admin", "password": "a guess"})
    assert client.post(LOGIN, {"username": "admin", "password": "the-right-password"}).status_code == 302
    client.logout()
    client.post(LOGIN, {"username": "admin", "password": "a guess"})
    assert client.post(LOGIN, {"username": "admin", "password": "the-right-password"}).status_code == 302


HTTPS_WARNINGS = ("security.W004", "security.W012", "security.W016")


@pytest.mark.parametrize(
    ("variables", "warned"),
    [
        ({}, HTTPS_WARNINGS),
        ({"SECURE_COOKIES": "true", "SECURE_HSTS_SECONDS": "31536000"}, ()),
    ],
    ids=["default", "behind-https"],
)
def test_secure_cookies_and_hsts_come_from_the_environment(variables, warned):
    """``manage.py check --deploy``, Django's own list of what production needs, run as an operator would."""
    env = environment(SECRET_KEY="x" * 60, **variables)
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert {w for w in HTTPS_WARNINGS if w in done.stderr + done.stdout} == set(warned), done.stderr


def test_behind_an_https_proxy_the_cookies_are_secure_and_hsts_is_sent(client, settings):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    answer = client.get("/admin/login/", HTTP_X_FORWARDED_PROTO="https")

    assert answer["Strict-Transport-Security"] == "max-age=31536000"
    assert answer.cookies["csrftoken"]["secure"] is True
