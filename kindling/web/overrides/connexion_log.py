"""A filter on Connexion's operations logger: the notice it logs on every request to an operation
that accepts two media types is dropped.

The SCIM operations accept `application/scim+json` and `application/json` (RFC 7644 §3.8); both
are JSON and validated alike. Connexion logs "this operation accepts multiple content types"
each time it looks up such an operation's body, which is on every request, so the warning says
nothing and would fill the log. The filter is added to Connexion's `connexion.operations.openapi3`
logger through the standard library's `Logger.addFilter`; every other record of that logger
passes. `tests/web/test_overrides.py` fails if Connexion stops logging that notice there, in
those words.
"""

from __future__ import annotations

import logging

LOGGER = "connexion.operations.openapi3"


class OneMediaTypeNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("this operation accepts multiple content types")


NOTICE = OneMediaTypeNotice()


def drop_media_type_notices() -> None:
    """Add the filter to Connexion's logger (once, however often it is called)."""
    logging.getLogger(LOGGER).addFilter(NOTICE)
