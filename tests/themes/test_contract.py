"""schemathesis over the saved-theme operations with a real client organization, so their 200s are checked.

The general contract run (tests/web/test_contract.py) has no client relationship to use, so there
these operations only ever answer 403 or 404.
"""

from __future__ import annotations

import json

import pytest

from kindling.platform.database import upgrade
from kindling.themes import generate_theme
from tests.helpers import call
from tests.helpers.contract import ROOT, SINGLE_OPERATION_PHASES, Api, accounts_file, failures, schemathesis

OPERATIONS = ("save_theme", "get_theme", "get_theme_css", "preview_theme")


def toml_value(value) -> str:
    """A TOML inline value of strings and tables (JSON's string escapes are TOML's)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(key)} = {toml_value(item)}" for key, item in value.items()) + " }"
    return json.dumps(value)


@pytest.mark.live
def test_theme_operations_honour_the_contract_for_a_client(fresh_database_url, live_server, tmp_path):
    upgrade(fresh_database_url)
    server = live_server(DATABASE_URL=fresh_database_url, RATE_LIMIT_MULTIPLIER="1000")
    api = Api(server.url)
    consultant = api.sign_up(email="consultant@fuzz.test", accountType="consultant")
    admin = api.sign_up(email="admin@fuzz.test", organizationName="Fuzzing Org")
    stranger = api.sign_up(email="stranger@fuzz.test", organizationName="Stranger Org")
    organization_id = call(server, "GET", "/api/auth/session", admin).json()["data"]["user"]["organizationId"]
    api.become_client(consultant, admin, organization_id)
    theme = generate_theme("#3366ff")
    call(server, "POST", "/api/theme/save", consultant, json={"organizationId": organization_id, "theme": theme})
    saved_at = call(server, "GET", f"/api/theme/{organization_id}", admin).json()["data"]["updatedAt"]

    # The project's configuration, with this organization and a valid theme in every request.
    fixed = {"path.organizationId": organization_id, "body.organizationId": organization_id, "body.theme": theme}
    config = tmp_path / "schemathesis.toml"
    fixed_lines = "".join(f"{json.dumps(key)} = {toml_value(value)}\n" for key, value in fixed.items())
    config.write_text(
        (ROOT / "schemathesis.toml").read_text().replace("[parameters]\n", "[parameters]\n" + fixed_lines, 1)
    )
    selection = [argument for name in OPERATIONS for argument in ("--include-operation-id", name)]
    accounts = accounts_file(tmp_path, consultant, stranger)
    run = schemathesis(server, accounts, SINGLE_OPERATION_PHASES, *selection, config=config)
    assert run.returncode == 0, failures(run)
    # Every operation got past access control to a saved theme, and saving succeeded.
    assert "Authentication failed" not in run.stdout and "Missing test data" not in run.stdout, run.stdout
    assert call(server, "GET", f"/api/theme/{organization_id}", admin).json()["data"]["updatedAt"] > saved_at
