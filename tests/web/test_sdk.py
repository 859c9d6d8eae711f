"""A Python SDK generated from openapi.yaml, used as a real client would use it.

openapi-python-client writes the SDK into the test's temporary folder (it is never committed),
and a consultant's first day runs through it against a `kindling serve` process: the consultant
and an organization sign up, the organization's admin works through a personal API token, the organization accepts the consultant's invitation, the consultant
brands it with a theme, its people record acts, and both read the figures back; a manager
approves an act and a third party without an account attests another.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import io
import json
import os
import pathlib
import subprocess
import sys
from http import HTTPStatus

import pytest
from sqlalchemy import create_engine, update

from kindling.accounts.models import User
from kindling.platform.database import upgrade
from kindling.themes import generate_theme
from tests.helpers.contract import ROOT

PACKAGE = "kindling_client"
PASSWORD = "correct horse battery"


@pytest.fixture
def sdk(tmp_path, monkeypatch):
    """The generated package, importable for this test only."""
    # The generator formats its output with ruff, which it finds on PATH next to itself.
    bin_dir = pathlib.Path(sys.executable).parent
    # SAML metadata is XML for identity providers: a client takes it as bytes, as the generator's
    # documented `content_type_overrides` setting says.
    config = tmp_path / "generator.yaml"
    config.write_text('content_type_overrides:\n  "application/samlmetadata+xml": application/octet-stream\n')
    run = subprocess.run(
        [
            bin_dir / "openapi-python-client",
            "generate",
            "--path",
            ROOT / "openapi.yaml",
            "--config",
            config,
            "--meta",
            "none",
            "--output-path",
            tmp_path / PACKAGE,
        ],
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    # Any warning means part of the spec did not become code: a model or an endpoint is missing.
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "warning" not in output.lower(), output
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module(PACKAGE)
    for name in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def expect(response, status: HTTPStatus):
    """The parsed answer of a call that must have answered `status`."""
    assert response.status_code == status, (response.status_code, response.content[:2000])
    return response.parsed


def operation(name: str):
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def model(name: str):
    return getattr(importlib.import_module(f"{PACKAGE}.models"), name)


@pytest.mark.live
def test_a_consultants_first_day_through_the_generated_sdk(sdk, fresh_database_url, live_server, mailbox):
    upgrade(fresh_database_url)
    server = live_server(
        DATABASE_URL=fresh_database_url,
        SMTP_URL=mailbox.url,
        MAIL_FROM="attest@harbour.test",
        PUBLIC_URL="https://kindling.test",
    )
    clients = contextlib.ExitStack()  # each SDK client holds a connection pool to close
    with clients:
        journey(sdk, server.url, clients, fresh_database_url, mailbox)


def make_manager(database_url: str, email: str) -> None:
    """Give a member the manager role, as an organization admin would."""
    engine = create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(update(User).where(User.email == email).values(role="manager"))
    engine.dispose()


def journey(sdk, url: str, clients: contextlib.ExitStack, database_url: str, mailbox) -> None:
    anonymous = clients.enter_context(sdk.Client(base_url=url, raise_on_unexpected_status=True))
    health = expect(operation("health.get_health").sync_detailed(client=anonymous), HTTPStatus.OK)
    assert health.status.value == "ok"

    def sign_up(body) -> sdk.AuthenticatedClient:
        result = expect(operation("auth.sign_up").sync_detailed(client=anonymous, body=body), HTTPStatus.CREATED)
        client = sdk.AuthenticatedClient(base_url=url, token=result.data.session.token, raise_on_unexpected_status=True)
        return clients.enter_context(client)

    consultant = sign_up(
        model("SignUpConsultant")(
            email="ada@firm.test",
            password=PASSWORD,
            name="Ada",
            firm_name="Good Works Advisory",
            account_type=model("SignUpConsultantAccountType").CONSULTANT,
            return_token=True,
        )
    )
    signed_in = sign_up(
        model("SignUpCreatingOrganization")(
            email="grace@harbour.test",
            password=PASSWORD,
            name="Grace",
            organization_name="Harbour Foods",
            return_token=True,
        )
    )
    # The organization's scripts use a personal API token, made once from the signed-in session.
    ci_token = expect(
        operation("auth.create_token").sync_detailed(
            client=signed_in, body=model("ApiTokenCreate")(name="Harbour CI", expires_in_days=90)
        ),
        HTTPStatus.CREATED,
    ).data
    assert ci_token.token.startswith("kpat_")
    admin = clients.enter_context(
        sdk.AuthenticatedClient(base_url=url, token=ci_token.token, raise_on_unexpected_status=True)
    )
    session = expect(operation("auth.get_session").sync_detailed(client=admin), HTTPStatus.OK).data
    assert session.user.email == "grace@harbour.test"
    listed = expect(operation("auth.list_tokens").sync_detailed(client=admin), HTTPStatus.OK).data
    assert [(token.id, token.name) for token in listed] == [(ci_token.id, "Harbour CI")]
    organization = session.organization
    member = sign_up(
        model("SignUpJoiningOrganization")(
            email="linus@harbour.test",
            password=PASSWORD,
            name="Linus",
            join_code=organization.join_code,
            return_token=True,
        )
    )
    member_id = expect(operation("auth.get_session").sync_detailed(client=member), HTTPStatus.OK).data.user.id

    # The consultant finds the organization and invites it; its admin accepts.
    found = expect(
        operation("organizations.search_organizations").sync_detailed(client=consultant, q="harbour"), HTTPStatus.OK
    )
    assert [o.id for o in found.organizations] == [organization.id]
    sent = expect(
        operation("invitations.send_invitation").sync_detailed(
            client=consultant, body=model("InvitationSend")(organization_id=organization.id, message="Shall we?")
        ),
        HTTPStatus.OK,
    )
    pending = expect(operation("invitations.list_invitations").sync_detailed(client=admin), HTTPStatus.OK)
    assert [(i.id, i.status.value, i.message) for i in pending.data] == [(sent.data.id, "pending", "Shall we?")]
    expect(
        operation("invitations.accept_invitation").sync_detailed(
            client=admin, body=model("InvitationReference")(invitation_id=sent.data.id)
        ),
        HTTPStatus.OK,
    )
    relationships = expect(operation("clients.list_clients").sync_detailed(client=consultant), HTTPStatus.OK)
    assert [(c.organization_id, c.status.value) for c in relationships.data] == [(organization.id, "active")]

    # The consultant brands the client; its people see the theme and its CSS.
    theme = generate_theme("#2a9d8f")
    saved = expect(
        operation("themes.save_theme").sync_detailed(
            client=consultant,
            body=model("ThemeSave")(organization_id=organization.id, theme=model("ThemeSubmitted").from_dict(theme)),
        ),
        HTTPStatus.OK,
    )
    assert saved.success and saved.organization_id == organization.id
    read = expect(operation("themes.get_theme").sync_detailed(organization.id, client=member), HTTPStatus.OK)
    assert read.data.theme.to_dict() == theme
    css = expect(operation("themes.get_theme_css").sync_detailed(organization.id, client=member), HTTPStatus.OK)
    assert f"--primary: oklch({theme['light']['primary']});" in css

    # Its people recognise each other.
    acts = [
        (member, session.user.id, "Covered the early shift", "peer_recognition"),
        (admin, member_id, "Checked in on a colleague", "wellbeing"),
        (member, session.user.id, "Organised the food drive", "community"),
    ]
    created = []
    for author, recipient, description, category in acts:
        body = model("KindnessActCreate")(
            description=description,
            category=model("KindnessCategory")(category),
            verification_level=2,
            recipient_id=recipient,
        )
        created.append(
            expect(operation("kindness.create_act").sync_detailed(client=author, body=body), HTTPStatus.CREATED).data
        )
    got = expect(operation("kindness.get_act").sync_detailed(created[0].id, client=admin), HTTPStatus.OK)
    assert got.data.description == "Covered the early shift"
    page = expect(operation("kindness.list_acts").sync_detailed(client=admin, limit=2), HTTPStatus.OK)
    assert len(page.data) == 2 and page.next_cursor
    rest = expect(
        operation("kindness.list_acts").sync_detailed(client=admin, limit=2, cursor=page.next_cursor), HTTPStatus.OK
    )
    assert {a.id for a in page.data + rest.data} == {a.id for a in created} and rest.next_cursor is None

    stats = expect(operation("kindness.get_stats").sync_detailed(client=member), HTTPStatus.OK).data
    assert stats.total == 3 and stats.recent_count == 3
    assert stats.by_category.to_dict() == {"peer_recognition": 1, "wellbeing": 1, "community": 1}
    # The member keeps a receipt of their act, to check later without anyone's help.
    receipt = expect(
        operation("evidence.get_receipt").sync_detailed(model("GetReceiptKind").ACT, created[0].id, client=member),
        HTTPStatus.OK,
    )
    [recorded], [proof] = receipt.events, receipt.inclusion_proofs
    assert (recorded.type_, recorded.subject.id) == ("act.recorded", created[0].id)
    assert proof.leaf_index == recorded.seq - 1 and proof.tree_size == receipt.checkpoint.tree_size

    # The consultant's portfolio, as JSON and as CSV.
    export = operation("bulk.export_portfolio")
    formats = model("ExportPortfolioFormat")
    # The generator types an answer by its first media type, CSV here, so JSON arrives as text.
    text = expect(export.sync_detailed(client=consultant, format_=formats.JSON), HTTPStatus.OK)
    portfolio = model("PortfolioExport").from_dict(json.loads(text))
    assert [(row.organization_id, row.client, row.kindness_acts) for row in portfolio.data] == [
        (organization.id, "Harbour Foods", 3)
    ]
    table = expect(export.sync_detailed(client=consultant, format_=formats.CSV), HTTPStatus.OK)
    rows = list(csv.DictReader(io.StringIO(table)))
    assert len(rows) == 1 and rows[0]["Client"] == "Harbour Foods" and rows[0]["Kindness Acts"] == "3"

    # A manager approves an act that asks for supervisor verification.
    manager = sign_up(
        model("SignUpJoiningOrganization")(
            email="mae@harbour.test",
            password=PASSWORD,
            name="Mae",
            join_code=organization.join_code,
            return_token=True,
        )
    )
    make_manager(database_url, "mae@harbour.test")
    body = model("KindnessActCreate")(
        description="Trained the new starters",
        category=model("KindnessCategory")("peer_recognition"),
        verification_level=3,
        recipient_id=session.user.id,
    )
    asked = expect(operation("kindness.create_act").sync_detailed(client=member, body=body), HTTPStatus.CREATED).data
    assert (asked.verification_level, asked.verified_level, asked.verification.awaiting.value) == (3, 1, "manager")
    waiting = expect(operation("verification.list_pending_verifications").sync_detailed(client=manager), HTTPStatus.OK)
    assert [a.id for a in waiting.data] == [asked.id]
    decision = model("VerificationDecisionCreate")(
        level=3, decision=model("VerificationDecisionCreateDecision").APPROVE, note="Saw it myself"
    )
    approved = expect(
        operation("verification.decide_verification").sync_detailed(asked.id, client=manager, body=decision),
        HTTPStatus.CREATED,
    ).data
    assert (approved.act_id, approved.level, approved.decision.value, approved.note) == (
        asked.id,
        3,
        "approve",
        "Saw it myself",
    )
    verified = expect(operation("kindness.get_act").sync_detailed(asked.id, client=admin), HTTPStatus.OK).data
    assert (verified.verified_level, verified.verification.status.value, verified.ripple_score) == (3, "verified", 3)
    assert (
        expect(operation("verification.list_pending_verifications").sync_detailed(client=manager), HTTPStatus.OK).data
        == []
    )

    # A food bank attests the food drive; its volunteer has no account.
    body = model("KindnessActCreate")(
        description="Ran the Saturday food bank",
        category=model("KindnessCategory")("community"),
        verification_level=5,
        recipient_id="town-food-bank",
    )
    drive = expect(operation("kindness.create_act").sync_detailed(client=member, body=body), HTTPStatus.CREATED).data
    request = model("AttestationCreate")(
        level=model("AttestationCreateLevel").VALUE_5,
        attester_name="Olu",
        attester_organization="Town Food Bank",
        attester_email="olu@foodbank.test",
    )
    mailed = expect(
        operation("verification.request_attestation").sync_detailed(drive.id, client=member, body=request),
        HTTPStatus.CREATED,
    ).data
    assert mailed.attester_domain == "foodbank.test"
    token = mailbox.token_for("olu@foodbank.test")  # what Olu finds in the mail Kindling sent
    lookup = model("AttestationLookup")(token=token)
    shown = expect(
        operation("verification.lookup_attestation").sync_detailed(client=anonymous, body=lookup), HTTPStatus.OK
    ).data
    assert (shown.organization_name, shown.description) == ("Harbour Foods", "Ran the Saturday food bank")
    answer = model("AttestationAnswer")(
        token=token, decision=model("AttestationAnswerDecision").CONFIRM, name="Olu Adeyemi"
    )
    expect(operation("verification.answer_attestation").sync_detailed(client=anonymous, body=answer), HTTPStatus.OK)
    assert (
        expect(operation("kindness.get_act").sync_detailed(drive.id, client=admin), HTTPStatus.OK).data.verified_level
        == 5
    )

    # Revoked, the token no longer opens anything.
    expect(operation("auth.revoke_token").sync_detailed(ci_token.id, client=signed_in), HTTPStatus.NO_CONTENT)
    assert operation("auth.get_session").sync_detailed(client=admin).status_code == HTTPStatus.UNAUTHORIZED
