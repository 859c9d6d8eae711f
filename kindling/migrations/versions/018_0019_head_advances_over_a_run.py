"""a head advances over a run of events

Revision ID: 0019
Revises: 0014
Position: 18 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

One change may append several events at once (a payment and the matches it makes), so on
PostgreSQL the head row's trigger lets it advance over the run of events just appended, each
chained to the one before, where it allowed one event only.
"""

from alembic import op

revision = "0019"
down_revision = "0014"
branch_labels = None
depends_on = None

# The trigger function of 0014 with `advance` as the check of an update that moves the head.
FUNCTION = """
CREATE OR REPLACE FUNCTION evidence_heads_advance_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND NEW.seq = 0 AND NEW.hash = repeat('0', 64) THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.organization_id = OLD.organization_id THEN
    -- Appends lock the row with an update that changes nothing.
    IF NEW.seq = OLD.seq AND NEW.hash = OLD.hash THEN
      RETURN NEW;
    END IF;
    IF {advance} THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION '% on evidence_heads refused: a head only advances to the events just appended', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END $$;
"""
# Events OLD.seq+1 … NEW.seq all stored (seq is unique in an organization), the last one's hash
# the new head's, and each chained to the one before, the first to the old head.
RUN = """NEW.seq > OLD.seq
      AND (SELECT count(*) FROM evidence_events e
           WHERE e.organization_id = NEW.organization_id AND e.seq > OLD.seq AND e.seq <= NEW.seq) = NEW.seq - OLD.seq
      AND EXISTS (SELECT 1 FROM evidence_events e
                  WHERE e.organization_id = NEW.organization_id AND e.seq = NEW.seq AND e.hash = NEW.hash)
      AND NOT EXISTS (
        SELECT 1 FROM evidence_events e
        LEFT JOIN evidence_events p ON p.organization_id = e.organization_id AND p.seq = e.seq - 1 AND e.seq > OLD.seq + 1
        WHERE e.organization_id = NEW.organization_id AND e.seq > OLD.seq AND e.seq <= NEW.seq
          AND e.prev_hash IS DISTINCT FROM CASE WHEN e.seq = OLD.seq + 1 THEN OLD.hash ELSE p.hash END)"""
ONE = """NEW.seq = OLD.seq + 1 AND EXISTS (
      SELECT 1 FROM evidence_events e
      WHERE e.organization_id = NEW.organization_id AND e.seq = NEW.seq
        AND e.hash = NEW.hash AND e.prev_hash = OLD.hash
    )"""


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute(FUNCTION.replace("{advance}", RUN))


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute(FUNCTION.replace("{advance}", ONE))
