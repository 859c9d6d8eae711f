"""The access log `kindling serve` writes: uvicorn's, with every request's query left out.

Queries carry what must never reach a log: single sign-on's `code` and `state`, an email, a
cursor. The line keeps the path and marks that a query was there.
"""

from __future__ import annotations

import copy
import logging

from uvicorn.config import LOGGING_CONFIG


class QueryRedaction(logging.Filter):
    """Replaces the query of uvicorn's access-log record (its third argument, the path with query) with `?…`."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (args[0], args[1], args[2].partition("?")[0] + "?…", *args[3:])
        return True


def log_config() -> dict:
    """uvicorn's logging configuration with QueryRedaction on its access handler (applied in every worker)."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_query"] = {"()": f"{__name__}.QueryRedaction"}
    config["handlers"]["access"]["filters"] = ["redact_query"]
    return config
