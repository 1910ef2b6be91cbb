"""Curating fact candidates through the API: only a key that may curate approves, rejects or edits
them, and the audit history names the key (or the staff member) behind each change."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from memories.models import ApiKey, Knowledge, KnowledgeStatus
from memories.services.api_keys import api_key_create
from tests.factories import EndUserFactory, KnowledgeFactory

pytestmark = pytest.mark.django_db

RESULT = "{ __typename ... on Knowledge { id content status } ... on OperationInfo { messages { kind message } } }"
APPROVE = "mutation A($id: ID!, $userId: String!) { approveKnowledge(id: $id, userId: $userId) " + RESULT + " }"
REJECT = "mutation R($id: ID!, $userId: String!) { rejectKnowledge(id: $id, userId: $userId) " + RESULT + " }"
UPDATE = (
    "mutation U($id: ID!, $userId: String, $content: String!) "
    "{ updateKnowledge(id: $id, userId: $userId, content: $content) " + RESULT + " }"
)


@pytest.fixture
def candidate() -> Knowledge:
    return KnowledgeFactory(
        user=EndUserFactory(external_id="alice"), content="Alice lives in Osaka.", status=KnowledgeStatus.CANDIDATE
    )


def key(name: str, *, may_curate: bool, all_users: bool = False) -> tuple[ApiKey, str]:
    return api_key_create(
        name=name, user_external_ids=[] if all_users else ["alice"], all_users=all_users, may_curate=may_curate
    )


def refusal(body: dict, field: str) -> tuple[str, str]:
    """(kind, message) of a mutation's refusal: its OperationInfo's one message."""
    assert "errors" not in body, body
    result = body["data"][field]
    assert result["__typename"] == "OperationInfo", result
    [message] = result["messages"]
    return message["kind"], message["message"]


def knowledge(**fields: str) -> dict:
    return {"__typename": "Knowledge", **fields}


def state(knowledge: Knowledge) -> tuple[str, str, int]:
    knowledge.refresh_from_db()
    return knowledge.content, knowledge.status, knowledge.history.count()


@pytest.mark.parametrize("all_users", [False, True], ids=["alice-key", "all-users-key"])
@pytest.mark.parametrize(
    ("query", "field", "extra"),
    [
        (APPROVE, "approveKnowledge", {}),
        (REJECT, "rejectKnowledge", {}),
        (UPDATE, "updateKnowledge", {"content": "Alice lives in Kyoto."}),
    ],
    ids=["approve", "reject", "edit"],
)
def test_a_key_that_may_not_curate_is_forbidden_and_nothing_changes(gql, candidate, query, field, extra, all_users):
    _, raw = key("bot", may_curate=False, all_users=all_users)
    before = state(candidate)
    body = gql(query, {"id": str(candidate.pk), "userId": "alice", **extra}, key=raw)
    kind, message = refusal(body, field)
    assert kind == "PERMISSION"
    assert "may curate" in message
    assert state(candidate) == before


def test_a_document_mixing_curation_with_other_writes_refuses_the_curating_field_only(gql, candidate):
    _, raw = key("bot", may_curate=False)
    query = """
    mutation M($id: ID!) {
      addKnowledge(userId: "alice", content: "Alice likes tea.") { __typename }
      approveKnowledge(id: $id, userId: "alice") { __typename ... on OperationInfo { messages { kind message } } }
    }
    """
    body = gql(query, {"id": str(candidate.pk)}, key=raw)
    assert refusal(body, "approveKnowledge")[0] == "PERMISSION"
    assert body["data"]["addKnowledge"] == {"__typename": "Knowledge"}
    assert sorted(Knowledge.objects.values_list("content", "status")) == [
        ("Alice likes tea.", "active"),
        ("Alice lives in Osaka.", "candidate"),
    ]


def test_a_key_that_may_not_curate_still_edits_active_facts(gql):
    fact = KnowledgeFactory(user=EndUserFactory(external_id="alice"), content="Alice plays chess.")
    _, raw = key("bot", may_curate=False)
    body = gql(UPDATE, {"id": str(fact.pk), "userId": "alice", "content": "Alice plays go."}, key=raw)
    assert body == {"data": {"updateKnowledge": knowledge(id=str(fact.pk), content="Alice plays go.", status="ACTIVE")}}


def test_a_curating_key_approves_and_the_history_names_it(gql, candidate):
    api_key, raw = key("curator-bot", may_curate=True)
    body = gql(APPROVE, {"id": str(candidate.pk), "userId": "alice"}, key=raw)
    assert body == {
        "data": {"approveKnowledge": knowledge(id=str(candidate.pk), content="Alice lives in Osaka.", status="ACTIVE")}
    }
    latest = candidate.history.latest("history_date")
    assert (latest.status, latest.history_change_reason) == ("active", f"api key curator-bot (#{api_key.pk})")
    assert latest.history_user is None


def test_a_curating_key_rejects_and_the_history_names_it(gql, candidate):
    api_key, raw = key("curator-bot", may_curate=True)
    body = gql(REJECT, {"id": str(candidate.pk), "userId": "alice"}, key=raw)
    assert body["data"]["rejectKnowledge"]["status"] == "REJECTED"
    latest = candidate.history.latest("history_date")
    assert (latest.status, latest.history_change_reason) == ("rejected", f"api key curator-bot (#{api_key.pk})")


def test_a_curating_key_edits_a_candidate_which_stays_a_candidate(gql, candidate):
    api_key, raw = key("curator-bot", may_curate=True)
    body = gql(UPDATE, {"id": str(candidate.pk), "userId": "alice", "content": "Alice lives in Kyoto."}, key=raw)
    assert body == {
        "data": {
            "updateKnowledge": knowledge(id=str(candidate.pk), content="Alice lives in Kyoto.", status="CANDIDATE")
        }
    }
    history = list(candidate.history.order_by("history_date").values_list("content", "history_change_reason"))
    assert history[-1] == ("Alice lives in Kyoto.", f"api key curator-bot (#{api_key.pk})")


def test_approving_twice_or_another_users_candidate_is_refused(gql, candidate):
    _, raw = key("curator-bot", may_curate=True)
    gql(APPROVE, {"id": str(candidate.pk), "userId": "alice"}, key=raw)
    again = gql(APPROVE, {"id": str(candidate.pk), "userId": "alice"}, key=raw)
    reviewed = f"Knowledge {candidate.pk} is reviewed, not awaiting review."
    assert refusal(again, "approveKnowledge") == ("VALIDATION", reviewed)

    bobs = KnowledgeFactory(user=EndUserFactory(external_id="bob"), status=KnowledgeStatus.CANDIDATE)
    out_of_scope = gql(APPROVE, {"id": str(bobs.pk), "userId": "bob"}, key=raw)
    assert refusal(out_of_scope, "approveKnowledge") == ("PERMISSION", "This API key may not act on user 'bob'.")
    wrong_owner = gql(APPROVE, {"id": str(bobs.pk), "userId": "alice"}, key=raw)
    assert refusal(wrong_owner, "approveKnowledge") == ("ERROR", f"No knowledge of user 'alice' with id {bobs.pk}.")
    bobs.refresh_from_db()
    assert bobs.status == KnowledgeStatus.CANDIDATE


def test_staff_curating_in_the_admin_are_named_in_the_history(client, candidate):
    staff = User.objects.create_superuser("curator", "curator@example.com", "pw")
    client.force_login(staff)
    other = KnowledgeFactory(user=candidate.user, content="Alice owns a boat.", status=KnowledgeStatus.CANDIDATE)
    changelist = reverse("admin:memories_knowledge_changelist")
    for action, row in [("approve", candidate), ("reject", other)]:
        response = client.post(changelist, {"action": action, "_selected_action": [row.pk]})
        assert response.status_code == 302
        latest = row.history.latest("history_date")
        assert (latest.history_user, latest.history_change_reason) == (staff, None)
    assert [candidate.history.latest("history_date").status, other.history.latest("history_date").status] == [
        "active",
        "rejected",
    ]


def test_create_api_key_may_curate(db):
    stdout, stderr = StringIO(), StringIO()
    call_command("create_api_key", "curator-bot", "--user", "alice", "--may-curate", stdout=stdout, stderr=stderr)
    assert ApiKey.objects.get(name="curator-bot").may_curate is True
    assert "may curate" in stderr.getvalue()
    call_command("create_api_key", "plain-bot", "--all-users", stdout=StringIO(), stderr=StringIO())
    assert ApiKey.objects.get(name="plain-bot").may_curate is False


def test_staff_curating_through_graphiql_are_named_in_the_history(client, candidate):
    staff = User.objects.create_superuser("curator", "curator@example.com", "pw")
    client.force_login(staff)
    response = client.post(
        "/graphql/",
        data={"query": APPROVE, "variables": {"id": str(candidate.pk), "userId": "alice"}},
        content_type="application/json",
    )
    assert response.json()["data"]["approveKnowledge"]["status"] == "ACTIVE"
    latest = candidate.history.latest("history_date")
    assert (latest.history_user, latest.history_change_reason) == (staff, None)
