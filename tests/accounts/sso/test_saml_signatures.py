"""The in-process signature check (kindling.accounts.saml_signatures) on its own, behind Kindling's
structural checks: responses of pysaml2's identity provider, then signature wrapping, a
certificate carried in KeyInfo, SHA-1 and an XSLT transform, each refused by it even where
libxmlsec1 with its defaults verifies the signature (the control beside each)."""

from __future__ import annotations

import uuid

import pytest
import xmlsec
from lxml import etree
from saml2.saml import NAMEID_FORMAT_EMAILADDRESS, NameID
from saml2.xmldsig import DIGEST_SHA1, DIGEST_SHA256, SIG_RSA_SHA1, SIG_RSA_SHA256

from kindling.accounts import saml_signatures, saml_sp
from tests.servers.saml_idp import IdentityProvider, key_pair

ACS = "https://kindling.test/api/auth/saml/acs"
NS = {"saml": "urn:oasis:names:tc:SAML:2.0:assertion", "ds": "http://www.w3.org/2000/09/xmldsig#"}
IDP_CERTIFICATE = key_pair("idp-a")[1]


@pytest.fixture(scope="module")
def respond():
    """The XML of a response signed by pysaml2's IdP (its Assertion only), with these options."""
    idp = IdentityProvider()
    key_pem, certificate_pem = saml_sp.new_key_pair("signatures")
    sp = saml_sp.ServiceProvider(
        entity_id="https://kindling.test/api/auth/saml/signatures",
        acs_url=ACS,
        key_pem=key_pem,
        certificate_pem=certificate_pem,
        metadata_xml=idp.metadata(),
        idp_entity_id=idp.entity_id,
    )
    sp_metadata = saml_sp.sp_metadata(sp)

    def make(key: str = "idp-a", sign_alg: str = SIG_RSA_SHA256, digest_alg: str = DIGEST_SHA256) -> str:
        response = idp.server(sp_metadata, key=key).create_authn_response(
            identity={"mail": ["sam@example.com"]},
            in_response_to="id-" + uuid.uuid4().hex,
            destination=ACS,
            sp_entity_id=sp.entity_id,
            name_id=NameID(format=NAMEID_FORMAT_EMAILADDRESS, text="sam@example.com"),
            authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:Password"},
            sign_assertion=True,
            sign_alg=sign_alg,
            digest_alg=digest_alg,
        )
        return str(response)

    return make


def _assertion_id(xml: str) -> str:
    return etree.fromstring(xml.encode()).find("saml:Assertion", NS).get("ID")


def _certificate_base64(path: str) -> str:
    with open(path) as file:
        return "".join(line for line in file.read().splitlines() if "CERTIFICATE" not in line)


def accepted(xml: str | bytes, node_id: str, *certificates: str) -> bool:
    """Whether the element with ID `node_id` is verified as signed by one of the certificates
    (files; the IdP's own by default)."""
    root = etree.fromstring(xml.encode() if isinstance(xml, str) else xml)
    nodes = [node for node in root.iter() if node.get("ID") == node_id]
    trusted = saml_signatures.keys(_certificate_base64(path) for path in certificates or (IDP_CERTIFICATE,))
    return any(saml_signatures.verified(root, node, trusted) for node in nodes)


def verifies_with_defaults(xml: str | bytes, signature_of: str, certificate: str = IDP_CERTIFICATE) -> bool:
    """Whether libxmlsec1 with every transform enabled verifies the signature inside the element
    with ID `signature_of`: the crafted document is validly signed, so only the backend refuses it."""
    root = etree.fromstring(xml.encode() if isinstance(xml, str) else xml)
    xmlsec.tree.add_ids(root, ["ID"])
    (node,) = [node for node in root.iter() if node.get("ID") == signature_of]
    context = xmlsec.SignatureContext()
    context.key = xmlsec.Key.from_file(certificate, xmlsec.constants.KeyDataFormatCertPem)
    try:
        context.verify(node.find("ds:Signature", NS))
    except xmlsec.Error:
        return False
    return True


def test_a_genuine_assertion_is_accepted_with_its_idps_certificate_only(respond):
    xml = respond()
    assert accepted(xml, _assertion_id(xml))
    assert not accepted(xml, _assertion_id(xml), key_pair("attacker")[1])
    # Rollover: either of two certificates, in either order.
    assert accepted(xml, _assertion_id(xml), key_pair("attacker")[1], IDP_CERTIFICATE)
    assert accepted(xml, _assertion_id(xml), IDP_CERTIFICATE, key_pair("attacker")[1])
    root = etree.fromstring(xml.encode())
    assert not saml_signatures.verified(root, root, saml_signatures.keys([]))  # the unsigned Response


def test_a_tampered_assertion_is_refused(respond):
    root = etree.fromstring(respond().encode())
    name_id = root.find("saml:Assertion/saml:Subject/saml:NameID", NS)
    name_id.text = "boss@example.com"
    assert not accepted(etree.tostring(root), root.find("saml:Assertion", NS).get("ID"))


def test_a_certificate_in_keyinfo_is_not_a_key(respond):
    xml = respond(key="attacker")  # pysaml2 puts the signer's certificate in KeyInfo
    assert b"X509Certificate" in xml.encode()
    assert verifies_with_defaults(xml, _assertion_id(xml), certificate=key_pair("attacker")[1])
    assert not accepted(xml, _assertion_id(xml))
    assert accepted(xml, _assertion_id(xml), key_pair("attacker")[1])


def test_sha1_is_refused(respond):
    xml = respond(sign_alg=SIG_RSA_SHA1, digest_alg=DIGEST_SHA1)
    assert verifies_with_defaults(xml, _assertion_id(xml))
    assert not accepted(xml, _assertion_id(xml))


def test_an_xslt_transform_is_refused():
    key_file, _ = key_pair("idp-a")
    root = etree.fromstring(
        f'<saml:Assertion xmlns:saml="{NS["saml"]}" ID="_xslt"><saml:Issuer>idp</saml:Issuer></saml:Assertion>'.encode()
    )
    signature = xmlsec.template.create(root, xmlsec.constants.TransformExclC14N, xmlsec.constants.TransformRsaSha256)
    root.append(signature)
    reference = xmlsec.template.add_reference(signature, xmlsec.constants.TransformSha256, uri="#_xslt")
    xmlsec.template.add_transform(reference, xmlsec.constants.TransformEnveloped)
    xslt = xmlsec.template.add_transform(reference, xmlsec.constants.TransformXslt)
    xslt.append(
        etree.fromstring(
            b'<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="1.0">'
            b'<xsl:template match="/">the same bytes whatever the assertion says</xsl:template></xsl:stylesheet>'
        )
    )
    xmlsec.tree.add_ids(root, ["ID"])
    context = xmlsec.SignatureContext()
    context.key = xmlsec.Key.from_file(key_file, xmlsec.constants.KeyDataFormatPem)
    context.sign(signature)
    xml = etree.tostring(root)
    assert verifies_with_defaults(xml, "_xslt")
    assert not accepted(xml, "_xslt")


def _evil(assertion: etree._Element, assertion_id: str) -> etree._Element:
    evil = etree.fromstring(etree.tostring(assertion))
    for signature in evil.findall("ds:Signature", NS):
        evil.remove(signature)
    evil.set("ID", assertion_id)
    evil.find("saml:Subject/saml:NameID", NS).text = "boss@example.com"
    return evil


def test_a_signature_moved_onto_another_assertion_is_refused(respond):
    """The evil assertion carries the genuine signature, which still names the genuine assertion
    (kept beside it): libxmlsec1 verifies it, but it is not the evil assertion's."""
    root = etree.fromstring(respond().encode())
    assertion = root.find("saml:Assertion", NS)
    evil = _evil(assertion, "_evil")
    signature = assertion.find("ds:Signature", NS)
    assertion.remove(signature)
    evil.insert(1, signature)
    root.replace(assertion, evil)
    root.append(assertion)
    xml = etree.tostring(root)
    assert verifies_with_defaults(xml, "_evil")
    assert not accepted(xml, "_evil")
