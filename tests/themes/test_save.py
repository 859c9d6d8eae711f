"""POST /api/theme/save: an upsert per organization, by its consultants only (docs/decisions.md §3, §5)."""

from __future__ import annotations

import copy
import datetime as dt
import uuid

import pytest
from sqlalchemy import func, select

from kindling.branding import service as themes
from kindling.branding.models import OrganizationTheme
from kindling.consulting import clients
from kindling.themes import TOKEN_NAMES, generate_theme
from tests.helpers import assert_envelope

SAVE = "/api/theme/save"


@pytest.fixture(scope="module")
def other_theme():
    return generate_theme("#16a34a")


def stored(db, organization_id: str) -> list[OrganizationTheme]:
    db.expire_all()
    return list(db.scalars(select(OrganizationTheme).where(OrganizationTheme.organization_id == organization_id)))


def test_save_then_save_again_keeps_one_theme(client, make, db, theme, other_theme):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    body = {"organizationId": admin.organization_id, "theme": theme}
    response = client.post(SAVE, json=body, headers=consultant.headers)
    assert response.status_code == 200, response.text
    assert response.json() == {"success": True, "message": "Theme saved", "organizationId": admin.organization_id}
    (first,) = stored(db, admin.organization_id)
    assert first.as_theme() == theme and first.updated_by == consultant.user.id
    first_saved_at = first.updated_at
    assert dt.datetime.now(dt.UTC) - first_saved_at < dt.timedelta(minutes=1)

    # A second consultant of the same organization replaces it.
    colleague = make.consultant()
    make.client(colleague, admin)
    response = client.post(SAVE, json={**body, "theme": other_theme}, headers=colleague.headers)
    assert response.status_code == 200, response.text
    (second,) = stored(db, admin.organization_id)
    assert second.as_theme() == other_theme
    assert second.updated_by == colleague.user.id and second.updated_at > first_saved_at
    assert (
        db.scalar(
            select(func.count())
            .select_from(OrganizationTheme)
            .where(OrganizationTheme.organization_id == admin.organization_id)
        )
        == 1
    )


def test_tokens_are_stored_in_the_documented_order(client, make, db, theme):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    shuffled = {mode: dict(reversed(list(tokens.items()))) for mode, tokens in theme.items()}
    assert (
        client.post(
            SAVE, json={"organizationId": admin.organization_id, "theme": shuffled}, headers=consultant.headers
        ).status_code
        == 200
    )
    (saved,) = stored(db, admin.organization_id)
    assert list(saved.light) == list(TOKEN_NAMES) and list(saved.dark) == list(TOKEN_NAMES)


def broken(theme: dict) -> tuple[dict, dict]:
    """A theme with offenders of every kind, and the fields the 400 names, in order."""
    bad = copy.deepcopy(theme)
    del bad["light"]["ring"]
    bad["light"]["brand"] = "0.5 0.1 100"
    bad["dark"]["primary"] = "oklch(0.5 0.1 100)"
    bad["dark"]["chart-1"] = "1.2 0 0"
    bad["dark"]["muted"] = "0.5 0.1 100\n"
    return bad, [
        "theme.light.ring",
        "theme.light.brand",
        "theme.dark.primary",
        "theme.dark.muted",
        "theme.dark.chart-1",
    ]


def test_invalid_theme_is_400_naming_the_offenders_and_changes_nothing(client, make, db, theme, other_theme):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    make.saved_theme(consultant, admin, theme)
    before = stored(db, admin.organization_id)[0].updated_at
    bad, fields = broken(other_theme)
    response = client.post(
        SAVE, json={"organizationId": admin.organization_id, "theme": bad}, headers=consultant.headers
    )
    body = assert_envelope(response, 400, "validation_error")
    assert [error["field"] for error in body["details"]["errors"]] == fields
    (unchanged,) = stored(db, admin.organization_id)
    assert unchanged.as_theme() == theme and unchanged.updated_at == before


def test_invalid_first_theme_stores_nothing(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    response = client.post(
        SAVE,
        json={"organizationId": admin.organization_id, "theme": {"light": {}, "dark": {}}},
        headers=consultant.headers,
    )
    body = assert_envelope(response, 400, "validation_error")
    assert body["details"]["errors"][0] == {
        "location": "body",
        "field": "theme.light.background",
        "message": "is required: a theme has the same 31 colour names in light and dark",
    }
    assert stored(db, admin.organization_id) == []


@pytest.mark.parametrize(
    "body",
    [
        {"theme": {"light": {}, "dark": {}}},
        {"organizationId": "x"},
        {"organizationId": "not an id", "theme": {"light": {}, "dark": {}}},
        {"organizationId": "x", "theme": {"light": {}}},
        {"organizationId": "x", "theme": {"light": {"primary": 1}, "dark": {}}},
        {"organizationId": "x", "theme": {"light": {}, "dark": {}}, "extra": True},
    ],
)
def test_malformed_body_is_400(client, make, body):
    assert_envelope(client.post(SAVE, json=body, headers=make.consultant().headers), 400, "validation_error")


def test_a_consultant_without_an_active_relationship_is_refused(client, make, db, theme):
    stranger, ended, invited, admin = make.consultant(), make.consultant(), make.consultant(), make.admin()
    make.client(ended, admin)
    clients.end_relationship(
        db, consultant_id=ended.user.id, organization_id=admin.organization_id, ended_by="consultant"
    )
    make.invitation(invited, admin)
    body = {"organizationId": admin.organization_id, "theme": theme}
    for consultant in (stranger, ended, invited):
        assert_envelope(client.post(SAVE, json=body, headers=consultant.headers), 403, "forbidden")
    assert stored(db, admin.organization_id) == []


def test_an_unknown_organization_is_refused_like_another_consultants_client(client, make, db, theme):
    consultant = make.consultant()
    unknown = client.post(SAVE, json={"organizationId": str(uuid.uuid4()), "theme": theme}, headers=consultant.headers)
    not_mine = client.post(
        SAVE, json={"organizationId": make.admin().organization_id, "theme": theme}, headers=consultant.headers
    )
    assert assert_envelope(unknown, 403, "forbidden") == assert_envelope(not_mine, 403, "forbidden")


def test_the_relationship_is_checked_before_the_theme(client, make):
    bad = {"organizationId": make.admin().organization_id, "theme": {"light": {}, "dark": {}}}
    body = assert_envelope(client.post(SAVE, json=bad, headers=make.consultant().headers), 403, "forbidden")
    assert "details" not in body


def test_members_may_not_save_even_their_own_theme(client, make, db, theme):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    body = {"organizationId": admin.organization_id, "theme": theme}
    for account in (admin, make.member(admin)):
        assert_envelope(client.post(SAVE, json=body, headers=account.headers), 403, "forbidden")
    assert_envelope(client.post(SAVE, json=body), 401, "unauthenticated")
    assert stored(db, admin.organization_id) == []


def test_save_theme_service_upserts(db, make, theme, other_theme):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    first = themes.save_theme(db, consultant_id=consultant.user.id, organization_id=admin.organization_id, theme=theme)
    second = themes.save_theme(
        db, consultant_id=consultant.user.id, organization_id=admin.organization_id, theme=other_theme
    )
    assert second is first and second.as_theme() == other_theme


def test_a_first_save_that_loses_a_race_replaces_the_winners_theme(db, make, theme, other_theme, monkeypatch):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    make.saved_theme(consultant, admin, theme)
    db.expunge_all()
    # As if the other request's theme arrived just after this one looked and found none.
    real_get, misses = db.get, []

    def get_missing_once(entity, ident, **kwargs):
        if entity is OrganizationTheme and not misses:
            misses.append(ident)
            return None
        return real_get(entity, ident, **kwargs)

    monkeypatch.setattr(db, "get", get_missing_once)
    saved = themes.save_theme(
        db, consultant_id=consultant.user.id, organization_id=admin.organization_id, theme=other_theme
    )
    assert misses == [admin.organization_id]
    assert saved.as_theme() == other_theme
    monkeypatch.undo()
    (only,) = stored(db, admin.organization_id)
    assert only.as_theme() == other_theme
