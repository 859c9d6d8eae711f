"""Consultants' bulk operations."""

from __future__ import annotations

import flask
from werkzeug.datastructures import FileStorage

from kindling.compliance import portfolio
from kindling.consulting import bulk
from kindling.errors import BadRequest, PayloadTooLarge
from kindling.platform import access
from kindling.web.requestguard import UPLOAD_LIMIT
from kindling.web.runtime import db


def invite_clients(token_info: dict, file: FileStorage | None = None):
    caller = access.principal(token_info)
    if file is None:
        # Connexion's validation accepts a plain form field named `file`; Flask does not see it as a file.
        raise BadRequest("Send the CSV as a file part named file")
    # Read one byte past the limit: enough to know the file is too large without reading all of it.
    data = file.stream.read(UPLOAD_LIMIT + 1)
    if len(data) > UPLOAD_LIMIT:
        raise PayloadTooLarge(f"The file exceeds the limit of {UPLOAD_LIMIT // 1024} KB")
    results = bulk.invite_from_csv(db(), consultant_id=caller.user_id, data=data)
    invited = sum(1 for result in results if result.invitation_id is not None)
    return {
        "success": True,
        "invited": invited,
        "failed": len(results) - invited,
        "results": [_result_body(result) for result in results],
    }, 200


def _result_body(result: bulk.RowResult) -> dict:
    if result.invitation_id is not None:
        return {
            "row": result.row,
            "organizationId": result.organization_id,
            "status": "success",
            "invitationId": result.invitation_id,
        }
    return {
        "row": result.row,
        "organizationId": result.organization_id,
        "status": "failed",
        "error": result.error,
        "code": result.code,
    }


def export_portfolio(token_info: dict, format_: str, period: str, currency: str | None = None):
    caller = access.principal(token_info)
    report = portfolio.build_portfolio(db(), consultant_id=caller.user_id, period=period, currency=currency)
    if format_ == "csv":
        exported = portfolio.portfolio_csv(report)
        return flask.Response(exported.content, status=200, headers=exported.headers)
    body = {
        "data": [
            {
                "organizationId": row.organization_id,
                "client": row.client,
                "kindnessActs": row.kindness_acts,
                "volunteerHours": float(row.volunteer_hours),
                "donations": float(row.donations),
                "matchedGiving": float(row.matched_giving),
                "currency": row.currency,
                "complianceRate": row.compliance_rate,
                "original": [{"currency": code, "amount": amount} for code, amount in row.original.items()],
                "unconverted": row.unconverted,
            }
            for row in report.rows
        ],
        "period": report.window.period,
        "from": report.window.start,
        "to": report.window.end,
        "generatedAt": report.generated_at,
    }
    return body, 200, {"Content-Type": "application/json"}
