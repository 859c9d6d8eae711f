"""`kindling evidence verify BUNDLE --report REPORT` recomputes every figure of a JSON compliance export from the log."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from kindling.accounts import members
from kindling.donations import giving
from kindling.donations.models import GivingRequest
from kindling.evidence.keys import make_signer, parse_private_key
from kindling.evidence.signing import signer_for
from kindling.wellbeing import service as wellbeing
from tests.factories.principals import principal
from tests.helpers.compliance import exported
from tests.helpers.evidence import ROTATED_SEED, check_report, export, resigned

FRAMEWORKS = ("b-corp", "csrd", "gri", "sasb", "social-value", "un-sdg")


@pytest.fixture
def active(make, db):
    """An organization with acts at every level, check-ins with hours, donations in every state,
    matches and a grant (one of each paid), the last closed week published as the worker publishes
    it, and a person who left."""
    admin = make.admin()
    people = [make.member(admin) for _ in range(5)]
    make.match_program(admin, ratio_percent=50)
    grants = make.grant_program(admin)
    leaver = make.member(admin)
    members.remove_member(db, organization_id=admin.organization_id, user_id=leaver.user.id, actor_id=admin.user.id)
    make.activity.act(people[0], level=3, category="community")
    make.activity.act(people[1], level=1)
    make.activity.act(people[2], level=5, category="wellbeing")
    make.activity.act(people[3], level=2, category="wellbeing", days_ago=40)  # outside a month
    make.activity.check_in(people[0], admin, hours=3)
    make.activity.check_in(people[1], admin, hours=1.5)
    make.activity.check_in(people[0], admin, hours=2.25)
    make.activity.check_in(people[2], admin, verified=False, hours=2)
    make.activity.donation(people[0], amount=2500)
    make.activity.donation(people[1], amount=1005)
    make.activity.donation(people[2], amount=500, status="pending")
    make.activity.donation(admin, amount=700, status="failed")
    for n, person in enumerate(people):
        make.activity.response(person, days_ago=7, mood=1 + n % 5, stress=5 - n % 3)
    wellbeing.chore()(make.db)
    matches = db.scalars(select(GivingRequest).where(GivingRequest.organization_id == admin.organization_id)).all()
    giving.pay(db, caller=principal(admin), request_id=matches[0].id, reference="PAY-1")
    grant = giving.request_grant(db, caller=principal(people[0]), program_id=grants.id, hours=3, recipient_name="Parks")
    giving.pay(db, caller=principal(admin), request_id=grant.id, reference="PAY-2")
    giving.request_grant(db, caller=principal(people[1]), program_id=grants.id, hours=1.5, recipient_name="Parks")
    return admin


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_genuine_report_is_recomputed_figure_by_figure(client, active, tmp_path, capsys, framework):
    report = exported(client, active, framework)
    assert all("metric" in indicator for indicator in report["data"]["indicators"])
    code, output = check_report(tmp_path, capsys, client, export(client, active), report)
    assert code == 0, output
    assert "report's signature verified; report's figures verified" in output and "as stated" not in output


@pytest.mark.parametrize("period", ["week", "quarter", "year"])
def test_every_period(client, active, tmp_path, capsys, period):
    report = exported(client, active, "gri", period)
    assert check_report(tmp_path, capsys, client, export(client, active), report)[0] == 0


def test_the_report_figures_are_not_trivial(client, active):
    indicators = {i["metric"]: i for f in FRAMEWORKS for i in exported(client, active, f)["data"]["indicators"]}
    assert indicators["volunteer_hours"]["value"] == 6.8  # 3 + 1.5 + 2.25, to 1 decimal, half up
    assert indicators["donation_amount"]["value"] == 35.05
    assert indicators["wellbeing_stress_average"]["value"] is not None
    # Half of $25.00 and of $10.05, both approved, one paid; 3 hours at $10 paid, 1.5 approved.
    assert (indicators["matched_giving_amount"]["value"], indicators["matched_giving_amount"]["evidence"]) == (
        17.52,
        {"verified": 1, "total": 2},
    )
    assert (indicators["volunteer_grant_amount"]["value"], indicators["volunteer_grant_amount"]["evidence"]) == (
        45.0,
        {"verified": 1, "total": 2},
    )
    # 5 of the 6 active members answered; the person who left is not counted.
    assert indicators["wellbeing_participation"]["evidence"]["total"] == 6


@pytest.mark.parametrize(
    "change",
    [
        lambda report: report["indicators"][0].update(value=(report["indicators"][0]["value"] or 0) + 1),
        lambda report: report["indicators"][0]["evidence"].update(
            verified=report["indicators"][0]["evidence"]["verified"] + 1
        ),
        lambda report: report.update(complianceRate=report["complianceRate"] + 0.1),
    ],
)
def test_one_figure_changed_fails(client, runtime, active, tmp_path, capsys, change):
    report = exported(client, active, "gri")
    change(report["data"])
    code, output = check_report(tmp_path, capsys, client, export(client, active), resigned(runtime, report))
    assert code == 1 and "from the log" in output


def test_each_metric_changed_fails(client, runtime, active, tmp_path, capsys):
    """Every figure is recomputed: none is shown as stated, the company's giving and participation included."""
    bundle = export(client, active)
    checked = set()
    for framework in FRAMEWORKS:
        report = exported(client, active, framework)
        for position, indicator in enumerate(report["data"]["indicators"]):
            if indicator["value"] is None:
                continue
            altered = json.loads(json.dumps(report))
            altered["data"]["indicators"][position]["value"] = indicator["value"] + 1
            code, output = check_report(tmp_path, capsys, client, bundle, resigned(runtime, altered))
            assert code == 1 and indicator["metric"] in output and "from the log" in output, (framework, indicator)
            checked.add(indicator["metric"])
    assert {"matched_giving_amount", "volunteer_grant_amount", "wellbeing_participation"} <= checked


def test_an_unsigned_edited_or_wrongly_signed_report_file_is_refused(client, runtime, active, tmp_path, capsys):
    """The report file's own signature was not checked: an edited figure failed only when it
    differed from the log, and a file nobody signed passed."""
    bundle = export(client, active)
    report = exported(client, active, "gri")
    unsigned = {"data": report["data"]}
    code, output = check_report(tmp_path, capsys, client, bundle, unsigned)
    assert code == 1 and "unsigned" in output and output.count("\n") == 0
    edited = json.loads(json.dumps(report))
    edited["data"]["generatedAt"] = "2000-01-01T00:00:00+00:00"  # a member no figure depends on
    code, output = check_report(tmp_path, capsys, client, bundle, edited)
    assert code == 1 and "the report file was edited" in output
    forged_digest = json.loads(json.dumps(edited))
    forged_digest["signature"]["digest"] = resigned(runtime, edited)["signature"]["digest"]
    code, output = check_report(tmp_path, capsys, client, bundle, forged_digest)
    assert code == 1 and "signature does not verify" in output
    other_key = make_signer(parse_private_key(ROTATED_SEED), (), "")
    code, output = check_report(tmp_path, capsys, client, bundle, resigned(runtime, edited, other_key))
    assert code == 1 and "not among the given public keys" in output
    retitled = resigned(runtime, report)
    retitled["signature"] = signer_for(runtime.settings).sign_statement(
        {
            **{k: retitled["signature"][k] for k in ("organizationId", "period", "format", "evidenceHead", "digest")},
            "framework": "csrd",
        }
    )
    code, output = check_report(tmp_path, capsys, client, bundle, retitled)
    assert code == 1 and "framework" in output


def test_a_report_beyond_the_bundle_or_from_an_excerpt_fails(client, active, make, tmp_path, capsys):
    bundle = export(client, active)
    make.activity.act(active)
    later = exported(client, active, "gri")
    code, output = check_report(tmp_path, capsys, client, bundle, later)
    assert code == 1 and "does not hold the report's evidence head" in output
    events = client.get("/api/evidence", headers=active.headers).json()["data"]
    excerpt = client.post("/api/evidence/export", json={"from": events[3]["occurredAt"]}, headers=active.headers).json()
    code, output = check_report(tmp_path, capsys, client, excerpt, later)
    assert code == 1 and "excerpt" in output
