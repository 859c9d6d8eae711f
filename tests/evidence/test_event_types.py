"""The evidence event types: each feature declares those it appends, with their data's shape, and
the contract lists every one."""

from __future__ import annotations

import importlib
import pathlib
import typing

import pytest
import yaml

import kindling
from kindling.evidence import log as evidence
from tests.helpers.contract import ROOT

FEATURE_EVENTS = sorted(
    f"kindling.{path.parent.name}.events" for path in pathlib.Path(kindling.__file__).parent.glob("*/events.py")
)
DECLARED = {name: importlib.import_module(name) for name in FEATURE_EVENTS}


def test_every_event_type_is_declared_once_by_one_feature_and_listed_in_the_contract():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    listed = spec["components"]["schemas"]["EvidenceEventType"]["enum"]
    assert sorted(listed) == sorted(evidence.EVENT_TYPES)
    assert len(listed) == len(set(listed))
    # Each feature's module names its own: the registry holds nothing it does not, but the log's `imported`.
    names = {
        value
        for module in DECLARED.values()
        for attribute, value in vars(module).items()
        if attribute.isupper() and value in evidence.EVENT_TYPES
    }
    assert names | {evidence.IMPORTED} == set(evidence.EVENT_TYPES)
    assert {"kindling.accounts.events", "kindling.kindness.events", "kindling.privacy.events"} <= set(DECLARED)


@pytest.mark.parametrize("name", sorted(evidence.EVENT_TYPES))
def test_each_event_types_data_has_a_declared_shape(name):
    shape = evidence.EVENT_TYPES[name]
    assert typing.is_typeddict(shape)
    # Its module is the feature's (or the log's own, for `imported`).
    assert shape.__module__ in (*FEATURE_EVENTS, evidence.__name__)


def test_a_type_declared_twice_is_refused():
    with pytest.raises(ValueError, match="declared twice"):
        evidence.event_type("act.recorded", dict)
    assert evidence.EVENT_TYPES["act.recorded"] is DECLARED["kindling.kindness.events"].ActRecorded
