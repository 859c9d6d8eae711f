"""on PostgreSQL the database sequences each event

Revision ID: 0036
Revises: 0035
Position: 35 (file names give the run order; revision ids stay as stored, docs/decisions.md §23)

`evidence_append` gives an event its place in the organization's chain and tree: it locks the
head row, splices the head's seq + 1 and hash into the canonical body the application prepared
(kindling/evidence/chain.py, `unsequenced_body`), hashes it, stores the event and the tree nodes
its leaf completes, and advances the head. The application sends the call with the transaction's
COMMIT, so the head is locked only while the call runs, with no round trip to the application
inside the lock. `tests/evidence/test_sequencing.py` keeps it equal to kindling/evidence/log.py's
sequencing in Python, which SQLite uses and every verifier repeats.
"""

from alembic import op

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None

# `text_before` is the canonical body up to `"prevHash":"`, `text_after` the rest from `,"subject":`.
# Node hashes are RFC 9162's: SHA-256(0x00 ‖ leaf), SHA-256(0x01 ‖ left ‖ right). A head whose
# frontier does not fit its size (one moved by hand) has the frontier read from the stored nodes.
FUNCTION = """
CREATE FUNCTION evidence_append(
  organization text, event_type text, kind text, subject text, actor text, body_data json,
  occurred timestamptz, text_before text, text_after text
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  head_seq bigint;
  head_hash text;
  nodes bytea;
  new_seq bigint;
  digest text;
  node bytea;
  place bigint;
  height int;
  covered bigint := 0;
BEGIN
  SELECT h.seq, h.hash, h.frontier INTO head_seq, head_hash, nodes
    FROM evidence_heads h WHERE h.organization_id = organization FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    INSERT INTO evidence_heads (organization_id, seq, hash, frontier)
      VALUES (organization, 0, repeat('0', 64), ''::bytea) ON CONFLICT DO NOTHING;
    SELECT h.seq, h.hash, h.frontier INTO head_seq, head_hash, nodes
      FROM evidence_heads h WHERE h.organization_id = organization FOR NO KEY UPDATE;
  END IF;
  IF nodes IS NULL OR length(nodes) <> 32 * bit_count(head_seq::bit(64)) THEN
    nodes := ''::bytea;
    FOR height IN REVERSE 62..0 LOOP
      IF (head_seq >> height) & 1 = 1 THEN
        SELECT n.hash INTO node FROM evidence_tree_nodes n
          WHERE n.organization_id = organization AND n.level = height AND n.position = covered >> height;
        IF NOT FOUND THEN
          RAISE EXCEPTION USING MESSAGE = 'the tree of organization ' || organization || ' has no node ('
            || height || ', ' || (covered >> height) || ')';
        END IF;
        nodes := nodes || node;
        covered := covered + (1::bigint << height);
      END IF;
    END LOOP;
  END IF;
  new_seq := head_seq + 1;
  digest := encode(sha256(convert_to(text_before || head_hash || '","seq":' || new_seq || text_after, 'UTF8')), 'hex');
  INSERT INTO evidence_events
      (organization_id, seq, type, subject_kind, subject_id, actor_id, data, occurred_at, prev_hash, hash)
    VALUES (organization, new_seq, event_type, kind, subject, actor, body_data, occurred, head_hash, digest);
  place := head_seq;
  height := 0;
  node := sha256(decode('00', 'hex') || decode(digest, 'hex'));
  INSERT INTO evidence_tree_nodes (organization_id, level, position, hash) VALUES (organization, 0, place, node);
  WHILE place & 1 = 1 LOOP
    node := sha256(decode('01', 'hex') || substring(nodes FROM length(nodes) - 31) || node);
    nodes := substring(nodes FOR length(nodes) - 32);
    place := place >> 1;
    height := height + 1;
    INSERT INTO evidence_tree_nodes (organization_id, level, position, hash) VALUES (organization, height, place, node);
  END LOOP;
  UPDATE evidence_heads SET seq = new_seq, hash = digest, frontier = nodes || node
    WHERE organization_id = organization;
END $$;
"""


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute(FUNCTION)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP FUNCTION evidence_append(text, text, text, text, text, json, timestamptz, text, text)")
