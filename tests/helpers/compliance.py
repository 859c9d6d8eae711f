"""Compliance exports and the consultant's portfolio, fetched and read as a client would."""

from __future__ import annotations

import csv
import io

import pypdf

PORTFOLIO_HEADER = ["Client", "Kindness Acts", "Volunteer Hours", "Donations", "Compliance Rate"]


def export(client, account, **body):
    """POST /api/compliance/export with `body`: the answer, whatever its status."""
    return client.post("/api/compliance/export", json=body, headers=account.headers)


def exported(client, admin, framework: str, period: str = "month") -> dict:
    """The JSON compliance export of `framework` over `period`."""
    response = export(client, admin, framework=framework, format="json", period=period)
    assert response.status_code == 200, response.text
    return response.json()


def portfolio(client, consultant, **params):
    """GET /api/bulk/export with `params`: the answer, whatever its status."""
    return client.get("/api/bulk/export", params=params, headers=consultant.headers)


def csv_rows(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.text, newline="")))


def pdf_text(content: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(content))
    return "\n".join(page.extract_text() for page in reader.pages)
