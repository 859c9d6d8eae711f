"""Matches of gifts in other currencies: converted at the ECB quotes of the gift's day, floored,
then capped; recorded with their conversion; reversed by the same amount."""

from __future__ import annotations

import datetime as dt

import pytest

from kindling.platform import money
from tests.helpers import giving
from tests.helpers import rates as history
from tests.helpers.giving import giving_events, requests_of, settle

# A Sunday: the ECB's last publication before it is Friday 30 October.
SUNDAY = dt.datetime(2026, 11, 1, 12, tzinfo=dt.UTC)
CONVERSION = {"rateDate": "2026-10-30", "ratesDigest": history.DIGEST}


pytestmark = pytest.mark.usefixtures("payment_secret")


@pytest.fixture(autouse=True)
def quotes(db):
    history.load(db)


def gift(client, make, account, amount: int, currency: str, created_at=SUNDAY):
    """A gift made on SUNDAY unless told otherwise, so at the quotes of Friday 30 October."""
    return giving.gift(client, make, account, amount, currency, created_at)


def test_a_gift_in_euros_is_matched_in_dollars_at_the_quote_of_its_day_floored(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    program = make.match_program(admin)
    donation = gift(client, make, member, 2503, "EUR")
    # 25.03 EUR at 1.1172 USD per EUR is 27.963516 USD: 2796 cents.
    [request] = requests_of(client, admin)
    assert (request["giftAmount"], request["computedAmount"], request["amount"], request["currency"]) == (
        2796,
        2796,
        2796,
        "USD",
    )
    [(kind, data)] = giving_events(db, admin.organization_id)
    assert kind == "giving.requested" and data["programId"] == program.id
    assert data["conversion"] == {"from": "EUR", "to": "USD", "fromRate": "1", "toRate": "1.1172", **CONVERSION}
    assert data["giftAmount"] == money.floor(
        money.converted(donation.amount, source="EUR", target="USD", source_rate="1", target_rate="1.1172")
    )
    # A refund reverses what was matched, whatever the quotes have become since.
    history.load(db, history.HISTORY.replace(b"2026-10-30,1.1172", b"2026-10-30,2.5"))
    settle(client, donation, "charge.refunded")
    reversed_ = giving_events(db, admin.organization_id)[-1]
    assert reversed_[0] == "giving.reversed" and reversed_[1]["amount"] == 2796
    assert requests_of(client, admin)[0]["status"] == "reversed"


def test_the_minimum_and_the_caps_apply_to_the_converted_gift(client, make):
    admin = make.admin()
    member = make.member(admin)
    # 1000 yen at 175.68 and 1.1172 per EUR is 6.359 USD: 635 cents, under a 700-cent minimum.
    make.match_program(admin, minimum_gift=700, per_person_cap=1000)
    gift(client, make, member, 1000, "JPY")
    # 2000 yen is 1271 cents, matched up to the 1000-cent cap.
    gift(client, make, member, 2000, "JPY")
    shapes = sorted((r["giftAmount"], r["amount"], r["capped"], r["reason"]) for r in requests_of(client, admin))
    assert shapes == [(635, 0, False, "below_minimum"), (1271, 1000, True, None)]


def test_three_and_zero_decimal_currencies_convert_by_their_iso_exponents(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    make.match_program(admin, currency="KWD")
    # 5000 yen (exponent 0) to fils (exponent 3): 5000 × 1000 × 0.3421 / 175.68 = 9736.45 fils.
    gift(client, make, member, 5000, "JPY")
    [request] = requests_of(client, admin)
    assert (request["giftAmount"], request["currency"]) == (9736, "KWD")
    assert giving_events(db, admin.organization_id)[0][1]["conversion"] == {
        "from": "JPY",
        "to": "KWD",
        "fromRate": "175.68",
        "toRate": "0.3421",
        **CONVERSION,
    }


def test_a_gift_the_ecb_does_not_quote_is_matched_only_in_its_own_currency(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    dollars = make.match_program(admin)
    dollars_id = dollars.id
    taiwan = make.match_program(admin, currency="TWD")
    gift(client, make, member, 50000, "TWD")
    by_program = {r["programId"]: r for r in requests_of(client, admin)}
    assert (by_program[dollars_id]["status"], by_program[dollars_id]["reason"]) == (
        "ineligible",
        "currency_not_convertible",
    )
    assert by_program[dollars_id]["amount"] == 0 and by_program[dollars_id]["giftAmount"] is None
    assert (by_program[taiwan.id]["status"], by_program[taiwan.id]["amount"]) == ("approved", 50000)
    assert all("conversion" not in data for _, data in giving_events(db, admin.organization_id))


def test_a_gift_before_the_history_starts_is_not_convertible(client, make):
    admin = make.admin()
    make.match_program(admin)
    gift(client, make, make.member(admin), 2500, "EUR", created_at=dt.datetime(2026, 10, 25, tzinfo=dt.UTC))
    assert requests_of(client, admin)[0]["reason"] == "currency_not_convertible"
