"""Provisioning from an organization's directory: SCIM 2.0 Users and Groups (docs/decisions.md §13)."""
