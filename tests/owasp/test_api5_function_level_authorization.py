"""API5 Broken Function Level Authorization: each operation answers 403 to every kind of caller
it is not for (401 without a session), with a request it would otherwise accept."""

from __future__ import annotations

import pytest

from tests.helpers import assert_envelope, spec
from tests.owasp.operations import ACCESS, request_kwargs, url_for

KINDS = ("anonymous", "member", "manager", "admin", "consultant")
REFUSED = sorted((key, kind) for key, access in ACCESS.items() for kind in KINDS if kind not in access.callers)


def test_every_operation_says_who_may_call_it():
    assert set(ACCESS) == set(spec.operations()), "list each new operation in tests/owasp/operations.py ACCESS"


@pytest.fixture
def callers(make):
    admin = make.admin()
    return {
        "anonymous": None,
        "admin": admin,
        "manager": make.manager(admin),
        "member": make.member(admin),
        "consultant": make.consultant(),
    }


@pytest.mark.parametrize(("key", "kind"), REFUSED, ids=[f"{kind} {m} {p}" for (m, p), kind in REFUSED])
def test_callers_it_is_not_for_are_refused(client, callers, key, kind):
    method, path = key
    caller = callers[kind]
    headers = caller.headers if caller is not None else {}
    response = client.request(method, url_for(path), headers=headers, **request_kwargs(key))
    if kind == "anonymous":
        assert_envelope(response, 401, "unauthenticated")
    else:
        assert_envelope(response, 403, "forbidden")


@pytest.mark.parametrize("key", sorted(ACCESS), ids=[f"{m} {p}" for m, p in sorted(ACCESS)])
def test_callers_it_is_for_get_past_authorization(client, callers, key):
    method, path = key
    for kind in sorted(ACCESS[key].callers - {"anonymous"}):
        if path == "/api/auth/sign-out":
            continue  # it would end the session the other cases use; test_api2 signs out
        if path == "/api/theme/save":
            continue  # a made-up organization is no client of anyone's: 403 is the rule; test_theme_save saves
        response = client.request(method, url_for(path), headers=callers[kind].headers, **request_kwargs(key))
        assert response.status_code not in (401, 403), (kind, response.text)


def test_organization_wide_wellbeing_is_for_admins_only(client, callers):
    for kind in ("member", "consultant"):
        response = client.get("/api/wellbeing?scope=organization", headers=callers[kind].headers)
        assert_envelope(response, 403, "forbidden")
    assert client.get("/api/wellbeing?scope=organization", headers=callers["admin"].headers).status_code == 200


def test_members_cannot_change_others_acts_and_only_admins_verify(client, make):
    admin = make.admin()
    sender, colleague = make.member(admin), make.member(admin)
    act = client.post(
        "/api/kindness", json=request_kwargs(("POST", "/api/kindness"))["json"], headers=sender.headers
    ).json()["data"]
    assert_envelope(
        client.put(f"/api/kindness/{act['id']}", json={"description": "Mine now"}, headers=colleague.headers),
        403,
        "forbidden",
    )
    assert (
        client.get(f"/api/kindness/{act['id']}", headers=sender.headers).json()["data"]["description"]
        == act["description"]
    )
