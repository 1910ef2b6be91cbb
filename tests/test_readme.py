"""README.md stays true: every GraphQL example in it is valid against the schema."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from graphql import parse, validate

from memories.graphql.schema import schema

README = Path(__file__).resolve().parent.parent / "README.md"
EXAMPLES = re.findall(r"```graphql\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_has_graphql_examples():
    assert len(EXAMPLES) >= 5  # the parametrised test below must not pass vacuously


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_readme_example_is_valid(example):
    # A block may hold several operations; each must validate on its own.
    for operation in re.split(r"\n(?=mutation |\{|query )", example.strip()):
        errors = validate(schema._schema, parse(operation))
        assert not errors, f"{operation}\n{errors}"
