import pytest
pytestmark = pytest.mark.django_db
def test_add_and_search(add_messages, search):
    p = add_messages("u1", "s1", [{"role": "user", "content": "My favourite food is sushi."}])
    assert p["__typename"] == "AddMessagesResult", p
    r = search(userId="u1", query="What is my favorite food?", searchContent=True, includeRetrievedData=True)
    assert "sushi" in r["retrievedData"], r
