"""a head advances by one event in one lookup

Revision ID: 0035
Revises: 0034
Position: 34 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

On PostgreSQL the head row's trigger checked every advance as a run of events (0019): a count,
a lookup and a join over the run. Nearly every append adds one event, and for one the check is
a single lookup: the event at the new seq, with the new head's hash, chained to the old head.
The same rows pass and fail as before; the check costs an append about a fifth of a
millisecond less (benchmarks/evidence.py).
"""

from alembic import op

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None

# 0019's function, with `{advance}` the checks of an update that moves the head.
FUNCTION = """
CREATE OR REPLACE FUNCTION evidence_heads_advance_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND NEW.seq = 0 AND NEW.hash = repeat('0', 64) THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.organization_id = OLD.organization_id THEN
    -- The frontier alone (0034 fills it in): the chain's head is where it was.
    IF NEW.seq = OLD.seq AND NEW.hash = OLD.hash THEN
      RETURN NEW;
    END IF;
    {advance}
  END IF;
  RAISE EXCEPTION '% on evidence_heads refused: a head only advances to the events just appended', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END $$;
"""
# 0019's check of a run: events OLD.seq+1 … NEW.seq all stored, the last one's hash the new
# head's, each chained to the one before, the first to the old head.
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
# One event: the run's three checks come to this lookup (seq is unique in an organization).
BY_ONE_OR_A_RUN = f"""IF NEW.seq = OLD.seq + 1 THEN
      IF EXISTS (SELECT 1 FROM evidence_events e
                 WHERE e.organization_id = NEW.organization_id AND e.seq = NEW.seq
                   AND e.hash = NEW.hash AND e.prev_hash = OLD.hash) THEN
        RETURN NEW;
      END IF;
    ELSIF {RUN} THEN
      RETURN NEW;
    END IF;"""
A_RUN = f"""IF {RUN} THEN
      RETURN NEW;
    END IF;"""


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute(FUNCTION.replace("{advance}", BY_ONE_OR_A_RUN))


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute(FUNCTION.replace("{advance}", A_RUN))
