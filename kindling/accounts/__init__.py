"""People and organizations: sign-up and sign-in, sessions, members and their roles, the identity provider's events,
personal API tokens and single sign-on."""
