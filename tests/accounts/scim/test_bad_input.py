"""Bad input gets a clean SCIM 4xx and changes nothing; each organization has 1,200 requests a minute."""

from __future__ import annotations

import pytest

from kindling.platform.ratelimit import RULES
from tests.helpers.scim import ENTERPRISE, USER, ok, patch, scim_error, user


@pytest.fixture
def scim(make):
    return make.scim_token(make.admin())


def test_malformed_json_is_invalid_syntax(client, scim):
    scim_error(client.post("/scim/v2/Users", headers=scim, content=b'{"userName": '), 400, "invalidSyntax")
    scim_error(client.post("/scim/v2/Users", headers=scim, content=b"[1, 2]"), 400, "invalidSyntax")


def test_unknown_schemas_and_wrong_types_are_invalid_values(client, scim):
    scim_error(
        client.post(
            "/scim/v2/Users",
            headers=scim,
            json={"schemas": [USER, "urn:example:params:scim:schemas:extension:bonusly:1.0:User"], "userName": "a"},
        ),
        400,
        "invalidValue",
    )
    scim_error(
        client.post("/scim/v2/Users", headers=scim, json={"schemas": ["urn:example:Other"], "userName": "a"}),
        400,
        "invalidValue",
    )
    scim_error(
        client.post("/scim/v2/Users", headers=scim, json={"schemas": [USER], "userName": 5}), 400, "invalidValue"
    )
    scim_error(
        client.post("/scim/v2/Users", headers=scim, json={"schemas": [USER], "userName": "a", "active": "perhaps"}),
        400,
        "invalidValue",
    )
    scim_error(client.post("/scim/v2/Users", headers=scim, json={"schemas": [USER]}), 400, "invalidValue")
    scim_error(
        client.post(
            "/scim/v2/Users",
            headers=scim,
            json={"schemas": [USER], "userName": "a", "active": True, ENTERPRISE: {"manager": {"value": "nobody"}}},
        ),
        400,
        "invalidValue",
    )
    scim_error(
        client.post("/scim/v2/Groups", headers=scim, json={"displayName": "g", "members": [{"value": "nobody"}]}),
        400,
        "invalidValue",
    )


def test_oversized_bodies_and_filters_are_refused(client, scim):
    scim_error(client.post("/scim/v2/Users", headers=scim, json=user("a", displayName="x" * 70_000)), 413)
    response = client.get("/scim/v2/Users", headers=scim, params={"filter": 'userName eq "' + "x" * 10_000 + '"'})
    scim_error(response, 414)
    scim_error(
        client.get("/scim/v2/Users", headers=scim, params={"filter": 'userName eq "' + "x" * 3_000 + '"'}),
        400,
        "invalidFilter",
    )


def test_a_patch_with_one_bad_operation_changes_nothing(client, scim):
    created = ok(
        client.post("/scim/v2/Users", headers=scim, json=user("ada@example.test", displayName="Ada", title="Engineer")),
        201,
    )
    for bad in (
        {"op": "replace", "path": "userName", "value": 5},
        {"op": "frobnicate", "path": "title", "value": "x"},
        {"op": "replace", "path": "emails[type eq]", "value": "x"},
        {"op": "replace", "path": f"{ENTERPRISE}:manager", "value": {"value": "nobody"}},
    ):
        body = patch(
            {"op": "replace", "path": "displayName", "value": "Changed"},
            {"op": "replace", "path": "active", "value": False},
            bad,
        )
        response = client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json=body)
        assert response.status_code == 400, response.text
        assert response.json()["scimType"] in ("invalidValue", "invalidPath", "invalidSyntax", "noTarget")
        unchanged = ok(client.get(f"/scim/v2/Users/{created['id']}", headers=scim))
        assert unchanged["displayName"] == "Ada" and unchanged["active"] is True
    scim_error(
        client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json={"schemas": [], "Operations": []}),
        400,
        "invalidValue",
    )


def test_each_organization_has_its_own_limit_with_retry_after(client, make, runtime, rate_window):
    admin = make.admin()
    scim, other = make.scim_token(admin), make.scim_token(make.admin())
    limit, _ = RULES["scim"]
    assert limit == 1200
    # The first 1,199 are counted straight in the limiter: over HTTP they would outlast the window.
    for _ in range(limit - 1):
        runtime.limiter.hit("scim", admin.organization_id)
    response = client.get("/scim/v2/ServiceProviderConfig", headers=scim)
    assert response.status_code == 200 and response.headers["x-ratelimit-remaining"] == "0"
    refused = scim_error(client.get("/scim/v2/Users", headers=scim), 429)
    assert refused["detail"] and int(client.get("/scim/v2/Users", headers=scim).headers["retry-after"]) >= 1
    ok(client.get("/scim/v2/Users", headers=other))


@pytest.mark.parametrize(
    "attributes",
    [
        {"userName": "u" * 256},
        {"externalId": "x" * 256},
        {"displayName": "d" * 256},
        {"title": "t" * 256},
        {"name": {"givenName": "g" * 256}},
        {"name": {"familyName": "f" * 256}},
        {ENTERPRISE: {"department": "d" * 256}},
        {ENTERPRISE: {"employeeNumber": "1" * 256}},
    ],
    ids=["userName", "externalId", "displayName", "title", "givenName", "familyName", "department", "employeeNumber"],
)
def test_a_value_longer_than_kindling_keeps_is_refused_not_cut(client, scim, attributes):
    scim_error(client.post("/scim/v2/Users", headers=scim, json=user("kept", **attributes)), 400, "invalidValue")
    created = ok(client.post("/scim/v2/Users", headers=scim, json=user("kept")), 201)
    scim_error(
        client.put(f"/scim/v2/Users/{created['id']}", headers=scim, json=user("kept", **attributes)),
        400,
        "invalidValue",
    )
    assert ok(client.get(f"/scim/v2/Users/{created['id']}", headers=scim), 200)["userName"] == "kept"


def test_a_group_name_longer_than_kindling_keeps_is_refused(client, scim):
    scim_error(client.post("/scim/v2/Groups", headers=scim, json={"displayName": "g" * 256}), 400, "invalidValue")
    scim_error(
        client.post("/scim/v2/Groups", headers=scim, json={"displayName": "g", "externalId": "e" * 256}),
        400,
        "invalidValue",
    )


def test_an_attribute_kept_only_in_the_resource_as_sent_has_no_column_limit(client, scim):
    created = ok(client.post("/scim/v2/Users", headers=scim, json=user("long", name={"formatted": "f" * 6000})), 201)
    assert created["name"]["formatted"] == "f" * 6000
