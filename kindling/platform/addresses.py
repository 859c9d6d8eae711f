"""Email addresses Kindling mails to or compares: parsed once, into one normal form (docs/decisions.md §6).

An address is a bare `local@domain` (RFC 5321's mailbox, without a display name, angle brackets,
comments, a quoted local part, whitespace or a list): `PATTERN` says so, as the spec's
`AttesterEmail` does, and `email-validator` parses what passes it. The normal form has its local
part lower-cased and its domain as its IDNA A-label (UTS #46), lower-cased: that is what is mailed
and shown. For comparison a mailbox also drops a `+tag` from its local part, so that
`me+x@corp.example` is `me@corp.example`.
"""

from __future__ import annotations

import dataclasses
import re

import idna
from email_validator import EmailNotValidError, validate_email

# The characters of RFC 5322's dot-atom (ASCII only), and of a domain label: anything but dots,
# the address syntax's specials, controls, spaces and the full stops IDNA reads as dots (an
# internationalised label is IDNA's to judge).
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = (
    r'[^@.,;:<>()\[\]\\"\x00-\x20\x7f-\xa0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\u3002\ufeff\uff0e\uff61]+'
)
# The same text is AttesterEmail's pattern in openapi.yaml; `$(?!\n)` because Python's `$` also
# matches before a final line feed.
PATTERN = rf"^{_ATOM}(\.{_ATOM})*@{_LABEL}(\.{_LABEL})+$(?!\n)"
_BARE = re.compile(PATTERN)


class InvalidAddress(ValueError):
    """Not a bare address `local@domain` that mail can be sent to; the message says why."""


@dataclasses.dataclass(frozen=True)
class Address:
    local: str  # lower-cased
    domain: str  # the IDNA A-label, lower-cased

    @property
    def normal(self) -> str:
        """The address as Kindling mails and stores it."""
        return f"{self.local}@{self.domain}"

    @property
    def mailbox(self) -> str:
        """The address as Kindling compares it: without the local part's `+tag`."""
        base = self.local.split("+", 1)[0]
        return f"{base or self.local}@{self.domain}"


def parse(text: str) -> Address:
    """The normal form of a bare address; InvalidAddress for anything else."""
    if not _BARE.match(text):
        raise InvalidAddress("must be a bare address local@domain, with no name, brackets, comment, space or list")
    try:
        # `.test` is allowed: RFC 2606 reserves it for testing, and the mail server judges delivery.
        parsed = validate_email(text, check_deliverability=False, allow_smtputf8=False, test_environment=True)
    except EmailNotValidError as exc:
        raise InvalidAddress(str(exc)) from None
    return Address(local=parsed.local_part.lower(), domain=parsed.ascii_domain.lower())


def mailbox_of(text: str) -> str | None:
    """The compared mailbox of an address as stored (a member's, say), or None when it is no bare address."""
    try:
        return parse(text.strip()).mailbox
    except InvalidAddress:
        return None


def a_label(domain: str) -> str:
    """A domain as its IDNA A-label, lower-cased, so Unicode and punycode spellings compare equal."""
    name = domain.strip().lower().rstrip(".")
    try:
        return idna.encode(name, uts46=True).decode("ascii").lower()
    except idna.IDNAError:
        return name
