"""A setting with a bad value stops a process at start with an error naming it, not later in a task."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_READ_SETTINGS = """
import django
from django.conf import settings
django.setup()
print(settings.Q_CLUSTER["workers"], settings.EMBEDDING_BATCH_SIZE, settings.SEARCH_MIN_SIMILARITY)
"""


def _start(**variables: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings", **variables}
    return subprocess.run(
        [sys.executable, "-c", _READ_SETTINGS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PORT", "eighty"),
        ("PORT", "70000"),
        ("Q_MAX_ATTEMPTS", "three"),
        ("SEARCH_MIN_SIMILARITY", "high"),
        ("Q_WORKERS", "0"),
        ("EMBEDDING_BATCH_SIZE", "0"),
        ("EMBEDDING_BATCH_SIZE", "-5"),
        ("SUMMARY_SWEEP_MINUTES", "0"),
        ("SEARCH_MAX_TOP_K", "-1"),
        ("SEARCH_MIN_SIMILARITY", "1.5"),
        ("MAX_MESSAGES_PER_CALL", "0"),
        ("Q_MAX_RSS_MB", "-1"),
        ("LOG_LEVEL", "verbose"),
    ],
)
def test_a_bad_value_is_an_improperly_configured_error_naming_the_variable(name, value):
    done = _start(**{name: value})
    assert done.returncode != 0
    last_line = done.stderr.strip().splitlines()[-1]
    assert last_line.startswith("django.core.exceptions.ImproperlyConfigured:"), done.stderr[-2000:]
    assert name in last_line


def test_a_default_top_k_above_the_largest_accepted_is_refused():
    done = _start(SEARCH_DEFAULT_TOP_K="60", SEARCH_MAX_TOP_K="50")
    assert "ImproperlyConfigured" in done.stderr
    assert "SEARCH_DEFAULT_TOP_K" in done.stderr.strip().splitlines()[-1]


def test_a_lower_case_log_level_is_accepted():
    done = _start(LOG_LEVEL="warning")
    assert done.returncode == 0, done.stderr[-2000:]


def test_good_values_and_the_defaults_still_start():
    assert _start().stdout.split() == ["2", "64", "0.3"]
    assert _start(Q_WORKERS="4", EMBEDDING_BATCH_SIZE="16", SEARCH_MIN_SIMILARITY="-0.2").stdout.split() == [
        "4",
        "16",
        "-0.2",
    ]
