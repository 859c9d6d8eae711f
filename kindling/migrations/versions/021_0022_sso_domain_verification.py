"""sso domain verification

Revision ID: 0022
Revises: 0021
Position: 21 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

An email domain routes single sign-on only once its organization proves it through DNS
(docs/decisions.md §2). Several organizations may now claim one domain, each with its own
verification token; at most one holds it verified. Every existing claim becomes an unverified
one with a new token: nothing proved it, and one of them may be the very claim the rule is for.
Sessions record whether they were begun through the identity provider; every existing one
counts as a password session, since nothing tells them apart.
"""

import datetime as dt
import secrets

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def _token() -> str:
    """A claim's verification token, as the service made them when this migration was written."""
    return secrets.token_hex(16)


def upgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("via_sso", sa.Boolean(), server_default="0", nullable=False))

    with op.batch_alter_table("sso_domains", schema=None) as batch_op:
        batch_op.add_column(sa.Column("verification_token", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column("verified_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True)
        )
    domains = sa.table(
        "sso_domains",
        sa.column("domain", sa.String()),
        sa.column("verification_token", sa.String()),
        sa.column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True)),
    )
    connection = op.get_bind()
    now = dt.datetime.now(dt.UTC)
    for (domain,) in connection.execute(sa.select(domains.c.domain)).all():
        connection.execute(
            domains.update().where(domains.c.domain == domain).values(verification_token=_token(), created_at=now)
        )
    with op.batch_alter_table("sso_domains", schema=None) as batch_op:
        batch_op.alter_column("verification_token", existing_type=sa.String(length=64), nullable=False)
        batch_op.alter_column(
            "created_at", existing_type=kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False
        )
        batch_op.drop_constraint("pk_sso_domains", type_="primary")
        batch_op.create_primary_key("pk_sso_domains", ["domain", "organization_id"])
        batch_op.create_index(
            "uq_sso_domains_verified_domain",
            ["domain"],
            unique=True,
            sqlite_where=sa.text("verified_at IS NOT NULL"),
            postgresql_where=sa.text("verified_at IS NOT NULL"),
        )


def downgrade() -> None:
    # Back to one organization per domain: the verified claim, else the earliest, stays.
    domains = sa.table(
        "sso_domains",
        sa.column("domain", sa.String()),
        sa.column("organization_id", sa.String()),
        sa.column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True)),
        sa.column("verified_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True)),
    )
    connection = op.get_bind()
    kept: set[str] = set()
    rows = connection.execute(
        sa.select(domains.c.domain, domains.c.organization_id).order_by(
            domains.c.domain, domains.c.verified_at.is_(None), domains.c.created_at, domains.c.organization_id
        )
    ).all()
    for domain, organization_id in rows:
        if domain in kept:
            connection.execute(
                domains.delete().where(domains.c.domain == domain, domains.c.organization_id == organization_id)
            )
        kept.add(domain)
    with op.batch_alter_table("sso_domains", schema=None) as batch_op:
        batch_op.drop_index("uq_sso_domains_verified_domain")
        batch_op.drop_constraint("pk_sso_domains", type_="primary")
        batch_op.create_primary_key("pk_sso_domains", ["domain"])
        batch_op.drop_column("verified_at")
        batch_op.drop_column("created_at")
        batch_op.drop_column("verification_token")

    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("via_sso")
