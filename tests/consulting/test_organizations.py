"""Organization search for consultants (docs/decisions.md §4)."""

from __future__ import annotations

from kindling.accounts.service import create_organization


def search(client, account, q):
    return client.get("/api/organizations/search", params={"q": q}, headers=account.headers)


def test_matches_name_or_slug_case_insensitively(client, make, db):
    consultant = make.consultant()
    acme = create_organization(db, name="ACME Care")
    northwind = create_organization(db, name="Northwind Traders")
    create_organization(db, name="Unrelated")
    response = search(client, consultant, "acme")
    assert response.status_code == 200
    assert response.json() == {
        "organizations": [{"id": acme.id, "name": "ACME Care", "slug": "acme-care"}],
        "query": "acme",
    }
    # "d-t" is only in the slug northwind-traders.
    assert [o["id"] for o in search(client, consultant, "D-T").json()["organizations"]] == [northwind.id]


def test_query_is_trimmed_and_echoed(client, make, db):
    consultant = make.consultant()
    create_organization(db, name="Brightside")
    body = search(client, consultant, "  bright ").json()
    assert body["query"] == "bright"
    assert [o["name"] for o in body["organizations"]] == ["Brightside"]


def test_at_most_twenty_ordered_by_name(client, make, db):
    consultant = make.consultant()
    names = [f"Zeta Group {n:02d}" for n in range(25, 0, -1)]
    for name in names:
        create_organization(db, name=name)
    found = search(client, consultant, "zeta group").json()["organizations"]
    assert [o["name"] for o in found] == sorted(names)[:20]


def test_like_wildcards_match_literally(client, make, db):
    consultant = make.consultant()
    percent = create_organization(db, name="100% Kind")
    underscore = create_organization(db, name="Kind_Works")
    create_organization(db, name="Kindly Works")
    assert [o["id"] for o in search(client, consultant, "0%").json()["organizations"]] == [percent.id]
    assert search(client, consultant, "%%").json()["organizations"] == []
    assert [o["id"] for o in search(client, consultant, "d_w").json()["organizations"]] == [underscore.id]


def test_short_queries_are_refused(client, make):
    consultant = make.consultant()
    for q in ("a", "  a  ", "   ", ""):
        response = search(client, consultant, q)
        assert response.status_code == 400, q
        assert response.json()["code"] == "validation_error"
    missing = client.get("/api/organizations/search", headers=consultant.headers)
    assert missing.status_code == 400
