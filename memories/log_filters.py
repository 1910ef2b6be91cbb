"""Logging filters (``settings.LOGGING``)."""

from __future__ import annotations

import logging

__all__ = ["TaskFailureFilter"]

_FAILED = "Failed '"
_TRACEBACK = "Traceback (most recent call last):"


class TaskFailureFilter(logging.Filter):
    """Keeps users' words out of django-q2's line for a failed task (its ``django-q`` logger).

    django-q2 logs ``Failed 'func' (task name) - <error> : <traceback>``, and an error may quote what
    a user said (a constraint's DETAIL, a model server's answer): a log keeps it after ``forgetUser``.
    The line keeps the task and the error's type; the error itself stays in the task's record (the
    admin's *Failed tasks*), which ``deleteHistory`` and ``forgetUser`` delete with the words.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith(_FAILED) and " - " in message:
            task, _, result = message.partition(" - ")
            record.msg, record.args = f"{task} - {_error_type(result)} (its message: the admin's failed tasks)", ()
        return True


def _error_type(result: str) -> str:
    """The exception's type in django-q2's ``"<error> : <traceback>"``: the first unindented line after
    the last traceback's frames (``module.Type: message``)."""
    lines = result.splitlines()
    starts = [i for i, line in enumerate(lines) if line.endswith(_TRACEBACK)]
    for line in lines[starts[-1] + 1 :] if starts else []:
        if line and not line[0].isspace():
            return line.split(":", 1)[0]
    return "an error"
