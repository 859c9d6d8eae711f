"""Bulk invitations from a CSV file (docs/decisions.md §4, §10)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from kindling.consulting import views as bulk_handlers
from kindling.consulting.models import Invitation

HEADER = "organizationId,message\n"
ONE_MB = 1024 * 1024


def upload(client, account, content: str | bytes, *, field: str = "file"):
    data = content.encode() if isinstance(content, str) else content
    return client.post("/api/bulk/invite", files={field: ("clients.csv", data, "text/csv")}, headers=account.headers)


def invitations(db, consultant):
    """The consultant's invitations (the database may hold others)."""
    return db.scalar(select(func.count()).select_from(Invitation).where(Invitation.consultant_id == consultant.user.id))


def test_each_row_is_handled_on_its_own_in_row_order(client, make, db):
    consultant = make.consultant()
    new, current, pending = make.admin(), make.admin(), make.admin()
    make.client(consultant, current)
    open_invitation = make.invitation(consultant, pending)
    before = invitations(db, consultant)
    rows = [
        f"{new.organization_id},Hello there",
        "no-such-organization,",
        f"{current.organization_id},",
        f"{new.organization_id},again",
        f"{pending.organization_id},",
        "a,b,c",
        ",message without id",
        f"{make.admin().organization_id},{'x' * 1001}",
    ]
    response = upload(client, consultant, HEADER + "\n".join(rows) + "\n")
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True
    assert (body["invited"], body["failed"]) == (2, 6)
    results = body["results"]
    assert [r["row"] for r in results] == list(range(1, 9))
    assert [(r["status"], r.get("code")) for r in results] == [
        ("success", None),
        ("failed", "not_found"),
        ("failed", "already_client"),
        ("failed", "duplicate_row"),
        ("success", None),
        ("failed", "invalid_row"),
        ("failed", "invalid_row"),
        ("failed", "invalid_row"),
    ]
    assert results[0]["organizationId"] == new.organization_id
    assert set(results[0]) == {"row", "organizationId", "status", "invitationId"}
    assert set(results[1]) == {"row", "organizationId", "status", "error", "code"}
    assert all(r["error"] for r in results if r["status"] == "failed")
    assert results[4]["invitationId"] == open_invitation.id  # idempotent, like send
    assert invitations(db, consultant) == before + 1
    created = db.get(Invitation, results[0]["invitationId"])
    assert (created.organization_id, created.consultant_id, created.message, created.status) == (
        new.organization_id,
        consultant.user.id,
        "Hello there",
        "pending",
    )


def test_byte_order_mark_crlf_and_quoting(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    content = "\ufefforganizationId,message\r\n" + f'  {admin.organization_id} ,"Hello, ""friends""\r\nsee you"\r\n'
    response = upload(client, consultant, content)
    assert response.status_code == 200
    result = response.json()["results"][0]
    assert result["status"] == "success" and result["organizationId"] == admin.organization_id
    assert db.get(Invitation, result["invitationId"]).message == 'Hello, "friends"\r\nsee you'


def test_blank_lines_at_the_end_are_ignored_but_not_between_rows(client, make):
    consultant, first, second = make.consultant(), make.admin(), make.admin()
    content = HEADER + f"{first.organization_id},\n\n{second.organization_id},\n\n\r\n\n"
    results = upload(client, consultant, content).json()["results"]
    assert [(r["row"], r["status"], r.get("code")) for r in results] == [
        (1, "success", None),
        (2, "failed", "invalid_row"),
        (3, "success", None),
    ]
    assert results[1]["organizationId"] == ""


def test_an_invalid_row_does_not_make_a_later_one_a_duplicate(client, make):
    consultant, admin = make.consultant(), make.admin()
    content = (
        HEADER + f"{admin.organization_id},{'x' * 1001}\n{admin.organization_id},fixed\n{admin.organization_id},\n"
    )
    results = upload(client, consultant, content).json()["results"]
    assert [r.get("code") for r in results] == ["invalid_row", None, "duplicate_row"]


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"", "invalid_header"),
        (b"\n\n", "invalid_header"),
        (b"organizationId\nx\n", "invalid_header"),
        (b"organizationid,message\nx,\n", "invalid_header"),
        (b"message,organizationId\nx,\n", "invalid_header"),
        (b"organizationId,message,extra\nx,,\n", "invalid_header"),
        (b"organizationId,message\n", "no_rows"),
        (b"organizationId,message\n\n\n", "no_rows"),
        (b"organizationId,message\nx,caf\xe9\n", "invalid_csv"),
        (b"\xff\xfeo\x00r\x00", "invalid_csv"),
        (b'organizationId,message\nx,"never closed\n', "invalid_csv"),
        (b'organizationId,message\nx,"quoted"then text\n', "invalid_csv"),
        (b"organizationId,message\nx,nul\x00byte\n", "invalid_csv"),
    ],
)
def test_unusable_files_are_refused_whole(client, make, db, content, code):
    consultant = make.consultant()
    response = upload(client, consultant, content)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json()["code"] == code
    assert invitations(db, consultant) == 0


def test_at_most_500_rows(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    rows = [f"{admin.organization_id},"] + [f"missing-{n}," for n in range(499)]
    accepted = upload(client, consultant, HEADER + "\n".join(rows) + "\n")
    assert accepted.status_code == 200
    assert (accepted.json()["invited"], accepted.json()["failed"]) == (1, 499)
    refused = upload(client, consultant, HEADER + "\n".join(rows + ["one-too-many,"]) + "\n")
    assert refused.status_code == 400
    assert refused.json()["code"] == "too_many_rows"
    assert refused.json()["details"] == {"rows": 501, "limit": 500}


def sized_csv(size: int) -> bytes:
    """A file of exactly `size` bytes: 500 rows with overlong messages."""
    head = HEADER.encode()
    per_row, extra = divmod(size - len(head), 500)
    rows = [b"m," + b"x" * (per_row - 3) + b"\n" for _ in range(500)]
    rows[-1] = b"m," + b"x" * (per_row - 3 + extra) + b"\n"
    data = head + b"".join(rows)
    assert len(data) == size
    return data


def test_a_file_of_exactly_one_megabyte_is_read(client, make):
    response = upload(client, make.consultant(), sized_csv(ONE_MB))
    assert response.status_code == 200
    assert response.json()["failed"] == 500


def test_a_file_over_one_megabyte_is_413(client, make, db):
    consultant = make.consultant()
    # Just over: the body passes the streaming limit (1 MB + 16 KB of framing), the handler refuses the file.
    just_over = upload(client, consultant, sized_csv(ONE_MB + 1))
    assert just_over.status_code == 413
    assert just_over.json()["code"] == "payload_too_large"
    far_over = upload(client, consultant, HEADER.encode() + b"x,y\n" * (600 * 1024))
    assert far_over.status_code == 413
    assert far_over.json()["code"] == "payload_too_large"
    assert invitations(db, consultant) == 0


def test_the_request_must_carry_one_file_part_named_file(client, make):
    consultant = make.consultant()
    assert upload(client, consultant, HEADER + "x,\n", field="upload").status_code == 400
    no_file = client.post("/api/bulk/invite", files={"note": (None, "x")}, headers=consultant.headers)
    assert no_file.status_code == 400
    as_text_field = client.post("/api/bulk/invite", files={"file": (None, HEADER + "x,\n")}, headers=consultant.headers)
    assert as_text_field.status_code == 400
    two_files = client.post(
        "/api/bulk/invite",
        files=[("file", ("a.csv", HEADER + "x,\n", "text/csv")), ("file", ("b.csv", HEADER + "y,\n", "text/csv"))],
        headers=consultant.headers,
    )
    assert two_files.status_code == 400
    as_form = client.post("/api/bulk/invite", data={"file": HEADER}, headers=consultant.headers)
    assert as_form.status_code == 415
    malformed = client.post(
        "/api/bulk/invite",
        content=b"--b\r\nnot a part header--b--",
        headers={**consultant.headers, "Content-Type": "multipart/form-data; boundary=b"},
    )
    assert malformed.status_code == 400
    assert malformed.json()["code"] == "validation_error"
    as_json = client.post("/api/bulk/invite", json={"file": "x"}, headers=consultant.headers)
    assert as_json.status_code == 415
    assert as_json.json()["error"]


def test_a_failure_leaves_no_row_behind(client, make, db, monkeypatch):
    consultant, first, second = make.consultant(), make.admin(), make.admin()

    def broken(result):
        raise RuntimeError("failure after the invitations were written")

    monkeypatch.setattr(bulk_handlers, "_result_body", broken)
    response = upload(client, consultant, HEADER + f"{first.organization_id},\n{second.organization_id},\n")
    assert response.status_code == 500
    assert response.json() == {"error": "Internal server error", "code": "internal_error"}
    assert invitations(db, consultant) == 0


def test_bulk_operations_are_limited_to_ten_a_minute(rate_window, client, make):
    consultant, admin = make.consultant(), make.admin()
    content = HEADER + f"{admin.organization_id},\n"
    for n in range(10):
        response = upload(client, consultant, content)
        assert response.status_code == 200
        assert response.headers["x-ratelimit-limit"] == "10"
        assert response.headers["x-ratelimit-remaining"] == str(9 - n)
    limited = upload(client, consultant, content)
    assert limited.status_code == 429
    assert limited.json()["code"] == "rate_limited" and limited.json()["retryAfter"] > 0
    assert int(limited.headers["retry-after"]) > 0
    assert limited.headers["x-ratelimit-limit"] == "10"
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert time.time() - 1 <= int(limited.headers["x-ratelimit-reset"]) <= time.time() + 61
    # Other consultant endpoints are not bulk operations.
    assert client.get("/api/clients", headers=consultant.headers).status_code == 200
