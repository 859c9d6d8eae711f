"""Abuse tests, one module per OWASP API Security Top 10 (2023) risk that applies to Kindling.

Black-box, through HTTP, on both backends; the operations come from openapi.yaml, so a new
operation that carries an id or needs a role fails here until its abuse case is written.

Not here, because they do not apply:
- API7 Server Side Request Forgery: no request makes the service fetch a URL it was given
  (media URLs are stored, never fetched; the AI provider's URL is configuration). Outbound
  webhooks will change that: their target URLs need these tests when they land.
"""
