"""Consultants and their clients: invitations, relationships, bulk invitations, the organization directory and portfolio milestones."""
