"""The quick path of canonical JSON writes exactly the bytes rfc8785 writes, as does the migrations' frozen rule."""

from __future__ import annotations

import hashlib

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from kindling.evidence.chain import canonical, event_hash
from kindling.migrations import frozen_hashing

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20
)


def assert_as_rfc8785(value) -> None:
    """`canonical` writes the bytes rfc8785 writes, and refuses what it refuses."""
    try:
        expected = rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        with pytest.raises(rfc8785.CanonicalizationError):
            canonical(value)
        return
    assert canonical(value) == expected


@settings(max_examples=300, deadline=None)
@given(values)
def test_canonical_is_rfc8785(value):
    assert_as_rfc8785(value)


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": [True, None, "x"], "é": 1, "\U0001f600": 2, "\ufb33": 3},
        {
            "distance": 12.0,
            "tiny": 1e-7,
            "huge": 1e21,
            "negative zero": -0.0,
            "plain": 153.4,
            "edge": 1e16,
            "low": 0.0001,
            "whole": [-3.0, 2.0**53 - 1, 2.0**53, -(2.0**53) + 1],
        },
        {"text": 'quote " backslash \\ controls \x00\x1f\x7f\u2028 and é'},
        {"big": 2**60},
    ],
)
def test_the_edges_agree(value):
    assert_as_rfc8785(value)


events = st.fixed_dictionaries(
    {
        "seq": st.integers(min_value=-1, max_value=2**60) | st.floats(allow_nan=False, allow_infinity=False),
        "organizationId": st.text(),
        "type": st.text(),
        "subject": st.fixed_dictionaries({"kind": st.text(), "id": st.text() | st.integers(min_value=0, max_value=9)}),
        "actorId": st.none() | st.text(),
        "data": values,
        "occurredAt": st.text(),
        "prevHash": st.text(),
    }
)


@settings(max_examples=300, deadline=None)
@given(events)
def test_event_hashes_are_sha256_of_rfc8785(event):
    try:
        expected = hashlib.sha256(rfc8785.dumps(event)).hexdigest()
    except rfc8785.CanonicalizationError:
        with pytest.raises(rfc8785.CanonicalizationError):
            event_hash(event)
        return
    assert event_hash(event) == expected
    # What migrations appended verifies under the live rule.
    assert frozen_hashing.event_hash(event) == expected
