"""Property tests of money over every ISO 4217 code: stored, converted and reported amounts equal a
recomputation by plain integer arithmetic, for exponents 0, 2, 3 and 4; and Stripe's exceptions."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kindling.evidence.report_check import _Quotes
from kindling.platform import money
from tests.factories import donations as payments
from tests.helpers.webhooks import deliver_payment

CODES = money.currencies()
BY_EXPONENT = {e: [c for c in CODES if money.exponent(c) == e] for e in (0, 2, 3, 4)}
# A decimal quote as the ECB prints it: digits, and up to 6 decimals.
QUOTES = st.builds(
    lambda units, decimals: f"{units // 10**decimals}.{units % 10**decimals:0{decimals}d}" if decimals else str(units),
    st.integers(1, 10**9),
    st.integers(0, 6),
)
# The machine these run on is shared: generation time is no measure of the tests.
PATIENT = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)


def _integer_fraction(amount: int, source: str, target: str, source_rate: str, target_rate: str) -> tuple[int, int]:
    """The conversion as numerator and denominator of integers, written out independently."""

    def scaled(quote: str) -> tuple[int, int]:
        whole, _, fraction = quote.partition(".")
        return int(whole + fraction), 10 ** len(fraction)

    (nt, dt_), (nf, df) = scaled(target_rate), scaled(source_rate)
    shift = money.exponent(target) - money.exponent(source)
    numerator = amount * nt * df * 10 ** max(shift, 0)
    denominator = nf * dt_ * 10 ** max(-shift, 0)
    return numerator, denominator


def _half_even(numerator: int, denominator: int) -> int:
    quotient, remainder = divmod(numerator, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and quotient % 2):
        quotient += 1
    return quotient


def test_the_table_has_every_exponent_and_no_code_without_a_minor_unit():
    assert all(BY_EXPONENT[e] for e in (0, 2, 3, 4))
    assert len(CODES) == sum(len(codes) for codes in BY_EXPONENT.values())
    assert {"XAU", "XXX", "XDR"}.isdisjoint(CODES) and {"CLF", "KWD", "JPY", "HUF", "EUR"} <= set(CODES)
    assert (money.exponent("HUF"), money.exponent("ISK"), money.exponent("CLF")) == (2, 0, 4)


@PATIENT
@given(st.sampled_from(CODES), st.sampled_from(CODES), st.integers(0, 10**12), QUOTES, QUOTES)
def test_a_conversion_is_the_integer_recomputation_floored_or_half_even(source, target, amount, fr, to):
    exact = money.converted(amount, source=source, target=target, source_rate=fr, target_rate=to)
    numerator, denominator = _integer_fraction(amount, source, target, fr, to)
    assert exact * denominator == numerator
    assert money.floor(exact) == numerator // denominator
    assert money.half_even(exact) == _half_even(numerator, denominator)


@PATIENT
@given(
    st.sampled_from([0, 2, 3, 4]).flatmap(lambda e: st.sampled_from(BY_EXPONENT[e])),
    st.lists(
        st.tuples(st.sampled_from(["JPY", "GBP", "KWD", "CLF", "EUR", "TWD"]), st.integers(1, 10**9)),
        max_size=20,
    ),
    st.fixed_dictionaries(dict.fromkeys(("JPY", "GBP", "KWD", "CLF"), QUOTES)),
)
def test_a_reported_sum_is_the_sum_of_each_gift_recomputed_half_even(unit, gifts, quotes):
    day = "2026-10-30"
    rate = {unit: "1.5", **quotes, "EUR": "1"}
    listed = [{"currency": c, "rateDate": day, "rate": q} for c, q in rate.items() if c != "EUR"]
    total, unconverted = _Quotes(listed).total([(c, f"{day}T12:00:00Z", a) for c, a in gifts], unit)
    expected, apart = 0, {}
    for currency, amount in gifts:
        if currency == unit:
            expected += amount
        elif currency == "TWD":  # no quote: apart, never as zero
            apart[currency] = apart.get(currency, 0) + amount
        else:
            expected += _half_even(*_integer_fraction(amount, currency, unit, rate[currency], rate[unit]))
    assert (total, unconverted) == (expected, dict(sorted(apart.items())))


@pytest.fixture
def admin_and_secret(payment_secret, make):
    return make.admin()


def test_every_code_is_stored_in_its_minor_units_and_settled_by_stripes_amount(client, db, make, admin_and_secret):
    for code in CODES:
        # The smallest amount above a whole unit Stripe can charge in the code.
        amount = 10 ** money.exponent(code) + money.stripe_step(code)
        response = client.post(
            "/api/donations",
            json={"amount": amount, "currency": code, "recipient": {"name": "Shelter"}},
            headers=admin_and_secret.headers,
        )
        assert response.status_code == 201, (code, response.text)
        donation = response.json()["data"]
        assert (donation["amount"], donation["currency"]) == (amount, code)
        wire = money.to_stripe(amount, code)
        assert money.from_stripe(wire, code) == amount
        settled = payments.Donation(id=donation["id"], amount=amount, currency=code)
        event = payments.payment_event("payment_intent.succeeded", settled)
        assert deliver_payment(client, event).json()["outcome"] == "processed"
    assert len(
        client.get("/api/donations", params={"limit": 200}, headers=admin_and_secret.headers).json()["data"]
    ) == (len(CODES))


@pytest.mark.parametrize(
    ("code", "minor", "wire", "refused"),
    [
        ("ISK", 5, 500, None),  # zero-decimal in ISO 4217, hundredths of whole krónur at Stripe
        ("HUF", 1234, 1234, None),  # two decimals in both
        ("TWD", 1234, 1234, None),  # two decimals in both
        ("JPY", 500, 500, None),
        ("UGX", 500, 500, None),
        ("MGA", 500, 5, 550),  # two decimals in ISO 4217, zero-decimal at Stripe
        ("BHD", 5120, 5120, 5124),  # three decimals, ending in 0 at Stripe
        ("JOD", 5120, 5120, 5124),
        ("KWD", 5120, 5120, 5124),
        ("OMR", 5120, 5120, 5124),
        ("TND", 5120, 5120, 5124),
    ],
)
def test_each_stripe_exception(code, minor, wire, refused):
    assert money.to_stripe(minor, code) == wire
    assert money.from_stripe(wire, code) == minor
    if refused is not None:
        assert money.to_stripe(refused, code) is None
    if code == "ISK":
        assert money.from_stripe(550, code) is None  # half a króna is no ISO amount


def test_a_dated_recomputation_uses_the_last_listed_day_on_or_before_the_gift():
    listed = [
        {"currency": "USD", "rateDate": "2026-10-29", "rate": "1.113"},
        {"currency": "USD", "rateDate": "2026-10-30", "rate": "1.1172"},
    ]
    gift = [("EUR", dt.datetime(2026, 10, 29, 23, 30, tzinfo=dt.UTC).isoformat(), 1000)]
    assert _Quotes(listed).total(gift, "USD") == (1113, {})
