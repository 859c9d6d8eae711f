"""Consultants' bulk operations: invitations from a CSV file."""

from __future__ import annotations

import csv
import dataclasses
import io

from sqlalchemy.orm import Session as DbSession

from kindling.consulting import clients
from kindling.errors import ApiError, BadRequest

HEADER = ["organizationId", "message"]
MAX_ROWS = 500
MAX_MESSAGE_LENGTH = 1000


@dataclasses.dataclass(frozen=True)
class RowResult:
    """What became of one data row: an invitation, or the reason there is none."""

    row: int
    organization_id: str
    invitation_id: str | None = None
    error: str | None = None
    code: str | None = None


def invite_from_csv(db: DbSession, *, consultant_id: str, data: bytes) -> list[RowResult]:
    """Invite the organizations a CSV file lists, each row on its own; results in row order."""
    records = read_records(data)
    results: dict[int, RowResult] = {}
    requests: dict[str, tuple[int, str | None]] = {}
    for number, record in enumerate(records, start=1):
        organization_id = record[0].strip() if record else ""
        problem = _row_problem(record, organization_id)
        if problem is not None:
            results[number] = RowResult(number, organization_id, error=problem, code="invalid_row")
        elif organization_id in requests:
            earlier = requests[organization_id][0]
            results[number] = RowResult(
                number, organization_id, error=f"Same organizationId as row {earlier}", code="duplicate_row"
            )
        else:
            requests[organization_id] = (number, record[1])
    outcomes = clients.invite_many(
        db, consultant_id=consultant_id, requests=[(oid, message) for oid, (_, message) in requests.items()]
    )
    for (organization_id, (number, _)), outcome in zip(requests.items(), outcomes, strict=True):
        if isinstance(outcome, ApiError):
            results[number] = RowResult(number, organization_id, error=outcome.message, code=outcome.code)
        else:
            results[number] = RowResult(number, organization_id, invitation_id=outcome.id)
    return [results[number] for number in sorted(results)]


def read_records(data: bytes) -> list[list[str]]:
    """The data rows of an invitation CSV file, after checking its encoding, syntax, header and size."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadRequest("The file is not UTF-8 text", code="invalid_csv", details={"byte": exc.start}) from None
    if "\x00" in text:
        # No CSV text holds NUL; the file is binary (a spreadsheet, UTF-16 text, ...).
        raise BadRequest("The file is not CSV text: it contains NUL characters", code="invalid_csv")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        records = list(reader)
    except csv.Error as exc:
        raise BadRequest(
            f"The file is not valid CSV: {exc}", code="invalid_csv", details={"line": reader.line_num}
        ) from None
    while records and not records[-1]:
        records.pop()
    if not records or records[0] != HEADER:
        raise BadRequest("The first row must be the header organizationId,message", code="invalid_header")
    del records[0]
    if not records:
        raise BadRequest("The file has no data rows", code="no_rows")
    if len(records) > MAX_ROWS:
        raise BadRequest(
            f"The file has {len(records)} data rows; at most {MAX_ROWS} are allowed",
            code="too_many_rows",
            details={"rows": len(records), "limit": MAX_ROWS},
        )
    return records


def _row_problem(record: list[str], organization_id: str) -> str | None:
    if len(record) != len(HEADER):
        return f"Expected {len(HEADER)} columns, found {len(record)}"
    if not organization_id:
        return "organizationId is empty"
    if len(record[1]) > MAX_MESSAGE_LENGTH:
        return f"message is longer than {MAX_MESSAGE_LENGTH} characters"
    return None
