"""POST /api/compliance/export: the report as CSV, JSON and PDF files (docs/decisions.md §8)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from decimal import ROUND_HALF_UP, Decimal
from unittest.mock import ANY

import pypdfium2
import pytest
from PIL import ImageStat

from tests.helpers.compliance import csv_rows, export, pdf_text

CSV_HEADER = [
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
]


def today() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")


@pytest.fixture
def named(make):
    """An admin whose organization's name a spreadsheet would run as a formula."""
    return make.admin(organization_name='=HYPERLINK("http://evil.test","Acme, Inc")')


def test_csv_has_a_header_and_a_row_per_indicator(client, busy):
    response = export(client, busy, framework="gri", format="csv")

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    slug = client.get("/api/auth/session", headers=busy.headers).json()["data"]["organization"]["slug"]
    assert response.headers["content-disposition"] == f'attachment; filename="kindling-gri-{slug}-month-{today()}.csv"'
    assert response.text.endswith("\r\n") and "\n" not in response.text.replace("\r\n", "")
    rows = csv_rows(response)
    assert rows[0] == CSV_HEADER
    by_code = {row[6]: row for row in rows[1:]}
    assert list(by_code) == [
        "201-1",
        "201-1-a-ii (matched giving)",
        "201-1-a-ii (volunteer grants)",
        "403-4",
        "403-6",
        "413-1",
    ]
    assert {row[0] for row in rows[1:]} == {"gri"} and {row[5] for row in rows[1:]} == {"54.5"}
    assert by_code["201-1"][8:] == ["35.0", "USD", "2", "4"]
    assert by_code["403-4"][8:] == ["", "percent", "0", "3"]  # withheld: an empty cell
    assert by_code["413-1"][8:] == ["4.5", "hours", "2", "3"]


def test_csv_cells_never_start_a_formula(client, named):
    response = export(client, named, framework="social-value", format="csv", period="week")

    rows = csv_rows(response)
    assert {row[1] for row in rows[1:]} == {'\'=HYPERLINK("http://evil.test","Acme, Inc")'}
    # RFC 4180: the comma and the quotes are quoted, the quotes doubled.
    assert '"\'=HYPERLINK(""http://evil.test"",""Acme, Inc"")"' in response.text
    assert (
        'filename="kindling-social-value-hyperlink-http-evil-test-acme-inc-week-'
        in response.headers["content-disposition"]
    )


def test_json_is_the_report_body(client, busy):
    response = export(client, busy, framework="csrd", format="json", period="year")

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert re.fullmatch(
        r'attachment; filename="kindling-csrd-[a-z0-9-]+-year-\d{4}-\d{2}-\d{2}\.json"',
        response.headers["content-disposition"],
    )
    exported = response.json()["data"]
    shown = client.get("/api/compliance/csrd", params={"period": "year"}, headers=busy.headers).json()["data"]
    # What only a file states: the evidence head it was computed at, and whether it is witnessed.
    moments = ("from", "to", "generatedAt", "evidenceHead", "evidenceWitnessed")
    # The file's indicators also name their metric, for `kindling evidence verify --report`.
    assert all(indicator.pop("metric") for indicator in exported["indicators"])
    assert {k: v for k, v in exported.items() if k not in moments} == {
        k: v for k, v in shown.items() if k not in moments
    }
    assert exported["period"] == "year" and exported["complianceRate"] == 54.5
    assert exported["evidenceWitnessed"] is False  # no witness listed


def test_pdf_shows_the_figures(client, busy, db):
    response = export(client, busy, framework="gri", format="pdf")

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"].endswith(f'-month-{today()}.pdf"')
    assert response.content.startswith(b"%PDF-")
    text = " ".join(pdf_text(response.content).split())
    organization = client.get("/api/auth/session", headers=busy.headers).json()["data"]["organization"]["name"]
    assert "GRI Standards: compliance report" in text
    assert f"Organization {organization}" in text
    assert "Compliance rate 54.5 %" in text
    assert "Period month:" in text
    for expected in (
        "201-1 Direct economic value generated and distributed $35.00 USD 2 / 4",  # Babel, locale en
        "403-4 Worker participation",
        "withheld percent 0 / 3",
        "403-6 Promotion of worker health 2 acts 1 / 2",
        "4.5 hours 2 / 3",
        "Evidence per indicator",
        "with evidence",
        "all records",
    ):
        assert expected in text, expected


def test_pdf_opens_and_renders_a_page(client, busy):
    content = export(client, busy, framework="csrd", format="pdf").content

    with pypdfium2.PdfDocument(content) as document:
        image = document[0].render(scale=50 / 72).to_pil()  # 50 dpi
    with image:
        assert image.width > 300 and image.height > 400
        grey = image.convert("L")
        assert ImageStat.Stat(grey).extrema[0][0] < 100  # some dark ink: text, table lines, bars
        dark = sum(grey.histogram()[:128])
        assert dark > 0.005 * image.width * image.height


def test_pdf_of_a_quiet_period_still_has_its_table_and_chart(client, make):
    content = export(client, make.admin(), framework="un-sdg", format="pdf", period="week").content

    text = " ".join(pdf_text(content).split())
    assert "Compliance rate 0.0 %" in text
    assert "3.4 By 2030, reduce by one third" in text and "withheld score 1-5 0 / 0" in text
    assert "Evidence per indicator" in text


def test_pdf_escapes_markup_in_names(client, make):
    admin = make.admin(organization_name="Smith & Sons <Holdings>")

    text = pdf_text(export(client, admin, framework="gri", format="pdf").content)

    assert "Smith & Sons <Holdings>" in text


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"framework": "iso-26000", "format": "csv"}, 400),
        ({"framework": "gri", "format": "xlsx"}, 400),
        ({"framework": "gri"}, 400),
        ({"framework": "gri", "format": "csv", "period": "decade"}, 400),
        ({"framework": "gri", "format": "csv", "extra": 1}, 400),
    ],
)
def test_bad_requests(client, make, body, status):
    response = export(client, make.admin(), **body)

    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"


def test_only_organization_admins_export(client, make):
    admin = make.admin()
    body = {"framework": "gri", "format": "pdf"}
    assert client.post("/api/compliance/export", json=body).status_code == 401
    for account in (make.member(admin), make.consultant()):
        assert export(client, account, **body).status_code == 403


def wellbeing_figures(client, admin, period: str) -> dict:
    """The wellbeing indicators of the un-sdg (mood, stress) and gri (participation) reports,
    on screen and in every export format."""
    figures = {}
    for framework, codes in (("un-sdg", ("3.4", "8.8")), ("gri", ("403-4",))):
        shown = client.get(f"/api/compliance/{framework}", params={"period": period}, headers=admin.headers).json()[
            "data"
        ]
        exported = export(client, admin, framework=framework, format="json", period=period).json()["data"]
        rows = list(
            csv.DictReader(io.StringIO(export(client, admin, framework=framework, format="csv", period=period).text))
        )
        pdf = " ".join(
            pdf_text(export(client, admin, framework=framework, format="pdf", period=period).content).split()
        )
        for code in codes:
            line = next(item for item in shown["indicators"] if item["code"] == code)
            assert next(item for item in exported["indicators"] if item["code"] == code) == {**line, "metric": ANY}
            row = next(row for row in rows if row["Code"] == code)
            assert (row["Value"], row["Evidence Verified"], row["Evidence Total"]) == (
                "" if line["value"] is None else str(line["value"]),
                str(line["evidence"]["verified"]),
                str(line["evidence"]["total"]),
            )
            evidence = f"{line['evidence']['verified']} / {line['evidence']['total']}"
            places = 2 if line["unit"] == "score 1-5" else 1
            value = "withheld" if line["value"] is None else f"{line['value']:.{places}f}"
            assert f"{value} {line['unit']} {evidence}" in pdf, (code, value, evidence)
            figures[code] = (line["value"], line["evidence"])
    return figures


def test_wellbeing_indicators_and_exports_follow_the_published_aggregates(client, make):
    admin = make.admin()
    people = [make.member(admin) for _ in range(9)]
    for person, mood in zip(people[:5], (5, 4, 4, 3, 2), strict=True):
        make.activity.response(person, days_ago=7, mood=mood, stress=6 - mood)

    before = {}
    for period in ("week", "month", "quarter", "year"):
        aggregate = client.get(
            "/api/wellbeing", params={"scope": "organization", "period": period}, headers=admin.headers
        ).json()["data"]
        figures = wellbeing_figures(client, admin, period)
        responses = {"verified": aggregate["responses"], "total": aggregate["responses"]}
        assert figures["3.4"] == (aggregate["averages"]["mood"], responses)
        assert figures["8.8"] == (aggregate["averages"]["stress"], responses)
        # The published (noisy) respondents of the 10 active members, at most everyone.
        participation = min(
            float((Decimal(100 * aggregate["respondents"]) / 10).quantize(Decimal("0.1"), ROUND_HALF_UP)), 100.0
        )
        assert figures["403-4"] == (participation, {"verified": aggregate["respondents"], "total": 10})
        before[period] = figures

    # Four more people, in the open week: the published week stands, and so does every figure built on it.
    for person in people[5:]:
        make.activity.response(person, days_ago=0, mood=1, stress=5)
    for period in before:
        assert wellbeing_figures(client, admin, period) == before[period]
