"""API9 Improper Inventory Management: the server serves exactly the operations of the spec
(plus the spec itself and its viewer), and nothing left over from development."""

from __future__ import annotations

import re

import pytest

from tests.helpers import assert_envelope, spec

DOCS = ("/api/openapi.json", "/api/openapi.yaml", "/api/ui/")


def served_operations(app) -> set[tuple[str, str]]:
    served = set()
    for rule in app.app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        served |= {(method, path) for method in rule.methods - {"HEAD", "OPTIONS"}}
    return served


def test_every_served_operation_is_in_the_spec_and_back(app, client):
    client.get("/api/health")  # Connexion builds its routes on the first request
    declared = {
        (method.upper(), path)
        for path, item in spec.document()["paths"].items()
        for method in item
        if method in spec.METHODS
    }
    assert served_operations(app) == declared


def test_flasks_static_route_serves_nothing(client):
    for path in ("/static/app.py", "/static/../kindling/config.py", "/static/"):
        assert_envelope(client.get(path), 404, "not_found")


def test_every_path_lives_under_api_webhooks_scim_or_integrations_but_the_attest_page():
    # The page an attester opens from Kindling's mail is a page, not an API operation (docs/decisions.md §6).
    # What Slack sends lives under /integrations/slack/ (docs/decisions.md §17).
    prefixes = ("/api/", "/webhooks/", "/scim/v2/", "/integrations/slack/")
    outside = [path for path in spec.document()["paths"] if not path.startswith(prefixes)]
    assert outside == ["/attest"]


@pytest.mark.parametrize("path", DOCS)
def test_the_spec_and_its_viewer_are_served(client, path):
    assert client.get(path).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/debug",
        "/api/debug",
        "/admin",
        "/api/admin",
        "/console",
        "/api/v0/health",
        "/api/v1/health",
        "/v1/api/health",
        "/.env",
        "/.git/config",
        "/metrics",
        "/api/metrics",
        "/server-status",
        "/openapi.json",
        "/api/swagger.json",
        "/api/health/../../.env",
    ],
)
def test_leftovers_are_not_there(client, path):
    assert_envelope(client.get(path), 404, "not_found")
