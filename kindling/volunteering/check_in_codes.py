"""The codes shown at a volunteering venue: RFC 6238 TOTP with a 60-second step, and their QR code."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io

import pyotp
import segno

STEP = dt.timedelta(seconds=60)
DIGITS = 6


@dataclasses.dataclass(frozen=True)
class ShownCode:
    code: str
    expires_at: dt.datetime  # when the next step's code replaces it on the screen
    qr_svg: str


def new_secret() -> str:
    """A fresh 160-bit base32 secret for one opportunity."""
    return pyotp.random_base32()


def _totp(secret: str) -> pyotp.TOTP:
    return pyotp.TOTP(secret, digits=DIGITS, interval=int(STEP.total_seconds()))


def show(secret: str, now: dt.datetime) -> ShownCode:
    """The code of the current step, when it is replaced, and a QR code of it as an SVG document."""
    totp = _totp(secret)
    code = totp.at(now)
    expires_at = dt.datetime.fromtimestamp(totp.timecode(now) * totp.interval + totp.interval, dt.UTC)
    return ShownCode(code=code, expires_at=expires_at, qr_svg=qr_svg(code))


def accepts(secret: str, code: str, now: dt.datetime) -> bool:
    """Whether `code` is the current step's or the previous step's code.

    pyotp's `valid_window=1` would also accept the next step's, which no screen shows yet.
    """
    totp = _totp(secret)
    return totp.verify(code, for_time=now) or totp.verify(code, for_time=now - STEP)


def qr_svg(text: str) -> str:
    """A standalone SVG document of a (never Micro) QR code of `text`."""
    buffer = io.BytesIO()
    segno.make_qr(text).save(buffer, kind="svg", scale=8, border=4, xmldecl=False, svgns=True, title="Check-in code")
    return buffer.getvalue().decode()
