"""`kindling evidence verify BUNDLE --report REPORT` recomputes every figure of a JSON compliance export from the log."""

from __future__ import annotations

import json

import pytest

from kindling import cli
from kindling.evidence import report_check
from kindling.wellbeing import service as wellbeing

FRAMEWORKS = ("b-corp", "csrd", "gri", "sasb", "social-value", "un-sdg")


@pytest.fixture
def active(make):
    """An organization with acts at every level, check-ins with hours, donations in every state and the last
    closed week published, as the worker publishes it."""
    admin = make.admin()
    people = [make.member(admin) for _ in range(5)]
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
    return admin


def exported(client, admin, framework: str, period: str = "month") -> dict:
    response = client.post(
        "/api/compliance/export",
        json={"framework": framework, "format": "json", "period": period},
        headers=admin.headers,
    )
    assert response.status_code == 200, response.text
    return response.json()


def bundle_of(client, admin) -> dict:
    response = client.post("/api/evidence/export", json={}, headers=admin.headers)
    assert response.status_code == 200, response.text
    return response.json()


def run(tmp_path, capsys, client, bundle: dict, report: dict) -> tuple[int, str]:
    (tmp_path / "bundle.json").write_text(json.dumps(bundle))
    (tmp_path / "report.json").write_text(json.dumps(report))
    key = client.get("/api/evidence/keys").json()["data"][0]["publicKey"]
    code = cli.main(
        [
            "evidence",
            "verify",
            str(tmp_path / "bundle.json"),
            "--public-key",
            key,
            "--report",
            str(tmp_path / "report.json"),
        ]
    )
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).strip()


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_genuine_report_is_recomputed_figure_by_figure(client, active, tmp_path, capsys, framework):
    report = exported(client, active, framework)
    assert all("metric" in indicator for indicator in report["data"]["indicators"])
    code, output = run(tmp_path, capsys, client, bundle_of(client, active), report)
    assert code == 0, output
    assert "report's figures verified" in output


@pytest.mark.parametrize("period", ["week", "quarter", "year"])
def test_every_period(client, active, tmp_path, capsys, period):
    report = exported(client, active, "gri", period)
    assert run(tmp_path, capsys, client, bundle_of(client, active), report)[0] == 0


def test_the_report_figures_are_not_trivial(client, active):
    indicators = {i["metric"]: i for f in FRAMEWORKS for i in exported(client, active, f)["data"]["indicators"]}
    assert indicators["volunteer_hours"]["value"] == 6.8  # 3 + 1.5 + 2.25, to 1 decimal, half up
    assert indicators["donation_amount"]["value"] == 35.05
    assert indicators["wellbeing_stress_average"]["value"] is not None


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
def test_one_figure_changed_fails(client, active, tmp_path, capsys, change):
    report = exported(client, active, "gri")
    change(report["data"])
    code, output = run(tmp_path, capsys, client, bundle_of(client, active), report)
    assert code == 1 and "from the log" in output


def test_each_metric_changed_fails(client, active, tmp_path, capsys):
    bundle = bundle_of(client, active)
    for framework in FRAMEWORKS:
        report = exported(client, active, framework)
        for position, indicator in enumerate(report["data"]["indicators"]):
            if indicator["metric"] in report_check.NOT_IN_THE_LOG or indicator["value"] is None:
                continue
            altered = json.loads(json.dumps(report))
            altered["data"]["indicators"][position]["value"] = indicator["value"] + 1
            code, output = run(tmp_path, capsys, client, bundle, altered)
            assert code == 1 and indicator["metric"] in output, (framework, indicator)


def test_a_report_beyond_the_bundle_or_from_an_excerpt_fails(client, active, make, tmp_path, capsys):
    bundle = bundle_of(client, active)
    make.activity.act(active)
    later = exported(client, active, "gri")
    code, output = run(tmp_path, capsys, client, bundle, later)
    assert code == 1 and "does not hold the report's evidence head" in output
    events = client.get("/api/evidence", headers=active.headers).json()["data"]
    excerpt = client.post("/api/evidence/export", json={"from": events[3]["occurredAt"]}, headers=active.headers).json()
    code, output = run(tmp_path, capsys, client, excerpt, later)
    assert code == 1 and "excerpt" in output
