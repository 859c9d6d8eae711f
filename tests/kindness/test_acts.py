"""Recording, reading, changing and listing kindness acts over HTTP (docs/decisions.md §6)."""

from __future__ import annotations

import base64
import datetime as dt

import pytest
from sqlalchemy import event, func, select

from kindling.kindness import acts as kindness
from kindling.kindness.models import KindnessAct, KindnessRecipientTally, KindnessTally
from kindling.platform import database

ACT_FIELDS = {
    "id",
    "description",
    "category",
    "verificationLevel",
    "verifiedLevel",
    "verification",
    "recipientId",
    "userId",
    "organizationId",
    "media",
    "createdAt",
    "updatedAt",
    "rippleScore",
    "source",
}
IMAGE = {"type": "image", "url": "https://cdn.example.test/thanks.png"}
T0 = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
OMIT = object()


def valid_body(**fields) -> dict:
    return {
        "description": "Walked a new colleague through the build",
        "category": "peer_recognition",
        "verificationLevel": 2,
        "recipientId": "outsider-1",
        **fields,
    }


def stored(db) -> tuple:
    """Everything the kindness endpoints can change, to show a refused request changed nothing."""
    acts = db.execute(select(KindnessAct.__table__)).all()
    tallies = db.execute(select(KindnessTally.__table__)).all()
    recipients = db.execute(select(KindnessRecipientTally.__table__)).all()
    return sorted(map(tuple, acts)), sorted(map(tuple, tallies)), sorted(map(tuple, recipients))


def test_create_takes_sender_and_organization_from_the_session(client, make):
    admin = make.admin()
    member = make.member(admin)
    body = valid_body(
        description="  Walked a new colleague through the build \n", recipientId=admin.user.id, media=[IMAGE]
    )
    response = client.post("/api/kindness", json=body, headers=member.headers)
    assert response.status_code == 201
    act = response.json()["data"]
    assert set(act) == ACT_FIELDS
    assert act["userId"] == member.user.id
    assert act["organizationId"] == member.organization_id
    assert act["description"] == "Walked a new colleague through the build"
    assert act["media"] == [IMAGE]
    # Level 2 is asked for, not yet evidenced: the recipient, a user of the organization, must confirm it.
    assert (act["verificationLevel"], act["verifiedLevel"]) == (2, 1)
    assert act["verification"] == {"status": "pending", "requestedLevel": 2, "awaiting": "recipient"}
    assert act["rippleScore"] == 1
    assert act["createdAt"] == act["updatedAt"]
    assert client.get(f"/api/kindness/{act['id']}", headers=admin.headers).json()["data"] == act


def _sent_from_the_lock(client, runtime, member) -> list[str]:
    """The strings a create sent to the database, from the one that takes the organization's lock."""
    sent: list[str] = []

    def record(*arguments) -> None:
        sent.append(arguments[2])

    event.listen(runtime.engine, "after_cursor_execute", record)
    try:
        response = client.post("/api/kindness", json=valid_body(verificationLevel=1), headers=member.headers)
    finally:
        event.remove(runtime.engine, "after_cursor_execute", record)
    assert response.status_code == 201
    locked = next(
        n for n, statement in enumerate(sent) if "FROM organizations" in statement and "FOR NO KEY UPDATE" in statement
    )
    return sent[locked:]


SETTLED_WRITES = (
    "UPDATE kindness_acts",
    "INSERT INTO kindness_tallies",
    "INSERT INTO kindness_recipient_tallies",
    "evidence_append(",
)


def test_a_create_sends_its_lock_and_every_counted_write_with_the_commit(client, make, runtime):
    """On PostgreSQL the lock, the ripple counts, the tallies and the log's append reach the
    database in the string that commits, and the act's ripple count is read after it
    (docs/decisions.md §1, "Writes sent behind"): no create waits for an answer while it holds
    the organization's lock."""
    if runtime.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs each write at once, in the process")
    member = make.member(make.admin())
    commit, *after = _sent_from_the_lock(client, runtime, member)
    for write in SETTLED_WRITES:
        assert write in commit
    # The commit: here the release of the request's savepoint, inside the test's transaction
    # (tests/platform/test_write_behind.py sends a real COMMIT so).
    assert "RELEASE SAVEPOINT" in commit
    assert any(read.startswith("SELECT (SELECT kindness_acts.ripple_count") for read in after)


def test_a_keyed_create_settles_before_its_answer_is_kept_with_it(client, make, runtime, monkeypatch):
    """A create with an Idempotency-Key commits with the answer it stores, which needs the act's
    ripple count: it settles in a statement of its own first, on the driver's cursor."""
    if runtime.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs each write at once, in the process")
    member = make.member(make.admin())
    settled: list[str] = []

    def on_driver(connection, sql, parameters):
        cursor = database.on_driver(connection, sql, parameters)
        settled.append(cursor.query.decode())
        return cursor

    monkeypatch.setattr(kindness, "on_driver", on_driver)
    headers = {**member.headers, "Idempotency-Key": "create-1"}
    response = client.post("/api/kindness", json=valid_body(verificationLevel=1), headers=headers)
    assert response.status_code == 201
    (settle,) = settled
    # The lock and the settling, answered before the event and the commit are sent.
    assert "FOR NO KEY UPDATE" in settle and settle.rsplit(";\n", 1)[-1].startswith("WITH own AS")
    assert "evidence_append(" not in settle


def test_media_is_always_an_array(client, make):
    member = make.admin()
    act = client.post("/api/kindness", json=valid_body(), headers=member.headers).json()["data"]
    assert act["media"] == []


def test_longest_description_counts_after_trimming(client, make):
    member = make.admin()
    text = "x" * 2000
    response = client.post("/api/kindness", json=valid_body(description=f"   {text}\t\n"), headers=member.headers)
    assert response.status_code == 201
    assert response.json()["data"]["description"] == text


INVALID_CREATES = [
    {"description": OMIT},
    {"category": OMIT},
    {"verificationLevel": OMIT},
    {"recipientId": OMIT},
    {"description": None},
    {"category": None},
    {"verificationLevel": None},
    {"recipientId": None},
    {"description": ""},
    {"description": "   \n\t"},
    {"description": "x" * 2001},
    {"description": 42},
    {"category": "heroism"},
    {"category": ""},
    {"verificationLevel": 0},
    {"verificationLevel": 6},
    {"verificationLevel": "3"},
    {"verificationLevel": 2.5},
    {"verificationLevel": True},
    {"recipientId": ""},
    {"recipientId": "r" * 201},
    {"recipientId": " padded"},
    {"recipientId": "two\nlines"},
    {"recipientId": "trailing-newline\n"},
    {"media": None},
    {"media": {"type": "image", "url": "https://a.test/x.png"}},
    {"media": [IMAGE] * 11},
    {"media": [{"type": "video", "url": "https://a.test/x.mp4"}]},
    {"media": [{"type": "image"}]},
    {"media": [{"url": "https://a.test/x.png"}]},
    {"media": [{**IMAGE, "caption": "hi"}]},
    {"media": [{"type": "image", "url": "ftp://a.test/x.png"}]},
    {"media": [{"type": "image", "url": "/relative/x.png"}]},
    {"media": [{"type": "image", "url": "https://"}]},
    {"media": [{"type": "image", "url": "https://a.test/has space.png"}]},
    {"media": [{"type": "image", "url": "https://a.test/x.png\n"}]},
    {"media": [{"type": "image", "url": "https://a.test/" + "x" * 2034}]},
    {"userId": "someone-else"},
    {"organizationId": "another-org"},
    {"rippleScore": 10},
]


@pytest.mark.parametrize("fields", INVALID_CREATES, ids=lambda fields: ",".join(fields))
def test_create_refuses_bad_input_and_stores_nothing(client, make, db, fields):
    member = make.admin()
    before = stored(db)
    body = {key: value for key, value in valid_body(**fields).items() if value is not OMIT}
    response = client.post("/api/kindness", json=body, headers=member.headers)
    assert response.status_code == 400, response.json()
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]
    assert stored(db) == before


def test_longest_url_and_most_media_are_accepted(client, make):
    member = make.admin()
    url = "https://a.test/" + "x" * 2033
    assert len(url) == 2048
    response = client.post(
        "/api/kindness", json=valid_body(media=[{"type": "image", "url": url}] * 10), headers=member.headers
    )
    assert response.status_code == 201


def test_body_that_is_not_an_object_is_refused(client, make):
    member = make.admin()
    for body in ([valid_body()], "text", 3):
        response = client.post("/api/kindness", json=body, headers=member.headers)
        assert response.status_code == 400
    response = client.post(
        "/api/kindness", content=b"{not json", headers={**member.headers, "content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"]


def test_recognising_yourself_is_refused(client, make, db):
    member = make.admin()
    before = stored(db)
    response = client.post("/api/kindness", json=valid_body(recipientId=member.user.id), headers=member.headers)
    assert response.status_code == 400
    assert response.json()["code"] == "self_recognition"
    assert stored(db) == before


def test_consultants_and_anonymous_callers_are_kept_out(client, make):
    admin = make.admin()
    act = make.act(admin)
    consultant = make.consultant()
    requests = [
        ("post", "/api/kindness", valid_body()),
        ("get", "/api/kindness", None),
        ("get", "/api/kindness/stats", None),
        ("get", f"/api/kindness/{act.id}", None),
        ("put", f"/api/kindness/{act.id}", {"description": "changed"}),
    ]
    for method, path, body in requests:
        kwargs = {"json": body} if body is not None else {}
        assert client.request(method, path, headers=consultant.headers, **kwargs).status_code == 403, path
        anonymous = client.request(method, path, headers={"Authorization": "Bearer nope"}, **kwargs)
        assert anonymous.status_code == 401, path
        assert anonymous.json()["error"]


def test_another_organizations_act_is_not_found(client, make):
    mine = make.admin()
    theirs = make.admin()
    act = make.act(theirs)
    foreign = client.get(f"/api/kindness/{act.id}", headers=mine.headers)
    missing = client.get("/api/kindness/00000000-0000-0000-0000-000000000000", headers=mine.headers)
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json()
    changed = client.put(f"/api/kindness/{act.id}", json={"verificationLevel": 5}, headers=mine.headers)
    assert changed.status_code == 404
    assert changed.json() == missing.json()


# --- update ---


def test_sender_changes_content_and_updated_at_moves(client, make):
    sender = make.admin()
    act = make.act(sender, at=T0, media=[IMAGE])
    response = client.put(
        f"/api/kindness/{act.id}",
        json={"description": "  Better words ", "category": "community", "media": []},
        headers=sender.headers,
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["description"], data["category"], data["media"]) == ("Better words", "community", [])
    assert data["verificationLevel"] == 1
    assert dt.datetime.fromisoformat(data["createdAt"]) == T0
    assert dt.datetime.fromisoformat(data["updatedAt"]) > T0
    assert client.get(f"/api/kindness/{act.id}", headers=sender.headers).json()["data"] == data


def test_admin_who_is_not_the_sender_changes_only_the_verification_level(client, make, db):
    admin = make.admin()
    sender = make.member(admin)
    act = make.act(sender, verification_level=1)
    response = client.put(f"/api/kindness/{act.id}", json={"verificationLevel": 4}, headers=admin.headers)
    assert response.status_code == 200
    data = response.json()["data"]
    # A new request, pending again; nothing is verified by changing what is asked for.
    assert (data["verificationLevel"], data["verifiedLevel"], data["rippleScore"]) == (4, 1, 1)
    assert data["verification"] == {"status": "pending", "requestedLevel": 4, "awaiting": "admin"}
    before = stored(db)
    for body in (
        {"description": "rewritten"},
        {"category": "wellbeing"},
        {"media": []},
        {"verificationLevel": 5, "description": "x"},
    ):
        response = client.put(f"/api/kindness/{act.id}", json=body, headers=admin.headers)
        assert response.status_code == 403, body
    assert stored(db) == before


def test_admin_sender_changes_everything(client, make):
    admin = make.admin()
    act = make.act(admin)
    body = {"description": "All of it", "category": "wellbeing", "media": [IMAGE], "verificationLevel": 5}
    response = client.put(f"/api/kindness/{act.id}", json=body, headers=admin.headers)
    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["description"], data["category"], data["media"], data["verificationLevel"]) == (
        "All of it",
        "wellbeing",
        [IMAGE],
        5,
    )


def test_members_may_not_raise_verification_or_change_others_acts(client, make, db):
    admin = make.admin()
    sender = make.member(admin)
    bystander = make.member(admin)
    act = make.act(sender)
    before = stored(db)
    assert (
        client.put(f"/api/kindness/{act.id}", json={"verificationLevel": 5}, headers=sender.headers).status_code == 403
    )
    assert (
        client.put(f"/api/kindness/{act.id}", json={"verificationLevel": 1}, headers=sender.headers).status_code == 403
    )
    assert (
        client.put(f"/api/kindness/{act.id}", json={"description": "mine now"}, headers=bystander.headers).status_code
        == 403
    )
    assert (
        client.put(f"/api/kindness/{act.id}", json={"verificationLevel": 5}, headers=bystander.headers).status_code
        == 403
    )
    assert stored(db) == before


INVALID_UPDATES = [
    {},
    {"description": "  "},
    {"description": "x" * 2001},
    {"category": "other"},
    {"verificationLevel": 9},
    {"media": [IMAGE] * 11},
    {"media": None},
    {"recipientId": "someone"},
    {"userId": "someone"},
    {"createdAt": "2024-01-01T00:00:00Z"},
]


@pytest.mark.parametrize("body", INVALID_UPDATES, ids=lambda body: ",".join(body) or "empty")
def test_update_refuses_bad_input_and_changes_nothing(client, make, db, body):
    admin = make.admin()
    act = make.act(admin)
    before = stored(db)
    response = client.put(f"/api/kindness/{act.id}", json=body, headers=admin.headers)
    assert response.status_code == 400
    assert response.json()["error"]
    assert stored(db) == before


# --- list ---


def ids(page: dict) -> list[str]:
    return [act["id"] for act in page["data"]]


def test_list_is_newest_first_and_scoped_to_the_organization(client, make):
    admin = make.admin()
    other = make.admin()
    mine = [make.act(admin, at=T0 + dt.timedelta(hours=hour)) for hour in (3, 1, 2)]
    make.act(other, at=T0)
    page = client.get("/api/kindness", headers=admin.headers).json()
    assert ids(page) == [mine[0].id, mine[2].id, mine[1].id]
    assert page["nextCursor"] is None


def test_list_filters_by_category_and_sender(client, make):
    admin = make.admin()
    member = make.member(admin)
    community = make.act(admin, category="community", at=T0)
    make.act(admin, category="wellbeing", at=T0)
    by_member = make.act(member, category="community", at=T0 + dt.timedelta(seconds=1))
    assert ids(client.get("/api/kindness?category=community", headers=admin.headers).json()) == [
        by_member.id,
        community.id,
    ]
    assert ids(client.get(f"/api/kindness?userId={member.user.id}", headers=admin.headers).json()) == [by_member.id]
    both = client.get(f"/api/kindness?userId={admin.user.id}&category=community", headers=admin.headers).json()
    assert ids(both) == [community.id]
    assert client.get("/api/kindness?userId=nobody", headers=admin.headers).json() == {"data": [], "nextCursor": None}


def test_date_filters_are_inclusive(client, make):
    admin = make.admin()
    day = dt.timedelta(days=1)
    tick = dt.timedelta(microseconds=1)
    before_day = make.act(admin, at=T0 - tick)
    first = make.act(admin, at=T0)
    last = make.act(admin, at=T0 + day - tick)
    next_day = make.act(admin, at=T0 + day)

    def listed(query: str) -> list[str]:
        response = client.get(f"/api/kindness?{query}", headers=admin.headers)
        assert response.status_code == 200, response.json()
        return ids(response.json())

    assert listed("startDate=2024-03-01&endDate=2024-03-01") == [last.id, first.id]
    assert listed("endDate=2024-02-29") == [before_day.id]
    assert listed("startDate=2024-03-01T00:00:00Z&endDate=2024-03-01T00:00:00Z") == [first.id]
    assert listed("startDate=2024-03-01T01:00:00%2B01:00&endDate=2024-03-01T00:00:00.000000Z") == [first.id]
    assert listed("startDate=2024-02-29T23:59:59.999999Z&endDate=2024-03-01T23:59:59.999999Z") == [
        last.id,
        first.id,
        before_day.id,
    ]
    assert listed("startDate=2024-03-01T23:59:59.999999-00:00") == [next_day.id, last.id]


@pytest.mark.parametrize(
    "query",
    [
        "endDate=9999-12-31",
        "endDate=9999-12-31T23:59:59.999999-01:00",
        "startDate=0001-01-01T00:00:00%2B01:00",
        "startDate=0001-01-01T00:00:00%2B01:00&endDate=9999-12-31",
    ],
)
def test_date_filters_at_the_ends_of_time_leave_that_side_open(client, make, query):
    admin = make.admin()
    act = make.act(admin, at=T0)
    response = client.get(f"/api/kindness?{query}", headers=admin.headers)
    assert response.status_code == 200, response.json()
    assert ids(response.json()) == [act.id]


INVALID_QUERIES = [
    "startDate=2024-02-30",
    "startDate=2024-13-01",
    "endDate=yesterday",
    "endDate=2024-03-01T10:00:00",
    "endDate=2024-03-01T25:00:00Z",
    "startDate=2024-03-01T10:00:00%2B24:00",
    "startDate=2024-03-02&endDate=2024-03-01",
    "startDate=2024-03-01T00:00:01Z&endDate=2024-03-01T00:00:00Z",
    "limit=0",
    "limit=1001",
    "limit=ten",
    "category=heroism",
    "userId=",
    "colour=blue",
]


@pytest.mark.parametrize("query", INVALID_QUERIES)
def test_bad_list_queries_are_400(client, make, query):
    admin = make.admin()
    response = client.get(f"/api/kindness?{query}", headers=admin.headers)
    assert response.status_code == 400, response.json()
    (error, *_) = response.json()["details"]["errors"]
    assert error["location"] == "query" and error["field"] in {part.split("=")[0] for part in query.split("&")}
    assert response.json()["error"].startswith(error["field"] + ":")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor",
        "%%%",
        _b64(b"plain text"),
        _b64(b'{"a": 1}'),
        _b64(b'["2024-03-01T00:00:00", "id"]'),
        _b64(b'["2024-03-01T00:00:00Z", 7]'),
        _b64(b'["never", "id"]'),
        _b64(b'["2024-03-01T00:00:00Z"]'),
    ],
)
def test_invalid_cursor_is_400(client, make, cursor):
    admin = make.admin()
    response = client.get("/api/kindness", params={"cursor": cursor}, headers=admin.headers)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_cursor"


def walk(client, account, **filters) -> tuple[list[str], int]:
    seen, pages, cursor = [], 0, None
    while True:
        params = {"limit": 10, **filters} | ({"cursor": cursor} if cursor else {})
        page = client.get("/api/kindness", params=params, headers=account.headers).json()
        seen += ids(page)
        pages += 1
        cursor = page["nextCursor"]
        if cursor is None:
            return seen, pages


def test_cursor_walk_visits_every_act_once_in_order(client, make):
    admin = make.admin()
    # Three acts per instant, so that ties on createdAt are broken by id.
    made = [make.act(admin, at=T0 + dt.timedelta(minutes=n // 3)) for n in range(25)]
    expected = [act.id for act in sorted(made, key=lambda act: (act.created_at, act.id), reverse=True)]
    seen, pages = walk(client, admin)
    assert seen == expected
    assert pages == 3


def test_a_full_last_page_has_no_next_cursor(client, make):
    admin = make.admin()
    for n in range(10):
        make.act(admin, at=T0 + dt.timedelta(minutes=n))
    page = client.get("/api/kindness?limit=10", headers=admin.headers).json()
    assert len(page["data"]) == 10 and page["nextCursor"] is None


def test_cursor_is_stable_under_inserts(client, make):
    admin = make.admin()
    made = [make.act(admin, at=T0 + dt.timedelta(minutes=n)) for n in range(15)]
    first = client.get("/api/kindness?limit=5", headers=admin.headers).json()
    for n in range(5):
        make.act(admin, at=T0 + dt.timedelta(days=1, minutes=n))
    rest, cursor = [], first["nextCursor"]
    while cursor:
        page = client.get("/api/kindness", params={"limit": 5, "cursor": cursor}, headers=admin.headers).json()
        rest += ids(page)
        cursor = page["nextCursor"]
    assert ids(first) + rest == [act.id for act in reversed(made)]


def test_cursor_walk_keeps_its_filters(client, make):
    admin = make.admin()
    wanted = [make.act(admin, category="wellbeing", at=T0 + dt.timedelta(minutes=n)) for n in range(12)]
    for n in range(12):
        make.act(admin, category="community", at=T0 + dt.timedelta(minutes=n))
    seen, _ = walk(client, admin, category="wellbeing")
    assert seen == [act.id for act in reversed(wanted)]


def test_default_limit_is_100(client, make, db):
    admin = make.admin()
    for n in range(101):
        make.act(admin, at=T0 + dt.timedelta(seconds=n))
    page = client.get("/api/kindness", headers=admin.headers).json()
    assert len(page["data"]) == 100 and page["nextCursor"]
    assert db.scalar(select(func.count()).where(KindnessAct.organization_id == admin.organization_id)) == 101
