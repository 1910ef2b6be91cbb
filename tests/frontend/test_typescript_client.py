"""The TypeScript client (``clients/typescript``) against the service served for real, with its worker:
``node --test`` runs ``clients/typescript/test``, every documented operation through the facade."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from bench.client import typescript_turns
from memories.models import Message
from tests.frontend.conftest import ROOT

pytestmark = pytest.mark.slow

CLIENT = ROOT / "clients" / "typescript"


def test_the_typescript_client_against_the_live_service(service, backend_key):
    done = subprocess.run(
        ["node", "--test", "--test-reporter=spec", "test/"],
        cwd=CLIENT,
        env={**os.environ, "MEMORY_URL": service.url, "MEMORY_API_KEY": backend_key},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    # node's spec reporter ends with its counts: every test of the folder ran, none failed.
    counts = dict(re.findall(r"^ℹ (tests|pass|fail) (\d+)$", done.stdout, flags=re.MULTILINE))
    assert counts["fail"] == "0", done.stdout[-3000:]
    assert int(counts["pass"]) == int(counts["tests"]) >= 3, done.stdout[-3000:]


def test_the_integrations_doc_typescript_turns_work_as_shown(service, backend_key):
    """docs/integrations.md's TypeScript client turn and its fetch turn, as bench.client times them."""
    timed = typescript_turns(service.url, backend_key, turns=2, warm_up=0, user="doc-user")
    assert {way: len(times["ms"]) for way, times in timed.items()} == {"typescript": 2, "fetch": 2}
    stored = Message.objects.filter(user__external_id="doc-user")
    assert set(stored.values_list("session__external_id", "role")) == {
        ("fetch-0", "assistant"),
        ("fetch-0", "user"),
        ("typescript-0", "assistant"),
        ("typescript-0", "user"),
    }
    assert stored.count() == 8
