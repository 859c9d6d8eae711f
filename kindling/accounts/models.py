"""Organizations, users and their sessions."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(String(220), unique=True)
    join_code: Mapped[str] = mapped_column(String(32), unique=True)
    # Off for organizations whose people come from their directory (docs/decisions.md §2).
    join_code_enabled: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    # ISO 4217: the currency reports and the portfolio state its money in; donations may be in any.
    reporting_currency: Mapped[str] = mapped_column(String(3), default="USD")
    # A BCP 47 tag (Babel's form, such as "en" or "de_CH") for the money in its PDFs.
    locale: Mapped[str] = mapped_column(String(35), default="en", server_default="en")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class User(Base):
    __tablename__ = "users"
    # The organization's people are listed by name, a page at a time.
    __table_args__ = (
        Index("ix_users_organization_id_name", "organization_id", "name", "id"),
        UniqueConstraint("sso_issuer", "sso_subject", name="uq_users_sso_issuer_sso_subject"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    password_hash: Mapped[str] = mapped_column(String(255))
    account_type: Mapped[str] = mapped_column(String(16))
    organization_id: Mapped[str | None] = mapped_column(ForeignKey("organizations.id"), index=True)
    # "admin", "manager" or "member" for members of an organization; None for consultants.
    role: Mapped[str | None] = mapped_column(String(16))
    # The role an admin set by hand; `role` is the highest of it and the roles of the person's
    # directory groups (docs/decisions.md §13).
    hand_role: Mapped[str | None] = mapped_column(String(16))
    # The auditor grant beside the role: reading evidence, reports and exports. `auditor` is held
    # when given by hand (`hand_auditor`) or by a directory group mapped to `auditor`.
    hand_auditor: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    auditor: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    firm_name: Mapped[str | None] = mapped_column(String(200))
    # Identifier of the same person at the identity provider, for its webhooks.
    external_id: Mapped[str | None] = mapped_column(String(255), unique=True)
    # The person at the organization's OpenID provider (its issuer and `sub`), linked at their first SSO sign-in.
    sso_issuer: Mapped[str | None] = mapped_column(String(1024))
    sso_subject: Mapped[str | None] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # The reporting line: who this person reports to, from the directory or an admin.
    manager_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"), index=True)
    department: Mapped[str | None] = mapped_column(String(255))
    employee_number: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # When the person's data was erased (docs/decisions.md §15); the row stays as a pseudonym.
    erased_at: Mapped[dt.datetime | None]
    # An erased person's mailbox as a keyed hash (kindling/accounts/mailboxes.py): still never an
    # independent attester's.
    erased_mailbox_key: Mapped[str | None] = mapped_column(String(64), index=True)


class Session(Base):
    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    # SHA-256 of the bearer token; the token itself is never stored.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime]
    revoked_at: Mapped[dt.datetime | None]
    # Begun through the organization's identity provider, not with a password: while the
    # organization enforces single sign-on, only such sessions of its non-admins hold.
    via_sso: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")


class ApiToken(Base):
    """A personal API token: a bearer credential with its owner's rights (docs/decisions.md §2)."""

    __tablename__ = "api_tokens"
    # A person's tokens are listed newest first.
    __table_args__ = (Index("ix_api_tokens_user_id_created_at", "user_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    name: Mapped[str] = mapped_column(String(100))
    # SHA-256 of the token; the token itself is shown once and never stored.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime]
    last_used_at: Mapped[dt.datetime | None]
    revoked_at: Mapped[dt.datetime | None]


class SsoConnection(Base):
    """An organization's identity provider, OpenID Connect or SAML 2.0 (docs/decisions.md §2).
    For SAML, `issuer` is the IdP's entity ID and the OpenID-only columns are empty strings."""

    __tablename__ = "sso_connections"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    protocol: Mapped[str] = mapped_column(String(8), default="oidc", server_default="oidc")
    issuer: Mapped[str] = mapped_column(String(1024))
    client_id: Mapped[str] = mapped_column(String(255))
    # AES-GCM under a key derived from SECRET_KEY, bound to the organization (kindling/accounts/secrets_box.py).
    client_secret_encrypted: Mapped[str] = mapped_column(Text)
    # Read from the provider's discovery document when the settings were saved.
    authorization_endpoint: Mapped[str] = mapped_column(String(2048))
    token_endpoint: Mapped[str] = mapped_column(String(2048))
    jwks_uri: Mapped[str] = mapped_column(String(2048))
    # Space-separated, those of SIGNING_ALGORITHMS the provider offers.
    signing_algorithms: Mapped[str] = mapped_column(String(200))
    token_endpoint_auth_method: Mapped[str] = mapped_column(String(32))
    jit_provisioning: Mapped[bool] = mapped_column(Boolean, default=False)
    enforced: Mapped[bool] = mapped_column(Boolean, default=False)
    # SAML: the IdP's metadata as last read (given, or fetched from the URL and refreshed daily).
    saml_metadata_xml: Mapped[str | None] = mapped_column(Text)
    saml_metadata_url: Mapped[str | None] = mapped_column(String(2048))
    saml_metadata_fetched_at: Mapped[dt.datetime | None]
    saml_email_attribute: Mapped[str | None] = mapped_column(String(255))
    # The service provider's own signing key, made for this organization when SAML is first set up:
    # the private key sealed like the client secret, the self-signed certificate in clear (it is public).
    saml_sp_key_encrypted: Mapped[str | None] = mapped_column(Text)
    saml_sp_certificate: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class SsoDomain(Base):
    """An email domain an organization claims for its single sign-on (docs/decisions.md §2). Any
    number of organizations may claim one; it routes sign-ins only once the claim is verified
    through DNS, and then it is that organization's alone."""

    __tablename__ = "sso_domains"
    __table_args__ = (
        Index(
            "uq_sso_domains_verified_domain",
            "domain",
            unique=True,
            sqlite_where=text("verified_at IS NOT NULL"),
            postgresql_where=text("verified_at IS NOT NULL"),
        ),
    )

    domain: Mapped[str] = mapped_column(String(253), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True, index=True)
    # Published as `kindling-domain-verification=<token>` in the domain's TXT record; one per claim,
    # so one organization's record never verifies another's claim.
    verification_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    verified_at: Mapped[dt.datetime | None]


class SsoState(Base):
    """A sign-in begun at the provider and not finished yet: single use, 10 minutes."""

    __tablename__ = "sso_states"

    # SHA-256 of the `state` (SAML: the RelayState) sent to the provider; the value itself is not stored.
    state_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), index=True)
    # OpenID: the ID token's nonce. SAML: the AuthnRequest's ID, which `InResponseTo` must name.
    nonce: Mapped[str] = mapped_column(String(64))
    code_verifier: Mapped[str] = mapped_column(String(128))
    return_to: Mapped[str] = mapped_column(String(2048))
    expires_at: Mapped[dt.datetime] = mapped_column(index=True)


class SamlAssertionSeen(Base):
    """A SAML assertion already used to sign in, kept until its `NotOnOrAfter` so that no
    process accepts it again (docs/decisions.md §2)."""

    __tablename__ = "saml_assertions_seen"

    # SHA-256 of the IdP's entity ID and the assertion's ID.
    assertion_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), index=True)
    expires_at: Mapped[dt.datetime] = mapped_column(index=True)
