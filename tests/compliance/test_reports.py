"""GET /api/compliance/{framework}: indicators, evidence and the compliance rate (docs/decisions.md §8, §9)."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from kindling.compliance import load_frameworks
from kindling.web.app import SPEC

REPORT_FIELDS = {
    "framework",
    "organizationId",
    "period",
    "from",
    "to",
    "generatedAt",
    "complianceRate",
    "indicators",
    "externalValidation",
    "rates",
    "ratesDigest",
}


def report(client, account, framework="gri", **params):
    response = client.get(f"/api/compliance/{framework}", params=params, headers=account.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def indicators(data) -> dict:
    return {item["code"]: item for item in data["indicators"]}


def test_report_of_a_known_month(client, busy):
    data = report(client, busy)

    assert set(data) == REPORT_FIELDS
    assert data["framework"] == "gri"
    assert data["organizationId"] == busy.organization_id
    assert data["period"] == "month"
    # 2 acts at level 3 or above, 2 verified check-ins, 2 succeeded donations, of 11 records.
    assert data["complianceRate"] == 54.5
    assert indicators(data) == {
        "201-1": {
            "code": "201-1",
            "title": "Direct economic value generated and distributed",
            "value": 35.0,
            "unit": "USD",
            "evidence": {"verified": 2, "total": 4},
            "unconverted": {},
        },
        **{
            f"201-1-a-ii ({part})": {
                "code": f"201-1-a-ii ({part})",
                "title": "Direct economic value generated and distributed – community investments",
                "value": 0.0,
                "unit": "USD",
                "evidence": {"verified": 0, "total": 0},
                "unconverted": {},
            }
            for part in ("matched giving", "volunteer grants")
        },
        "403-4": {
            "code": "403-4",
            "title": "Worker participation, consultation, and communication on occupational health and safety",
            "value": None,
            "unit": "percent",
            "evidence": {"verified": 0, "total": 3},
        },
        "403-6": {
            "code": "403-6",
            "title": "Promotion of worker health",
            "value": 2,
            "unit": "acts",
            "evidence": {"verified": 1, "total": 2},
        },
        "413-1": {
            "code": "413-1",
            "title": "Operations with local community engagement, impact assessments, and development programs",
            "value": 4.5,
            "unit": "hours",
            "evidence": {"verified": 2, "total": 3},
        },
    }


def test_the_window_is_rolling_and_ends_now(client, busy):
    before = dt.datetime.now(dt.UTC)
    data = report(client, busy, period="quarter")
    after = dt.datetime.now(dt.UTC)

    start, end = dt.datetime.fromisoformat(data["from"]), dt.datetime.fromisoformat(data["to"])
    assert before <= end <= after
    assert dt.datetime.fromisoformat(data["generatedAt"]) == end
    assert end - start == dt.timedelta(days=90)
    assert data["period"] == "quarter"


@pytest.mark.parametrize(("period", "days"), [("week", 7), ("month", 30), ("quarter", 90), ("year", 365)])
def test_each_period_counts_only_its_window(client, make, period, days):
    admin = make.admin()
    make.activity.act(admin, days_ago=days - 0.5, level=3)
    make.activity.act(admin, days_ago=days + 0.5, level=1)

    data = report(client, admin, framework="b-corp", period=period)

    assert data["period"] == period
    assert data["complianceRate"] == 100.0
    end, start = dt.datetime.fromisoformat(data["to"]), dt.datetime.fromisoformat(data["from"])
    assert end - start == dt.timedelta(days=days)


def test_records_belong_to_the_period_they_were_made_in(client, make):
    admin = make.admin()
    # Made 40 days ago, succeeded since: outside the month, whenever it settled.
    make.activity.donation(admin, days_ago=40, amount=9900)
    make.activity.check_in(admin, admin, days_ago=40, hours=5)
    make.activity.donation(admin, days_ago=2, amount=100)
    make.activity.check_in(admin, admin, days_ago=2, hours=1)

    month = indicators(report(client, admin, framework="social-value"))
    quarter = indicators(report(client, admin, framework="social-value", period="quarter"))

    assert (month["NT28"]["value"], month["NT28"]["evidence"]) == (1.0, {"verified": 1, "total": 1})
    assert (month["NT29"]["value"], month["NT29"]["evidence"]) == (1.0, {"verified": 1, "total": 1})
    assert quarter["NT28"]["value"] == 100.0
    assert quarter["NT29"]["value"] == 6.0


def test_a_pending_donation_counts_without_evidence_until_it_succeeds(client, make, db):
    admin = make.admin()
    donation = make.activity.donation(admin, status="pending")
    assert report(client, admin)["complianceRate"] == 0.0
    assert indicators(report(client, admin))["201-1"]["evidence"] == {"verified": 0, "total": 1}

    make.payment(donation, "succeeded")

    assert report(client, admin)["complianceRate"] == 100.0
    assert indicators(report(client, admin))["201-1"]["value"] == 25.0


def test_no_activity_is_a_rate_of_zero(client, make):
    data = report(client, make.admin(), framework="sasb")

    assert data["complianceRate"] == 0
    assert data["indicators"] == [
        {
            "code": "SV-PS-330a.3",
            "title": "Employee engagement as a percentage",
            "value": None,
            "unit": "percent",
            "evidence": {"verified": 0, "total": 1},
        }
    ]


def test_other_organizations_records_do_not_count(client, busy, make):
    other = make.admin()
    make.activity.act(other, level=1)
    make.activity.donation(other, status="failed")

    assert report(client, busy)["complianceRate"] == 54.5
    assert report(client, other)["complianceRate"] == 0.0
    assert indicators(report(client, other))["403-6"]["evidence"] == {"verified": 0, "total": 0}


def test_wellbeing_values_are_withheld_until_a_week_is_published(client, make):
    admin = make.admin()
    members = [make.member(admin) for _ in range(5)]
    for member, mood in zip(members[:4], (5, 4, 3, 3), strict=True):
        make.activity.response(member, days_ago=7, mood=mood, stress=2)
    make.activity.response(members[0], days_ago=7, mood=1, stress=5)  # a second answer by the same person

    # Four people in the last closed week: nothing is published, so nothing is shown, not even how many answered.
    withheld = indicators(report(client, admin, framework="un-sdg"))
    assert withheld["3.4"]["value"] is None and withheld["8.8"]["value"] is None
    assert withheld["3.4"]["evidence"] == {"verified": 0, "total": 0}
    participation = indicators(report(client, admin, framework="sasb"))["SV-PS-330a.3"]
    assert participation["value"] is None
    assert participation["evidence"] == {"verified": 0, "total": 6}

    make.activity.response(members[4], days_ago=7, mood=2, stress=4)

    # The published week's figures, noise included, are the indicators' values.
    published = client.get("/api/wellbeing", params={"scope": "organization"}, headers=admin.headers).json()["data"]
    responses = published["responses"]
    shown = indicators(report(client, admin, framework="un-sdg"))
    assert shown["3.4"] == {
        **shown["3.4"],
        "value": published["averages"]["mood"],
        "unit": "score 1-5",
        "evidence": {"verified": responses, "total": responses},
    }
    assert shown["8.8"]["value"] == published["averages"]["stress"]
    participation = indicators(report(client, admin, framework="sasb"))["SV-PS-330a.3"]
    assert participation["evidence"] == {"verified": published["respondents"], "total": 6}
    assert 0 < participation["value"] <= 100


def test_wellbeing_answers_outside_the_period_do_not_count(client, make):
    admin = make.admin()
    for _ in range(5):
        # Before the last 4 closed weeks whatever the day: in the quarter, not the month.
        make.activity.response(make.member(admin), days_ago=40)

    assert indicators(report(client, admin, framework="un-sdg"))["3.4"]["value"] is None
    quarter = client.get("/api/wellbeing", params={"scope": "organization", "period": "quarter"}, headers=admin.headers)
    value = indicators(report(client, admin, framework="un-sdg", period="quarter"))["3.4"]["value"]
    assert value == quarter.json()["data"]["averages"]["mood"] and 1 <= value <= 5


def test_donation_amounts_are_in_the_organizations_currency(client, make):
    admin = make.admin()
    organization = make.organization(admin)
    organization.reporting_currency = "JPY"
    make.activity.donation(admin, amount=2500, currency="JPY")

    line = indicators(report(client, admin, framework="social-value"))["NT28"]

    assert (line["value"], line["unit"]) == (2500.0, "JPY")


@pytest.mark.parametrize("framework_id", sorted(load_frameworks()))
def test_every_framework_reports_its_codes_in_file_order(client, make, framework_id):
    data = report(client, make.admin(), framework=framework_id)

    expected = [(item.code, item.title) for item in load_frameworks()[framework_id].indicators]
    assert [(item["code"], item["title"]) for item in data["indicators"]] == expected
    assert data["framework"] == framework_id


def test_unknown_framework_is_400(client, make):
    response = client.get("/api/compliance/iso-26000", headers=make.admin().headers)

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_the_contract_names_exactly_the_supported_frameworks():
    spec = yaml.safe_load(SPEC.read_text())
    assert spec["components"]["schemas"]["ComplianceFramework"]["enum"] == sorted(load_frameworks())


def test_an_unknown_period_is_400(client, make):
    response = client.get("/api/compliance/gri", params={"period": "decade"}, headers=make.admin().headers)

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_only_organization_admins_read_reports(client, make):
    admin = make.admin()
    assert client.get("/api/compliance/gri").status_code == 401
    for account in (make.member(admin), make.consultant()):
        response = client.get("/api/compliance/gri", headers=account.headers)
        assert response.status_code == 403
        assert response.json()["code"] == "forbidden"
