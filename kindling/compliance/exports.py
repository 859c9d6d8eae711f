"""A compliance report as the API shows it, and as CSV, JSON and PDF files signed over their
exact bytes (a JSON file over its canonical form, with its signature inside; docs/decisions.md §8,
docs/evidence.md)."""

from __future__ import annotations

import datetime as dt
import json

from sqlalchemy.orm import Session

from kindling.compliance.models import Report
from kindling.compliance.reports import build_report
from kindling.evidence import log as evidence
from kindling.evidence import witnessing
from kindling.evidence.chain import export_statement, json_digested
from kindling.evidence.keys import Signer
from kindling.evidence.models import EvidenceCheckpoint
from kindling.platform import periods
from kindling.platform.destinations import DestinationPolicy
from kindling.platform.exports import ExportFile, csv_text
from kindling.rates import service as rates
from kindling.wellbeing import service as wellbeing

CSV_HEADER = (
    "Framework",
    "Organization",
    "Period",
    "From",
    "To",
    "Compliance Rate",
    "Code",
    "Title",
    "Value",
    "Unit",
    "Evidence Verified",
    "Evidence Total",
)
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json", "pdf": "application/pdf"}


def checked_report(
    db: Session,
    signer: Signer,
    *,
    organization_id: str,
    framework_id: str,
    period: str = periods.DEFAULT_PERIOD,
) -> tuple[Report, dict]:
    """The report and the evidence head it was computed at, checkpointed, refused while the log
    is broken, the records contradict it or it does not extend its last checkpoint (docs/evidence.md)."""
    head, _, _ = _checkpointed_head(db, signer, organization_id=organization_id, now=None)
    return build_report(db, organization_id=organization_id, framework_id=framework_id, period=period), head


def _checkpointed_head(
    db: Session, signer: Signer, *, organization_id: str, now: dt.datetime | None
) -> tuple[dict, EvidenceCheckpoint, bool]:
    """The head a report is computed at, its checkpoint, and whether the checkpoint covers only
    committed events. The wellbeing weeks that ended and are due are published first, so that the
    figures the report shows rest on events its head covers; their events are the request's own."""
    published = wellbeing.publish_closed_weeks(
        db, before=periods.week_of(now or periods.utcnow()), organization_ids=[organization_id]
    )
    head, made = evidence.checkpointed_head(db, signer, organization_id=organization_id)
    return head, made, published == 0


def report_document(report: Report) -> dict:
    """The report as the API shows it (the `data` of GET /api/compliance/{framework})."""
    return {
        "framework": report.framework.id,
        "organizationId": report.organization.id,
        "period": report.window.period,
        "from": report.window.start.isoformat(),
        "to": report.window.end.isoformat(),
        "generatedAt": report.generated_at.isoformat(),
        "complianceRate": report.compliance_rate,
        "indicators": [
            {
                "code": line.code,
                "title": line.title,
                "value": line.value,
                "unit": line.unit,
                "evidence": {"verified": line.evidence.verified, "total": line.evidence.total},
                **({} if line.unconverted is None else {"unconverted": line.unconverted}),
            }
            for line in report.lines
        ],
        # The quotes every amount in another currency was converted at (docs/evidence.md).
        "rates": rates.listed(report.rates),
        "ratesDigest": report.rates_digest,
        # How many attesters the level-5 evidence rests on (docs/evidence.md).
        "externalValidation": {
            "acts": report.external_validation.acts,
            "attesters": report.external_validation.attesters,
            "largestShare": report.external_validation.largest_share,
        },
    }


def export_report(
    db: Session,
    signer: Signer,
    *,
    organization_id: str,
    framework_id: str,
    file_format: str,
    period: str = periods.DEFAULT_PERIOD,
    now: dt.datetime | None = None,
    policy: DestinationPolicy | None = None,
) -> ExportFile:
    """The report as a CSV, JSON or PDF file, stating the evidence head it was computed at and
    signed over that head and its exact bytes (docs/evidence.md); refused while the log is
    broken or the records contradict it."""
    head, made, committed = _checkpointed_head(db, signer, organization_id=organization_id, now=now)
    # Whether the witnesses' quorum cosigned the checkpoint of that head, waited for at most 5 s. A
    # checkpoint over the weeks this request published goes to the witnesses from the worker, once
    # committed: were this export then to fail, a witness would hold a tree Kindling never kept.
    witnessed = (
        witnessing.cosign_now(db, made, policy or DestinationPolicy()) if committed else witnessing.witnessed(db, made)
    )
    report = build_report(db, organization_id=organization_id, framework_id=framework_id, period=period, now=now)
    window = report.window
    name = (
        f"kindling-{report.framework.id}-{report.organization.slug}-{window.period}-{window.end:%Y-%m-%d}.{file_format}"
    )
    document: dict | None = None
    if file_format == "csv":
        content = report_csv(report).encode()
    elif file_format == "json":
        data = report_document(report)
        # Each figure names its metric, so `kindling evidence verify --report` recomputes it (docs/evidence.md).
        for indicator, line in zip(data["indicators"], report.lines, strict=True):
            indicator["metric"] = line.metric
        document = {"data": {**data, "evidenceHead": head, "evidenceWitnessed": witnessed}}
        content = json_digested(document)
    else:
        # reportlab takes a tenth of a second to import: every server start would pay for it.
        from kindling.compliance.pdf import report_pdf

        content = report_pdf(report, evidence_head=head, key_id=signer.key_id)
    signed = signer.sign_statement(
        export_statement(
            organization_id=organization_id,
            framework=report.framework.id,
            period=window.period,
            file_format=file_format,
            head=head,
            body=content,
        )
    )
    if document is not None:
        # The file alone can be checked: it carries the signature the header does.
        content = json.dumps({**document, "signature": signed}, ensure_ascii=False).encode()
    signature = (
        ("Kindling-Evidence-Head", f"{head['seq']}:{head['hash']}"),
        ("Kindling-Evidence-Witnessed", "true" if witnessed else "false"),
        ("Kindling-Signature", signer.signature_header(signed)),
    )
    return ExportFile(filename=name, media_type=MEDIA_TYPES[file_format], content=content, extra_headers=signature)


def report_csv(report: Report) -> str:
    """One CSV row per indicator, each with the report's framework, organization, period and rate."""
    context = (
        report.framework.id,
        report.organization.name,
        report.window.period,
        report.window.start.isoformat(),
        report.window.end.isoformat(),
        report.compliance_rate,
    )
    rows = [
        (*context, line.code, line.title, line.value, line.unit, line.evidence.verified, line.evidence.total)
        for line in report.lines
    ]
    return csv_text(CSV_HEADER, rows)
