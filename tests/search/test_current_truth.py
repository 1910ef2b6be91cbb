"""What is true about the user now, through the path a bot uses (``addMessages { context }``, ``search``):
facts raised from one session reach the next with no staff action, the newer statement wins, and neither
the user's own questions nor the bot's acknowledgements come back as memories."""

from __future__ import annotations

import pytest

from memories.search.prompt import count_tokens
from tests.graphql.documents import CREATE_SUMMARIES

pytestmark = pytest.mark.django_db

TURN = """
mutation Turn($userId: String!, $sessionId: String!, $messages: [MessageInput!]!) {
  addMessages(userId: $userId, sessionId: $sessionId, messages: $messages) {
    ... on AddMessagesResult {
      context {
        prompt
        memories { kind content replacedAt reviewed turns { role content isHit } }
      }
    }
  }
}
"""
ASK = """
query Ask($input: SearchInput!) {
  search(input: $input) { ... on SearchResult { answer hits { kind content replacedAt turns { content isHit } } } }
}
"""
DAYS = [
    (
        "2024-06-01",
        [
            ("user", "Hi! I am allergic to shellfish, so no shrimp for me."),
            ("assistant", "Got it."),
            ("user", "Where should I go for dinner tonight?"),
            ("assistant", "Let me think about that."),
        ],
    ),
    (
        "2024-06-02",
        [
            ("user", "I work as a nurse at Saint Luke's and the shifts are brutal."),
            ("assistant", "Totally."),
            ("user", "My sister Aiko lives in Osaka."),
            ("assistant", "That's nice!"),
        ],
    ),
    (
        "2024-06-03",
        [
            ("user", "I quit the hospital. I work as a data analyst at Rakuten now."),
            ("assistant", "Of course."),
            ("user", "Where do I work again?"),
            ("assistant", "Let me think about that."),
        ],
    ),
]


@pytest.fixture
def three_days(gql):
    """A user's three days with a chatbot, sent as a bot sends them (one turn after another)."""

    def send(session: str, messages: list[dict]) -> dict:
        body = gql(TURN, {"userId": "mei", "sessionId": session, "messages": messages})
        assert "errors" not in body, body
        return body["data"]["addMessages"]["context"]

    for day, turns in DAYS:
        for minute, (role, content) in enumerate(turns):
            send(day, [{"role": role, "content": content, "createdAt": f"{day}T19:0{minute}:00+09:00"}])
    # Days pass: the idle sweep summarises the last session too, which raises its facts.
    assert "errors" not in gql(CREATE_SUMMARIES, {"userId": "mei"})
    return send


def _ask_on_day_four(three_days, query: str) -> dict:
    return three_days("2024-06-05", [{"role": "user", "content": query, "createdAt": "2024-06-05T12:00:00+09:00"}])


def _said(memory: dict) -> str:
    """The turn a message memory stands for (its own), or a fact's text."""
    return next((t["content"] for t in memory["turns"] if t["isHit"]), "") if memory["kind"] == "MESSAGE" else ""


def test_a_fact_told_in_one_session_is_in_the_next_sessions_context_with_no_staff_action(three_days):
    context = _ask_on_day_four(three_days, "Where do I work these days?")
    facts = [m for m in context["memories"] if m["kind"] == "KNOWLEDGE"]
    assert [(f["content"], f["reviewed"]) for f in facts][:1] == [
        ("The user works as a data analyst at Rakuten now.", False)
    ]
    assert "not reviewed" in context["prompt"]
    # It stands in for the turn it was raised from, which it quotes and which is not shown again beside it.
    assert [t["content"] for t in facts[0]["turns"]] == [
        "I quit the hospital. I work as a data analyst at Rakuten now."
    ]
    assert "Rakuten now." not in [_said(m) for m in context["memories"]]


def test_the_newer_statement_wins_and_the_replaced_one_never_comes_above_it(three_days, gql):
    context = _ask_on_day_four(three_days, "Where do I work these days?")
    prompt = context["prompt"].split("## Recent conversation")[0]
    assert "Rakuten" in prompt
    assert "nurse" not in prompt or prompt.index("Rakuten") < prompt.index("nurse")
    for memory in context["memories"]:
        if "nurse" in _said(memory):
            assert memory["replacedAt"].startswith("2024-06-03")  # shown as held until then
            assert "until 2024-06-03" in context["prompt"]
    answer = gql(ASK, {"input": {"userId": "mei", "query": "Where do I work these days?"}})["data"]["search"]["answer"]
    assert "Rakuten" in answer
    assert "nurse" not in answer.split("Rakuten")[0]


def test_first_and_second_person_requests_find_the_facts_that_answer_them(three_days):
    allergy = _ask_on_day_four(three_days, "What am I allergic to?")
    assert "shellfish" in allergy["prompt"].split("## Recent conversation")[0]
    dinner = three_days("2024-06-06", [{"role": "user", "content": "Any dinner idea for me?"}])
    assert any(m["content"].startswith("The user is allergic to shellfish") for m in dinner["memories"])


def test_questions_and_acknowledgements_are_not_memories_by_themselves(three_days, gql):
    context = _ask_on_day_four(three_days, "Where do I work?")
    said = [_said(m) for m in context["memories"] if m["kind"] == "MESSAGE"]
    assert "Where do I work again?" not in said
    assert not {"Of course.", "Let me think about that.", "Totally.", "Got it."} & set(said)
    hits = gql(ASK, {"input": {"userId": "mei", "query": "Where do I work again?"}})["data"]["search"]["hits"]
    own = [next(t["content"] for t in h["turns"] if t["isHit"]) for h in hits if h["kind"] == "MESSAGE"]
    assert "Where do I work again?" not in own
    assert "Let me think about that." not in own


def test_a_turn_shown_in_a_memory_is_not_repeated_by_its_sessions_summary(three_days):
    context = _ask_on_day_four(three_days, "Where does my sister live?")
    shown = [t["content"] for m in context["memories"] for t in m["turns"]]
    assert "My sister Aiko lives in Osaka." in shown
    for summary in (m["content"] for m in context["memories"] if m["kind"] == "SUMMARY"):
        assert "My sister Aiko lives in Osaka." not in summary


def test_a_default_search_stays_within_its_token_budget_however_long_the_turns(add_messages, search, settings):
    filler = " ".join(f"Step {i}: stir the pot slowly and keep the heat low for a while." for i in range(120))
    for day in range(1, 7):
        add_messages(
            "lee",
            f"d{day}",
            [
                {"role": "user", "content": f"Can you give me a long recipe for day {day}?"},
                {"role": "assistant", "content": f"{filler} The gym opens at 6 pm on weekdays. {filler}"},
            ],
        )
    result = search(userId="lee", query="When does the gym open?")
    assert result["hits"]
    assert sum(count_tokens([h["text"] for h in result["hits"]])) <= settings.SEARCH_MAX_TOKENS
    excerpts = [t for h in result["hits"] for t in h["turns"] if t["excerpt"]]
    assert excerpts  # the long answers are shown by the part that matches
    assert any("gym opens at 6 pm" in t["content"] for t in excerpts)


def test_a_request_that_tells_something_about_the_user_is_a_memory_of_its_own(gql):
    told = "I'm flying out to see my brother Taro in Sapporo next month, any packing tips for the snow?"
    for minute, (role, content) in enumerate(
        [("user", told), ("assistant", "Pack thermal layers, waterproof boots and a warm hat: Sapporo is cold.")]
    ):
        message = {"role": role, "content": content, "createdAt": f"2024-01-10T09:0{minute}:00+00:00"}
        assert "errors" not in gql(TURN, {"userId": "ken", "sessionId": "trip", "messages": [message]})
    asked = {"role": "user", "content": "Where does my brother live?", "createdAt": "2024-02-01T09:00:00+00:00"}
    context = gql(TURN, {"userId": "ken", "sessionId": "later", "messages": [asked]})["data"]["addMessages"]["context"]
    # The turn, or the fact raised from it, which quotes it.
    assert told in [t["content"] for m in context["memories"] for t in m["turns"]]


def _day_turn(gql, user: str):
    """``send(day, minute, content, role="user")``: one turn of ``user``'s session named for its day,
    sent as a bot sends it; returns the context it gets back."""

    def send(session: str, minute: int, content: str, role: str = "user") -> dict:
        message = {"role": role, "content": content, "createdAt": f"{session}T10:{minute:02d}:00+00:00"}
        body = gql(TURN, {"userId": user, "sessionId": session, "messages": [message]})
        assert "errors" not in body, body
        return body["data"]["addMessages"]["context"]

    return send


def _tell(gql, user: str, days: list[tuple[str, str, str]]):
    """Sends each ``(day, what the user says, the bot's reply)`` as one exchange of that day's session, then
    summarises as the idle sweep does; returns the ``send`` of ``_day_turn`` to ask with."""
    send = _day_turn(gql, user)
    for day, said, reply in days:
        send(day, 0, said)
        send(day, 1, reply, role="assistant")
    assert "errors" not in gql(CREATE_SUMMARIES, {"userId": user})
    return send


def test_a_later_turn_about_a_facts_topic_comes_above_the_fact(gql):
    """A fact holds what was said when it was raised; a turn said later about the same thing may have
    changed it, so a bot reads that turn first."""

    send = _day_turn(gql, "ines")

    send("2024-03-01", 0, "I have my knee surgery on March 10, the left knee.")
    send("2024-03-01", 1, "Good luck with it!", role="assistant")
    send("2024-03-04", 0, "Bad news, the hospital postponed my knee surgery. The surgeon is away.")
    send("2024-03-04", 1, "Oh no. Did they give you a new date?", role="assistant")
    send("2024-03-04", 2, "Yes, March 24 now.")
    assert "errors" not in gql(CREATE_SUMMARIES, {"userId": "ines"})

    context = send("2024-03-06", 0, "when is my knee surgery?")
    facts = [m["content"] for m in context["memories"] if m["kind"] == "KNOWLEDGE"]
    assert any("March 10" in fact for fact in facts), facts
    memories = context["prompt"].split("## Recent conversation")[0]
    assert "March 24" in memories, memories
    assert memories.index("March 24") < memories.index("March 10"), memories


def test_a_later_turn_saying_something_changed_comes_above_an_earlier_fact(gql):
    """A later turn that says something changed ("we moved"), found for the same question as a fact,
    may have replaced it even when it shares no word with it: the bot reads it first."""

    send = _tell(
        gql,
        "tomas",
        [
            ("2024-02-01", "I live in Leeds, in a terraced house near Roundhay Park.", "Sounds lovely!"),
            (
                "2024-03-10",
                "Big news: we moved! Our new flat is in York, two minutes from the station.",
                "Congratulations!",
            ),
        ],
    )

    context = send("2024-03-20", 0, "where do I live these days?")
    facts = [m["content"] for m in context["memories"] if m["kind"] == "KNOWLEDGE"]
    memories = context["prompt"].split("## Recent conversation")[0]
    assert "York" in memories, memories
    assert any("York" in fact for fact in facts), facts  # the change, read in new words, replaced the old home
    assert not any("Leeds" in fact for fact in facts), facts
    assert "Leeds" not in memories or memories.index("York") < memories.index("Leeds"), memories


def test_a_later_statement_telling_the_topic_asked_about_is_found_and_comes_above_the_fact(gql):
    """Asked "where do I work?", which shares no word with "My new employer is Ardent Foods, quality lead", the
    user's own statements that tell the topic asked about are searched for too; the later one comes first."""

    send = _tell(
        gql,
        "ruth",
        [
            ("2024-01-08", "I'm a pharmacist at Northgate Hospital, mostly night shifts.", "Night shifts are hard."),
            ("2024-02-20", "We finally got the keys to the flat by the river.", "Congratulations!"),
            ("2024-03-15", "My new employer is Ardent Foods, quality lead, so no more night shifts.", "Good for you!"),
        ],
    )

    context = send("2024-03-20", 0, "where do I work these days?")
    memories = context["prompt"].split("## Recent conversation")[0]
    assert "Ardent Foods" in memories, memories
    assert "Northgate" not in memories or memories.index("Ardent Foods") < memories.index("Northgate"), memories
    body = gql(ASK, {"input": {"userId": "ruth", "query": "where do I work these days?"}})
    assert "Ardent Foods" in body["data"]["search"]["answer"], body
    # A search of the facts alone finds no turn.
    facts_only = {"userId": "ruth", "query": "where do I work these days?", "sources": ["KNOWLEDGE"]}
    hits = gql(ASK, {"input": facts_only})["data"]["search"]["hits"]
    assert [h["kind"] for h in hits] == ["KNOWLEDGE"] * len(hits), hits
    assert any("Ardent Foods" in h["content"] for h in hits), hits  # the new job replaced the old one
    # The statement about the flat tells another topic: it is not brought in as telling this one.
    assert "keys to the flat" not in memories, memories


def test_a_request_for_advice_finds_what_the_user_said_that_bears_on_it(gql):
    """Asked for advice on a headache, the user's own word of a condition, said in passing and raised as
    no fact, bears on it and is a memory; what they said about an unrelated thing is not."""

    send = _tell(
        gql,
        "oskar",
        [
            ("2024-05-02", "migraine day. hiding in the bedroom with the blinds down.", "Oh no, rest your eyes."),
            ("2024-05-09", "We repainted the hallway a pale green over the weekend.", "Nice!"),
        ],
    )

    context = send("2024-05-20", 0, "my head is pounding, any advice?")
    memories = context["prompt"].split("## Recent conversation")[0]
    assert "migraine" in memories, memories
    assert "hallway" not in memories, memories


def test_a_request_in_the_imperative_is_not_a_memory_by_itself(gql):
    """A request such as "Suggest a dessert…" asks as "what dessert…?" does: only its reply is a memory."""
    _tell(
        gql,
        "alba",
        [("2024-04-02", "Suggest a dessert without nuts for my sister's party.", "A lemon posset, it needs no nuts.")],
    )
    hits = gql(ASK, {"input": {"userId": "alba", "query": "suggest a dessert without nuts"}})["data"]["search"]["hits"]
    own = [next(t["content"] for t in h["turns"] if t["isHit"]) for h in hits if h["kind"] == "MESSAGE"]
    assert own, hits
    assert "Suggest a dessert without nuts for my sister's party." not in own


def test_a_check_of_the_bots_memory_is_a_question_and_its_reply_the_memory(gql):
    """ "Do you remember which choir I sing in? My wife bet you don't." tests the bot: the reply that names
    the choir is the memory found, and the search answer quotes it, not the user's check."""
    _tell(
        gql,
        "oskar",
        [
            (
                "2024-04-02",
                "Do you remember which choir I sing in? My wife bet you don't.",
                "The Vasa Chamber Choir, second tenor since last autumn.",
            )
        ],
    )
    body = gql(ASK, {"input": {"userId": "oskar", "query": "which choir do I sing in?"}})
    hits = body["data"]["search"]["hits"]
    own = [next(t["content"] for t in h["turns"] if t["isHit"]) for h in hits if h["kind"] == "MESSAGE"]
    assert "The Vasa Chamber Choir, second tenor since last autumn." in own, hits
    assert "Do you remember which choir I sing in? My wife bet you don't." not in own, hits
    assert "Vasa Chamber Choir" in body["data"]["search"]["answer"], body


def test_a_new_job_told_in_passing_replaces_the_old_one_in_the_next_session(gql):
    """A new employer is often mentioned only in passing ("three weeks at Harwick Labs now"); the job it
    raises replaces the one said before, so a later session's context and answer give the new one."""

    send = _tell(
        gql,
        "tomasz",
        [
            ("2024-05-02", "I'm line cook at Bistro Marzanna, evenings and weekends.", "That's a tough schedule."),
            ("2024-06-30", "Three weeks at Harwick Labs now, I finally see daylight.", "That sounds like a relief."),
        ],
    )

    context = send("2024-07-04", 0, "what's my job these days?")
    facts = [m["content"] for m in context["memories"] if m["kind"] == "KNOWLEDGE"]
    assert any("Harwick Labs" in fact for fact in facts), facts
    memories = context["prompt"].split("## Recent conversation")[0]
    assert "Marzanna" not in memories or memories.index("Harwick") < memories.index("Marzanna"), memories
    body = gql(ASK, {"input": {"userId": "tomasz", "query": "what's my job these days?"}})
    assert "Harwick Labs" in body["data"]["search"]["answer"], body


def test_a_question_about_a_relatives_job_gets_theirs_not_the_users(gql):
    """ "What does my husband do for work?" asks about the husband: his job, told by pronoun after he was
    named ("My husband Idris ... He's a paramedic"), not the user's own."""

    send = _tell(
        gql,
        "selin",
        [
            ("2024-02-01", "I'm a nurse at Bayview Clinic, mostly on the children's ward.", "That's lovely work."),
            (
                "2024-02-09",
                "My husband Idris fixed the boiler again. He's a paramedic, nothing scares him.",
                "Handy to have around!",
            ),
        ],
    )

    context = send("2024-02-12", 0, "what does my husband do for work?")
    facts = [m["content"] for m in context["memories"] if m["kind"] == "KNOWLEDGE"]
    assert any("paramedic" in fact for fact in facts), facts
    assert not any("Bayview" in fact for fact in facts), facts
    # His name is still found, and a question about the user's own job still gets hers.
    context = send("2024-02-12", 2, "what's my husband's name?")
    assert "Idris" in context["prompt"].split("## Recent conversation")[0], context["prompt"]
    context = send("2024-02-12", 4, "where do I work these days?")
    facts = [m["content"] for m in context["memories"] if m["kind"] == "KNOWLEDGE"]
    assert any("Bayview" in fact for fact in facts), facts


def test_a_question_about_the_past_still_finds_the_replaced_turn_right_below_what_holds_now(three_days, gql):
    """A turn whose fact a later one replaced is evidence of the past ("where did I work as a nurse?"): it keeps
    its rank, with the fact that holds now moved right above it, instead of falling below everything else."""
    query = {"userId": "mei", "query": "Which hospital did I work at as a nurse?", "topK": 3}
    hits = gql(ASK, {"input": query})["data"]["search"]["hits"]
    said = [_said(h) or h["content"] for h in hits]
    nurse = next(i for i, text in enumerate(said) if "nurse at Saint Luke's" in text)
    assert hits[nurse]["replacedAt"].startswith("2024-06-03")
    assert nurse > 0
    assert "Rakuten" in said[nurse - 1]
