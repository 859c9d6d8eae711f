"""Every compliance report states how concentrated its external validation is (docs/evidence.md):
`externalValidation: {acts, attesters, largestShare}`, recomputed by `kindling evidence verify --report`."""

from __future__ import annotations

import json

from tests.helpers.compliance import exported
from tests.helpers.evidence import check_report, export, resigned
from tests.helpers.verification import ASK, answer, ask, post_act

# Three aliases of one mailbox, and another mailbox.
ATTESTERS = ("ada@foodbank.example", "Ada+Tuesday@FoodBank.example", "ada+friday@foodbank.example", "olu@trust.example")


def attested(client, sender, mailbox, address: str) -> None:
    act = post_act(client, sender, "neighbour", 5)
    assert ask(client, sender, act["id"], {**ASK, "attesterEmail": address}).status_code == 201
    assert answer(client, mailbox.token_for(address.lower())).status_code == 200


def test_reports_state_how_many_attesters_level_five_rests_on(client, runtime, make, mailbox, tmp_path, capsys):
    admin = make.admin()
    sender = make.member(admin)
    for address in ATTESTERS:
        attested(client, sender, mailbox, address)
    make.activity.act(sender, level=5, days_ago=40)  # before the month: not counted
    make.activity.act(sender, level=3)  # evidence, but not external
    expected = {"acts": 4, "attesters": 2, "largestShare": 0.75}

    for framework in ("csrd", "gri"):
        response = client.get(f"/api/compliance/{framework}", params={"period": "month"}, headers=admin.headers)
        assert response.json()["data"]["externalValidation"] == expected
    assert client.get("/api/compliance/gri", params={"period": "year"}, headers=admin.headers).json()["data"][
        "externalValidation"
    ] == {"acts": 5, "attesters": 3, "largestShare": 0.6}
    report = exported(client, admin, "csrd")
    assert report["data"]["externalValidation"] == expected

    bundle = export(client, admin)
    code, output = check_report(tmp_path, capsys, client, bundle, report)
    assert code == 0, output
    # Signed again, as Kindling would sign a figure its tables gave it: only the log can refute it.
    for stated in ({**expected, "attesters": 4}, {**expected, "largestShare": 0.25}, {**expected, "acts": 3}):
        altered = json.loads(json.dumps(report))
        altered["data"]["externalValidation"] = stated
        code, output = check_report(tmp_path, capsys, client, bundle, resigned(runtime, altered))
        assert code == 1 and "externalValidation" in output and "from the log" in output
    del report["data"]["externalValidation"]
    code, output = check_report(tmp_path, capsys, client, bundle, resigned(runtime, report))
    assert code == 1 and "externalValidation" in output


def test_without_external_validation_the_share_is_zero(client, make):
    admin = make.admin()
    make.activity.act(make.member(admin), level=4)
    response = client.get("/api/compliance/csrd", headers=admin.headers)
    assert response.json()["data"]["externalValidation"] == {"acts": 0, "attesters": 0, "largestShare": 0}
