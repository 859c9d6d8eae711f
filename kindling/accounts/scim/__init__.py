"""Provisioning from an organization's directory: SCIM 2.0 Users and Groups (docs/decisions.md §13)."""

SCIM_PREFIX = "/scim/v2"
SCIM_MEDIA_TYPE = "application/scim+json"
