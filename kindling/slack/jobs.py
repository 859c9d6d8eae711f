"""The Slack work a request leaves to the worker: Slack waits 3 s for an answer, and looking people
up, recording an act and messaging them may take longer.

A request writes a job in its own transaction; the worker (`kindling worker`, or the embedded
thread of `kindling serve`) claims due jobs with a lease, as it claims webhook deliveries, and
runs each. A job that fails on Slack's side is tried again, 5 s doubling, at most 5 times. A
job records its progress as it goes (the act it recorded, the message it sent), so a retry never
records or sends the same thing twice.
"""

from __future__ import annotations

import datetime as dt
import json
import logging

import requests
from slack_sdk import WebClient
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from kindling.accounts.models import Organization, User
from kindling.config import Settings
from kindling.errors import ApiError
from kindling.kindness import acts as kindness
from kindling.kindness import stats as kindness_stats
from kindling.platform.base import new_id, utcnow
from kindling.platform.cache import Cache, make_cache, redis_breaker
from kindling.platform.destinations import DestinationPolicy, RefusedDestination, check_url, session
from kindling.slack import blocks, installation, recognition, signed_requests, web_api
from kindling.slack.models import SlackInstallation, SlackJob

log = logging.getLogger(__name__)

RECORD, REPLY, HOME = "record", "reply", "home"
LEASE = dt.timedelta(minutes=2)
BATCH = 10
MAX_ATTEMPTS = 5
FIRST_RETRY_SECONDS = 5
HOME_ACTS = 10
REPLY_TIMEOUT_SECONDS = 10


def enqueue(db: Session, *, team_id: str, kind: str, payload: dict) -> SlackJob:
    """Leave work to the worker, in the caller's transaction: it runs once that commits."""
    job = SlackJob(id=new_id(), team_id=team_id, kind=kind, payload=payload, next_attempt_at=utcnow())
    db.add(job)
    db.flush()
    return job


class SlackWorker:
    """One round of Slack jobs, as the worker loop runs each of its tasks."""

    def __init__(self, session_factory: sessionmaker[Session], settings: Settings) -> None:
        self.session_factory = session_factory
        self.settings = settings
        self.cache = make_cache(settings.redis_url, redis_breaker())

    def __call__(self) -> None:
        try:
            run_due(self.session_factory, self.settings, self.cache)
        except Exception as exc:  # a database outage must not end the worker
            log.warning("Slack jobs round failed: %s: %s", type(exc).__name__, exc)


def run_due(
    session_factory: sessionmaker[Session], settings: Settings, cache: Cache, *, now: dt.datetime | None = None
) -> int:
    """Claim and run the due jobs; how many were run."""
    claimed = _claim(session_factory, now=now or utcnow())
    for job_id, token in claimed:
        _run(session_factory, settings, cache, job_id=job_id, token=token)
    if claimed:
        with session_factory() as db, db.begin():
            signed_requests.forget_expired(db)
    return len(claimed)


def _claim(session_factory: sessionmaker[Session], *, now: dt.datetime) -> list[tuple[str, str]]:
    token = new_id()
    due = (
        select(SlackJob.id)
        .where(
            SlackJob.status == "pending",
            SlackJob.next_attempt_at <= now,
            or_(SlackJob.locked_until.is_(None), SlackJob.locked_until <= now),
        )
        .order_by(SlackJob.next_attempt_at)
        .limit(BATCH)
        .with_for_update(skip_locked=True)
    )
    with session_factory() as db, db.begin():
        db.execute(
            update(SlackJob)
            .where(SlackJob.id.in_(due))
            .values(claim_token=token, locked_until=now + LEASE, attempts=SlackJob.attempts + 1)
            .execution_options(synchronize_session=False)
        )
        # Run in the order they were left: a reply to a click comes after the act it answers.
        claimed = (
            select(SlackJob.id).where(SlackJob.claim_token == token).order_by(SlackJob.next_attempt_at, SlackJob.id)
        )
        return [(job_id, token) for job_id in db.scalars(claimed)]


class _Retry(Exception):
    """Slack, or the reply's address, failed for now: the job is tried again later."""


def _run(session_factory: sessionmaker[Session], settings: Settings, cache: Cache, *, job_id: str, token: str) -> None:
    try:
        with session_factory() as db:
            job = db.get(SlackJob, job_id)
            if job is None or job.claim_token != token:
                return
            _step(db, settings, cache, job)
            _finish(db, job, status="done")
            db.commit()
    except _Retry as exc:
        _schedule_retry(session_factory, job_id=job_id, token=token, error=str(exc))
    except Exception:
        log.exception("Slack job %s failed", job_id)
        _schedule_retry(session_factory, job_id=job_id, token=token, error="internal error")


def _finish(db: Session, job: SlackJob, *, status: str) -> None:
    job.status, job.locked_until, job.claim_token = status, None, None


def _schedule_retry(session_factory: sessionmaker[Session], *, job_id: str, token: str, error: str) -> None:
    with session_factory() as db, db.begin():
        job = db.get(SlackJob, job_id)
        if job is None or job.claim_token != token:
            return
        job.last_error = error[:200]
        if job.attempts >= MAX_ATTEMPTS:
            log.warning("Slack job %s (%s) given up: %s", job.id, job.kind, error)
            _finish(db, job, status="failed")
        else:
            _finish(db, job, status="pending")
            job.next_attempt_at = utcnow() + dt.timedelta(seconds=FIRST_RETRY_SECONDS * 2 ** (job.attempts - 1))


def _step(db: Session, settings: Settings, cache: Cache, job: SlackJob) -> None:
    found = installation.installation_of_team(db, job.team_id)
    if found is None:
        log.info("Slack job %s dropped: its team is no longer installed", job.id)
        return
    web = web_api.client(settings.slack_api_base_url, token=installation.bot_token(found, settings.secret_key or ""))
    policy = DestinationPolicy.from_settings(settings)
    try:
        if job.kind == RECORD:
            _record(db, cache, web, policy, found, job)
        elif job.kind == REPLY:
            _reply(web, policy, job.payload, job.payload["message"])
        elif job.kind == HOME:
            _home(db, web, found, job.payload["slackId"])
    except web_api.SlackUnavailable as exc:
        raise _Retry(str(exc)) from None


def _progress(db: Session, job: SlackJob, **done: object) -> None:
    """Keep what the job has done so far, committed, so a retry goes on from there."""
    job.payload = {**job.payload, **done}
    db.commit()


def _record(
    db: Session, cache: Cache, web: WebClient, policy: DestinationPolicy, found: SlackInstallation, job: SlackJob
) -> None:
    payload = job.payload
    sender_id, recipient_id = payload["senderSlackId"], payload["recipientSlackId"]
    if "actId" not in payload:
        try:
            sender = recognition.member_of(db, web, installation=found, slack_id=sender_id)
            recipient = recognition.member_of(db, web, installation=found, slack_id=recipient_id)
            with db.begin_nested():
                act_id = recognition.record_act(
                    db,
                    cache,
                    installation=found,
                    sender=sender,
                    sender_slack_id=sender_id,
                    recipient=recipient,
                    recipient_slack_id=recipient_id,
                    description=payload["description"],
                    category=payload["category"],
                )
        except recognition.Unmatched as unmatched:
            _reply(web, policy, payload, blocks.ephemeral(f"Nothing was recorded. {unmatched}"))
            return
        except ApiError as refused:  # a rule of acts, such as recognizing oneself
            _reply(web, policy, payload, blocks.ephemeral(f"Nothing was recorded: {refused.message}"))
            return
        _progress(db, job, actId=act_id)
    if not payload.get("messageSent"):
        message = blocks.recipient_message(
            act_id=job.payload["actId"],
            sender_slack_id=sender_id,
            description=payload["description"],
            category=payload["category"],
        )
        web_api.call(web, "chat_postMessage", channel=recipient_id, **message)
        _progress(db, job, messageSent=True)
    _reply(
        web,
        policy,
        job.payload,
        blocks.ephemeral(
            f"Recorded your recognition of <@{recipient_id}> ({blocks.CATEGORY_NAMES[payload['category']]}). "
            f"They have been asked to confirm it."
        ),
    )


def _reply(web: WebClient, policy: DestinationPolicy, payload: dict, message: dict) -> None:
    """Answer the person who asked: through the request's `response_url`, else in a direct message."""
    url = payload.get("responseUrl")
    if not url:
        fields = {name: value for name, value in message.items() if name in ("text", "blocks")}
        web_api.call(web, "chat_postMessage", channel=payload["senderSlackId"], **fields)
        return
    try:
        check_url(url, policy)
        with session(policy) as http:
            response = http.post(
                url,
                data=json.dumps(message).encode(),
                headers={"Content-Type": "application/json"},
                timeout=REPLY_TIMEOUT_SECONDS,
                allow_redirects=False,
            )
            response.close()
    except RefusedDestination as refused:
        log.warning("Slack response_url refused: %s", refused)
        return  # never reachable from here: trying again would not help
    except requests.RequestException as exc:
        raise _Retry(f"response_url: {type(exc).__name__}") from None
    if not 200 <= response.status_code < 300:
        raise _Retry(f"response_url: HTTP {response.status_code}")


def _home(db: Session, web: WebClient, found: SlackInstallation, slack_id: str) -> None:
    try:
        member = recognition.member_of(db, web, installation=found, slack_id=slack_id)
    except recognition.Unmatched as unmatched:
        web_api.call(web, "views_publish", user_id=slack_id, view=blocks.unmatched_home(str(unmatched)))
        return
    organization = db.get(Organization, found.organization_id)
    acts, _ = kindness.list_acts(db, caller=member, user_id=member.user_id, limit=HOME_ACTS)
    shown = [
        {
            "createdAt": act.created_at.isoformat(),
            "category": act.category,
            "recipient": _name(db, act.recipient_id),
            "description": act.description,
            "verifiedLevel": act.verified_level,
            "requestedLevel": act.verification_level,
        }
        for act in acts
    ]
    stats = kindness_stats.compute_stats(db, organization_id=found.organization_id)
    view = blocks.home_view(organization=organization.name if organization else "", acts=shown, stats=stats)
    web_api.call(web, "views_publish", user_id=slack_id, view=view)


def _name(db: Session, recipient_id: str) -> str:
    """A recipient as the App Home names them: a member by name, anyone else by the id the act gives."""
    user = db.get(User, recipient_id)
    return user.name if user is not None and user.erased_at is None else recipient_id
