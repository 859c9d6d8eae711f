"""An attester's address is parsed once and means one mailbox (docs/decisions.md §6): every spelling
that once let level 5 be self-issued, against the real SMTP server on loopback, with what it received."""

from __future__ import annotations

import hashlib

import pytest
import yaml
from sqlalchemy import select

from kindling.accounts import lifecycle
from kindling.accounts.models import SsoDomain
from kindling.evidence.models import EvidenceEvent
from kindling.kindness.verification_models import Attestation
from kindling.platform import addresses
from tests.helpers import assert_envelope
from tests.helpers.verification import ACTS, ASK, answer, ask, get_act, post_act
from tests.servers.mail import Envelope

SENDER = "mallory@corp.example"


@pytest.fixture
def people(make):
    admin = make.admin("Corp", email="admin@corp.example")
    return {"admin": admin, "sender": make.member(admin, email=SENDER), "member": make.member(admin)}


def attest(client, account, act_id: str, address: str, level: int = 5):
    body = (
        {**ASK, "attesterEmail": address} if level == 5 else {"level": 2, "attesterName": "N", "attesterEmail": address}
    )
    return ask(client, account, act_id, body)


def refused_field(response) -> list[str]:
    return [error["field"] for error in response.json()["details"]["errors"]]


NOT_BARE = [
    "<mallory@corp.example>",
    "Mallory <mallory@corp.example>",
    '"Mallory" <mallory@corp.example>',
    "mallory@corp.example(x)",
    "mallory(x)@corp.example",
    "mallory@corp.example,x",
    "mallory@corp.example,ada@foodbank.example",
    "ada@foodbank.example;mallory@corp.example",
    '"mallory"@corp.example',
    '"mallory@corp.example"@foodbank.example',
    " ada@foodbank.example",
    "ada@foodbank.example ",
    "ada @foodbank.example",
    "ada@foodbank.example\n",
    "ada@foodbank.example\r\nBcc: mallory@corp.example",
    "ada@foodbank.example.",
    "ada@foodbank.example\u3002",
    "ada@[127.0.0.1]",
    "ada@localhost",
    "ada..b@foodbank.example",
    ".ada@foodbank.example",
    "ada@foodbank..example",
    "ada@-foodbank.example",
    "\u00e9milie@foodbank.example",
    "ada@@foodbank.example",
]


@pytest.mark.parametrize("address", NOT_BARE)
def test_anything_but_a_bare_address_is_refused_naming_the_field(client, people, mailbox, address):
    act = post_act(client, people["sender"], "neighbour-1", 5)
    response = attest(client, people["sender"], act["id"], address)
    assert_envelope(response, 400, "validation_error")
    assert refused_field(response) == ["attesterEmail"]
    assert mailbox.messages == [] and mailbox.envelopes == []


@pytest.mark.parametrize("address", NOT_BARE)
def test_the_service_refuses_what_the_spec_refuses(address):
    # Callers other than the HTTP edge (the factories, the SDK's server side) meet the same parse.
    with pytest.raises(addresses.InvalidAddress):
        addresses.parse(address)


def test_the_specs_pattern_is_the_services():
    with open("openapi.yaml", encoding="utf-8") as spec:
        schema = yaml.safe_load(spec)["components"]["schemas"]["AttesterEmail"]
    assert schema["pattern"] == addresses.PATTERN


def test_the_one_normal_form_is_mailed_to_one_recipient_shown_and_keyed(client, people, db, mailbox):
    act = post_act(client, people["sender"], "neighbour-2", 5)
    response = attest(client, people["sender"], act["id"], "Ada+Shelter@B\u00dcCHER-Bank.Example")
    assert response.status_code == 201, response.text
    normal = "ada+shelter@xn--bcher-bank-9db.example"
    assert response.json()["data"]["attesterDomain"] == "xn--bcher-bank-9db.example"
    # Exactly what the server was told in the dialogue: one RCPT TO, the normal form.
    assert mailbox.envelopes == [Envelope("attest@kindling.test", (normal,))]
    [mail] = mailbox.messages
    assert mail["To"] == normal
    assert answer(client, mailbox.token_for(normal)).status_code == 200
    event = db.scalar(
        select(EvidenceEvent).where(EvidenceEvent.type == "attestation.answered", EvidenceEvent.subject_id == act["id"])
    )
    organization_id = people["admin"].organization_id
    # The key is the compared mailbox's: the +tag is not part of it.
    mailbox_key = hashlib.sha256(f"{organization_id}\nada@xn--bcher-bank-9db.example".encode()).hexdigest()
    assert (event.data["attesterDomain"], event.data["attesterKey"]) == ("xn--bcher-bank-9db.example", mailbox_key)


def test_the_requesters_own_mailbox_in_any_spelling_is_not_independent(client, people, mailbox):
    act = post_act(client, people["sender"], "neighbour-3", 5)
    for address in ("mallory+x@corp.example", "Mallory+Level5@CORP.example", "MALLORY@corp.example"):
        response = attest(client, people["sender"], act["id"], address)
        assert_envelope(response, 409, "attester_not_independent")
        assert refused_field(response) == ["attesterEmail"]
    assert mailbox.envelopes == []
    assert get_act(client, people["admin"], act["id"])["verifiedLevel"] == 1


def test_a_members_plus_alias_and_a_plus_addressed_member_are_not_independent(client, people, make, mailbox):
    tagged = make.member(people["admin"], email="nia+work@home.example")
    act = post_act(client, people["sender"], "neighbour-4", 5)
    member = people["member"].user.email
    local, domain = member.split("@")
    for address in (f"{local}+attest@{domain}", "nia@home.example", "nia+other@HOME.example"):
        assert_envelope(attest(client, people["sender"], act["id"], address), 409, "attester_not_independent")
    assert tagged.user.email == "nia+work@home.example"
    assert mailbox.envelopes == []


def test_deactivated_and_erased_members_mailboxes_still_count_as_members(client, people, make, mailbox):
    leaver, erased = make.member(people["admin"]), make.member(people["admin"], email="Erin+Old@Home.example")
    lifecycle.deactivate(make.db, user=leaver.user, actor_id=None, source="directory")
    response = client.post(f"/api/organization/members/{erased.user.id}/erase", headers=people["admin"].headers)
    assert response.status_code == 200, response.text
    # Nothing of the address is left but its keyed hash.
    make.db.refresh(erased.user)
    columns = erased.user.__table__.columns.keys()
    assert not [name for name in columns if "erin" in str(getattr(erased.user, name)).lower()]
    assert len(erased.user.erased_mailbox_key) == 64
    act = post_act(client, people["sender"], "neighbour-5", 5)
    for address in (leaver.user.email, "erin@home.example", "ERIN+again@home.example"):
        assert_envelope(attest(client, people["sender"], act["id"], address), 409, "attester_not_independent")
    assert mailbox.envelopes == []
    # The hash is of this organization: to another, the erased person's address is independent.
    other = make.admin()
    elsewhere = post_act(client, other, "neighbour-6", 5)
    assert attest(client, other, elsewhere["id"], "erin@home.example").status_code == 201


@pytest.mark.parametrize(
    ("claimed", "address"),
    [
        ("xn--bcher-kva.example", "ada@b\u00fccher.example"),
        ("xn--bcher-kva.example", "ada@eu.B\u00dcCHER.example"),
        ("b\u00fccher.example", "ada@xn--bcher-kva.example"),
        ("b\u00fccher.example", "ada@EU.XN--BCHER-KVA.example"),
        ("corp.example", "ada+x@Corp.Example"),
    ],
)
def test_a_claimed_domain_in_either_spelling_is_not_independent(client, people, db, mailbox, claimed, address):
    # An unverified claim, stored as it was written.
    db.add(SsoDomain(domain=claimed, organization_id=people["admin"].organization_id, verification_token="0" * 32))
    db.flush()
    act = post_act(client, people["sender"], "neighbour-7", 5)
    assert_envelope(attest(client, people["sender"], act["id"], address), 409, "attester_not_independent")
    assert mailbox.envelopes == []
    assert attest(client, people["sender"], act["id"], "ada@notb\u00fccher.example").status_code == 201


def test_two_plus_aliases_of_one_mailbox_cannot_give_levels_two_and_five(client, people, mailbox):
    act = post_act(client, people["sender"], "neighbour-8", 5)
    assert attest(client, people["sender"], act["id"], "nia+a@home.example", level=2).status_code == 201
    # Asked, and not yet answered: already the one level this mailbox gives.
    response = attest(client, people["sender"], act["id"], "nia+b@home.example")
    assert_envelope(response, 409, "attester_already_answered")
    assert refused_field(response) == ["attesterEmail"]
    assert (
        answer(client, mailbox.token_for("nia+a@home.example"), {"decision": "confirm", "name": "Nia"}).status_code
        == 200
    )
    assert_envelope(attest(client, people["sender"], act["id"], "NIA@home.example"), 409, "attester_already_answered")
    assert [envelope.rcpt_tos for envelope in mailbox.envelopes] == [("nia+a@home.example",)]
    assert get_act(client, people["admin"], act["id"])["verifiedLevel"] == 2


def test_the_answer_checks_one_mailbox_one_level_again(client, people, db, mailbox):
    """Two requests to one mailbox for two levels, checked while neither was stored yet, are both
    mailed: only the first answer counts."""
    act = post_act(client, people["sender"], "neighbour-9", 5)
    first = attest(client, people["sender"], act["id"], "nia+a@home.example", level=2).json()["data"]
    stored = db.get(Attestation, first["id"])
    key, stored.attester_key = stored.attester_key, "0" * 64  # as if the second request checked before it was stored
    db.flush()
    assert attest(client, people["sender"], act["id"], "nia+b@home.example").status_code == 201
    stored.attester_key = key
    db.flush()
    assert (
        answer(client, mailbox.token_for("nia+a@home.example"), {"decision": "confirm", "name": "Nia"}).status_code
        == 200
    )
    token = mailbox.token_for("nia+b@home.example")
    assert_envelope(answer(client, token), 409, "attester_already_answered")
    after = get_act(client, people["admin"], act["id"])
    assert after["verifiedLevel"] == 2
    # Nothing was recorded: the request is still open, and still cannot be answered.
    db.expire_all()
    assert db.get(Attestation, first["id"]).answered_at is not None
    assert_envelope(answer(client, token), 409, "attester_already_answered")


def test_a_members_address_as_recipient_is_refused_and_the_senders_is_self_recognition(client, people):
    member = people["member"].user.email

    def create(recipient: str):
        body = {"description": "Helped", "category": "community", "verificationLevel": 2, "recipientId": recipient}
        return client.post(ACTS, json=body, headers=people["sender"].headers)

    for recipient in (member, member.upper(), member.replace("@", "+x@")):
        response = create(recipient)
        assert_envelope(response, 400, "recipient_is_member_email")
        assert refused_field(response) == ["recipientId"]
    for recipient in (SENDER, "Mallory+me@CORP.example"):
        response = create(recipient)
        assert_envelope(response, 400, "self_recognition")
        assert refused_field(response) == ["recipientId"]
    assert create("neighbour@home.example").status_code == 201
    assert create("neighbour-10").status_code == 201
