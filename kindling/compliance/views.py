"""Handlers of compliance reports and their exports, and of a consultant's portfolio export."""

from __future__ import annotations

import flask

from kindling.compliance import exports, portfolio
from kindling.evidence.signing import signer_for
from kindling.platform import access
from kindling.platform.destinations import DestinationPolicy
from kindling.platform.request import Reply, db, runtime


def get_report(framework: str, token_info: dict, period: str) -> Reply:
    caller = access.principal(token_info)
    report, _ = exports.checked_report(
        db(), signer_for(runtime().settings), organization_id=caller.member_of, framework_id=framework, period=period
    )
    return {"data": exports.report_document(report)}, 200


def export_report(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    exported = exports.export_report(
        db(),
        signer_for(runtime().settings),
        organization_id=caller.member_of,
        framework_id=body["framework"],
        file_format=body["format"],
        period=body["period"],
        policy=DestinationPolicy.from_settings(runtime().settings),
    )
    return flask.Response(exported.content, status=200, headers=exported.headers)


def export_portfolio(token_info: dict, format_: str, period: str, currency: str | None = None) -> Reply:
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
