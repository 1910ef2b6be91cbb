"""Background work: embedding, summarising new, idle and resumed sessions, failures."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import Schedule

from memories import tasks
from memories.llm import ModelBackendError, get_chat_model, get_embedder
from memories.llm.extractive import ExtractiveChatModel
from memories.models import Knowledge, Message, Summary
from memories.services.messages import MessageIn, messages_add
from memories.services.schedules import SWEEP_NAME
from memories.tasks import sweep
from tests.conftest import ADD_MESSAGES
from tests.graphql.documents import MIA_MESSAGES, say

pytestmark = pytest.mark.django_db


def _texts(n: int, prefix: str) -> list[dict]:
    return [{"role": "user", "content": f"{prefix} sentence number {i} about hiking in the Alps."} for i in range(n)]


def test_migrate_creates_the_sweep_schedule():
    schedule = Schedule.objects.get(name=SWEEP_NAME)
    assert schedule.func == "memories.tasks.sweep"
    assert schedule.repeats == -1


def test_new_session_summarises_the_previous_one_only(add_messages):
    add_messages("alice", "s1", _texts(3, "first"))
    assert not Summary.objects.exists()
    add_messages("alice", "s2", _texts(2, "second"))
    summary = Summary.objects.get()
    assert summary.session.external_id == "s1"
    assert summary.message_count == 3
    assert summary.last_message_id == Message.objects.filter(session__external_id="s1").order_by("-id")[0].id
    assert summary.embedding is not None
    # More messages in the current session do not summarise anything else.
    add_messages("alice", "s2", _texts(1, "more"))
    assert Summary.objects.count() == 1


def test_sweep_summarises_idle_sessions_and_refreshes_stale_summaries(add_messages, settings):
    add_messages("alice", "s1", _texts(2, "old"))
    settings.SUMMARY_IDLE_MINUTES = 60
    tasks.sweep()
    assert not Summary.objects.exists()  # not idle yet

    settings.SUMMARY_IDLE_MINUTES = 0
    tasks.sweep()
    summary = Summary.objects.get(session__external_id="s1")
    assert summary.message_count == 2

    # The session is resumed: its summary is behind the watermark and is written again.
    add_messages("alice", "s1", [{"role": "user", "content": "I also adopted a golden retriever named Biscuit."}])
    tasks.sweep()
    summary.refresh_from_db()
    assert summary.message_count == 3
    assert summary.last_message_id == Message.objects.filter(session__external_id="s1").latest("id").id
    assert "Biscuit" in summary.content


def test_summarising_is_idempotent(add_messages):
    add_messages("alice", "s1", _texts(4, "x"))
    session_id = Message.objects.first().session_id
    first = tasks.summarize_session(session_id)
    written = Summary.objects.get(pk=first).updated_at
    assert tasks.summarize_session(session_id) == first
    assert Summary.objects.get(pk=first).updated_at == written


def test_summary_of_a_deleted_session_is_a_no_op():
    assert tasks.summarize_session(987654) is None


def test_embedding_failure_loses_no_message_and_the_sweep_recovers(
    client, trusted_key, django_capture_on_commit_callbacks, settings
):
    backend = settings.EMBEDDING_BACKEND
    settings.EMBEDDING_BACKEND = "tests.fakes.DownEmbedder"
    with django_capture_on_commit_callbacks() as queued_work:
        response = client.post(
            "/graphql/",
            data=json.dumps(
                {
                    "query": ADD_MESSAGES,
                    "variables": {
                        "userId": "alice",
                        "sessionId": "s1",
                        "channel": "web",
                        "messages": _texts(3, "kept"),
                    },
                }
            ),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {trusted_key}",
        )
    assert response.json()["data"]["addMessages"]["__typename"] == "AddMessagesResult"
    # The worker's attempt fails (in sync mode django-q2 re-raises what a worker would record).
    (embed_task,) = queued_work
    with pytest.raises(ModelBackendError):
        embed_task()
    assert Message.objects.count() == 3
    assert Message.objects.filter(embedding__isnull=True).count() == 3

    settings.EMBEDDING_BACKEND = backend
    # Just stored: the row's own task may still be queued (or retried), so the sweep leaves it.
    assert tasks.sweep()["message"] == 0
    # Once a task's retry time has passed, the sweep takes it over.
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "retry": 0}
    queued = tasks.sweep()
    assert queued["message"] == 3
    assert Message.objects.filter(embedding__isnull=True).count() == 0


def test_embedding_task_batches_and_skips_rows_already_embedded(add_messages, settings):
    settings.EMBEDDING_BATCH_SIZE = 2
    add_messages("alice", "s1", _texts(5, "batch"))
    ids = list(Message.objects.values_list("id", flat=True))
    settings.EMBEDDING_BACKEND = "tests.fakes.RecordingEmbedder"
    calls = get_embedder().batches
    assert tasks.embed_rows("message", ids) == 0  # already embedded: nothing to do
    Message.objects.update(embedding=None)
    assert tasks.embed_rows("message", ids) == 5
    assert [len(texts) for texts in calls] == [2, 2, 1]


def test_long_sessions_are_summarised_from_their_newest_part_and_the_previous_summary(add_messages, settings):
    add_messages("alice", "s1", [{"role": "user", "content": "I adopted a grey cat called Miso last year."}])
    session_id = Message.objects.get().session_id
    tasks.summarize_session(session_id)
    settings.SUMMARY_MAX_INPUT_CHARS = 300
    add_messages("alice", "s1", _texts(20, "later"))
    settings.CHAT_BACKEND = "tests.fakes.RecordingChatModel"
    seen = get_chat_model().summarized
    tasks.summarize_session(session_id)
    (lines,) = seen
    assert lines[0].startswith("Summary of the earlier conversation: user: I adopted a grey cat called Miso")
    assert sum(len(line) for line in lines[1:]) <= 300
    assert lines[-1] == "user: later sentence number 19 about hiking in the Alps."


def test_a_newest_message_longer_than_the_summary_budget_is_summarised_from_its_beginning(add_messages, settings):
    settings.SUMMARY_MAX_INPUT_CHARS = 300
    long_text = "I moved to Lisbon in March to work on boats. " * 20  # 900 characters
    add_messages(
        "alice", "s1", [{"role": "user", "content": "I adopted a cat."}, {"role": "user", "content": long_text}]
    )
    settings.CHAT_BACKEND = "tests.fakes.RecordingChatModel"
    seen = get_chat_model().summarized
    tasks.summarize_session(Message.objects.first().session_id)
    ((line,),) = seen
    assert len(line) == 300
    assert line.startswith("user: I moved to Lisbon in March")
    assert line.endswith("…")
    assert "Lisbon" in Summary.objects.get().content


def test_embedding_task_re_embeds_messages_with_another_models_vector(add_messages):
    add_messages("alice", "s1", _texts(2, "old"))
    first, second = Message.objects.order_by("pk")
    Message.objects.filter(pk=first.pk).update(embedding_model="an-older-model")
    assert tasks.embed_rows("message", [first.pk, second.pk]) == 1
    first.refresh_from_db()
    assert first.embedding_model == "all-MiniLM-L6-v2"


@pytest.mark.django_db(transaction=True)
def test_embedding_task_leaves_messages_another_worker_holds_to_it_without_waiting(add_messages):
    import threading
    import time

    from django.db import connection, transaction

    add_messages("alice", "s1", _texts(3, "held"))
    held, own, other = Message.objects.order_by("pk").values_list("pk", flat=True)
    Message.objects.update(embedding=None)
    locked, release = threading.Event(), threading.Event()

    def other_worker() -> None:  # holds one row as a worker embedding it would
        try:
            with transaction.atomic():
                list(Message.objects.select_for_update().filter(pk=held))
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        assert locked.wait(30)
        started = time.monotonic()
        # Its own free row, topped up with the other new one; the held row is skipped.
        assert tasks.embed_rows("message", [held, own]) == 2
        assert time.monotonic() - started < 20
        assert set(Message.objects.filter(embedding__isnull=True).values_list("pk", flat=True)) == {held}
    finally:
        release.set()
        thread.join(30)
    assert other in Message.objects.filter(embedding__isnull=False).values_list("pk", flat=True)
    assert tasks.embed_rows("message", [held]) == 1


def test_a_message_the_backend_refuses_does_not_block_other_tasks(add_messages, settings):
    add_messages("alice", "s1", _texts(1, "poison"))
    add_messages("alice", "s2", _texts(2, "fine"))
    Message.objects.update(embedding=None, embedding_model="")
    poisoned, *fine = Message.objects.order_by("pk").values_list("pk", flat=True)
    # The backend refuses any call that holds the poisoned text.
    settings.EMBEDDING_BACKEND = "tests.fakes.RefusingEmbedder"
    # The oldest message without a vector tops up the batch, and the call fails: the task's
    # own messages are then embedded alone.
    assert tasks.embed_rows("message", fine) == 2
    assert set(Message.objects.filter(embedding__isnull=True).values_list("pk", flat=True)) == {poisoned}
    with pytest.raises(ModelBackendError):
        tasks.embed_rows("message", [poisoned])


def _finished(task_id: str, *, success: bool, result: object) -> dict:
    """A task package as django-q2's worker hands it to the monitor."""
    now = timezone.now()
    return {
        "id": task_id,
        "name": "alpha-bravo",
        "func": "memories.tasks.embed_rows",
        "args": ("message", [1]),
        "kwargs": {},
        "started": now,
        "stopped": now,
        "success": success,
        "result": result,
    }


def _monitor(task: dict) -> None:
    """What django-q2's monitor does with a finished task: store it, then send post_execute."""
    from django_q.brokers import get_broker
    from django_q.monitor import save_task
    from django_q.signals import post_execute

    save_task(task, get_broker())
    post_execute.send(sender="django_q", task=task)


def test_a_task_that_succeeds_on_its_retry_is_no_longer_listed_as_failed(db):
    from django_q.models import Failure, Success

    _monitor(_finished("a1", success=False, result="ModelBackendError: down"))
    assert list(Failure.objects.values_list("id", flat=True)) == ["a1"]
    _monitor(_finished("a1", success=True, result=3))
    assert not Failure.objects.exists()
    retried = Success.objects.get(id="a1")
    assert (retried.result, retried.attempt_count) == (3, 2)


def test_a_failure_django_q_could_not_save_is_recorded_all_the_same(db, monkeypatch):
    """The database was down when the monitor saved the failure ("Could not save task result")."""
    from django_q.models import Failure
    from django_q.signals import post_execute

    from memories.services import jobs

    monkeypatch.setattr(jobs, "RECORD_PAUSE_SECONDS", 0.01)
    task = _finished("lost", success=False, result="OperationalError: the database is down")
    post_execute.send(sender="django_q", task=task)  # the monitor's save_task failed: nothing stored

    failure = Failure.objects.get()
    assert (failure.id, failure.result, failure.func) == ("lost", task["result"], "memories.tasks.embed_rows")
    post_execute.send(sender="django_q", task=task)  # stored already: not twice
    assert Failure.objects.get().attempt_count == 1


def test_successes_without_an_earlier_failure_are_still_not_stored(db):
    from django_q.models import Task

    _monitor(_finished("b1", success=True, result=3))
    assert not Task.objects.exists()


class ChatInterruptedByANewMessage(ExtractiveChatModel):
    """The offline chat model, during whose first summary the user sends one more message
    (``CHAT_BACKEND`` is this class's dotted path)."""

    interrupted: list[str] = []

    def __init__(self) -> None:
        super().__init__(embedder=get_embedder())

    def summarize(self, *, lines, max_sentences):
        if not self.interrupted:
            self.interrupted.append("once")
            messages_add(
                user_external_id="mia",
                session_external_id="long",
                messages=[MessageIn(role="user", content="And my tomatoes are ripe now.")],
            )
        return super().summarize(lines=lines, max_sentences=max_sentences)


def test_a_rolling_summary_is_kept_when_a_message_arrives_while_it_is_written(hashing_embedder, settings, add_messages):
    settings.SUMMARY_EVERY_MESSAGES = 4
    settings.CHAT_BACKEND = f"{__name__}.ChatInterruptedByANewMessage"
    ChatInterruptedByANewMessage.interrupted.clear()
    turns = [say("Mia", f"My garden has {n} apple trees.", f"2024-05-01T09:0{n}:00Z") for n in range(4)]

    add_messages("mia", "long", turns)

    # The summary covers the four messages it read; the one said meanwhile waits for the next.
    assert ChatInterruptedByANewMessage.interrupted == ["once"]
    summary = Summary.objects.get(session__external_id="long")
    assert summary.message_count == 4
    assert "apple trees" in summary.content


def test_the_idle_sweep_summarises_only_idle_sessions_behind_their_summary(hashing_embedder, settings, add_messages):
    settings.SUMMARY_EVERY_MESSAGES = 0
    add_messages("mia", "s1", MIA_MESSAGES)
    add_messages("leo", "s1", [say("Leo", "I keep bees on my roof in Lyon.", "2024-05-02T09:00:00Z")])

    settings.SUMMARY_IDLE_MINUTES = 60
    assert sweep()["summaries"] == 0  # both sessions just received messages
    settings.SUMMARY_IDLE_MINUTES = 0
    assert sweep()["summaries"] == 2
    assert sweep()["summaries"] == 0  # both are current now

    summaries = {s.user.external_id: s for s in Summary.objects.select_related("user")}
    assert summaries["mia"].message_count == 3
    assert "Leo: I keep bees on my roof in Lyon." in summaries["leo"].content


# --- failed fact extraction ------------------------------------------------------------------


def _failed_extraction(session_id: int, *, task_id: str, sweep_round: int | None = None) -> None:
    """Record, as django-q2's monitor does for the worker, that a session's fact extraction failed."""
    from django_q.brokers import get_broker
    from django_q.monitor import save_task

    stopped = timezone.now() - timedelta(hours=1)
    task = {
        "id": task_id,
        "name": task_id,
        "func": "memories.tasks.extract_knowledge",
        "args": (session_id,),
        "kwargs": {} if sweep_round is None else {"sweep_round": sweep_round},
        "started": stopped,
        "stopped": stopped,
        "success": False,
        "result": "ModelBackendError: down",
    }
    save_task(task, get_broker())


def test_the_sweep_retries_a_failed_fact_extraction_then_leaves_it_listed_as_failed(gql, settings, openai_chat):
    """With a chat model that raises facts after a session is summarised (an LLM; the offline reader reads
    each turn as it is embedded, retried with the embedding)."""
    from django_q.models import Failure

    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True
    gql(
        ADD_MESSAGES,
        {
            "userId": "aiko",
            "sessionId": "s1",
            "channel": "",
            "messages": [{"role": "user", "content": "I moved to Osaka."}],
        },
    )
    Knowledge.objects.all().delete()
    message = Message.objects.get()
    session = message.session
    fact = {"text": "Aiko moved to Osaka.", "message_ids": [message.pk], "slot": "residence", "confidence": 0.9,
            "replaces_id": None, "entities": []}  # fmt: skip
    openai_chat.chat_reply = json.dumps({"facts": [fact]})
    _failed_extraction(session.pk, task_id="first")
    assert tasks.sweep()["extractions"] == 1
    assert not Failure.objects.exists()
    assert Knowledge.objects.filter(user__external_id="aiko", status="candidate", source_session=session).exists()

    # After its last round, the failure stays where staff see it, and is not queued again.
    _failed_extraction(session.pk, task_id="last", sweep_round=tasks.EXTRACTION_SWEEP_ROUNDS)
    assert tasks.sweep()["extractions"] == 0
    assert list(Failure.objects.values_list("id", flat=True)) == ["last"]


class ChatWritingAnOverlongFact(ExtractiveChatModel):
    """The offline chat model, whose fact extraction also writes a fact longer than a fact may be, as an LLM's
    would (facts raised once a session is summarised)."""

    mode = "generated"

    def __init__(self) -> None:
        super().__init__(embedder=get_embedder())

    def extract_facts(self, *, messages, known_facts):
        from memories.llm.base import Fact

        extraction = super().extract_facts(messages=messages, known_facts=known_facts)
        overlong = Fact(text="The user likes " + "very " * 30 + "long walks.", message_ids=[messages[0][0]])
        return replace(extraction, facts=[*extraction.facts, overlong])


def test_the_worker_stores_no_fact_the_api_would_refuse(hashing_embedder, settings, add_messages, caplog):
    settings.CHAT_BACKEND = f"{__name__}.ChatWritingAnOverlongFact"
    settings.MAX_KNOWLEDGE_CHARS = 100
    add_messages("mia", "s1", [say("Mia", "My sister Sarah lives in Lisbon.", "2024-05-01T09:00:00Z")])

    tasks.extract_knowledge(Message.objects.get().session_id)

    facts = list(Knowledge.objects.values_list("content", flat=True))
    assert facts  # the other facts are stored
    assert all(len(fact) <= 100 for fact in facts)
    assert "did not fit the schema" in caplog.text
