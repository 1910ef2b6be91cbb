"""Which rows a search may read: the searched end users, a channel, a window of conversation time.

The conditions are SQL fragments (``psycopg.sql.SQL``) with named parameters, composed into the
statements of ``memories.search.retrievers``; ``RowScope.params()`` gives their values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo

from psycopg import sql

from memories.kinds import MemoryKind
from memories.models import EndUser, Message
from memories.services.validation import field_errors, raise_if

__all__ = ["SOURCES", "RowScope", "SearchFilter"]

# What a search ranks: raw messages and the memory derived from them.
SOURCES = tuple(MemoryKind.values)


@dataclass(frozen=True)
class SearchFilter:
    """Narrows retrieval to a channel and to a window of conversation time.

    ``start``/``end`` bound when things were said (``start`` inclusive, ``end`` exclusive);
    ``first_day``/``last_day`` are the same window as local dates, for diaries; ``zone`` is the
    caller's time zone, of the days a query names and an answer's dates. Knowledge has
    neither a channel nor a conversation time, so any filter leaves it out; diaries have no
    channel, so a channel filter leaves them out.
    """

    channel: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    first_day: date | None = None
    last_day: date | None = None
    zone: tzinfo = UTC

    @classmethod
    def local_days(
        cls, *, since: date | None, until: date | None, utc_offset_hours: float = 0, channel: str | None = None
    ) -> SearchFilter:
        """The window from 00:00 local time on ``since`` to the midnight after ``until``.

        Raises:
            ValidationError: ``until`` before ``since``, an offset outside -14..14 hours, or a
                NUL character or a lone surrogate in ``channel``.
        """
        raise_if(
            [
                ("utc_offset_hours", [] if -14 <= utc_offset_hours <= 14 else ["must be between -14 and 14."]),
                ("until", ["must not be before since."] if since and until and until < since else []),
                ("channel", [e for e in field_errors(Message, "channel", channel or "") if e.code != "max_length"]),
            ]
        )
        zone = timezone(timedelta(hours=utc_offset_hours))
        # No midnight follows the last day there is: an until of date.max leaves the end open.
        after_until = until + timedelta(days=1) if until and until < date.max else None
        return cls(
            channel=channel or None,
            start=datetime.combine(since, time.min, tzinfo=zone) if since else None,
            end=datetime.combine(after_until, time.min, tzinfo=zone) if after_until else None,
            first_day=since,
            last_day=until,
            zone=zone,
        )

    @property
    def is_empty(self) -> bool:
        return self.channel is None and self.start is None and self.end is None


@dataclass(frozen=True)
class RowScope:
    """The rows one search reads: ``user_pks``' rows that ``search_filter`` lets through, of ``sources``.

    ``exclude_message_pks`` are messages never returned (a chatbot's recent window and the
    message being answered); ``session_pk``, when set, keeps messages and summaries to one
    session and leaves out the users' knowledge and diaries, which come from every session.
    ``include_shared`` adds system-wide knowledge (no owner).
    """

    user_pks: tuple[int, ...]
    search_filter: SearchFilter = field(default_factory=SearchFilter)
    sources: tuple[str, ...] = SOURCES
    include_shared: bool = False
    exclude_message_pks: tuple[int, ...] = ()
    session_pk: int | None = None

    @classmethod
    def for_users(cls, *, user_external_ids: list[str], **options: object) -> RowScope:
        """The scope of the end users with these external ids (unknown ones have no rows)."""
        pks = EndUser.objects.filter(external_id__in=set(user_external_ids)).values_list("pk", flat=True)
        return cls(user_pks=tuple(sorted(pks)), **options)

    @property
    def multi_user(self) -> bool:
        return len(self.user_pks) > 1

    def params(self) -> dict[str, object]:
        """The named parameters every condition below uses."""
        f = self.search_filter
        return {
            "users": list(self.user_pks),
            "channel": f.channel,
            "start": f.start,
            "end": f.end,
            "first_day": f.first_day,
            "last_day": f.last_day,
            "excluded": list(self.exclude_message_pks),
            "session": self.session_pk,
        }

    def messages(self) -> sql.Composable | None:
        """Condition on ``memories_message`` rows (never a backchannel); ``None`` when messages are not searched."""
        if MemoryKind.MESSAGE not in self.sources:
            return None
        f = self.search_filter
        return _all(
            "user_id = ANY(%(users)s)",
            # An acknowledgement ("Of course.") matches many queries and says nothing.
            "dialogue_act <> 'backchannel'",
            f.channel and "channel = %(channel)s",
            f.start and "created_at >= %(start)s",
            f.end and "created_at < %(end)s",
            self.exclude_message_pks and "NOT id = ANY(%(excluded)s)",
            self.session_pk and "session_id = %(session)s",
        )

    def summaries(self) -> sql.Composable | None:
        """Summaries whose covered time overlaps the window, of sessions holding a message of the channel."""
        if MemoryKind.SUMMARY not in self.sources:
            return None
        f = self.search_filter
        in_channel = (
            "session_id IN (SELECT session_id FROM memories_message "
            "WHERE user_id = ANY(%(users)s) AND channel = %(channel)s)"
        )
        return _all(
            "user_id = ANY(%(users)s)",
            "content <> ''",  # a session of questions and acknowledgements only
            f.channel and in_channel,
            f.start and "covers_until >= %(start)s",
            f.end and "covers_from < %(end)s",
            self.session_pk and "session_id = %(session)s",
        )

    def knowledge(self) -> sql.Composable | None:
        """Active knowledge of the users (and shared); ``None`` under any filter (it has no channel or time).

        Kept to one session, only shared knowledge: a user's knowledge comes from all their sessions.
        """
        if MemoryKind.KNOWLEDGE not in self.sources or not self.search_filter.is_empty:
            return None
        if self.session_pk is not None:
            return _all("user_id IS NULL", "status = 'active'") if self.include_shared else None
        owner = "(user_id = ANY(%(users)s) OR user_id IS NULL)" if self.include_shared else "user_id = ANY(%(users)s)"
        return _all(owner, "status = 'active'")

    def diaries(self) -> sql.Composable | None:
        """Diaries in the window; ``None`` under a channel filter or kept to one session.

        Diaries have no channel, and one covers a day of every session.
        """
        if MemoryKind.DIARY not in self.sources or self.search_filter.channel or self.session_pk is not None:
            return None
        f = self.search_filter
        return _all(
            "user_id = ANY(%(users)s)",
            f.first_day and "diary_date >= %(first_day)s",
            f.last_day and "diary_date <= %(last_day)s",
        )


def _all(*conditions: object) -> sql.Composable:
    return sql.SQL(" AND ").join(sql.SQL(str(c)) for c in conditions if c)
