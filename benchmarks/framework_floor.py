"""The framework floor: the least a Connexion FlaskApp costs to answer Kindling's cached
statistics. One operation, Connexion's defaults, no Kindling middleware; the same session
lookup (`kindling.accounts.sessions.live_principal`, behind its per-process cache) and the same statistics:

    FLOOR_ORGANIZATION_ID=… DATABASE_URL=… REDIS_URL=… \\
        python -m uvicorn benchmarks.framework_floor:app --workers 2 --port 8002
"""

from __future__ import annotations

import connexion

from kindling.accounts.principal_cache import principals
from kindling.accounts.sessions import hash_token, live_principal
from kindling.config import Settings
from kindling.kindness import stats as kindness_stats
from kindling.platform.cache import make_cache, redis_breaker
from kindling.platform.database import make_engine, make_session_factory

settings = Settings.from_env()
sessions = make_session_factory(make_engine(settings.database_url))
cache = make_cache(settings.redis_url, redis_breaker())

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Framework floor", "version": "1"},
    "security": [{"bearerAuth": []}],
    "components": {
        "securitySchemes": {
            "bearerAuth": {"type": "http", "scheme": "bearer", "x-bearerInfoFunc": f"{__name__}.token_info"}
        }
    },
    "paths": {
        "/api/kindness/stats": {
            "get": {
                "operationId": f"{__name__}.get_stats",
                "responses": {
                    "200": {
                        "description": "The statistics.",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        }
    },
}


def token_info(token: str) -> dict | None:
    principal = principals.get(hash_token(token))
    if principal is None:
        with sessions() as db:
            principal = live_principal(db, token)
            db.commit()
    return principal.as_token_info() if principal else None


def get_stats(token_info: dict):
    organization_id = token_info["principal"].organization_id
    with sessions() as db:
        return {"data": kindness_stats.get_stats(db, cache, organization_id=organization_id)}


app = connexion.FlaskApp(__name__)
app.add_api(SPEC)
