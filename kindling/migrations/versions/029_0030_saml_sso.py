"""saml single sign-on

Revision ID: 0030
Revises: 0029
Position: 29 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

An organization's identity provider may speak SAML 2.0 beside OpenID Connect (docs/decisions.md
§2): its protocol (every existing one is OpenID Connect), the IdP's metadata, the attribute
carrying the email, the service provider's own signing key, and the assertions already used,
kept until they expire so that none is accepted twice.
"""

import sqlalchemy as sa
from alembic import op

import kindling.migrations.frozen_types

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sso_connections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("protocol", sa.String(length=8), server_default="oidc", nullable=False))
        batch_op.add_column(sa.Column("saml_metadata_xml", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("saml_metadata_url", sa.String(length=2048), nullable=True))
        batch_op.add_column(
            sa.Column(
                "saml_metadata_fetched_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=True
            )
        )
        batch_op.add_column(sa.Column("saml_email_attribute", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("saml_sp_key_encrypted", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("saml_sp_certificate", sa.Text(), nullable=True))
    op.create_table(
        "saml_assertions_seen",
        sa.Column("assertion_hash", sa.String(length=64), nullable=False),
        sa.Column("organization_id", sa.String(length=36), nullable=False),
        sa.Column("expires_at", kindling.migrations.frozen_types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_saml_assertions_seen_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("assertion_hash", name=op.f("pk_saml_assertions_seen")),
    )
    with op.batch_alter_table("saml_assertions_seen", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_saml_assertions_seen_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_saml_assertions_seen_organization_id"), ["organization_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("saml_assertions_seen", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_saml_assertions_seen_organization_id"))
        batch_op.drop_index(batch_op.f("ix_saml_assertions_seen_expires_at"))
    op.drop_table("saml_assertions_seen")
    with op.batch_alter_table("sso_connections", schema=None) as batch_op:
        batch_op.drop_column("saml_sp_certificate")
        batch_op.drop_column("saml_sp_key_encrypted")
        batch_op.drop_column("saml_email_attribute")
        batch_op.drop_column("saml_metadata_fetched_at")
        batch_op.drop_column("saml_metadata_url")
        batch_op.drop_column("saml_metadata_xml")
        batch_op.drop_column("protocol")
