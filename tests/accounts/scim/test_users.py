"""SCIM Users: list with filters and 1-based paging, create, read, PUT, DELETE, the enterprise extension."""

from __future__ import annotations

from sqlalchemy import select

from kindling.accounts.models import User
from kindling.kindness.models import KindnessAct
from tests.helpers.scim import ENTERPRISE, USER, ok, scim_error, user


def _create(client, scim, name, **attributes):
    return ok(client.post("/scim/v2/Users", headers=scim, json=user(name, **attributes)), 201)


def test_create_read_and_replace_with_the_enterprise_extension(client, make, db):
    admin = make.admin()
    scim = make.scim_token(admin)
    boss = _create(client, scim, "boss@example.test")
    payload = user(
        "ada@example.test",
        name={"givenName": "Ada", "familyName": "Lovelace", "formatted": "Ada Lovelace"},
        displayName="Ada L.",
        title="Engineer",
        externalId="00u1",
        emails=[{"value": "Ada@Example.test", "type": "work", "primary": True}],
        password="never-returned-1",
        **{ENTERPRISE: {"employeeNumber": "701984", "department": "Tour Operations", "manager": {"value": boss["id"]}}},
    )
    payload["schemas"] = [USER, ENTERPRISE]
    response = client.post("/scim/v2/Users", headers=scim, json=payload)
    created = ok(response, 201)
    assert response.headers["location"] == created["meta"]["location"]
    assert "password" not in created and created["active"] is True
    manager = {"value": boss["id"], "$ref": f"http://testserver/scim/v2/Users/{boss['id']}"}
    assert created[ENTERPRISE] == {"employeeNumber": "701984", "department": "Tour Operations", "manager": manager}
    named = ok(
        client.get(
            f"/scim/v2/Users/{created['id']}", headers=scim, params={"attributes": f"{ENTERPRISE}:manager.displayName"}
        )
    )
    assert named[ENTERPRISE]["manager"] == {"displayName": "boss@example.test"}
    assert created["emails"] == [{"value": "Ada@Example.test", "type": "work", "primary": True}]
    person = db.get(User, created["id"])
    assert (person.email, person.name, person.role, person.manager_id) == (
        "ada@example.test",
        "Ada L.",
        "member",
        boss["id"],
    )
    assert (person.department, person.employee_number, person.organization_id) == (
        "Tour Operations",
        "701984",
        admin.organization_id,
    )
    assert ok(client.get(f"/scim/v2/Users/{created['id']}", headers=scim)) == created
    replaced = ok(
        client.put(
            f"/scim/v2/Users/{created['id']}",
            headers=scim,
            json=user("ada@example.test", displayName="Ada", active=True),
        )
    )
    assert replaced["displayName"] == "Ada" and "title" not in replaced and ENTERPRISE not in replaced
    db.expire_all()
    assert db.get(User, created["id"]).manager_id is None


def test_paging_is_one_based_and_stable_with_integer_counters(client, make):
    scim = make.scim_token(make.admin())
    ids = [_create(client, scim, f"p{n}@example.test")["id"] for n in range(5)]
    first = ok(client.get("/scim/v2/Users", headers=scim, params={"startIndex": 1, "count": 2}))
    assert (first["totalResults"], first["startIndex"], first["itemsPerPage"]) == (5, 1, 2)
    pages = [
        ok(client.get("/scim/v2/Users", headers=scim, params={"startIndex": start, "count": 2})) for start in (1, 3, 5)
    ]
    assert [r["id"] for page in pages for r in page["Resources"]] == ids
    assert pages[2]["itemsPerPage"] == 1
    past = ok(client.get("/scim/v2/Users", headers=scim, params={"startIndex": 9, "count": 2}))
    assert past["totalResults"] == 5 and past["itemsPerPage"] == 0 and not past.get("Resources")
    counted = ok(client.get("/scim/v2/Users", headers=scim, params={"count": 0}))
    assert counted["totalResults"] == 5 and counted["itemsPerPage"] == 0
    capped = ok(client.get("/scim/v2/Users", headers=scim, params={"count": 1000, "startIndex": 0}))
    assert capped["startIndex"] == 1 and capped["itemsPerPage"] == 5


def test_filters_translate_to_queries(client, make):
    scim = make.scim_token(make.admin())
    ada = _create(
        client,
        scim,
        "ada@example.test",
        externalId="e-1",
        title="Engineer",
        emails=[{"value": "ada.work@example.test", "type": "work"}],
    )
    bob = _create(
        client, scim, "bob@example.test", externalId="e-2", title="Driver", **{ENTERPRISE: {"department": "Fleet"}}
    )

    def ids(text):
        return [
            r["id"]
            for r in ok(client.get("/scim/v2/Users", headers=scim, params={"filter": text})).get("Resources", [])
        ]

    assert ids('externalId eq "e-2"') == [bob["id"]]
    assert ids('externalId eq "E-2"') == []
    assert ids('title sw "eng"') == [ada["id"]]
    assert ids('userName co "example" and not (title eq "Driver")') == [ada["id"]]
    assert ids('title eq "Driver" or externalId eq "e-1"') == [ada["id"], bob["id"]]
    assert ids('emails[type eq "work"].value eq "ADA.WORK@example.test"') == [ada["id"]]
    assert ids('emails[type eq "work" and value co "work"]') == [ada["id"]]
    assert ids(f'{ENTERPRISE}:department eq "fleet"') == [bob["id"]]
    assert ids("title pr") == [ada["id"], bob["id"]]
    assert ids("active eq true") == [ada["id"], bob["id"]]
    assert ids('meta.created gt "2000-01-01T00:00:00Z"') == [ada["id"], bob["id"]]
    assert ids('userName eq "ada@example.test%"') == []


def test_an_invalid_or_unsupported_filter_is_invalid_filter_never_everything(client, make):
    scim = make.scim_token(make.admin())
    _create(client, scim, "ada@example.test")
    for text in (
        "userName eq",
        'nickName eq "x"',
        'addresses[type eq "work"].country eq "x"',
        "userName gt 3",
        'active eq "maybe"',
        "externalId eq jyoung",
        'emails[display eq "x"]',
        "x" * 2001,
    ):
        scim_error(client.get("/scim/v2/Users", headers=scim, params={"filter": text}), 400, "invalidFilter")


def test_attributes_and_excluded_attributes(client, make):
    scim = make.scim_token(make.admin())
    ada = _create(client, scim, "ada@example.test", title="Engineer", displayName="Ada")
    only = ok(client.get(f"/scim/v2/Users/{ada['id']}", headers=scim, params={"attributes": "userName"}))
    assert set(only) == {"schemas", "id", "userName"}
    without = ok(client.get("/scim/v2/Users", headers=scim, params={"excludedAttributes": "title,displayName"}))[
        "Resources"
    ][0]
    assert "title" not in without and "displayName" not in without and without["userName"] == "ada@example.test"
    scim_error(
        client.get("/scim/v2/Users", headers=scim, params={"attributes": "userName", "excludedAttributes": "title"}),
        400,
        "invalidValue",
    )


def test_uniqueness_409_on_user_name_without_case_and_on_email(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    _create(client, scim, "Ada@Example.test")
    scim_error(client.post("/scim/v2/Users", headers=scim, json=user("ada@example.TEST")), 409, "uniqueness")
    outsider = make.admin()
    scim_error(
        client.post("/scim/v2/Users", headers=scim, json=user("someone", emails=[{"value": outsider.user.email}])),
        409,
        "uniqueness",
    )


def test_an_existing_member_is_adopted_by_email(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    scim = make.scim_token(admin)
    adopted = _create(client, scim, member.user.email.upper())
    assert adopted["id"] == member.user.id
    assert db.scalars(select(User).where(User.organization_id == admin.organization_id)).all().__len__() == 2


def test_delete_deactivates_and_detaches_and_the_records_stay(client, make, db):
    admin = make.admin()
    scim = make.scim_token(admin)
    member = make.member(admin)
    make.act(member, recipient=admin)
    assert client.get("/api/auth/session", headers=member.headers).status_code == 200
    linked = _create(client, scim, member.user.email)
    assert client.delete(f"/scim/v2/Users/{linked['id']}", headers=scim).status_code == 204
    scim_error(client.get(f"/scim/v2/Users/{linked['id']}", headers=scim), 404)
    assert ok(client.get("/scim/v2/Users", headers=scim))["totalResults"] == 0
    assert client.get("/api/auth/session", headers=member.headers).status_code == 401
    db.expire_all()
    assert db.get(User, member.user.id).active is False
    assert db.scalars(select(KindnessAct).where(KindnessAct.user_id == member.user.id)).first() is not None
    scim_error(client.delete(f"/scim/v2/Users/{linked['id']}", headers=scim), 404)
