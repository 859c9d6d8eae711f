"""The mailer against real SMTP servers on loopback: STARTTLS when offered, smtps, refusals, silence."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import time

import pytest
from aiosmtpd.controller import Controller
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kindling.platform.mail import Mailer, MailError
from tests.servers.live import free_port
from tests.servers.mail import PASSWORD, USER, Mailbox


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1, as (certificate file, key file)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


def server_context(certificate) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    return context


@pytest.fixture
def tls_servers(certificate):
    """Two servers that need TLS before authentication: one offering STARTTLS, one speaking TLS from the start."""
    starttls, implicit = Mailbox(), Mailbox()
    plain_port, tls_port = free_port(), free_port()
    controllers = [
        Controller(
            starttls,
            hostname="127.0.0.1",
            port=plain_port,
            tls_context=server_context(certificate),
            require_starttls=True,
            authenticator=starttls.authenticate,
        ),
        # aiosmtpd only counts STARTTLS as TLS for AUTH; this connection is TLS from its first byte.
        Controller(
            implicit,
            hostname="127.0.0.1",
            port=tls_port,
            ssl_context=server_context(certificate),
            authenticator=implicit.authenticate,
            auth_require_tls=False,
        ),
    ]
    for controller in controllers:
        controller.start()
    credentials = f"{USER}:{PASSWORD.replace(' ', '%20')}"
    yield {
        "starttls": (f"smtp://{credentials}@127.0.0.1:{plain_port}", starttls),
        "smtps": (f"smtps://{credentials}@127.0.0.1:{tls_port}", implicit),
    }
    for controller in controllers:
        controller.stop()


def send(url: str, timeout: float = 5) -> dt.datetime:
    return Mailer(url=url, sender="attest@kindling.test", timeout=timeout).send(
        to="ada@foodbank.test", subject="Hello", text="Body\n"
    )


@pytest.mark.parametrize("scheme", ["starttls", "smtps"])
def test_mail_goes_over_tls_to_a_trusted_server(tls_servers, certificate, monkeypatch, scheme):
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # trust the test's certificate, as a system would its CA
    url, mailbox = tls_servers[scheme]
    delivered = send(url)
    assert abs(delivered - dt.datetime.now(dt.UTC)) < dt.timedelta(seconds=5)
    [message] = mailbox.to("ada@foodbank.test")
    assert (message["From"], message["Subject"], message.get_content().rstrip()) == (
        "attest@kindling.test",
        "Hello",
        "Body",
    )
    assert mailbox.logins == [USER]


@pytest.mark.parametrize("scheme", ["starttls", "smtps"])
def test_an_untrusted_certificate_is_refused(tls_servers, scheme):
    url, mailbox = tls_servers[scheme]
    with pytest.raises(MailError):
        send(url)
    assert mailbox.messages == [] and mailbox.logins == []


def test_wrong_credentials_and_refused_recipients_are_errors(mail_server, mailbox):
    with pytest.raises(MailError):
        # After the refused login smtplib tries its next mechanism, which this server leaves unanswered.
        send(mail_server.url.replace("mail%20password", "wrong"), timeout=1)
    mailbox.refuse = True
    with pytest.raises(MailError):
        send(mail_server.url)
    assert mailbox.messages == []


def test_a_silent_server_is_given_up_on_after_the_timeout(silent_server):
    started = time.monotonic()
    with pytest.raises(MailError):
        send(silent_server.url("smtp"), timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 2


def test_nobody_listening_is_an_error():
    with pytest.raises(MailError):
        send(f"smtp://127.0.0.1:{free_port()}")
