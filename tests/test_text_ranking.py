"""Stage 2's rankings: BM25 over the messages' full-text vectors (which of a user's turns a
question's words bring up first), and its fusion with the vector ranking."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memories.models import EndUser, Message, Session
from memories.search import SearchedUsers, candidate_pool, rank_messages_by_text, retrieve_messages

pytestmark = pytest.mark.django_db


def _ranked(user: str, query: str, top_k: int = 10) -> list[str]:
    user_pk = EndUser.objects.get(external_id=user).pk
    ids = rank_messages_by_text(users=SearchedUsers(pks=(user_pk,)), query=query, top_k=top_k)
    content = dict(Message.objects.filter(pk__in=ids).values_list("pk", "content"))
    return [content[i] for i in ids]


def test_a_rare_word_outweighs_words_every_turn_holds(add_messages):
    # Every turn is Caroline's and most say "like" twice: only "pottery" tells the turns apart.
    caroline = {"speaker": "Caroline"}
    chatter = [
        {"role": "user", "content": f"I like day {i}, I really like it.", "metadata": caroline} for i in range(10)
    ]
    add_messages("alice", "s1", chatter)
    add_messages("alice", "s2", [{"role": "user", "content": "Pottery class on Tuesday.", "metadata": caroline}])
    assert _ranked("alice", "What does Caroline like about pottery?")[0] == "Pottery class on Tuesday."


def test_repeating_one_word_does_not_beat_holding_two_of_the_query(add_messages):
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "Pottery, pottery, pottery, pottery and more pottery!"},
            {"role": "user", "content": "My pottery class starts at nine."},
            *({"role": "user", "content": f"Something else entirely, number {i}."} for i in range(8)),
        ],
    )
    assert _ranked("alice", "When does the pottery class start?")[:2] == [
        "My pottery class starts at nine.",
        "Pottery, pottery, pottery, pottery and more pottery!",
    ]


def test_word_weights_come_from_the_searched_users_messages_alone(add_messages):
    # For bob, "guitar" is in every turn and "lesson" in one: the lesson turn leads for him,
    # whatever alice's many "lesson" turns would make of the word.
    add_messages("alice", "s1", [{"role": "user", "content": f"Lesson {i} today."} for i in range(20)])
    add_messages(
        "bob",
        "s1",
        [
            {"role": "user", "content": "Guitar guitar guitar all weekend."},
            {"role": "user", "content": "Guitar lesson on Friday."},
            {"role": "user", "content": "Guitar strings are new."},
        ],
    )
    ranked = _ranked("bob", "my guitar lesson")
    assert ranked[0] == "Guitar lesson on Friday."
    assert set(ranked) == {"Guitar guitar guitar all weekend.", "Guitar lesson on Friday.", "Guitar strings are new."}


def test_stop_words_alone_and_no_words_rank_nothing(add_messages):
    add_messages("alice", "s1", [{"role": "user", "content": "What was it that I did there?"}])
    assert _ranked("alice", "what was it that I did") == []
    assert _ranked("alice", "?!") == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Who is O'Brien?", "O'Brien fixed the boat."),
        ("a well-known bakery", "That well-known bakery closed."),
        ("the page at example.com/menu?x=1&y=2", "The menu is at example.com/menu?x=1&y=2 now."),
        ("back\\slash and 'quotes' & ampersands | pipes", "A back\\slash, 'quotes' & ampersands | pipes."),
    ],
)
def test_words_with_quotes_hyphens_urls_and_operators_find_their_turn(add_messages, query, expected):
    # Lexemes with quotes, hyphens, URLs and tsquery's operator characters must neither break
    # the statement nor be missed.
    turns = ["O'Brien fixed the boat.", "That well-known bakery closed."]
    turns += ["The menu is at example.com/menu?x=1&y=2 now."]
    turns += ["A back\\slash, 'quotes' & ampersands | pipes.", "Nothing to see here."]
    add_messages("alice", "s1", [{"role": "user", "content": content} for content in turns])
    assert _ranked("alice", query)[0] == expected


def test_the_ranking_is_cut_at_the_candidate_pool(add_messages):
    add_messages("alice", "s1", [{"role": "user", "content": f"Sushi night number {i}."} for i in range(60)])
    assert len(_ranked("alice", "sushi", top_k=1)) == candidate_pool(1) < 60


def _reference_fusion(user_pk: int, query: str, vector: np.ndarray, top_k: int) -> list[int]:
    """Stage 2's ranking as documented in ``retrieve_messages``, computed in Python."""
    from memories import search

    rows = list(Message.objects.filter(user_id=user_pk).order_by("session_id", "created_at", "id"))
    pool = candidate_pool(top_k)
    cosine = {m.pk: float(np.dot(m.embedding, vector)) for m in rows}
    by_vector = sorted(cosine, key=lambda pk: (-cosine[pk], pk))[:pool]
    by_text = rank_messages_by_text(users=SearchedUsers(pks=(user_pk,)), query=query, top_k=top_k)
    fused: dict[int, float] = {}
    for weight, ranking in ((1.0, by_vector), (search._TEXT_WEIGHT, by_text)):
        for rank, pk in enumerate(ranking, start=1):
            fused[pk] = fused.get(pk, 0.0) + weight / (search._RRF_K + rank)
    session_of = {m.pk: m.session_id for m in rows}
    neighbours: dict[int, list[int]] = {m.pk: [] for m in rows}
    for before, after in zip(rows, rows[1:], strict=False):
        if before.session_id == after.session_id:
            neighbours[before.pk].append(after.pk)
            neighbours[after.pk].append(before.pk)
    session_best: dict[int, float] = {}
    for pk, score in fused.items():
        session_best[session_of[pk]] = max(score, session_best.get(session_of[pk], 0.0))
    score = {
        pk: s
        + search._NEIGHBOUR_WEIGHT * sum(fused.get(n, 0.0) for n in neighbours[pk])
        + search._SESSION_WEIGHT * session_best[session_of[pk]]
        for pk, s in fused.items()
    }
    return sorted(score, key=lambda pk: -score[pk])[:top_k]


def test_stage_two_fuses_as_documented(settings):
    """Weighted RRF of the vector and BM25 rankings, plus neighbours' and the session's best scores."""
    rng = np.random.default_rng(11)
    user = EndUser.objects.create(external_id="alice")
    topics = ["pottery class", "guitar lesson", "sushi dinner", "hiking trip", "chess club"]
    start = datetime(2024, 1, 1, tzinfo=UTC)
    rows = []
    for s in range(6):
        session = Session.objects.create(user=user, external_id=f"s{s}")
        for t in range(12):
            vector = rng.standard_normal(settings.EMBEDDING_DIMENSIONS)
            words = " and ".join(rng.choice(topics, size=2, replace=False))
            rows.append(
                Message(
                    user=user,
                    session=session,
                    role="user",
                    content=f"Talked about {words}.",
                    created_at=start + timedelta(days=s, minutes=t),
                    embedding=vector / np.linalg.norm(vector),
                    embedding_model=settings.EMBEDDING_MODEL,
                )
            )
    Message.objects.bulk_create(rows)
    for seed in range(5):
        query_vector = np.random.default_rng(seed).standard_normal(settings.EMBEDDING_DIMENSIONS)
        query_vector /= np.linalg.norm(query_vector)
        query = "When was the pottery class after the hiking trip?"
        users = SearchedUsers(pks=(user.pk,))
        hits = retrieve_messages(users=users, query=query, vector=query_vector.tolist(), top_k=10)
        assert [h.id for h in hits] == _reference_fusion(user.pk, query, query_vector, 10)


def test_users_named_by_external_id_are_searched_as_by_primary_key(add_messages):
    """search_memories names the users by external id, and each statement looks them up itself."""
    add_messages("alice", "s1", [{"role": "user", "content": f"Alice's pottery note {i}."} for i in range(3)])
    add_messages("bob", "s1", [{"role": "user", "content": f"Bob's pottery note {i}."} for i in range(2)])
    pks = dict(EndUser.objects.values_list("external_id", "pk"))

    def ranked(users: SearchedUsers) -> list[int]:
        return rank_messages_by_text(users=users, query="pottery notes", top_k=10)

    alice = ranked(SearchedUsers(external_ids=("alice",)))
    assert alice == ranked(SearchedUsers(pks=(pks["alice"],)))
    assert set(Message.objects.filter(pk__in=alice).values_list("user__external_id", flat=True)) == {"alice"}
    both = ranked(SearchedUsers(external_ids=("alice", "bob")))
    assert both == ranked(SearchedUsers(pks=(pks["alice"], pks["bob"])))
    assert len(both) == 5
    # A repeated name is one user; an unknown one matches nothing, alone or beside a known one.
    assert ranked(SearchedUsers(external_ids=("alice", "alice"))) == alice
    assert ranked(SearchedUsers(external_ids=("nobody",))) == []
    assert ranked(SearchedUsers(external_ids=("nobody", "alice"))) == alice
    with pytest.raises(ValueError, match="not both"):
        SearchedUsers(pks=(pks["alice"],), external_ids=("alice",))
