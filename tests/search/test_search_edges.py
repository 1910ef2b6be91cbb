"""``search`` at its edges: a small ``topK``, the offline answer over several users and in the caller's zone."""

from __future__ import annotations

import pytest

from tests.graphql.documents import UPSERT_DIARY, msg

pytestmark = pytest.mark.django_db


def test_an_answer_from_several_users_names_the_user_of_each_quote(add_messages, search):
    add_messages("alice", "s1", [msg("I am allergic to peanuts.", "2024-05-01T10:00:00Z")])
    add_messages("bob", "s1", [msg("I adopted a dog named Rex.", "2024-05-01T11:00:00Z")])
    result = search(userIds=["alice", "bob"], query="Who is allergic to peanuts?")
    quote = "On 1 May 2024 user said: \u201cI am allergic to peanuts.\u201d"
    assert result["answer"].splitlines()[0] == f"[user alice] {quote}"
    one = search(userId="alice", query="Who is allergic to peanuts?")
    assert one["answer"] == quote


@pytest.mark.parametrize(("utc_offset_hours", "day"), [(-5, "1 May 2024"), (0, "2 May 2024"), (9, "2 May 2024")])
def test_the_answer_names_the_day_in_the_callers_time_zone(utc_offset_hours, day, add_messages, search):
    # 03:30 UTC on 2 May is 22:30 on 1 May at UTC-5.
    add_messages("alice", "s1", [msg("I ran my first marathon in Boston.", "2024-05-02T03:30:00Z")])
    result = search(userId="alice", query="Where did I run my first marathon?", utcOffsetHours=utc_offset_hours)
    assert result["answer"] == f"On {day} user said: \u201cI ran my first marathon in Boston.\u201d"
    assert result["hits"][0]["conversationTime"] == "2024-05-02T03:30:00+00:00"


def test_a_diary_is_answered_with_its_own_date_in_any_time_zone(gql, search):
    gql(UPSERT_DIARY, {"userId": "alice", "diaryDate": "2024-05-01", "content": "Ran my first marathon in Boston."})
    result = search(userId="alice", query="Where did I run my first marathon?", utcOffsetHours=-5)
    assert result["answer"] == "Diary, 1 May 2024: Ran my first marathon in Boston."


def test_a_turn_at_the_first_instant_there_is_is_answered_west_of_utc(add_messages, search):
    add_messages("alice", "s1", [msg("I ran my first marathon in Boston.", "0001-01-01T00:00:00Z")])
    result = search(userId="alice", query="Where did I run my first marathon?", utcOffsetHours=-5)
    assert result["found"] is True
    assert result["answer"].startswith("On 1 January ")  # the UTC day: the day before has no year


def test_the_place_kept_for_another_session_never_goes_to_an_irrelevant_turn(add_messages, search):
    add_messages(
        "alice",
        "a",
        [
            msg("My dog is called Rex.", "2024-05-01T10:00:00Z"),
            msg("Nice name!", "2024-05-01T10:01:00Z", role="assistant"),
            msg("Rex is a black labrador dog.", "2024-05-01T10:02:00Z"),
        ],
    )
    # Shares only the word "called" with the question.
    add_messages("alice", "b", [msg("The tax office called about my called-off appointment.", "2024-06-01T10:00:00Z")])
    result = search(userId="alice", query="What is my dog called?", topK=2, sources=["MESSAGE"])
    assert [h["content"] for h in result["hits"]] == ["My dog is called Rex.", "Rex is a black labrador dog."]
    assert len(result["answer"].splitlines()) == 2


@pytest.mark.parametrize(
    ("own", "found"),
    [
        ({}, True),
        ({"since": "2023-01-01", "until": "2023-12-31"}, True),
        ({"channel": "web"}, True),
        ({"until": "2023-06-03", "utcOffsetHours": -12}, True),
        ({"since": "2023-06-04"}, False),  # the named day is outside the caller's window
        ({"channel": "slack"}, False),
    ],
)
def test_a_day_the_question_names_is_searched_within_the_callers_own_window_and_channel(
    own, found, add_messages, search
):
    add_messages("alice", "march", [msg("I went to a concert with my friends.", "2023-03-01T10:00:00Z")])
    add_messages("alice", "june", [msg("We had a picnic by the lake.", "2023-06-03T10:00:00Z")])  # channel web
    add_messages("alice", "sept", [msg("I went to a concert on my own.", "2023-09-01T10:00:00Z")])
    result = search(userId="alice", query="What did I do on 3 June 2023?", topK=1, sources=["MESSAGE"], **own)
    hits = [(h["content"], h["foundBy"]) for h in result["hits"]]
    assert hits == ([("We had a picnic by the lake.", ["time #1"])] if found else [])


@pytest.mark.parametrize(
    ("input_fields", "field"),
    [({"query": "Where \ud800 do I work?"}, "query"), ({"channel": "web\udc00"}, "channel")],
    ids=["query", "channel"],
)
def test_a_lone_surrogate_is_refused_naming_its_field(input_fields, field, search):
    result = search(**{"userId": "alice", "query": "Where do I work?", **input_fields})
    message = f"{field} must not contain a lone surrogate (U+D800-U+DFFF)."
    assert result == {
        "__typename": "OperationInfo",
        "messages": [{"kind": "VALIDATION", "field": field, "message": message}],
    }
