"""Mail through an SMTP server, with the standard library's smtplib.

`smtp://user:password@host:port` sends on a plain connection and upgrades it with STARTTLS
whenever the server offers it; `smtps://…` speaks TLS from the start. Certificates are checked
against the system's trusted authorities. Each step waits at most `timeout` seconds for the server.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import smtplib
import ssl
import urllib.parse
from email.message import EmailMessage

log = logging.getLogger(__name__)
# The submission port (RFC 6409) and implicit TLS (RFC 8314) when the URL names none.
DEFAULT_PORTS = {"smtp": 587, "smtps": 465}


class MailError(Exception):
    """The mail server refused the mail, or did not answer in time."""


@dataclasses.dataclass(frozen=True)
class Mailer:
    """Sends mail from `sender` through the SMTP server at `url`."""

    url: str
    sender: str
    timeout: float = 10.0

    def send(self, *, to: str, subject: str, text: str) -> dt.datetime:
        """Hand one plain-text mail for the one address `to` to the server; the moment it accepted it."""
        message = EmailMessage()
        message["From"] = self.sender
        message["To"] = to
        message["Subject"] = subject
        message.set_content(text)
        parts = urllib.parse.urlsplit(self.url)
        host, port = parts.hostname or "", parts.port or DEFAULT_PORTS[parts.scheme]
        client: smtplib.SMTP
        try:
            if parts.scheme == "smtps":
                client = smtplib.SMTP_SSL(host, port, timeout=self.timeout, context=ssl.create_default_context())
            else:
                client = smtplib.SMTP(host, port, timeout=self.timeout)
            with client:
                client.ehlo()
                if parts.scheme == "smtp" and client.has_extn("starttls"):
                    client.starttls(context=ssl.create_default_context())
                    client.ehlo()
                if parts.username:
                    client.login(urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))
                # The envelope names `to` alone: smtplib would otherwise read the recipients
                # back out of the To header, as a list.
                client.send_message(message, to_addrs=[to])
        except (OSError, smtplib.SMTPException) as exc:
            # The class only: a server's reply may quote the recipient, and the mail is never logged.
            log.warning("mail server %s:%s did not take the mail: %s", host, port, type(exc).__name__)
            raise MailError(type(exc).__name__) from None
        return dt.datetime.now(dt.UTC)


def make_mailer(smtp_url: str | None, mail_from: str | None, timeout: float) -> Mailer | None:
    """The mailer the settings describe, or None when no SMTP server is configured."""
    if smtp_url is None or mail_from is None:
        return None
    return Mailer(url=smtp_url, sender=mail_from, timeout=timeout)
