"""A real SAML 2.0 identity provider for the tests: pysaml2's own `saml2.server.Server`, signing
with RSA-SHA256, in the test process (the service provider under test reaches it only through
the browser's redirects and posts, so no socket is needed)."""

from __future__ import annotations

import base64
import os
import tempfile
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from saml2 import BINDING_HTTP_REDIRECT
from saml2.config import IdPConfig
from saml2.saml import NAME_FORMAT_URI, NAMEID_FORMAT_EMAILADDRESS, NameID
from saml2.server import Server
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

from kindling.accounts import saml_sp

_dir = tempfile.mkdtemp(prefix="kindling-test-idp-")
_keys: dict[str, tuple[str, str]] = {}


def key_pair(name: str) -> tuple[str, str]:
    """A key file and a certificate file, made once per name for the whole run."""
    if name not in _keys:
        key_pem, certificate_pem = saml_sp.new_key_pair(name)
        paths = (os.path.join(_dir, f"{name}.key"), os.path.join(_dir, f"{name}.crt"))
        for path, content in zip(paths, (key_pem, certificate_pem), strict=True):
            with open(path, "w") as file:
                file.write(content)
        _keys[name] = paths
    return _keys[name]


def _certificate_base64(path: str) -> str:
    with open(path, "rb") as file:
        certificate = x509.load_pem_x509_certificate(file.read())
    return base64.b64encode(certificate.public_bytes(serialization.Encoding.DER)).decode()


class IdentityProvider:
    def __init__(self, entity_id: str = "https://idp.example.test/saml", key: str = "idp-a") -> None:
        self.entity_id = entity_id
        self.key = key

    def metadata(self, *certificates: str) -> str:
        """Its metadata, listing the signing certificates of the named keys (its own by default)."""
        keys = "".join(
            '<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>'
            f"{_certificate_base64(key_pair(name)[1])}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
            for name in (certificates or (self.key,))
        )
        return (
            '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"'
            f' xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="{self.entity_id}">'
            '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"'
            f' WantAuthnRequestsSigned="true">{keys}'
            f"<md:NameIDFormat>{NAMEID_FORMAT_EMAILADDRESS}</md:NameIDFormat>"
            f'<md:SingleSignOnService Binding="{BINDING_HTTP_REDIRECT}" Location="{self.entity_id}/sso"/>'
            "</md:IDPSSODescriptor></md:EntityDescriptor>"
        )

    def server(self, sp_metadata: str, *, key: str | None = None) -> Server:
        key_file, cert_file = key_pair(key or self.key)
        config = IdPConfig()
        config.load(
            {
                "entityid": self.entity_id,
                "key_file": key_file,
                "cert_file": cert_file,
                "metadata": {"inline": [sp_metadata]},
                "service": {
                    "idp": {
                        "endpoints": {"single_sign_on_service": [(f"{self.entity_id}/sso", BINDING_HTTP_REDIRECT)]},
                        "name_id_format": [NAMEID_FORMAT_EMAILADDRESS],
                        "policy": {"default": {"lifetime": {"minutes": 15}, "name_form": NAME_FORMAT_URI}},
                        "signing_algorithm": SIG_RSA_SHA256,
                        "digest_algorithm": DIGEST_SHA256,
                    }
                },
            }
        )
        return Server(config=config)

    def respond(
        self,
        sp_metadata: str,
        location: str,
        email: str,
        *,
        key: str | None = None,
        sp_entity_id: str | None = None,
        destination: str | None = None,
        in_response_to: str | None = None,
        sign_response: bool = False,
        sign_alg: str = SIG_RSA_SHA256,
        digest_alg: str = DIGEST_SHA256,
        name_id_format: str = NAMEID_FORMAT_EMAILADDRESS,
    ) -> tuple[str, str]:
        """The signed response (XML) to the AuthnRequest of `location`, and its RelayState."""
        server = self.server(sp_metadata, key=key)
        query = urllib.parse.parse_qs(urllib.parse.urlparse(location).query)
        request = server.parse_authn_request(query["SAMLRequest"][0], BINDING_HTTP_REDIRECT).message
        response = server.create_authn_response(
            identity={"mail": [email], "displayName": ["Sam Example"]},
            in_response_to=request.id if in_response_to is None else in_response_to,
            destination=destination or request.assertion_consumer_service_url,
            sp_entity_id=sp_entity_id or request.issuer.text,
            name_id=NameID(format=name_id_format, text=email),
            authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:Password"},
            sign_assertion=True,
            sign_response=sign_response,
            sign_alg=sign_alg,
            digest_alg=digest_alg,
        )
        return str(response), query["RelayState"][0]
