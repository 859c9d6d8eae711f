"""The XML signatures of a SAML response, checked in process by the `xmlsec` binding (libxmlsec1,
which its wheels bundle) against the identity provider's metadata certificates, never a key
the message carries (docs/decisions.md §2).

Not pysaml2's signature check: its default backend runs an `xmlsec1` subprocess per certificate
tried, and its in-process one is pyXMLSecurity (also imported as `xmlsec`), which accepts a
document when any signature in it verifies and takes a certificate from KeyInfo when the
metadata names a CA."""

from __future__ import annotations

import base64
from collections.abc import Iterable

import xmlsec
from lxml import etree

_DS = "{http://www.w3.org/2000/09/xmldsig#}"
# SignedInfo's canonicalization and signature method, then a Reference's transforms and digest:
# libxmlsec1 refuses any other (SHA-1, XSLT, XPath, inclusive c14n), whatever the document asks.
_SIGNATURE_TRANSFORMS = (
    xmlsec.constants.TransformExclC14N,
    xmlsec.constants.TransformRsaSha256,
    xmlsec.constants.TransformRsaSha384,
    xmlsec.constants.TransformRsaSha512,
)
_REFERENCE_TRANSFORMS = (
    xmlsec.constants.TransformEnveloped,
    xmlsec.constants.TransformExclC14N,
    xmlsec.constants.TransformSha256,
    xmlsec.constants.TransformSha384,
    xmlsec.constants.TransformSha512,
)


def keys(certificates: Iterable[str]) -> tuple[xmlsec.Key, ...]:
    """The public keys of base64 DER certificates, as metadata lists them."""
    return tuple(
        xmlsec.Key.from_memory(base64.b64decode(certificate), xmlsec.constants.KeyDataFormatCertDer)
        for certificate in certificates
    )


def verified(root: etree._Element, element: etree._Element, trusted: Iterable[xmlsec.Key]) -> bool:
    """Whether `element`, in the document `root` whose ID attributes are unique, carries one
    enveloped signature of itself, made with one of the `trusted` keys."""
    signatures = element.findall(f"{_DS}Signature")
    element_id = element.get("ID")
    if len(signatures) != 1 or not element_id or signatures[0].find(f"{_DS}Object") is not None:
        return False
    references = signatures[0].findall(f"{_DS}SignedInfo/{_DS}Reference")
    if len(references) != 1 or references[0].get("URI") != "#" + element_id:
        return False
    xmlsec.tree.add_ids(root, ["ID"])
    for key in trusted:
        context = xmlsec.SignatureContext()
        # With the key given, libxmlsec1 takes none from KeyInfo.
        context.key = key
        for transform in _SIGNATURE_TRANSFORMS:
            context.enable_signature_transform(transform)
        for transform in _REFERENCE_TRANSFORMS:
            context.enable_reference_transform(transform)
        try:
            context.verify(signatures[0])
        except xmlsec.Error:
            continue
        return True
    return False
