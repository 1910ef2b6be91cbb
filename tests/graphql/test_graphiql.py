"""GraphiQL works with no internet access: its page and scripts are served by the service."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db


def test_graphiql_page_loads_everything_from_the_service(client):
    page = client.get("/graphql/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200
    html = page.content.decode()
    assert "unpkg.com" not in html
    assets = re.findall(r'(?:src|href)="(/static/graphiql/[^"]+)"', html)
    assert len(assets) == 7
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert b"".join(response.streaming_content if response.streaming else [response.content])
