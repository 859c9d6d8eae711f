"""SAML 2.0 single sign-on against pysaml2's own identity provider (docs/decisions.md §2):
settings, the service provider's metadata, the flow, enforcement, certificate rollover, and a
hostile suite of crafted responses none of which signs anyone in."""

from __future__ import annotations

import base64
import dataclasses
import functools
import urllib.parse
import uuid

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from lxml import etree
from saml2.saml import NAMEID_FORMAT_UNSPECIFIED
from saml2.xmldsig import DIGEST_SHA1, SIG_RSA_SHA1
from sqlalchemy import select, update

from kindling.accounts.models import Organization, SsoConnection, User
from kindling.evidence.models import EvidenceEvent
from tests.factories import PASSWORD
from tests.helpers import assert_envelope
from tests.helpers.sso import domain, prove
from tests.servers.saml_idp import IdentityProvider

ACS = "https://kindling.test/api/auth/saml/acs"
NS = {
    "samlp": "urn:oasis:names:tc:SAML:2.0:protocol",
    "saml": "urn:oasis:names:tc:SAML:2.0:assertion",
    "ds": "http://www.w3.org/2000/09/xmldsig#",
}


@dataclasses.dataclass
class Saml:
    admin: object
    domain: str
    slug: str
    idp: IdentityProvider
    sp_metadata: str

    def email(self, name: str = "sam") -> str:
        return f"{name}-{uuid.uuid4().hex[:6]}@{self.domain}"


def configure(client, admin, idp: IdentityProvider, *, domains: list[str], metadata: str | None = None, **fields):
    body = {"protocol": "saml", "idpMetadataXml": metadata or idp.metadata(), "emailDomains": domains, **fields}
    return client.put("/api/organization/sso", json=body, headers=admin.headers)


@pytest.fixture
def saml(client, make, dns, db):
    admin = make.admin()
    idp = IdentityProvider()
    name = domain()
    response = configure(client, admin, idp, domains=[name], jitProvisioning=True)
    assert response.status_code == 200, response.text
    prove(client, admin, dns, name)
    slug = db.scalar(select(Organization.slug).where(Organization.id == admin.organization_id))
    metadata = client.get(f"/api/auth/saml/{slug}/metadata")
    assert metadata.status_code == 200, metadata.text
    return Saml(admin, name, slug, idp, metadata.text)


def start(client, saml: Saml) -> str:
    response = client.get(f"/api/auth/sso/start?organization={saml.slug}&returnTo=/home", follow_redirects=False)
    assert response.status_code == 302, response.text
    return response.headers["location"]


def post(client, xml: str | bytes, relay_state: str):
    raw = xml.encode() if isinstance(xml, str) else xml
    response = client.post(
        "/api/auth/saml/acs",
        data={"SAMLResponse": base64.b64encode(raw).decode(), "RelayState": relay_state},
        follow_redirects=False,
    )
    cookies = dict(client.cookies)
    client.cookies.clear()
    return response, cookies


def sign_in(client, saml: Saml, email: str, **options):
    xml, relay_state = saml.idp.respond(saml.sp_metadata, start(client, saml), email, **options)
    return post(client, xml, relay_state)


def assert_signed_in(response, cookies) -> None:
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/home" and cookies


def assert_refused(response, cookies, status: int = 400, code: str = "saml_response_invalid") -> None:
    assert_envelope(response, status, code)
    assert not cookies and "set-cookie" not in response.headers
    assert "<" not in response.text  # never the XML


# --- settings ---


def test_settings_read_the_metadata_and_record_the_protocol_and_entity_id(client, saml, db):
    data = client.get("/api/organization/sso", headers=saml.admin.headers).json()["data"]
    assert data["protocol"] == "saml" and data["idpEntityId"] == saml.idp.entity_id
    assert data["spEntityId"] == f"https://kindling.test/api/auth/saml/{saml.slug}" and data["acsUrl"] == ACS
    event = db.scalars(
        select(EvidenceEvent)
        .where(EvidenceEvent.organization_id == saml.admin.organization_id, EvidenceEvent.type == "sso.configured")
        .order_by(EvidenceEvent.seq.desc())
    ).first()
    assert event.data["protocol"] == "saml" and event.data["issuer"] == saml.idp.entity_id
    stored = db.get(SsoConnection, saml.admin.organization_id)
    assert "PRIVATE KEY" not in stored.saml_sp_key_encrypted


def test_sp_metadata_names_the_entity_id_and_the_post_acs(client, saml):
    root = etree.fromstring(saml.sp_metadata.encode())
    assert root.get("entityID") == f"https://kindling.test/api/auth/saml/{saml.slug}"
    acs = root.find(".//{urn:oasis:names:tc:SAML:2.0:metadata}AssertionConsumerService")
    assert acs.get("Location") == ACS and acs.get("Binding").endswith("HTTP-POST")
    assert client.get("/api/auth/saml/no-such-org/metadata").status_code == 404


def test_unusable_metadata_is_refused(client, make):
    admin = make.admin()
    for metadata in ("<x/>", "not xml", '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'):
        response = configure(client, admin, IdentityProvider(), domains=[domain()], metadata=metadata)
        assert response.status_code == 400, response.text
        assert_envelope(response, 400, "saml_metadata_invalid")


def test_the_authn_request_is_signed_with_rsa_sha256(client, saml):
    query = urllib.parse.parse_qs(urllib.parse.urlparse(start(client, saml)).query)
    assert query["SigAlg"] == ["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"]
    assert query["Signature"] and query["RelayState"]


def test_the_authn_request_signature_verifies_with_the_certificate_of_the_sp_metadata(client, saml):
    # The signed octets are the query's own encoded SAMLRequest, RelayState and SigAlg, in that order.
    parts = dict(part.split("=", 1) for part in urllib.parse.urlparse(start(client, saml)).query.split("&"))
    signed = "&".join(f"{name}={parts[name]}" for name in ("SAMLRequest", "RelayState", "SigAlg")).encode()
    signature = base64.b64decode(urllib.parse.unquote(parts["Signature"]))
    certificate = etree.fromstring(saml.sp_metadata.encode()).find(".//ds:X509Certificate", NS).text
    key = x509.load_der_x509_certificate(base64.b64decode(certificate)).public_key()
    key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    with pytest.raises(InvalidSignature):
        key.verify(signature, signed.replace(b"RelayState=", b"RelayState=x"), padding.PKCS1v15(), hashes.SHA256())


# --- sign-in ---


def test_a_signed_response_signs_in_just_in_time(client, saml, db):
    email = saml.email()
    assert_signed_in(*sign_in(client, saml, email))
    user = db.scalar(select(User).where(User.email == email))
    assert user.organization_id == saml.admin.organization_id and user.role == "member"
    # And again, as the same person.
    assert_signed_in(*sign_in(client, saml, email))


def test_both_signatures_are_accepted(client, saml):
    assert_signed_in(*sign_in(client, saml, saml.email(), sign_response=True))


def test_an_existing_member_signs_in_and_a_deactivated_one_is_refused(client, saml, make, db):
    member = make.member(saml.admin, email=saml.email("existing"))
    assert_signed_in(*sign_in(client, saml, member.user.email))
    db.execute(update(User).where(User.id == member.user.id).values(active=False))
    db.flush()
    assert_refused(*sign_in(client, saml, member.user.email), status=403, code="account_deactivated")


def test_enforcement_refuses_member_passwords_but_keeps_the_admin_break_glass(client, saml, make):
    member = make.member(saml.admin, email=saml.email("pw"))
    response = configure(client, saml.admin, saml.idp, domains=[saml.domain], enforced=True)
    assert response.status_code == 200, response.text
    refused = client.post("/api/auth/sign-in", json={"email": member.user.email, "password": PASSWORD})
    assert refused.status_code == 403 and refused.json()["code"] == "sso_required"
    admin = client.post("/api/auth/sign-in", json={"email": saml.admin.user.email, "password": PASSWORD})
    assert admin.status_code in (200, 201), admin.text
    client.cookies.clear()
    assert_signed_in(*sign_in(client, saml, member.user.email))


def test_certificate_rollover_loses_no_sign_in(client, saml):
    response = configure(
        client,
        saml.admin,
        saml.idp,
        domains=[saml.domain],
        metadata=saml.idp.metadata("idp-a", "idp-b"),
        jitProvisioning=True,
    )
    assert response.status_code == 200, response.text
    failed = 0
    for key in ("idp-a", "idp-b", "idp-a", "idp-b"):
        answer, cookies = sign_in(client, saml, saml.email(), key=key)
        failed += answer.status_code != 303
    assert failed == 0


# --- the hostile suite ---


def _tree(xml: str) -> etree._Element:
    return etree.fromstring(xml.encode())


def _assertion(root):
    return root.find("saml:Assertion", NS)


def _name_id(root):
    return root.find(".//saml:Assertion/saml:Subject/saml:NameID", NS)


def _evil_copy(root, email: str):
    """An unsigned copy of the assertion naming another person."""
    evil = etree.fromstring(etree.tostring(_assertion(root)))
    for signature in evil.findall("ds:Signature", NS):
        evil.remove(signature)
    evil.set("ID", "_evil" + uuid.uuid4().hex)
    evil.find("saml:Subject/saml:NameID", NS).text = email
    return evil


def xsw(variant: int, root, email: str) -> None:
    """XML signature wrapping, variants 1–8 (Somorovsky et al., "On Breaking SAML")."""
    assertion = _assertion(root)
    evil = _evil_copy(root, email)
    if variant in (1, 2):  # the Response signature wraps the original Response; the outer one is forged
        signature = root.find("ds:Signature", NS)
        original = etree.fromstring(etree.tostring(root))
        original.remove(original.find("ds:Signature", NS))
        root.remove(assertion)
        root.append(evil)
        root.set("ID", "_evil" + uuid.uuid4().hex)
        if variant == 1:
            signature.append(original)
        else:
            root.insert(0, original)
    elif variant == 3:  # an unsigned assertion before the signed one
        root.insert(list(root).index(assertion), evil)
    elif variant == 4:  # the signed assertion inside the evil one
        root.replace(assertion, evil)
        evil.append(assertion)
    elif variant == 5:  # the evil one carries the signature; the original sits elsewhere
        signature = assertion.find("ds:Signature", NS)
        assertion.remove(signature)
        evil.insert(1, signature)
        root.replace(assertion, evil)
        root.append(assertion)
    elif variant == 6:  # the original inside the signature's Object of the evil assertion
        signature = assertion.find("ds:Signature", NS)
        assertion.remove(signature)
        evil.insert(1, signature)
        obj = etree.SubElement(signature, "{%s}Object" % NS["ds"])
        obj.append(assertion)
        root.replace(assertion, evil) if assertion.getparent() is root else root.append(evil)
    elif variant == 7:  # the original in Extensions
        extensions = etree.Element("{%s}Extensions" % NS["samlp"])
        root.replace(assertion, evil)
        extensions.append(assertion)
        root.insert(1, extensions)
    elif variant == 8:  # the evil one keeps the signature, holding the original in its Object
        signature = assertion.find("ds:Signature", NS)
        evil.insert(1, etree.fromstring(etree.tostring(signature)))
        obj = etree.SubElement(evil.find("ds:Signature", NS), "{%s}Object" % NS["ds"])
        root.replace(assertion, evil)
        obj.append(assertion)


def _comment_in_name_id(root, saml):
    name_id = _name_id(root)
    local = name_id.text.partition("@")[0]
    name_id.text = f"{local}@evil.example"
    name_id.append(etree.Comment(""))
    name_id[-1].tail = "." + saml.domain


def _drop(path):
    def change(root, saml):
        for element in root.findall(path, NS):
            element.getparent().remove(element)

    return change


def _set(path, attribute, value):
    def change(root, saml):
        for element in [root] if path == "." else root.findall(path, NS):
            if value is None:
                element.attrib.pop(attribute, None)
            else:
                element.set(attribute, value)

    return change


def _xslt(root, saml):
    transforms = root.find(".//saml:Assertion/ds:Signature/ds:SignedInfo/ds:Reference/ds:Transforms", NS)
    transform = etree.SubElement(transforms, "{%s}Transform" % NS["ds"])
    transform.set("Algorithm", "http://www.w3.org/TR/1999/REC-xslt-19991116")
    etree.SubElement(transform, "{http://www.w3.org/1999/XSL/Transform}stylesheet").set("version", "1.0")


TAMPERED = {
    **{f"xsw{n}": functools.partial(lambda n, root, saml: xsw(n, root, "boss@" + saml.domain), n) for n in range(1, 9)},
    "comment-in-nameid": _comment_in_name_id,
    "unsigned-assertion-beside-signed": lambda root, saml: root.append(_evil_copy(root, "boss@" + saml.domain)),
    "assertion-signature-removed": _drop("saml:Assertion/ds:Signature"),
    "nameid-altered": lambda root, saml: setattr(_name_id(root), "text", "boss@" + saml.domain),
    "wrong-recipient": _set(".//saml:SubjectConfirmationData", "Recipient", "https://evil.example/acs"),
    "missing-recipient": _set(".//saml:SubjectConfirmationData", "Recipient", None),
    "missing-destination": _set(".", "Destination", None),
    "missing-audience": _drop(".//saml:AudienceRestriction"),
    "missing-conditions": _drop(".//saml:Conditions"),
    "expired": _set(".//saml:SubjectConfirmationData", "NotOnOrAfter", "2020-01-01T00:00:00Z"),
    "conditions-expired": _set(".//saml:Conditions", "NotOnOrAfter", "2020-01-01T00:00:00Z"),
    "not-yet-valid": _set(".//saml:Conditions", "NotBefore", "2099-01-01T00:00:00Z"),
    "assertion-in-response-to-foreign": _set(".//saml:SubjectConfirmationData", "InResponseTo", "id-foreign"),
    "wrong-issuer": lambda root, saml: [
        setattr(i, "text", "https://evil.example") for i in root.iter("{%s}Issuer" % NS["saml"])
    ],
    "xslt-transform": _xslt,
    "sha1-declared": _set(".//ds:SignatureMethod", "Algorithm", "http://www.w3.org/2000/09/xmldsig#rsa-sha1"),
}


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_a_tampered_response_is_refused(client, saml, db, name):
    email = saml.email("victim")
    xml, relay_state = saml.idp.respond(
        saml.sp_metadata, start(client, saml), email, sign_response=name in ("xsw1", "xsw2")
    )
    root = _tree(xml)
    TAMPERED[name](root, saml)
    response, cookies = post(client, etree.tostring(root), relay_state)
    assert response.status_code in (400, 403), response.text
    assert not cookies and "<" not in response.text
    assert (
        db.scalar(select(User).where(User.email.like(f"%@{saml.domain}"), User.email != saml.admin.user.email)) is None
    )


SIGNED_BADLY = {
    "wrong-audience": {"sp_entity_id": "https://other-sp.example/saml"},
    "wrong-destination": {"destination": "https://evil.example/acs"},
    "sha1": {"sign_alg": SIG_RSA_SHA1, "digest_alg": DIGEST_SHA1},
    "another-idps-key": {"key": "attacker"},
    "unspecified-nameid-not-email": {"name_id_format": NAMEID_FORMAT_UNSPECIFIED},
}


@pytest.mark.parametrize("name", sorted(SIGNED_BADLY))
def test_a_validly_signed_but_wrong_response_is_refused(client, saml, name):
    assert_refused(*sign_in(client, saml, saml.email(), **SIGNED_BADLY[name]))


def test_keyinfo_with_the_attackers_certificate_is_ignored(client, saml):
    # pysaml2 puts the signer's certificate in KeyInfo: the attacker's own, trusted by nobody here.
    xml, relay_state = saml.idp.respond(saml.sp_metadata, start(client, saml), saml.email(), key="attacker")
    assert b"X509Certificate" in xml.encode()
    assert_refused(*post(client, xml, relay_state))


def test_an_email_outside_the_verified_domains_is_refused(client, saml, db):
    response, cookies = sign_in(client, saml, "someone@elsewhere.example")
    assert_refused(response, cookies, status=403, code="sso_no_account")


def test_a_replay_is_refused(client, saml):
    xml, relay_state = saml.idp.respond(saml.sp_metadata, start(client, saml), saml.email())
    assert_signed_in(*post(client, xml, relay_state))
    assert_refused(*post(client, xml, relay_state))


def test_a_response_to_another_flow_is_refused(client, saml):
    xml, _ = saml.idp.respond(saml.sp_metadata, start(client, saml), saml.email())
    other = urllib.parse.parse_qs(urllib.parse.urlparse(start(client, saml)).query)["RelayState"][0]
    assert_refused(*post(client, xml, other))


def test_an_unsolicited_response_is_refused_403(client, saml):
    xml, relay_state = saml.idp.respond(saml.sp_metadata, start(client, saml), saml.email(), in_response_to="")
    root = _tree(xml)
    root.attrib.pop("InResponseTo", None)
    assert_refused(*post(client, etree.tostring(root), relay_state), status=403, code="saml_unsolicited")


@pytest.mark.parametrize(
    "prefix",
    [
        '<!DOCTYPE r [<!ENTITY x "boss">]>',
        '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
        '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>',
    ],
    ids=["dtd", "external-entity", "entity-expansion"],
)
def test_a_dtd_is_refused(client, saml, prefix):
    xml, relay_state = saml.idp.respond(saml.sp_metadata, start(client, saml), saml.email())
    assert_refused(*post(client, prefix + xml.split("?>", 1)[-1], relay_state))


@pytest.mark.parametrize(
    "body",
    [
        {"SAMLResponse": "!!! not base64 !!!", "RelayState": "x"},
        {"SAMLResponse": base64.b64encode(b"garbage, not xml").decode(), "RelayState": "x"},
        {"SAMLResponse": base64.b64encode(b"<a/>" * 300_000).decode(), "RelayState": "x"},
        {"SAMLResponse": "", "RelayState": "x"},
    ],
    ids=["not-base64", "not-xml", "oversized", "empty"],
)
def test_garbage_is_refused(client, saml, body):
    response = client.post("/api/auth/saml/acs", data=body, follow_redirects=False)
    assert 400 <= response.status_code < 500 and "set-cookie" not in response.headers, response.text
    assert response.json()["code"]


def test_an_assertion_is_spent_once_across_sessions(runtime, saml):
    """The replay cache is the database's: another process (here another session) refuses it."""
    import datetime as dt

    from kindling.accounts import saml_sp, sso_sign_in
    from kindling.errors import BadRequest

    assertion = saml_sp.Assertion(
        id="_" + uuid.uuid4().hex,
        not_on_or_after=dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5),
        subject="sam",
        email=None,
        name=None,
    )
    with runtime.session_factory() as first, first.begin():
        sso_sign_in.spend_assertion(
            first, organization_id=saml.admin.organization_id, issuer=saml.idp.entity_id, assertion=assertion
        )
    with runtime.session_factory() as second, second.begin(), pytest.raises(BadRequest) as refused:
        sso_sign_in.spend_assertion(
            second, organization_id=saml.admin.organization_id, issuer=saml.idp.entity_id, assertion=assertion
        )
    assert refused.value.details == {"reason": "replayed"}


@pytest.fixture
def metadata_server():
    """Serves whatever `documents["/metadata"]` holds, on loopback."""
    import http.server
    import threading

    documents: dict[str, str] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = documents.get(self.path, "").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", documents
    server.shutdown()
    server.server_close()


def test_metadata_by_url_is_read_and_refreshed_daily(client, make, db, runtime, metadata_server):
    import datetime as dt

    from kindling.accounts import sso_settings
    from kindling.platform.destinations import DestinationPolicy

    base, documents = metadata_server
    idp = IdentityProvider()
    documents["/metadata"] = idp.metadata("idp-a")
    admin = make.admin()
    body = {"protocol": "saml", "idpMetadataUrl": base + "/metadata", "emailDomains": [domain()]}
    response = client.put("/api/organization/sso", json=body, headers=admin.headers)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["idpEntityId"] == idp.entity_id
    documents["/metadata"] = idp.metadata("idp-a", "idp-b")
    chore = sso_settings.metadata_refresh_chore(DestinationPolicy.from_settings(runtime.settings))
    chore(db)  # not a day old yet: kept
    connection = db.get(SsoConnection, admin.organization_id)
    assert connection.saml_metadata_xml.count("X509Certificate>") == 2
    connection.saml_metadata_fetched_at -= dt.timedelta(days=1, seconds=1)
    chore(db)
    assert connection.saml_metadata_xml.count("X509Certificate>") == 4
    del documents["/metadata"]  # the IdP is down: the last good copy stays
    connection.saml_metadata_fetched_at -= dt.timedelta(days=1, seconds=1)
    chore(db)
    assert connection.saml_metadata_xml.count("X509Certificate>") == 4
    missing = client.put(
        "/api/organization/sso", json={**body, "idpMetadataUrl": base + "/nothing"}, headers=admin.headers
    )
    assert_envelope(missing, 400, "saml_metadata_invalid")
