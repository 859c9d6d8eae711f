"""GET /api/bulk/export: the consultant's portfolio, one row per active client (docs/decisions.md §4, §9)."""

from __future__ import annotations

import datetime as dt

import pytest

from kindling.consulting import clients
from tests.helpers.compliance import PORTFOLIO_HEADER, csv_rows, portfolio

ROW_FIELDS = {
    "organizationId",
    "client",
    "kindnessActs",
    "volunteerHours",
    "donations",
    "matchedGiving",
    "currency",
    "complianceRate",
    "original",
    "unconverted",
}


@pytest.fixture
def consultant(make):
    return make.consultant()


def test_csv_rows_by_client_name_with_their_figures(client, db, make, consultant, busy):
    make.client(consultant, busy)
    zebra, apple = make.admin("zebra Trust"), make.admin("Apple Co-op")
    for admin in (zebra, apple):
        make.client(consultant, admin)
    make.activity.act(apple, level=4)
    make.activity.check_in(apple, apple, hours=1.25)
    make.activity.check_in(apple, apple, hours=7, verified=False)
    busy_name = make.organization(busy).name

    response = portfolio(client, consultant, format="csv")

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    assert response.headers["content-disposition"] == f'attachment; filename="kindling-portfolio-month-{today}.csv"'
    assert response.text.startswith("Client,Kindness Acts,Volunteer Hours,Donations,Compliance Rate\r\n")
    assert csv_rows(response) == [
        PORTFOLIO_HEADER,
        ["Apple Co-op", "1", "1.3", "0.00", "66.7"],  # 1.25 h rounds half up; the 7 unverified hours do not count
        [busy_name, "4", "4.5", "35.00", "54.5"],
        ["zebra Trust", "0", "0.0", "0.00", "0.0"],
    ]


def test_only_active_clients_of_this_consultant(client, db, make, consultant):
    active, ended, invited, elsewhere = (make.admin(f"Client {n}") for n in "ABCD")
    make.client(consultant, active)
    make.client(consultant, ended)
    clients.end_relationship(
        db, consultant_id=consultant.user.id, organization_id=ended.organization_id, ended_by="consultant"
    )
    make.invitation(consultant, invited)
    make.client(make.consultant(), elsewhere)

    rows = portfolio(client, consultant, format="json").json()["data"]

    assert [row["organizationId"] for row in rows] == [active.organization_id]


def test_no_clients_is_a_header_alone(client, consultant):
    assert (
        portfolio(client, consultant, format="csv").text
        == "Client,Kindness Acts,Volunteer Hours,Donations,Compliance Rate\r\n"
    )
    body = portfolio(client, consultant, format="json").json()
    assert body["data"] == []


def test_json_rows_and_window(client, db, make, consultant, busy):
    make.client(consultant, busy)

    before = dt.datetime.now(dt.UTC)
    response = portfolio(client, consultant, format="json", period="week")

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"data", "period", "from", "to", "generatedAt"}
    assert body["period"] == "week"
    start, end = dt.datetime.fromisoformat(body["from"]), dt.datetime.fromisoformat(body["to"])
    assert end - start == dt.timedelta(days=7) and before <= end
    assert body["generatedAt"] == body["to"]
    (row,) = body["data"]
    assert set(row) == ROW_FIELDS
    assert row["organizationId"] == busy.organization_id
    assert (row["kindnessActs"], row["volunteerHours"], row["donations"], row["complianceRate"]) == (4, 4.5, 35.0, 54.5)
    assert (row["matchedGiving"], row["currency"]) == (0.0, "USD")


def test_period_defaults_to_a_month(client, db, make, consultant):
    admin = make.admin()
    make.client(consultant, admin)
    make.activity.act(admin, days_ago=29)
    make.activity.act(admin, days_ago=31)
    make.activity.act(admin, days_ago=89)

    def acts(**params):
        return portfolio(client, consultant, format="json", **params).json()["data"][0]["kindnessActs"]

    assert portfolio(client, consultant, format="json").json()["period"] == "month"
    assert (acts(), acts(period="week"), acts(period="quarter"), acts(period="year")) == (1, 0, 3, 3)


def test_donations_are_major_units_of_each_clients_currency(client, db, make, consultant):
    dollars, yen, dinars = make.admin("A dollars"), make.admin("B yen"), make.admin("C dinars")
    for admin, currency in ((yen, "JPY"), (dinars, "KWD")):
        make.organization(admin).reporting_currency = currency
    for admin, currency in ((dollars, "USD"), (yen, "JPY"), (dinars, "KWD")):
        make.client(consultant, admin)
        # Stripe charges KWD in tens of fils.
        make.activity.donation(admin, amount=123460, currency=currency)
        make.activity.donation(admin, amount=990, currency=currency, status="refunded")

    rows = csv_rows(portfolio(client, consultant, format="csv"))

    assert [row[3] for row in rows[1:]] == ["1234.60", "123460.00", "123.46"]
    assert [row[4] for row in rows[1:]] == ["50.0", "50.0", "50.0"]


@pytest.mark.parametrize("name", ["=1+2", "+SUM(A1)", "-2+3", "@cmd", "\tTab Ltd", "\rReturn Ltd"])
def test_formula_cells_are_neutralised(client, db, make, consultant, name):
    admin = make.admin()
    make.organization(admin).name = name
    make.client(consultant, admin)
    db.flush()

    rows = csv_rows(portfolio(client, consultant, format="csv"))

    assert rows[1][0] == "'" + name
    assert portfolio(client, consultant, format="json").json()["data"][0]["client"] == name


def test_names_are_quoted_as_rfc_4180_says(client, db, make, consultant):
    make.client(consultant, make.admin('Smith, "Jones" & Co\nLondon'))

    response = portfolio(client, consultant, format="csv")

    assert '"Smith, ""Jones"" & Co\nLondon",0,0.0,0.00,0.0\r\n' in response.text
    assert csv_rows(response)[1][0] == 'Smith, "Jones" & Co\nLondon'


@pytest.mark.parametrize("period", ["week", "month", "quarter", "year"])
def test_the_export_and_the_compliance_report_agree(client, db, make, consultant, busy, period):
    make.client(consultant, busy)
    make.activity.act(busy, days_ago=20, level=4)
    make.activity.donation(busy, days_ago=60, status="failed")
    make.activity.check_in(busy, busy, days_ago=200, verified=False)

    row = portfolio(client, consultant, format="json", period=period).json()["data"][0]
    report = client.get("/api/compliance/gri", params={"period": period}, headers=busy.headers).json()["data"]

    assert row["complianceRate"] == report["complianceRate"]
    hours = {item["code"]: item for item in report["indicators"]}["413-1"]["value"]
    assert row["volunteerHours"] == hours


@pytest.mark.parametrize("params", [{}, {"format": "xml"}, {"format": "CSV"}, {"format": "csv", "period": "day"}])
def test_a_bad_format_or_period_is_400(client, consultant, params):
    response = portfolio(client, consultant, **params)

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_only_consultants_export(client, make):
    admin = make.admin()
    assert client.get("/api/bulk/export", params={"format": "csv"}).status_code == 401
    for account in (admin, make.member(admin)):
        response = portfolio(client, account, format="csv")
        assert response.status_code == 403
        assert response.json()["code"] == "forbidden"


def test_exports_count_against_the_bulk_limit(rate_window, client, consultant):
    for _ in range(10):
        response = portfolio(client, consultant, format="json")
        assert response.status_code == 200
        assert response.headers["x-ratelimit-limit"] == "10"
    limited = portfolio(client, consultant, format="csv")

    assert limited.status_code == 429
    assert limited.json()["code"] == "rate_limited"
