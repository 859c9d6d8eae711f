"""The evidence events of authority (who was a member, with which role, line and grant, when:
docs/decisions.md §13), of SCIM tokens and of single sign-on, and the shape of each one's data.

An authority event's subject is the member; `source` says what made the change: `hand` (an
admin), `group`, `scim`, `identity_provider`, or for a join `sign_up`, `join_code` or `sso`.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from kindling.evidence.log import event_type


class MemberJoined(TypedDict):
    role: str | None
    source: str


MemberRoleChanged = TypedDict("MemberRoleChanged", {"from": str | None, "to": str, "source": str})


class MemberManagerSet(TypedDict):
    managerId: str | None
    previousManagerId: str | None
    source: str


class MemberAuditorSet(TypedDict):
    auditor: bool
    source: str


class MemberDeactivated(TypedDict):
    source: str


class MemberReactivated(TypedDict):
    source: str


class ScimTokenSet(TypedDict):
    """Nothing: the subject is the token."""


class SsoProvider(TypedDict):
    protocol: str
    # The OpenID provider's issuer, or the SAML identity provider's entity ID.
    issuer: str
    # OpenID Connect only.
    clientId: NotRequired[str]


class SsoConfigured(TypedDict):
    """Single sign-on's settings as saved (subject `organization`); only `enabled` when turned off."""

    enabled: bool
    protocol: NotRequired[str]
    issuer: NotRequired[str]
    clientId: NotRequired[str]
    emailDomains: NotRequired[list[str]]
    jitProvisioning: NotRequired[bool]
    enforced: NotRequired[bool]


class SsoDomainVerified(TypedDict):
    """Its TXT record proved the organization's claim (subject `organization`)."""

    domain: str


MEMBER_JOINED = event_type("member.joined", MemberJoined)
MEMBER_ROLE_CHANGED = event_type("member.role_changed", MemberRoleChanged)
MEMBER_MANAGER_SET = event_type("member.manager_set", MemberManagerSet)
MEMBER_AUDITOR_SET = event_type("member.auditor_set", MemberAuditorSet)
MEMBER_DEACTIVATED = event_type("member.deactivated", MemberDeactivated)
MEMBER_REACTIVATED = event_type("member.reactivated", MemberReactivated)
SCIM_TOKEN_CREATED = event_type("scim.token_created", ScimTokenSet)
SCIM_TOKEN_REVOKED = event_type("scim.token_revoked", ScimTokenSet)
SSO_CONFIGURED = event_type("sso.configured", SsoConfigured)
SSO_DOMAIN_VERIFIED = event_type("sso.domain_verified", SsoDomainVerified)
