"""Compliance reports of the caller's organization, on screen and as files."""

from __future__ import annotations

import flask

from kindling.compliance import exports
from kindling.platform import access
from kindling.platform.destinations import DestinationPolicy
from kindling.web.runtime import db, runtime


def get_report(framework: str, token_info: dict, period: str):
    caller = access.principal(token_info)
    report, _ = exports.checked_report(
        db(), runtime().signer, organization_id=caller.member_of, framework_id=framework, period=period
    )
    return {"data": exports.report_document(report)}, 200


def export_report(body: dict, token_info: dict):
    caller = access.principal(token_info)
    exported = exports.export_report(
        db(),
        runtime().signer,
        organization_id=caller.member_of,
        framework_id=body["framework"],
        file_format=body["format"],
        period=body["period"],
        policy=DestinationPolicy.from_settings(runtime().settings),
    )
    return flask.Response(exported.content, status=200, headers=exported.headers)
