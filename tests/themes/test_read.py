"""GET /api/theme/{organizationId}, its /css and its /preview: who may read a saved theme (docs/decisions.md §3, §5)."""

from __future__ import annotations

import datetime as dt
import html
import re
import uuid

import pytest

from kindling.consulting import clients
from kindling.themes import CONTENT_SECURITY_POLICY, TOKEN_NAMES, generate_theme, to_hex
from tests.helpers import assert_envelope

READERS = ["", "/css", "/preview"]


def path(organization_id: str, reader: str = "") -> str:
    return f"/api/theme/{organization_id}{reader}"


@pytest.fixture
def tenants(make, db):
    """An organization with a saved theme, and every kind of caller around it."""
    admin, consultant = make.admin(), make.consultant()
    make.client(consultant, admin)
    theme = generate_theme("#3366ff", accent="#f59e0b")
    make.saved_theme(consultant, admin, theme)
    ended = make.consultant()
    make.client(ended, admin)
    clients.end_relationship(
        db, consultant_id=ended.user.id, organization_id=admin.organization_id, ended_by="consultant"
    )
    invited = make.consultant()
    make.invitation(invited, admin)
    other_admin = make.admin()
    # Another organization's consultant, whose own client has a theme too.
    other_consultant = make.consultant()
    make.client(other_consultant, other_admin)
    make.saved_theme(other_consultant, other_admin)
    return {
        "organization_id": admin.organization_id,
        "theme": theme,
        "readers": {"admin": admin, "member": make.member(admin), "consultant": consultant},
        "strangers": {
            "other admin": other_admin,
            "other member": make.member(other_admin),
            "non-client consultant": make.consultant(),
            "ended consultant": ended,
            "invited consultant": invited,
            "other organization's consultant": other_consultant,
        },
    }


@pytest.mark.parametrize("reader", READERS)
def test_members_and_active_consultants_may_read(client, tenants, reader):
    for who, account in tenants["readers"].items():
        response = client.get(path(tenants["organization_id"], reader), headers=account.headers)
        assert response.status_code == 200, (who, response.text)


@pytest.mark.parametrize("reader", READERS)
def test_anyone_else_gets_the_404_of_a_missing_organization(client, tenants, reader):
    missing = assert_envelope(
        client.get(path(str(uuid.uuid4()), reader), headers=tenants["readers"]["consultant"].headers), 404, "not_found"
    )
    for who, account in tenants["strangers"].items():
        response = client.get(path(tenants["organization_id"], reader), headers=account.headers)
        assert assert_envelope(response, 404, "not_found") == missing, who


@pytest.mark.parametrize("reader", READERS)
def test_no_session_is_401(client, tenants, reader):
    assert_envelope(client.get(path(tenants["organization_id"], reader)), 401, "unauthenticated")


@pytest.mark.parametrize("reader", READERS)
def test_no_saved_theme_is_404(client, make, db, reader):
    admin, consultant = make.admin(), make.consultant()
    make.client(consultant, admin)
    for account in (admin, make.member(admin), consultant):
        body = assert_envelope(
            client.get(path(admin.organization_id, reader), headers=account.headers), 404, "not_found"
        )
        assert body["error"] == "This organization has no saved theme yet"


@pytest.mark.parametrize("reader", READERS)
def test_a_malformed_id_is_400(client, make, reader):
    assert_envelope(
        client.get(path("not%20an%20id", reader), headers=make.consultant().headers), 400, "validation_error"
    )


def test_theme_body(client, tenants):
    before = dt.datetime.now(dt.UTC)
    response = client.get(path(tenants["organization_id"]), headers=tenants["readers"]["member"].headers)
    assert response.headers["content-type"] == "application/json"
    data = response.json()["data"]
    assert set(data) == {"organizationId", "theme", "updatedAt"}
    assert data["organizationId"] == tenants["organization_id"]
    assert data["theme"] == tenants["theme"]
    assert abs(dt.datetime.fromisoformat(data["updatedAt"]) - before) < dt.timedelta(minutes=1)


def known_theme() -> dict:
    """A theme whose every value differs, so that order and mode show in the CSS."""
    return {
        mode: {name: f"{offset + i / 100:g} 0.{i:02d} {i * 10}" for i, name in enumerate(TOKEN_NAMES)}
        for mode, offset in (("light", 0.5), ("dark", 0.1))
    }


def test_css_for_a_known_theme(client, make, db):
    admin, consultant = make.admin(), make.consultant()
    make.client(consultant, admin)
    make.saved_theme(consultant, admin, known_theme())
    response = client.get(path(admin.organization_id, "/css"), headers=admin.headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/css; charset=utf-8"
    lines = response.text.split("\n")
    assert lines[:3] == [":root {", "  --background: oklch(0.5 0.00 0);", "  --foreground: oklch(0.51 0.01 10);"]
    assert lines[31:36] == [
        "  --sidebar-ring: oklch(0.8 0.30 300);",
        "}",
        ".dark {",
        "  --background: oklch(0.1 0.00 0);",
        "  --foreground: oklch(0.11 0.01 10);",
    ]
    assert lines[1:32] == [
        f"  --{name}: oklch({0.5 + i / 100:g} 0.{i:02d} {i * 10});" for i, name in enumerate(TOKEN_NAMES)
    ]
    assert lines[34:65] == [
        f"  --{name}: oklch({0.1 + i / 100:g} 0.{i:02d} {i * 10});" for i, name in enumerate(TOKEN_NAMES)
    ]
    assert lines[65:] == ["}", ""]


def test_preview_shows_every_token_of_both_modes(client, tenants):
    response = client.get(path(tenants["organization_id"], "/preview"), headers=tenants["readers"]["admin"].headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    page = response.text
    sections = {mode: page[page.index(f'id="{mode}"') :] for mode in ("light", "dark")}
    sections["light"] = sections["light"][: sections["light"].index('id="dark"')]
    for mode, section in sections.items():
        for name in TOKEN_NAMES:
            value = tenants["theme"][mode][name]
            assert f'<code class="name">--{name}</code><code class="value">{value} · {to_hex(value)}</code>' in section
            assert f"--{name}: oklch({value});" in page
        assert f'id="{mode}-primary-button"' in section
    for sample in (
        "button primary",
        "button secondary",
        "button destructive",
        "button outline",
        'class="card"',
        'class="sidebar"',
        *(f"bar chart-{n}" for n in range(1, 6)),
    ):
        assert sample in page
    # Nothing is loaded from anywhere: no scripts, links or URLs.
    assert not re.search(r"<script|<link|<img|src=|href=|url\(|@import", page, re.IGNORECASE)


def test_preview_escapes_the_organization_name(client, make, db):
    name = '<script>alert("x")</script> & <b>Co</b>'
    admin, consultant = make.admin(organization_name=name), make.consultant()
    make.client(consultant, admin)
    make.saved_theme(consultant, admin)
    page = client.get(path(admin.organization_id, "/preview"), headers=admin.headers).text
    assert html.escape(name) in page
    assert "<script" not in page and "<b>" not in page


@pytest.mark.parametrize("fixed", ["save", "generate", "check"])
def test_fixed_theme_paths_are_not_taken_for_an_organization_id(client, make, fixed):
    response = client.put(f"/api/theme/{fixed}", headers=make.consultant().headers)
    assert_envelope(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "POST"
