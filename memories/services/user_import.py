"""Reading one end user's memory back from an export (``docs/export.md``), streamed, in one transaction."""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import Max, Min

from memories.kinds import MemoryKind
from memories.models import (
    DialogueAct,
    Diary,
    EndUser,
    Message,
    Role,
    Session,
    Summary,
    SummaryMode,
)
from memories.services.jobs import embedding_enqueue
from memories.services.progress import sessions_facts_read_as_summarised
from memories.services.user_document import (
    FORMAT,
    LIST_SECTIONS,
    VERSION,
    document_read,
    parsed_date,
    parsed_time,
)
from memories.services.user_import_facts import FactSections
from memories.services.user_import_items import ImportItem
from memories.services.user_import_statements import INSERT_MESSAGES, ROWS_PER_INSERT, restamp
from memories.services.validation import user_id_errors

__all__ = ["UserImported", "import_user"]

# The choices, once (Django's ``Choices.values`` builds its list on every call).
_ROLES, _ACTS, _SUMMARY_MODES = tuple(Role.values), tuple(DialogueAct.values), tuple(SummaryMode.values)

# List items read before they are written (and messages per statement and per embedding task queued).
CHUNK_SIZE = 2000


@dataclass
class UserImported:
    """What ``import_user`` stored: the user, rows created per list, and (merging) rows already there."""

    user_id: str
    created: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LIST_SECTIONS, 0))
    kept: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LIST_SECTIONS, 0))


def import_user(*, stream: IO[bytes], merge: bool = False, user_external_id: str | None = None) -> UserImported:
    """Store the end user an export describes, with all their rows, in one transaction.

    Every value is checked as the API checks it (``memories.validators``: a message's and a fact's
    length, metadata's size and depth, times with their offset), so an import stores nothing the
    API would refuse.

    The document is read as it streams (``document_read``): memory stays bounded by one chunk of
    items plus the new id of each message and fact (8 bytes each, to resolve references to
    them). Vectors are not in a document: the rows are queued for the worker's embedding task
    once the transaction commits, as new messages are; until then vector search skips them
    (lexical search finds them at once). No summary or fact extraction is queued.

    Merging into an existing user: a session of the same id is reused (its times widened), a
    message whose ``external_id`` that session already holds is kept rather than added again,
    a session's summary and a date's diary entry already there are kept, an entity of the same
    name (case aside) takes the document's aliases and links; everything else is added.

    Args:
        stream: the document, opened in binary mode.
        merge: add to a user who already exists here (otherwise refused).
        user_external_id: store the rows under this user id instead of the document's.

    Returns:
        The user id and the counts.

    Raises:
        ValidationError: nothing is stored: not an export, a version this code does not read, the
            user exists and ``merge`` is false, or a row is invalid (the error names it, e.g.
            ``messages.17.role``) or refers to a row the document does not hold.
    """
    try:
        with transaction.atomic():
            return _Import(merge=merge, user_external_id=user_external_id).run(document_read(stream))
    except IntegrityError as exc:
        raise ValidationError(
            f"The document holds two rows with one key (e.g. two sessions of one id): {exc}"
        ) from None
    except DataError as exc:
        raise ValidationError(f"The document holds a value the database cannot store: {exc}") from None


class _Import(FactSections):
    """The state of one import: where it is in the document and the new ids of what it stored."""

    def __init__(self, *, merge: bool, user_external_id: str | None) -> None:
        self.merge, self.user_external_id = merge, user_external_id
        self.header: dict[str, Any] = {}
        self.user: EndUser | None = None
        self.result: UserImported | None = None
        self.section = -1  # index in LIST_SECTIONS of the list being read
        self.sessions: dict[str, int] = {}  # external id -> pk
        self.existing_sessions: set[int] = set()  # merging: sessions the user had before
        self.grown_sessions: set[int] = set()  # merging: those of them that got messages
        self.messages = array("q")  # pk by position
        self.knowledge = array("q")  # pk by position
        # (history record?, its id, column, position referred to, where in the document) per reference
        self.fact_links: list[tuple[bool, int, str, int, str]] = []

    def run(self, entries: Iterator[tuple[str, str, Any]]) -> UserImported:
        batch: list[Any] = []
        for key, kind, value in entries:
            if kind == "item":
                batch.append(value)
                if len(batch) == CHUNK_SIZE:
                    self._store(batch)
                    batch = []
                continue
            self._store(batch)
            batch = []
            if key in ("format", "version"):
                self._header(key, value)
            elif key == "exported_at":
                parsed_time(value, path="exported_at", null=True)
            elif key == "user":
                self._user(value)
            elif key in LIST_SECTIONS and kind == "list":
                self._open(key)
            elif key in LIST_SECTIONS:
                raise ValidationError({key: [f'"{key}" must be a list.']})
            else:
                raise ValidationError({key: [f"{key!r} is not a part of a {FORMAT} document (docs/export.md)."]})
        self._store(batch)
        if self.result is None:
            raise ValidationError({"user": ["The document names no user."]})
        self._link_facts()
        self._settle_merged_sessions()
        return self.result

    def _header(self, key: str, value: Any) -> None:
        if key == "format" and value != FORMAT:
            raise ValidationError({"format": [f"This is not a {FORMAT} document (format {value!r})."]})
        if key == "version" and (type(value) is not int or value != VERSION):
            raise ValidationError(
                {"version": [f"Version {value!r} cannot be read here: this service reads version {VERSION}."]}
            )
        self.header[key] = value

    def _user(self, value: Any) -> None:
        if set(self.header) != {"format", "version"}:
            raise ValidationError({"version": ['"format" and "version" must come first in the document.']})
        item = ImportItem("user", value)
        external_id = self.user_external_id or item.text("id", blank=False)
        if problems := [e for e in user_id_errors(external_id) if e.code != "blank"]:
            raise ValidationError({"user.id": [f"user.id: {' '.join(ValidationError(problems).messages)}"]})
        created_at = item.time("created_at")
        user = EndUser.objects.filter(external_id=external_id).first()
        if user is not None and not self.merge:
            raise ValidationError(
                {"user": [f"User {external_id!r} already exists here: merge into it (--merge), or forget them first."]}
            )
        if user is None:
            user = EndUser.objects.create(external_id=external_id)
            EndUser.objects.filter(pk=user.pk).update(created_at=created_at)
        else:
            self.sessions = dict(Session.objects.filter(user=user).values_list("external_id", "pk"))
            self.existing_sessions = set(self.sessions.values())
        self.user, self.result = user, UserImported(user_id=external_id)

    def _open(self, name: str) -> None:
        if self.user is None:
            raise ValidationError({name: [f'"user" must come before "{name}".']})
        index = LIST_SECTIONS.index(name)
        if index <= self.section:
            order = ", ".join(LIST_SECTIONS)
            raise ValidationError({name: [f'"{name}" comes once, after the lists before it ({order}).']})
        self.section = index

    def _store(self, batch: list[Any]) -> None:
        if not batch:
            return
        name = LIST_SECTIONS[self.section]
        first = self.result.created[name] + self.result.kept[name]
        items = [ImportItem(f"{name}.{first + i}", data) for i, data in enumerate(batch)]
        getattr(self, f"_{name}")(items)

    def _count(self, name: str, *, created: int, kept: int = 0) -> None:
        self.result.created[name] += created
        self.result.kept[name] += kept

    def _sessions(self, items: list[ImportItem]) -> None:
        rows, kept = [], 0
        for item in items:
            external_id = item.text("id", max_length=Session._meta.get_field("external_id").max_length, blank=False)
            channel = item.text("channel", max_length=Session._meta.get_field("channel").max_length)
            first, last = item.time("first_message_at", null=True), item.time("last_message_at", null=True)
            stamps = (item.time("created_at"), item.time("updated_at"))
            if external_id in self.sessions and self.sessions[external_id] in self.existing_sessions:
                kept += 1
                continue
            session = Session(
                user=self.user, external_id=external_id, channel=channel, first_message_at=first, last_message_at=last
            )
            rows.append((session, stamps))
        Session.objects.bulk_create([session for session, _ in rows], batch_size=ROWS_PER_INSERT)
        for session, _ in rows:
            self.sessions[session.external_id] = session.pk
        restamp(Session, [(session.pk, *stamps) for session, stamps in rows])
        self._count("sessions", created=len(rows), kept=kept)

    def _session_pk(self, item: ImportItem, key: str, *, null: bool = False) -> int | None:
        external_id = item.text(key, null=null)
        if external_id is None:
            return None
        if external_id not in self.sessions:
            raise item.fail(key, f"names session {external_id!r}, which the sessions list does not hold.")
        return self.sessions[external_id]

    def _messages(self, items: list[ImportItem]) -> None:
        id_max = Message._meta.get_field("external_id").max_length
        channel_max = Message._meta.get_field("channel").max_length
        rows = []
        for item in items:
            rows.append(
                (
                    self._session_pk(item, "session"),
                    item.text("external_id", max_length=id_max, null=True) or "",
                    item.choice("role", _ROLES),
                    item.text("content", field=(Message, "content")),
                    item.text("channel", max_length=channel_max),
                    item.json("metadata", dict, field=(Message, "metadata")),
                    item.time("created_at"),
                    item.time("received_at"),
                    item.choice("dialogue_act", _ACTS),
                )
            )
        there = self._messages_there(rows)
        new = [row for row in rows if (row[0], row[1]) not in there]
        new_ids = []
        if new:
            with connection.cursor() as cursor:
                columns = [[row[i] if i != 5 else json.dumps(row[i]) for row in new] for i in range(9)]
                cursor.execute(INSERT_MESSAGES, [self.user.pk, *columns])
                new_ids = [pk for (pk,) in cursor.fetchall()]
        self.grown_sessions |= {row[0] for row in new} & self.existing_sessions
        inserted = iter(new_ids)
        for session, external_id, *_ in rows:
            self.messages.append(there[(session, external_id)] if (session, external_id) in there else next(inserted))
        if new_ids:
            embedding_enqueue(kind=MemoryKind.MESSAGE, ids=new_ids)
        self._count("messages", created=len(new_ids), kept=len(rows) - len(new_ids))

    def _messages_there(self, rows: list[tuple]) -> dict[tuple[int, str], int]:
        """Merging: the messages of these rows' (pre-existing) sessions with the same external ids."""
        wanted = [(session, external_id) for session, external_id, *_ in rows if external_id]
        wanted = [(s, e) for s, e in wanted if s in self.existing_sessions]
        if not wanted:
            return {}
        found = Message.objects.filter(
            session_id__in={s for s, _ in wanted}, external_id__in={e for _, e in wanted}
        ).values_list("session_id", "external_id", "pk")
        return {(session, external_id): pk for session, external_id, pk in found}

    def _summaries(self, items: list[ImportItem]) -> None:
        rows = []
        for item in items:
            summary = Summary(
                user=self.user,
                session_id=self._session_pk(item, "session"),
                content=item.text("content"),
                mode=item.choice("mode", _SUMMARY_MODES),
                covers_from=item.time("covers_from"),
                covers_until=item.time("covers_until"),
                last_message_id=item.position("last_message", self.messages, null=True),
                message_count=item.number("message_count", int),
            )
            rows.append((summary, item.time("created_at"), item.time("updated_at")))
        summarised = set(
            Summary.objects.filter(session_id__in=[s.session_id for s, *_ in rows]).values_list("session_id", flat=True)
        )
        # Merging: a session's summary already here is kept (it may cover more than the document's).
        rows = [row for row in rows if row[0].session_id not in summarised]
        Summary.objects.bulk_create([summary for summary, *_ in rows], batch_size=ROWS_PER_INSERT)
        restamp(Summary, [(summary.pk, *stamps) for summary, *stamps in rows])
        if rows:
            embedding_enqueue(kind=MemoryKind.SUMMARY, ids=[summary.pk for summary, *_ in rows])
            sessions_facts_read_as_summarised(session_ids=[summary.session_id for summary, *_ in rows])
        self._count("summaries", created=len(rows), kept=len(items) - len(rows))

    def _diaries(self, items: list[ImportItem]) -> None:
        rows = []
        for item in items:
            diary = Diary(
                user=self.user,
                diary_date=parsed_date(item.data.get("date"), path=f"{item.path}.date"),
                content=item.text("content", field=(Diary, "content")),
                metadata=item.json("metadata", dict, field=(Diary, "metadata")),
            )
            rows.append((diary, item.time("created_at"), item.time("updated_at")))
        there = set(
            Diary.objects.filter(user=self.user, diary_date__in=[d.diary_date for d, *_ in rows]).values_list(
                "diary_date", flat=True
            )
        )
        # Merging: the entry a date already has here is kept.
        rows = [row for row in rows if row[0].diary_date not in there]
        Diary.objects.bulk_create([diary for diary, *_ in rows], batch_size=ROWS_PER_INSERT)
        restamp(Diary, [(diary.pk, *stamps) for diary, *stamps in rows])
        if rows:
            embedding_enqueue(kind=MemoryKind.DIARY, ids=[diary.pk for diary, *_ in rows])
        self._count("diaries", created=len(rows), kept=len(items) - len(rows))

    def _settle_merged_sessions(self) -> None:
        """Merging: a session that was already here spans its old and new messages."""
        for session in Session.objects.filter(pk__in=self.grown_sessions).annotate(
            first=Min("messages__created_at"), last=Max("messages__created_at")
        ):
            Session.objects.filter(pk=session.pk).update(first_message_at=session.first, last_message_at=session.last)
