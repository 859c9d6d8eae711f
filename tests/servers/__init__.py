"""Real servers the tests talk to: Kindling itself as `kindling serve`, throwaway PostgreSQL and
Redis, and loopback stand-ins for what Kindling reaches outside (SMTP, DNS, an OpenID provider, a
SAML identity provider, Slack, the AI provider, a webhook receiver). conftest.py loads their fixtures."""
