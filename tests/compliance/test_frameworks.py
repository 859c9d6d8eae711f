import pytest

from kindling.compliance import (
    CURRENCY_UNIT,
    METRICS,
    InvalidFrameworks,
    get_framework,
    load_frameworks,
    read_frameworks,
)
from kindling.errors import NotFound

FRAMEWORK_IDS = {"b-corp", "csrd", "gri", "sasb", "social-value", "un-sdg"}


def indicator(framework_id, code):
    matches = [item for item in get_framework(framework_id).indicators if item.code == code]
    assert len(matches) == 1, f"{framework_id} has no single indicator {code}"
    return matches[0]


def test_metric_vocabulary_and_units():
    assert {name: metric.unit for name, metric in METRICS.items()} == {
        "kindness_acts": "acts",
        "kindness_acts_peer_recognition": "acts",
        "kindness_acts_community": "acts",
        "kindness_acts_wellbeing": "acts",
        "verified_kindness_share": "percent",
        "volunteer_hours": "hours",
        "verified_check_ins": "check-ins",
        "volunteer_participants": "people",
        "donations_succeeded": "donations",
        "donation_amount": CURRENCY_UNIT,
        "matched_giving_amount": CURRENCY_UNIT,
        "volunteer_grant_amount": CURRENCY_UNIT,
        "wellbeing_participation": "percent",
        "wellbeing_mood_average": "score 1-5",
        "wellbeing_stress_average": "score 1-5",
    }
    assert all(metric.description and "\n" not in metric.description for metric in METRICS.values())


def test_all_six_frameworks_load_with_name_source_and_indicators():
    frameworks = load_frameworks()

    assert set(frameworks) == FRAMEWORK_IDS
    for framework_id, framework in frameworks.items():
        assert framework.id == framework_id
        assert framework.name and framework.source
        assert 1 <= len(framework.indicators) <= 8


def test_load_frameworks_reads_the_file_once():
    assert load_frameworks() is load_frameworks()


def test_every_indicator_has_a_known_metric_and_its_unit():
    for framework in load_frameworks().values():
        for item in framework.indicators:
            assert item.metric in METRICS
            assert item.unit == METRICS[item.metric].unit


def test_codes_are_unique_within_each_framework():
    for framework in load_frameworks().values():
        codes = [item.code for item in framework.indicators]
        assert len(codes) == len(set(codes)), framework.id


def test_get_framework_returns_the_framework():
    assert get_framework("gri") is load_frameworks()["gri"]


@pytest.mark.parametrize("framework_id", ["iso-26000", "GRI", "gri ", ""])
def test_unknown_framework_is_not_found(framework_id):
    with pytest.raises(NotFound) as raised:
        get_framework(framework_id)

    assert raised.value.status == 404
    assert raised.value.details == {"supported": sorted(FRAMEWORK_IDS)}


@pytest.mark.parametrize(
    ("framework_id", "code", "metric"),
    [
        ("gri", "413-1", "volunteer_hours"),
        ("gri", "201-1", "donation_amount"),
        ("gri", "403-6", "kindness_acts_wellbeing"),
        ("social-value", "NT29", "volunteer_hours"),
        ("social-value", "NT28", "donation_amount"),
        ("csrd", "S1-2", "wellbeing_participation"),
        ("csrd", "S3-4 §32(c)", "volunteer_hours"),
        ("sasb", "SV-PS-330a.3", "wellbeing_participation"),
        ("b-corp", "Community: Civic Engagement & Giving (giving)", "donation_amount"),
    ],
)
def test_real_codes_map_to_their_metric(framework_id, code, metric):
    assert indicator(framework_id, code).metric == metric


def test_real_titles_are_the_official_wording():
    assert indicator("gri", "413-1").title == (
        "Operations with local community engagement, impact assessments, and development programs"
    )
    assert indicator("social-value", "NT29").title == (
        "No. of hours volunteering time provided to support local community projects"
    )
    assert indicator("un-sdg", "3.4").title.endswith("promote mental health and well-being")


def test_sdg_target_3_4_is_tied_to_a_wellbeing_metric():
    item = indicator("un-sdg", "3.4")

    assert item.metric.startswith("wellbeing_")
    assert item.unit == "score 1-5"


def test_donation_indicators_carry_the_currency_placeholder():
    assert indicator("social-value", "NT28").unit == CURRENCY_UNIT


VALID = """
frameworks:
  demo:
    name: Demo
    source: Demo publisher, Demo standard 2024
    indicators:
      - code: D-1
        title: Volunteering
        metric: volunteer_hours
      - code: D-2
        title: Giving
        metric: donation_amount
"""


def test_a_valid_document_reads_in_file_order_with_derived_units():
    framework = read_frameworks(VALID)["demo"]

    assert [(item.code, item.metric, item.unit) for item in framework.indicators] == [
        ("D-1", "volunteer_hours", "hours"),
        ("D-2", "donation_amount", CURRENCY_UNIT),
    ]


def problems_of(text):
    with pytest.raises(InvalidFrameworks) as raised:
        read_frameworks(text)
    return raised.value.problems


def test_validation_rejects_an_unknown_metric():
    problems = problems_of(VALID.replace("metric: donation_amount", "metric: donation_total"))

    assert problems == ["framework 'demo' indicator 2 has unknown metric 'donation_total'"]


def test_validation_rejects_a_duplicate_code():
    problems = problems_of(VALID.replace("code: D-2", "code: D-1"))

    assert problems == ["framework 'demo' has code 'D-1' more than once"]


def test_validation_rejects_a_repeated_framework_id():
    problems = problems_of(VALID + VALID.replace("frameworks:\n", ""))

    assert len(problems) == 1 and "'demo' repeated" in problems[0]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("        title: Giving\n", "", "framework 'demo' indicator 2 needs a non-empty text 'title'"),
        ("code: D-2", "code: 3.4", "framework 'demo' indicator 2 needs a non-empty text 'code'"),
        ("code: D-2", "code: ' D-2'", "framework 'demo' indicator 2 has surrounding whitespace in 'code'"),
        (
            "metric: donation_amount",
            "metric: donation_amount\n        unit: GBP",
            "framework 'demo' indicator 2 has unknown keys ['unit']",
        ),
        ("    source: Demo publisher, Demo standard 2024\n", "", "framework 'demo' needs a non-empty text 'source'"),
        ("  demo:", "  Demo_Framework:", "framework id 'Demo_Framework' is not lower-case words joined by hyphens"),
    ],
)
def test_validation_names_each_broken_rule(old, new, expected):
    assert problems_of(VALID.replace(old, new)) == [expected]


@pytest.mark.parametrize(
    "text",
    ["", "frameworks: {}", "frameworks: [demo]", "- demo", "frameworks:\n  demo:\n    name: [unclosed"],
)
def test_validation_rejects_documents_without_frameworks(text):
    assert problems_of(text)


def test_validation_rejects_a_framework_without_indicators():
    text = "frameworks:\n  demo:\n    name: Demo\n    source: Demo 2024\n    indicators: []\n"

    assert problems_of(text) == ["framework 'demo' needs a non-empty list 'indicators'"]


def test_validation_reports_every_problem_at_once():
    text = VALID.replace("metric: volunteer_hours", "metric: hours").replace("code: D-2", "code: D-1")

    assert problems_of(text) == [
        "framework 'demo' indicator 1 has unknown metric 'hours'",
        "framework 'demo' has code 'D-1' more than once",
    ]
