"""Dates a query names ("on 3 June, 2023", "in August 2023", "2023-06-03"), as days of conversation time.

A question about what was said on a day or in a month is answered by what was said then or
shortly after: people mention an event in the days that follow it. So the window is the named
day or month widened by ``MARGIN_DAYS`` on each side. Only absolute dates are read (with a
year); "last week" needs a reference time the query does not carry.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

__all__ = ["MARGIN_DAYS", "named_days"]

# A week either side of the named day or month.
MARGIN_DAYS = 7

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTH = "(" + "|".join(_MONTHS) + ")"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"
# Each: a pattern, and which groups hold (day, month, year); no day group means a whole month.
_FORMS = (
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE), (1, 2, 3)),
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE), (2, 1, 3)),
    (re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE), (None, 1, 2)),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), (3, 2, 1)),
)


def named_days(query: str) -> tuple[date, date] | None:
    """The first date or month ``query`` names, as ``(first day, last day)`` widened by
    ``MARGIN_DAYS``; ``None`` when it names none. An impossible day ("31 June 2023") is read as
    its month."""
    found = []
    for pattern, (day_group, month_group, year_group) in _FORMS:
        for match in pattern.finditer(query):
            month_text = match.group(month_group)
            month = int(month_text) if month_text.isdigit() else _MONTHS[month_text.lower()]
            year = int(match.group(year_group))
            try:
                if day_group is None:
                    first = date(year, month, 1)
                    last = date(year, month, calendar.monthrange(year, month)[1])
                else:
                    first = last = date(year, month, int(match.group(day_group)))
            except ValueError:
                continue
            found.append((match.start(), first, last))
    if not found:
        return None
    _, first, last = min(found, key=lambda item: item[0])
    margin = timedelta(days=MARGIN_DAYS)
    # Year 1 and year 9999 have no week beyond them.
    start = first - margin if first - date.min >= margin else date.min
    end = last + margin if date.max - last >= margin else date.max
    return start, end
