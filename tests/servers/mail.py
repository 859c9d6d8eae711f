"""Real SMTP servers on loopback: aiosmtpd for mail that is taken (or refused); the silent one is in silent.py.

The session's app sends attestation mails to `mail_server`; a test reads the token a mail
carries with `mail_server.token_for(address)`, as an attester would from their inbox.
"""

from __future__ import annotations

import dataclasses
import email
import email.policy
import re
import threading

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.servers.live import free_port

USER, PASSWORD = "kindling", "mail password"
LINK = re.compile(r"(https?://\S+)/attest#([A-Za-z0-9_-]{43})\s")


@dataclasses.dataclass(frozen=True)
class Envelope:
    """What the client said in the SMTP dialogue itself: MAIL FROM, and every RCPT TO."""

    mail_from: str
    rcpt_tos: tuple[str, ...]


class Mailbox:
    """What the server was handed, and whether it refuses the next mails."""

    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []
        # One per message, in the same order.
        self.envelopes: list[Envelope] = []
        self.refuse = False
        self.logins: list[str] = []
        self._lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802 (aiosmtpd's hook names)
        if self.refuse:
            return "550 5.7.1 Refused by policy"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        with self._lock:
            self.messages.append(message)
            self.envelopes.append(Envelope(envelope.mail_from, tuple(envelope.rcpt_tos)))
        return "250 Message accepted for delivery"

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
            USER.encode(),
            PASSWORD.encode(),
        )
        if ok:
            self.logins.append(auth_data.login.decode())
        return AuthResult(success=ok)

    def clear(self) -> None:
        with self._lock:
            self.messages.clear()
            self.envelopes.clear()
        self.refuse = False
        self.logins.clear()

    def to(self, address: str) -> list[email.message.EmailMessage]:
        """The mails sent to `address`, oldest first."""
        with self._lock:
            return [message for message in self.messages if message["To"] == address]

    def token_for(self, address: str) -> str:
        """The token in the link of the newest mail to `address`."""
        mails = self.to(address)
        assert mails, f"no mail to {address}"
        return LINK.search(mails[-1].get_content()).group(2)


class MailServer(Mailbox):
    """aiosmtpd on a free loopback port, with LOGIN/PLAIN authentication over a plain connection."""

    def __init__(self) -> None:
        super().__init__()
        self.port = free_port()
        self.controller = Controller(
            self, hostname="127.0.0.1", port=self.port, authenticator=self.authenticate, auth_require_tls=False
        )
        self.url = f"smtp://{USER}:{PASSWORD.replace(' ', '%20')}@127.0.0.1:{self.port}"


@pytest.fixture(scope="session")
def mail_server():
    server = MailServer()
    server.controller.start()
    yield server
    server.controller.stop()


@pytest.fixture
def mailbox(mail_server):
    """The session's mail server, emptied for this test."""
    mail_server.clear()
    yield mail_server
    mail_server.clear()
