"""The Python client (``clients/python``) against the service served for real (gunicorn, as ``make run``).

The worker's part (embedding what was stored) runs in the test process between the calls; the
facts a summary would raise are added with the service that curators use.
"""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.db import connections
from memory_client import (
    AsyncMemoryClient,
    ForbiddenError,
    HitKind,
    InputError,
    MemoryApiError,
    MemoryClient,
    UnauthenticatedError,
)

from memories import tasks
from memories.models import Message, Session
from memories.services.api_keys import api_key_create
from memories.services.embeddings import embeddings_fill
from tests.ops.live import database_url, environment, free_port, start_serve, wait_until_served

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
USER = "user-42"
EARLIER = [
    {"role": role, "content": content, "createdAt": f"2024-05-01T09:00:{second:02}+09:00"}
    for role, content, second in [
        ("user", "My favourite food is okonomiyaki, Hiroshima style.", 0),
        ("assistant", "Noted! Do you cook it at home?", 5),
        ("user", "Sometimes, but I am allergic to peanuts so I check the sauce.", 30),
    ]
]
ASK = "Any idea what I could cook for dinner tonight?"
FACT = "The user is allergic to peanuts."
READ = {"The user's favourite food is okonomiyaki, Hiroshima style.", FACT}


@pytest.fixture(scope="module")
def url(django_db_setup, django_db_blocker) -> Iterator[str]:
    """The GraphQL URL of ``manage.py serve web`` on the test database, with the offline embedding model."""
    port = free_port()
    with django_db_blocker.unblock():
        env = environment(DATABASE_URL=database_url(), EMBEDDING_BACKEND="local")
    service = start_serve("web", port=port, env=env)
    try:
        wait_until_served(service, port)
        yield f"http://127.0.0.1:{port}/graphql/"
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(timeout=60)


@pytest.fixture
def key(transactional_db) -> str:
    return api_key_create(name="bot", all_users=True)[1]


def _earlier_session_remembered(add_messages) -> None:
    """The earlier session stored through the client, then embedded, which reads its facts."""
    stored = add_messages(USER, "2024-05-01", EARLIER)
    assert [m.content for m in stored.messages] == [m["content"] for m in EARLIER]
    embeddings_fill(kind="message")
    embeddings_fill(kind="knowledge")


def test_a_chatbot_turn_then_search_facts_and_forget(url, key):
    with MemoryClient(url, key) as memory:
        _earlier_session_remembered(memory.add_messages)

        when = datetime.fromisoformat("2024-05-20T18:30:00+09:00")
        context = memory.turn(USER, "2024-05-20", ASK, created_at=when, parts=True)
        assert [t.content for t in context.window] == [ASK]
        assert FACT in [m.content for m in context.memories if m.kind == HitKind.KNOWLEDGE]
        assert FACT in context.prompt
        assert ASK in context.prompt
        assert context.tokens.prompt > 0
        reply = memory.add_messages(USER, "2024-05-20", [{"role": "assistant", "content": "A vegetable stir-fry?"}])
        assert (reply.skipped, [m.role for m in reply.messages]) == (0, ["assistant"])
        assert [t.speaker for t in memory.context(USER, "2024-05-20", query=ASK).window] == ["user", "assistant"]

        embeddings_fill(kind="message")
        answer = memory.search(USER, "What am I allergic to?", top_k=3)
        assert answer.found
        assert "allergic to peanuts" in answer.answer
        assert any(hit.cited for hit in answer.hits)
        assert {f.content for f in memory.facts(USER)} == READ

        forgotten = memory.forget_user(USER)
        assert (forgotten.deleted_messages, forgotten.sessions, forgotten.knowledge) == (5, 2, 2)
        assert memory.facts(USER) == []
    assert not Message.objects.exists()


def test_errors_are_typed_with_the_api_codes(url, key):
    with MemoryClient(url, "mem_wrong") as stranger, pytest.raises(UnauthenticatedError) as refused:
        stranger.facts(USER)
    assert (refused.value.code, refused.value.status) == ("UNAUTHENTICATED", 401)

    _, alice_only = api_key_create(name="alice's bot", user_external_ids=["alice"])
    with MemoryClient(url, alice_only) as memory, pytest.raises(ForbiddenError) as forbidden:
        memory.search("bob", "Where does Bob live?")
    assert forbidden.value.code == "FORBIDDEN"
    assert "bob" in forbidden.value.message

    with MemoryClient(url, key) as memory:
        with pytest.raises(InputError) as invalid:
            memory.add_messages(USER, "s", [{"role": "robot", "content": ""}])
        assert invalid.value.code == "VALIDATION"
        assert [e.field for e in invalid.value.field_errors] == ["messages.0.role", "messages.0.content"]
        with pytest.raises(InputError) as too_many:
            memory.facts(USER, limit=10**6)
        assert too_many.value.code == "BAD_USER_INPUT"
    assert isinstance(too_many.value, MemoryApiError)
    assert not Message.objects.exists()


def test_facts_backlog_summaries_export_and_a_token_for_the_browser(url, key):
    _, curator = api_key_create(name="curator", all_users=True, may_curate=True)
    with MemoryClient(url, curator) as memory:
        memory.add_messages(USER, "s1", [{"role": "user", "content": "I moved to Osaka last month."}])
        waiting = memory.backlog(USER)
        assert (waiting.messages_waiting_for_facts, waiting.all_processed) == (1, False)
        assert [p.session_id for p in waiting.sessions_waiting_for_summary] == ["s1"]

        assert memory.create_summaries(USER) == ["s1"]
        (due,) = memory.backlog(USER).sessions_waiting_for_summary
        assert abs((due.due_at - datetime.now(UTC)).total_seconds()) < 10  # due now, not once idle
        _worker_runs(USER)
        assert memory.backlog(USER).all_processed

        (raised,) = memory.facts(USER)
        assert "Osaka" in raised.content
        assert raised.reviewed is False
        assert memory.approve_fact(USER, int(raised.id)).reviewed  # ids as numbers too

        added = memory.add_fact(USER, "The user is vegetarian.")
        corrected = memory.correct_fact(USER, added.id, "The user is vegan.")
        assert (corrected.id, corrected.content) == (added.id, "The user is vegan.")
        assert memory.forget_fact(USER, added.id) == added.id
        with pytest.raises(InputError) as gone:
            memory.correct_fact(USER, added.id, "The user eats fish.")
        assert gone.value.code == "ERROR"

        document = memory.export_user(USER)
        assert [m["content"] for m in document["messages"]] == ["I moved to Osaka last month."]

        token = memory.create_user_token(USER, ttl_seconds=60)
        assert token.token.startswith("memu_")
        assert 50 < (token.expires_at - datetime.now(UTC)).total_seconds() <= 60

    with MemoryClient(url, token.token) as browser:
        assert [f.content for f in browser.facts(USER)] == [raised.content]
        with pytest.raises(ForbiddenError):
            browser.facts("someone-else")
        with pytest.raises(ForbiddenError):
            browser.create_user_token(USER)
    with MemoryClient(url, key) as memory, pytest.raises(ForbiddenError) as refused:
        memory.reject_fact(USER, raised.id)
    assert "may curate" in refused.value.message


def _worker_runs(user_id: str) -> None:
    """What the worker does with a user's queued sessions: summarise them, then read their facts."""
    for session_id in Session.objects.filter(user__external_id=user_id).values_list("pk", flat=True):
        tasks.summarize_session(session_id)
        tasks.extract_knowledge(session_id)
    embeddings_fill(kind="message")
    embeddings_fill(kind="knowledge")


def test_the_async_client(url, key, monkeypatch):
    # The worker's steps run between the awaits, blocking the loop as they would a worker.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    async def chat() -> None:
        try:
            await conversation()
        finally:  # Django opened a connection for this task's context: close it, or the test database stays in use
            connections.close_all()

    async def conversation() -> None:
        async with AsyncMemoryClient(url, key) as memory:
            await memory.add_messages(USER, "2024-05-01", EARLIER)
            embeddings_fill(kind="message")
            context = await memory.turn(USER, "2024-05-20", ASK)
            assert FACT in context.prompt
            await memory.add_messages(USER, "2024-05-20", [{"role": "assistant", "content": "Stir-fry?"}])
            embeddings_fill(kind="message")
            assert (await memory.context(USER, "2024-05-20")).window[-1].content == "Stir-fry?"
            assert "peanuts" in (await memory.search(USER, "What am I allergic to?")).answer
            assert {f.content for f in await memory.facts(USER)} == READ
            assert (await memory.forget_user(USER)).deleted_messages == 5
            with pytest.raises(InputError) as invalid:
                await memory.turn(USER, "s", "")
            assert invalid.value.field_errors[0].field == "messages.0.content"
        async with AsyncMemoryClient(url, "mem_wrong") as stranger:
            with pytest.raises(UnauthenticatedError):
                await stranger.forget_user(USER)

    asyncio.run(chat())
    assert not Message.objects.exists()


def test_the_readme_python_turn_works_as_shown(url, key):
    """The README's Python turn, its URL and key those of the live server, with a stand-in LLM."""
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)]
    code = code.replace('"http://127.0.0.1:8000/graphql/"', repr(url)).replace('"mem_..."', repr(key))
    readme: dict = {}
    exec(compile(code, "README.md", "exec"), readme)  # the README's own example

    prompts = []
    reply = readme["turn"](USER, "2024-05-20", ASK, lambda system, message: prompts.append(system) or "Stir-fry?")

    assert reply == "Stir-fry?"
    assert ASK in prompts[0]
    assert list(Message.objects.order_by("created_at").values_list("role", "content")) == [
        ("user", ASK),
        ("assistant", "Stir-fry?"),
    ]


def _python_blocks(doc: Path, url: str, key: str) -> list[str]:
    section = doc.read_text().split("## Python client", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    return [
        block.replace('"http://127.0.0.1:8000/graphql/"', repr(url)).replace('"mem_..."', repr(key)) for block in blocks
    ]


def test_the_integrations_doc_examples_work_as_shown(url, key, capsys):
    """The Python client section's blocks in docs/integrations.md: the tour, the async turn, errors, the plain turn."""
    tour, async_turn, errors, plain = _python_blocks(ROOT / "docs" / "integrations.md", url, key)

    exec(compile(tour, "integrations.md", "exec"), {})  # the doc's own examples
    assert [f"{role}: {content[:9]}" for role, content in Message.objects.values_list("role", "content")] == [
        "user: Any idea ",
        "assistant: How about",
    ]

    namespace: dict = {}
    exec(compile(async_turn, "integrations.md", "exec"), namespace)

    async def reply_with(system: str, message: str) -> str:
        return "Soba?"

    assert asyncio.run(namespace["turn"](USER, "async", ASK, reply_with)) == "Soba?"

    exec(compile(errors, "integrations.md", "exec"), {})
    assert capsys.readouterr().out.splitlines()[-1].startswith("VALIDATION [('messages.0.role', \"role must be")

    exec(compile(plain, "integrations.md", "exec"), namespace)
    assert namespace["turn"](USER, "plain", ASK, lambda system, message: "Ramen?") == "Ramen?"
    assert Message.objects.filter(session__external_id="plain").count() == 2
