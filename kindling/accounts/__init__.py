"""People and organizations: sign-up and sign-in, sessions, members and their roles, and the identity provider's events."""
