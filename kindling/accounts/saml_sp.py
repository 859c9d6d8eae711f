"""Kindling as a SAML 2.0 service provider, one per organization (docs/decisions.md §2). pysaml2
reads the IdP's metadata, signs the AuthnRequests and writes the SP's metadata; Kindling checks
the responses itself, with the signatures checked in process against the organization's own
metadata certificates (saml_signatures), since a strict pysaml2 SP still lets through SHA-1, a
wrong Recipient, a missing Destination or Audience, another browser's InResponseTo, oversized
bodies and replays, and its checks cost tens of milliseconds a response."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import hashlib
import os
import tempfile
import threading

import xmlsec
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from lxml import etree
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.client import Saml2Client
from saml2.config import SPConfig
from saml2.mdstore import MetadataStore
from saml2.metadata import entity_descriptor
from saml2.saml import NAMEID_FORMAT_EMAILADDRESS
from saml2.sigver import CryptoBackend, RSACrypto, import_rsa_key_from_file
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

from kindling.accounts import saml_signatures

ACS_PATH = "/api/auth/saml/acs"
SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success"
BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
SKEW = dt.timedelta(minutes=3)
# Base64 characters of SAMLResponse: real responses are a few kilobytes.
MAX_RESPONSE = 100_000
MAX_METADATA = 1_000_000

NS = {
    "samlp": "urn:oasis:names:tc:SAML:2.0:protocol",
    "saml": "urn:oasis:names:tc:SAML:2.0:assertion",
    "ds": "http://www.w3.org/2000/09/xmldsig#",
    "md": "urn:oasis:names:tc:SAML:2.0:metadata",
}
DS = "{%s}" % NS["ds"]
SIGNATURE_METHODS = frozenset(
    {
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
    }
)
DIGEST_METHODS = frozenset(
    {
        "http://www.w3.org/2001/04/xmlenc#sha256",
        "http://www.w3.org/2001/04/xmldsig-more#sha384",
        "http://www.w3.org/2001/04/xmlenc#sha512",
    }
)
TRANSFORMS = frozenset(
    {"http://www.w3.org/2000/09/xmldsig#enveloped-signature", "http://www.w3.org/2001/10/xml-exc-c14n#"}
)
CANONICALIZATIONS = frozenset({"http://www.w3.org/2001/10/xml-exc-c14n#"})
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


class Invalid(ValueError):
    """The response is refused; `reason` is a stable code, never the XML."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Unsolicited(ValueError):
    """A response no request of ours asked for (IdP-initiated)."""


class BadMetadata(ValueError):
    """The IdP's metadata cannot be used; the message says why."""


@dataclasses.dataclass(frozen=True)
class IdentityProvider:
    entity_id: str
    sso_url: str


@dataclasses.dataclass(frozen=True)
class Assertion:
    id: str
    not_on_or_after: dt.datetime
    subject: str
    email: str | None
    name: str | None


@dataclasses.dataclass(frozen=True)
class ServiceProvider:
    entity_id: str
    acs_url: str
    key_pem: str
    certificate_pem: str
    metadata_xml: str
    idp_entity_id: str


def entity_id_of(public_url: str, slug: str) -> str:
    return f"{public_url}/api/auth/saml/{slug}"


def new_key_pair(common_name: str) -> tuple[str, str]:
    """An RSA-3072 key and a self-signed certificate for ten years (the IdP trusts it from our metadata)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64])])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=3650))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return key_pem, certificate.public_bytes(serialization.Encoding.PEM).decode()


def read_metadata(xml: str) -> IdentityProvider:
    """The one IdP `xml` describes, with an HTTP-Redirect sign-on endpoint and a signing certificate."""
    if len(xml) > MAX_METADATA:
        raise BadMetadata("the metadata is larger than 1 MB")
    _parse(xml.encode(), BadMetadata("the metadata is not well-formed XML without a DTD"))
    store = MetadataStore(None, None)
    try:
        store.load("inline", xml)
    except Exception:
        raise BadMetadata("the metadata is not valid SAML 2.0 metadata") from None
    providers = list(store.identity_providers())
    if len(providers) != 1:
        raise BadMetadata("the metadata must describe exactly one identity provider")
    entity_id = providers[0]
    endpoints = store.single_sign_on_service(entity_id, BINDING_HTTP_REDIRECT)
    if not endpoints:
        raise BadMetadata("the identity provider has no HTTP-Redirect single sign-on service")
    if not store.certs(entity_id, "idpsso", "signing"):
        raise BadMetadata("the identity provider has no signing certificate")
    return IdentityProvider(entity_id=entity_id, sso_url=endpoints[0]["location"])


def _parse(raw: bytes, error: Exception) -> etree._Element:
    lowered = raw.lower()
    if b"<!doctype" in lowered or b"<!entity" in lowered:
        raise error
    try:
        return etree.fromstring(raw, _PARSER)
    except etree.XMLSyntaxError:
        raise error from None


@dataclasses.dataclass(frozen=True)
class _Provider:
    client: Saml2Client
    # The IdP's signing keys from its metadata: two during a certificate rollover.
    signing_keys: tuple[xmlsec.Key, ...]


# Keyed by the settings' content, so that saving new settings or metadata starts a new entry.
_providers: dict[tuple, _Provider] = {}
_providers_lock = threading.Lock()
_key_dir = tempfile.mkdtemp(prefix="kindling-saml-")


def _provider(sp: ServiceProvider) -> _Provider:
    """pysaml2's SP for one organization, with its own metadata store, kept while its settings last."""
    cache_key = (sp.entity_id, sp.acs_url, hashlib.sha256((sp.metadata_xml + sp.key_pem).encode()).hexdigest())
    with _providers_lock:
        provider = _providers.get(cache_key)
        if provider is not None:
            return provider
        stem = os.path.join(_key_dir, cache_key[2])
        for suffix, content in ((".key", sp.key_pem), (".crt", sp.certificate_pem)):
            fd = os.open(stem + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as file:
                file.write(content)
        config = SPConfig()
        config.load(
            {
                "entityid": sp.entity_id,
                # Needs no xmlsec1 on the path, unlike "xmlsec1"; the backend is replaced below.
                "crypto_backend": "XMLSecurity",
                "key_file": stem + ".key",
                "cert_file": stem + ".crt",
                "metadata": {"inline": [sp.metadata_xml]},
                "service": {
                    "sp": {
                        "endpoints": {"assertion_consumer_service": [(sp.acs_url, BINDING_HTTP_POST)]},
                        "authn_requests_signed": True,
                        "want_assertions_signed": True,
                        "name_id_format": [NAMEID_FORMAT_EMAILADDRESS],
                        "signing_algorithm": SIG_RSA_SHA256,
                        "digest_algorithm": DIGEST_SHA256,
                    }
                },
            }
        )
        client = Saml2Client(config)
        # pysaml2 verifies, signs and decrypts no XML here (its base backend refuses all three);
        # the AuthnRequests are signed over HTTP-Redirect by the RSA signer, which pysaml2 makes
        # only for "xmlsec1".
        client.sec.crypto = CryptoBackend()
        client.sec.sec_backend = RSACrypto(import_rsa_key_from_file(stem + ".key"))
        certificates = [certificate for _, certificate in client.metadata.certs(sp.idp_entity_id, "idpsso", "signing")]
        provider = _Provider(client=client, signing_keys=saml_signatures.keys(certificates))
        if len(_providers) > 1000:
            _providers.clear()
        _providers[cache_key] = provider
        return provider


def sp_metadata(sp: ServiceProvider) -> str:
    return str(entity_descriptor(_provider(sp).client.config))


def authn_request(sp: ServiceProvider, *, relay_state: str) -> tuple[str, str]:
    """The request's ID and the IdP URL carrying it signed (HTTP-Redirect, RSA-SHA256)."""
    request_id, info = _provider(sp).client.prepare_for_authenticate(
        entityid=sp.idp_entity_id,
        relay_state=relay_state,
        binding=BINDING_HTTP_REDIRECT,
        sign=True,
        sigalg=SIG_RSA_SHA256,
        digest_alg=DIGEST_SHA256,
    )
    return request_id, dict(info["headers"])["Location"]


def in_response_to(saml_response: str) -> str:
    """The request ID a response answers, from a first strict read; Unsolicited without one."""
    if len(saml_response) > MAX_RESPONSE:
        raise Invalid("too_large")
    try:
        raw = base64.b64decode(saml_response, validate=True)
    except (binascii.Error, ValueError):
        raise Invalid("not_base64") from None
    root = _parse(raw, Invalid("not_xml"))
    if root.tag != "{%s}Response" % NS["samlp"]:
        raise Invalid("not_a_response")
    value = root.get("InResponseTo")
    if not value:
        raise Unsolicited()
    return value


def validate(sp: ServiceProvider, *, saml_response: str, request_id: str, email_attribute: str | None) -> Assertion:
    """The assertion of a response to `request_id`, once everything about it checks out."""
    raw = base64.b64decode(saml_response, validate=True)
    root = _parse(raw, Invalid("not_xml"))
    assertion, signed = _structure(root)
    now = dt.datetime.now(dt.UTC)
    if root.get("Version") != "2.0" or assertion.get("Version") != "2.0":
        raise Invalid("version")
    status = root.find("samlp:Status/samlp:StatusCode", NS)
    if status is None or status.get("Value") != SUCCESS:
        raise Invalid("status")
    if root.get("Destination") != sp.acs_url:
        raise Invalid("destination")
    if root.get("InResponseTo") != request_id:
        raise Invalid("in_response_to")
    for issuer in root.findall("saml:Issuer", NS) + assertion.findall("saml:Issuer", NS):
        if (issuer.text or "").strip() != sp.idp_entity_id:
            raise Invalid("issuer")
    conditions = assertion.find("saml:Conditions", NS)
    if conditions is None:
        raise Invalid("conditions")
    _time_window(conditions, now)
    audiences = [(a.text or "").strip() for a in conditions.findall("saml:AudienceRestriction/saml:Audience", NS)]
    if sp.entity_id not in audiences:
        raise Invalid("audience")
    confirmations = assertion.findall("saml:Subject/saml:SubjectConfirmation/saml:SubjectConfirmationData", NS)
    if not confirmations:
        raise Invalid("subject_confirmation")
    for data in confirmations:
        if data.getparent().get("Method") != BEARER:
            raise Invalid("subject_confirmation")
        if data.get("Recipient") != sp.acs_url:
            raise Invalid("recipient")
        if data.get("InResponseTo") != request_id:
            raise Invalid("in_response_to")
        _time_window(data, now)
    not_on_or_after = min(_instant(data.get("NotOnOrAfter")) for data in confirmations)
    # Every signature present, against this organization's metadata certificates only.
    signing_keys = _provider(sp).signing_keys
    if not all(saml_signatures.verified(root, element, signing_keys) for element in signed):
        raise Invalid("signature")
    name_id = assertion.find("saml:Subject/saml:NameID", NS)
    if name_id is None or not (name_id.text or "").strip():
        raise Invalid("name_id")
    subject = name_id.text.strip()
    email = subject if name_id.get("Format") == NAMEID_FORMAT_EMAILADDRESS else None
    if email_attribute:
        email = _attribute(assertion, email_attribute)
    return Assertion(
        id=assertion.get("ID") or "",
        not_on_or_after=not_on_or_after,
        subject=subject[:255],
        email=email,
        name=_attribute(assertion, "displayName"),
    )


def _structure(root: etree._Element) -> tuple[etree._Element, list[etree._Element]]:
    """The one assertion, a child of the Response and signed itself, with no signature Kindling
    does not accept; and the elements signed (the assertion, and the Response if it is)."""
    if root.findall(".//saml:EncryptedAssertion", NS):
        raise Invalid("encrypted_assertion")
    assertions = root.findall(".//saml:Assertion", NS)
    if len(assertions) != 1 or assertions[0].getparent() is not root:
        raise Invalid("assertion_count")
    assertion = assertions[0]
    ids = [element.get("ID") for element in root.iter() if isinstance(element.tag, str) and element.get("ID")]
    if len(ids) != len(set(ids)):
        raise Invalid("duplicate_id")
    if any(True for _ in assertion.iter(etree.Comment)):
        raise Invalid("comment")
    signatures = root.findall(".//ds:Signature", NS)
    signed: list[etree._Element] = []
    for signature in signatures:
        parent = signature.getparent()
        if parent not in (root, assertion):
            raise Invalid("signature_position")
        references = signature.findall("ds:SignedInfo/ds:Reference", NS)
        if len(references) != 1 or references[0].get("URI") != "#" + (parent.get("ID") or ""):
            raise Invalid("signature_reference")
        method = signature.find("ds:SignedInfo/ds:SignatureMethod", NS)
        digest = references[0].find("ds:DigestMethod", NS)
        if method is None or method.get("Algorithm") not in SIGNATURE_METHODS:
            raise Invalid("signature_algorithm")
        if digest is None or digest.get("Algorithm") not in DIGEST_METHODS:
            raise Invalid("digest_algorithm")
        canonical = signature.find("ds:SignedInfo/ds:CanonicalizationMethod", NS)
        if canonical is None or canonical.get("Algorithm") not in CANONICALIZATIONS:
            raise Invalid("signature_transform")
        for transform in references[0].findall("ds:Transforms/ds:Transform", NS):
            if transform.get("Algorithm") not in TRANSFORMS or len(transform):
                raise Invalid("signature_transform")
        if signature.find("ds:Object", NS) is not None or parent in signed:
            raise Invalid("signature_position")
        signed.append(parent)
    if assertion not in signed:
        raise Invalid("unsigned")
    return assertion, signed


def _instant(value: str | None) -> dt.datetime:
    if not value:
        raise Invalid("expired")
    try:
        instant = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise Invalid("expired") from None
    if instant.tzinfo is None:
        raise Invalid("expired")
    return instant


def _time_window(element: etree._Element, now: dt.datetime) -> None:
    if element.get("NotBefore") and _instant(element.get("NotBefore")) > now + SKEW:
        raise Invalid("not_yet_valid")
    if _instant(element.get("NotOnOrAfter")) <= now - SKEW:
        raise Invalid("expired")


def _attribute(assertion: etree._Element, name: str) -> str | None:
    for attribute in assertion.findall("saml:AttributeStatement/saml:Attribute", NS):
        if name in (attribute.get("Name"), attribute.get("FriendlyName")):
            value = attribute.find("saml:AttributeValue", NS)
            if value is not None and value.text and value.text.strip():
                return value.text.strip()
    return None
