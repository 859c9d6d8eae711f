"""What a keyed write answered, kept for a day so that its retries answer the same."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, utcnow


class IdempotentResponse(Base):
    """A key's first request and its response, stored with its effect."""

    __tablename__ = "idempotent_responses"

    # Keys are per principal: the person behind a session or an API token.
    user_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    # "POST /api/kindness/…", path parameters included.
    operation: Mapped[str] = mapped_column(String(2100))
    body_sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[int | None] = mapped_column(Integer)
    headers: Mapped[dict | None] = mapped_column(JSON)
    body: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow, index=True)
