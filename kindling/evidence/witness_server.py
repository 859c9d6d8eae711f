"""`kindling witness serve`: a small C2SP tlog-witness (c2sp.org/tlog-witness) with SQLite state.

It cosigns a log's checkpoint only once it has proven, by the consistency proof submitted with
it, that the checkpoint extends the last one it cosigned for that origin. Checking the old size
and storing the new checkpoint is one compare-and-set in SQLite, so two submissions racing can
never roll a log back. Standard library, `cryptography` and the evidence slice's verifiers only.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import http.server
import pathlib
import sqlite3
import threading
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kindling.evidence import cosignatures, merkle, notes
from kindling.evidence.keys import kept_key

MAX_BODY = 64 * 1024
MAX_PROOF_LINES = 63
SIZE_MEDIA_TYPE = "text/x.tlog.size"


class Refused(Exception):
    """An add-checkpoint the witness does not cosign: the HTTP status, its body and media type."""

    def __init__(self, status: int, body: str, media_type: str = "text/plain; charset=utf-8") -> None:
        super().__init__(body)
        self.status, self.body, self.media_type = status, body, media_type


@dataclasses.dataclass(frozen=True)
class Logs:
    """The logs a witness follows: each origin's trusted note keys as (key name, key), and origin
    prefixes under which one key signs every log with the origin as key name (a Kindling host's
    organizations, each its own origin)."""

    keys: dict[str, list[tuple[str, bytes]]]
    prefixes: dict[str, list[bytes]] = dataclasses.field(default_factory=dict)

    def trusted(self, origin: str) -> list[tuple[str, bytes]] | None:
        found = list(self.keys.get(origin, []))
        found += [(origin, key) for prefix, keys in self.prefixes.items() if origin.startswith(prefix) for key in keys]
        return found or None


class State:
    """The latest cosigned checkpoint of each log, in SQLite: `(origin, size, root, note)`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._local = threading.local()
        with self._connection() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS logs (origin TEXT PRIMARY KEY, size INTEGER NOT NULL, "
                "root BLOB NOT NULL, note TEXT)"
            )

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            self._local.db = db
        return db

    def latest(self, origin: str) -> tuple[int, bytes, str | None]:
        row = self._connection().execute("SELECT size, root, note FROM logs WHERE origin = ?", (origin,)).fetchone()
        return (row[0], bytes(row[1]), row[2]) if row else (0, merkle.EMPTY_ROOT, None)

    def by_origin_hash(self, origin_hash: str) -> str | None:
        rows = self._connection().execute("SELECT origin, note FROM logs WHERE note IS NOT NULL").fetchall()
        return next((note for origin, note in rows if hashlib.sha256(origin.encode()).hexdigest() == origin_hash), None)

    def advance(self, origin: str, old: tuple[int, bytes], new: tuple[int, bytes], note: str) -> bool:
        """Store `new` as the log's latest checkpoint if it still is at `old`; whether it was."""
        db = self._connection()
        with db:
            db.execute("BEGIN IMMEDIATE")
            if old[0] == 0:
                db.execute(
                    "INSERT OR IGNORE INTO logs (origin, size, root, note) VALUES (?, 0, ?, NULL)",
                    (origin, merkle.EMPTY_ROOT),
                )
            changed = db.execute(
                "UPDATE logs SET size = ?, root = ?, note = ? WHERE origin = ? AND size = ? AND root = ?",
                (new[0], new[1], note, origin, old[0], old[1]),
            ).rowcount
        return changed == 1


class Witness:
    """The witness: its cosigning key and name, the logs it follows and its state."""

    def __init__(self, name: str, private_key: Ed25519PrivateKey, logs: Logs, state: State) -> None:
        self.name, self.private_key, self.logs, self.state = name, private_key, logs, state

    @property
    def vkey(self) -> str:
        return cosignatures.vkey(self.name, self.private_key.public_key().public_bytes_raw())

    def add_checkpoint(self, body: bytes, now: float | None = None) -> str:
        """The cosignature line of a submitted `add-checkpoint` body; Refused as the spec says."""
        old, proof, note = _parse_request(body)
        try:
            text, lines = notes.split(note)
            origin, size, root = notes.parse_checkpoint_text(text)
        except notes.NoteError as exc:
            raise Refused(400, f"not a checkpoint: {exc}\n") from None
        keys = self.logs.trusted(origin)
        if keys is None:
            raise Refused(404, "unknown log origin\n")
        _check_log_signature(keys, text, lines)
        if old > size:
            raise Refused(400, "the old size is larger than the checkpoint's\n")
        stored_size, stored_root, _ = self.state.latest(origin)
        if old != stored_size:
            raise Refused(409, f"{stored_size}\n", SIZE_MEDIA_TYPE)
        if size == 0 and root != merkle.EMPTY_ROOT:
            raise Refused(422, "a checkpoint of size 0 must have the empty tree's root\n")
        if old == 0 and proof:
            raise Refused(422, "no consistency proof is needed, or accepted, from size 0\n")
        if old > 0 and not merkle.verify_consistency(old, size, stored_root, root, proof):
            raise Refused(422, "the consistency proof does not verify\n")
        timestamp = int(now if now is not None else time.time())
        cosignature = cosignatures.cosign(self.private_key, self.name, text, timestamp)
        if not self.state.advance(origin, (stored_size, stored_root), (size, root), note + cosignature):
            # Another submission moved the log meanwhile: answer with where it is now.
            raise Refused(409, f"{self.state.latest(origin)[0]}\n", SIZE_MEDIA_TYPE)
        return cosignature

    def checkpoint(self, origin_hash: str) -> str | None:
        """The latest cosigned checkpoint of the log whose origin hashes to `origin_hash`, with its
        cosignature (the monitoring endpoint)."""
        return self.state.by_origin_hash(origin_hash)


def _parse_request(body: bytes) -> tuple[int, list[bytes], str]:
    try:
        text = body.decode()
    except UnicodeDecodeError:
        raise Refused(400, "the body is not UTF-8\n") from None
    head, blank, note = text.partition("\n\n")
    lines = head.split("\n")
    if not blank or not lines[0].startswith("old ") or len(lines) - 1 > MAX_PROOF_LINES:
        raise Refused(400, "the body is an old size line, at most 63 proof lines, a blank line and a checkpoint\n")
    old_text = lines[0][4:]
    if not (old_text == "0" or (old_text.isascii() and old_text.isdigit() and old_text[0] != "0")):
        raise Refused(400, "the old size is a decimal with no leading zeroes\n")
    proof = []
    for line in lines[1:]:
        try:
            node = base64.b64decode(line, validate=True)
        except binascii.Error:
            node = b""
        if len(node) != 32:
            raise Refused(400, "each consistency proof line is the base64 of a 32-byte hash\n")
        proof.append(node)
    return int(old_text), proof, note


def _check_log_signature(keys: list[tuple[str, bytes]], text: str, lines: list[tuple[str, bytes, bytes]]) -> None:
    """403 unless a trusted key signed the note, or when a line of a trusted key does not verify;
    lines of other keys are ignored."""
    verified = False
    for key_name, key in keys:
        wanted = notes.key_id(key_name, key)
        for signature in (signature for name, line_id, signature in lines if (name, line_id) == (key_name, wanted)):
            try:
                Ed25519PublicKey.from_public_bytes(key).verify(signature, text.encode())
            except InvalidSignature:
                raise Refused(403, "a signature by a trusted key does not verify\n") from None
            verified = True
    if not verified:
        raise Refused(403, "no signature by a trusted key of the log\n")


def handler(witness: Witness) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            if self.path != "/add-checkpoint":
                return self._answer(404, "not found\n")
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return self._answer(413, "the body is too large\n")
            try:
                self._answer(200, witness.add_checkpoint(self.rfile.read(length)))
            except Refused as refused:
                self._answer(refused.status, refused.body, refused.media_type)

        def do_GET(self) -> None:
            parts = self.path.strip("/").split("/")
            if parts == ["vkey"]:
                return self._answer(200, witness.vkey + "\n")
            if len(parts) == 2 and parts[1] == "checkpoint":
                found = witness.checkpoint(parts[0])
                return self._answer(200, found) if found else self._answer(404, "no checkpoint of that log\n")
            self._answer(404, "not found\n")

        def _answer(self, status: int, body: str, media_type: str = "text/plain; charset=utf-8") -> None:
            raw = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", media_type)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    return Handler


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # logs submit in bursts: a short backlog resets their connections


def server(witness: Witness, host: str, port: int) -> http.server.ThreadingHTTPServer:
    return _Server((host, port), handler(witness))


def parse_log(text: str) -> tuple[str, str, bytes]:
    """`ORIGIN=VKEY` of `--log` (or `PREFIX=VKEY` of `--origin-prefix`): the origin, the vkey's key
    name and its Ed25519 key."""
    origin, equals, vkey = text.partition("=")
    if not equals or not origin:
        raise ValueError(f"{text!r} is not ORIGIN=VKEY")
    return origin, *notes.parse_vkey(vkey)


def load_logs(logs: list[str], prefixes: list[str]) -> Logs:
    keys: dict[str, list[tuple[str, bytes]]] = {}
    for text in logs:
        origin, name, public_key = parse_log(text)
        keys.setdefault(origin, []).append((name, public_key))
    by_prefix: dict[str, list[bytes]] = {}
    for text in prefixes:
        prefix, _, public_key = parse_log(text)
        by_prefix.setdefault(prefix, []).append(public_key)
    return Logs(keys, by_prefix)


def serve(*, state: str, key: str, name: str, logs: list[str], prefixes: list[str], host: str, port: int) -> int:
    """Run the witness until interrupted; prints its vkey first."""
    try:
        followed = load_logs(logs, prefixes)
    except ValueError as exc:
        print(f"kindling: --log/--origin-prefix: {exc}")
        return 2
    if not followed.keys and not followed.prefixes:
        print("kindling: give at least one --log ORIGIN=VKEY or --origin-prefix PREFIX=VKEY")
        return 2
    witness = Witness(name, kept_key(pathlib.Path(key)), followed, State(state))
    running = server(witness, host, port)
    print(f"witness {witness.vkey} on http://{host}:{running.server_address[1]}", flush=True)
    try:
        running.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        running.server_close()
    return 0
