"""The README and docs/ stay true: every GraphQL example validates against the schema, every
relative link points at a file that exists, and the README's chatbot turn works as shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from graphql import build_schema, parse, validate

from memories.graphql.schema import schema
from memories.services.embeddings import embeddings_fill
from tests.graphql.documents import CREATE_SUMMARIES

SCHEMA = build_schema(str(schema))
ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = [
    (doc, example) for doc in DOCS for example in re.findall(r"```graphql\n(.*?)```", doc.read_text(), flags=re.DOTALL)
]
LINKS = [(doc, target) for doc in DOCS for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text())]


def _blocks(doc: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", doc.read_text(), flags=re.DOTALL)


def test_docs_have_graphql_examples():
    assert len(EXAMPLES) >= 15  # the parametrised test below must not pass vacuously
    assert {doc.name for doc, _ in EXAMPLES} >= {"README.md", "api.md"}


@pytest.mark.parametrize(("doc", "example"), EXAMPLES, ids=[f"{doc.name}-{i}" for i, (doc, _) in enumerate(EXAMPLES)])
def test_graphql_example_is_valid(doc, example):
    # A block may hold several operations; each must validate on its own.
    for operation in re.split(r"\n(?=mutation |\{|query )", example.strip()):
        errors = validate(SCHEMA, parse(operation))
        assert not errors, f"{doc.name}:\n{operation}\n{errors}"


@pytest.mark.parametrize(("doc", "target"), LINKS, ids=[f"{doc.name}->{target}" for doc, target in LINKS])
def test_relative_link_exists(doc, target):
    assert (doc.parent / target).exists(), f"{doc.name} links to {target}, which does not exist"


def test_readme_chatbot_turn_works_as_shown(gql):
    """The README's first example (a turn with its context) after its earlier session, its reply, and
    the search after them, with the README's variables; the worker's embedding and idle sweep run in between."""
    readme = ROOT / "README.md"
    turn, reply, ask = _blocks(readme, "graphql")[:3]
    variables, earlier, shown = (json.loads(block) for block in _blocks(readme, "json")[:3])
    assert "errors" not in gql(reply, earlier)
    embeddings_fill(kind="message")
    # Weeks later the idle sweep has summarised it, which raised its facts.
    assert "errors" not in gql(CREATE_SUMMARIES, {"userId": variables["userId"]})

    context = gql(turn, variables)["data"]["addMessages"]["context"]

    assert [t["content"] for t in context["window"]] == [variables["messages"][0]["content"]]
    assert [m["content"] for m in context["memories"]] == [
        m["content"] for m in shown["data"]["addMessages"]["context"]["memories"]
    ]
    assert "okonomiyaki" in context["prompt"]
    stored = gql(reply, {**variables, "messages": [{"role": "assistant", "content": "A vegetable stir-fry?"}]})
    assert stored["data"]["addMessages"]["skipped"] == 0
    embeddings_fill(kind="message")
    answer = gql(ask, {"input": {"userId": variables["userId"], "query": "What am I allergic to?", "topK": 3}})
    assert "allergic to peanuts" in answer["data"]["search"]["answer"]


def test_readme_change_in_new_words_replaces_the_old_value_as_shown(gql):
    """README's "When something changes": a job told in other words later replaces the earlier one."""
    readme = ROOT / "README.md"
    _turn, reply, ask = _blocks(readme, "graphql")[:3]
    before, after, shown = (json.loads(block) for block in _blocks(readme, "json")[3:6])
    for session in (before, after):
        assert "errors" not in gql(reply, session)
    embeddings_fill(kind="message")
    answer = gql(ask, {"input": {"userId": before["userId"], "query": "Where do I work?"}})["data"]["search"]
    assert answer["answer"] == shown["answer"]
    facts = gql('{ knowledge(userId: "user-7", status: SUPERSEDED) { results { content } } }')["data"]["knowledge"]
    assert [f["content"] for f in facts["results"]] == ["The user works as a nurse at Saint Mary's, mostly nights."]


def test_configuration_documents_every_environment_variable():
    """docs/configuration.md has a row for each variable the service reads, and no other."""
    sources = [*(ROOT / "memoryproject").glob("*.py"), *(ROOT / "memories").rglob("*.py")]
    read = {
        name
        for source in sources
        for name in re.findall(r"(?:env\.\w+|_number|os\.environ\.get)\(\s*\"([A-Z][A-Z0-9_]*)\"", source.read_text())
    }
    rows = re.findall(r"^\| (`.+?`) \|", (ROOT / "docs/configuration.md").read_text(), flags=re.MULTILINE)
    documented = {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row)}
    assert {"DATABASE_URL", "WEB_CONCURRENCY"} <= read  # the scan finds what it should
    assert read - documented == set(), "read by the service but not documented"
    assert documented - read == set(), "documented but not read by the service"


def test_api_doc_has_an_example_of_every_operation():
    api = ROOT / "docs/api.md"
    examples = "\n".join(_blocks(api, "graphql"))
    operations = [*SCHEMA.query_type.fields, *SCHEMA.mutation_type.fields]
    missing = [name for name in operations if not re.search(rf"\b{name}\(", examples)]
    assert operations
    assert missing == [], "docs/api.md has no GraphQL example of these"
