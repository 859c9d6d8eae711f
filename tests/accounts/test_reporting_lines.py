"""Reporting lines: from the directory or an admin, never looping; level 3 follows them (docs/decisions.md §6, §13)."""

from __future__ import annotations

from tests.helpers import assert_envelope
from tests.helpers.verification import decide, pending, post_act

MEMBERS = "/api/organization/members"


def _set_manager(client, admin, user, manager_id):
    return client.patch(f"{MEMBERS}/{user.user.id}", headers=admin.headers, json={"managerId": manager_id})


def test_an_admin_sets_and_clears_a_line_and_the_members_list_shows_it(client, make):
    admin = make.admin()
    boss, ada = make.manager(admin), make.member(admin)
    response = _set_manager(client, admin, ada, boss.user.id)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["managerId"] == boss.user.id
    listed = {person["id"]: person for person in client.get(MEMBERS, headers=admin.headers).json()["data"]}
    assert listed[ada.user.id]["managerId"] == boss.user.id
    assert (
        listed[ada.user.id]["groups"] == []
        and listed[ada.user.id]["department"] is None
        and listed[ada.user.id]["employeeNumber"] is None
    )
    assert _set_manager(client, admin, ada, None).json()["data"]["managerId"] is None


def test_a_line_never_loops_nor_leaves_the_organization(client, make):
    admin, stranger = make.admin(), make.admin()
    top, middle, bottom = make.manager(admin), make.manager(admin), make.member(admin)
    assert _set_manager(client, admin, middle, top.user.id).status_code == 200
    assert _set_manager(client, admin, bottom, middle.user.id).status_code == 200
    assert_envelope(_set_manager(client, admin, top, bottom.user.id), 400, "reporting_line_loop")
    assert_envelope(_set_manager(client, admin, top, top.user.id), 400, "reporting_line_loop")
    assert_envelope(_set_manager(client, admin, top, stranger.user.id), 400, "invalid_manager")
    assert_envelope(_set_manager(client, admin, top, "00000000-0000-4000-8000-000000000000"), 400, "invalid_manager")


def test_level_three_follows_the_line_and_records_its_authority(client, make):
    admin = make.admin()
    grand, line, outsider = make.manager(admin), make.manager(admin), make.manager(admin)
    sender = make.member(admin)
    _set_manager(client, admin, line, grand.user.id)
    _set_manager(client, admin, sender, line.user.id)
    acts = [post_act(client, sender, level=3)["id"] for _ in range(4)]
    assert_envelope(decide(client, outsider, acts[0], 3, "approve"), 403, "not_in_reporting_line")
    by_line = decide(client, line, acts[0], 3, "approve")
    assert by_line.status_code == 201 and by_line.json()["data"]["authority"] == "line_manager"
    assert decide(client, grand, acts[1], 3, "approve").json()["data"]["authority"] == "line_manager"
    assert decide(client, admin, acts[2], 3, "reject").json()["data"]["authority"] == "admin"
    events = client.get("/api/evidence", headers=admin.headers, params={"type": "verification.decided"}).json()["data"]
    assert [event["data"]["authority"] for event in events] == ["line_manager", "line_manager", "admin"]
    # Without a manager on record, any manager decides, as before.
    _set_manager(client, admin, sender, None)
    assert decide(client, outsider, acts[3], 3, "approve").json()["data"]["authority"] == "manager"


def test_a_managers_pending_list_shows_their_reports_first(client, make):
    admin = make.admin()
    boss, other_boss = make.manager(admin), make.manager(admin)
    report, unmanaged, elsewhere = make.member(admin), make.member(admin), make.member(admin)
    _set_manager(client, admin, report, boss.user.id)
    _set_manager(client, admin, elsewhere, other_boss.user.id)
    mine = post_act(client, report, level=3)["id"]
    loose = post_act(client, unmanaged, level=3)["id"]
    theirs = post_act(client, elsewhere, level=3)["id"]
    later_mine = post_act(client, report, level=3)["id"]
    assert pending(client, boss) == [later_mine, mine, loose]
    assert pending(client, admin)[:0] == [] and set(pending(client, admin)) == {mine, loose, theirs, later_mine}
    first = client.get("/api/verifications/pending", headers=boss.headers, params={"limit": 2}).json()
    assert [act["id"] for act in first["data"]] == [later_mine, mine]
    rest = client.get(
        "/api/verifications/pending", headers=boss.headers, params={"limit": 2, "cursor": first["nextCursor"]}
    ).json()
    assert [act["id"] for act in rest["data"]] == [loose] and rest["nextCursor"] is None
