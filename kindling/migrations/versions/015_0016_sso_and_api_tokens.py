"""sso and api tokens

Revision ID: 0016
Revises: 0015
Position: 15 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

Personal API tokens, organizations' OpenID Connect settings, their claimed email domains,
sign-ins begun at the provider, and each person's link to their provider account.
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sso_connections",
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("issuer", sa.String(length=1024), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("client_secret_encrypted", sa.Text(), nullable=False),
        sa.Column("authorization_endpoint", sa.String(length=2048), nullable=False),
        sa.Column("token_endpoint", sa.String(length=2048), nullable=False),
        sa.Column("jwks_uri", sa.String(length=2048), nullable=False),
        sa.Column("signing_algorithms", sa.String(length=200), nullable=False),
        sa.Column("token_endpoint_auth_method", sa.String(length=32), nullable=False),
        sa.Column("jit_provisioning", sa.Boolean(), nullable=False),
        sa.Column("enforced", sa.Boolean(), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_sso_connections_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_sso_connections")),
    )
    op.create_table(
        "sso_domains",
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_sso_domains_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("domain", name=op.f("pk_sso_domains")),
    )
    with op.batch_alter_table("sso_domains", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sso_domains_organization_id"), ["organization_id"], unique=False)

    op.create_table(
        "sso_states",
        sa.Column("state_hash", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("nonce", sa.String(length=64), nullable=False),
        sa.Column("code_verifier", sa.String(length=128), nullable=False),
        sa.Column("return_to", sa.String(length=2048), nullable=False),
        sa.Column("expires_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"], ["organizations.id"], name=op.f("fk_sso_states_organization_id_organizations")
        ),
        sa.PrimaryKeyConstraint("state_hash", name=op.f("pk_sso_states")),
    )
    with op.batch_alter_table("sso_states", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sso_states_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_sso_states_organization_id"), ["organization_id"], unique=False)

    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_api_tokens_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.create_index("ix_api_tokens_user_id_created_at", ["user_id", "created_at", "id"], unique=False)

    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sso_issuer", sa.String(length=1024), nullable=True))
        batch_op.add_column(sa.Column("sso_subject", sa.String(length=255), nullable=True))
        batch_op.create_unique_constraint("uq_users_sso_issuer_sso_subject", ["sso_issuer", "sso_subject"])


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_constraint("uq_users_sso_issuer_sso_subject", type_="unique")
        batch_op.drop_column("sso_subject")
        batch_op.drop_column("sso_issuer")

    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.drop_index("ix_api_tokens_user_id_created_at")

    op.drop_table("api_tokens")
    with op.batch_alter_table("sso_states", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sso_states_organization_id"))
        batch_op.drop_index(batch_op.f("ix_sso_states_expires_at"))

    op.drop_table("sso_states")
    with op.batch_alter_table("sso_domains", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sso_domains_organization_id"))

    op.drop_table("sso_domains")
    op.drop_table("sso_connections")
