"""The /attest page, live: headless Chromium opens the mailed link, reads the act and answers it,
and the token reaches no line the server writes (docs/decisions.md §6)."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
import requests
from websockets.sync.client import connect

from kindling.platform.database import upgrade
from tests.helpers import call, sign_up
from tests.helpers.chromium import FLAGS, chromium
from tests.helpers.verification import ASK, ATTESTER


@pytest.fixture
def attested_server(fresh_database_url, live_server, mailbox):
    """A live server that mails through the test's SMTP server, and an act whose attestation was mailed."""
    upgrade(fresh_database_url)

    def start(**env):
        server = live_server(
            DATABASE_URL=fresh_database_url,
            SMTP_URL=mailbox.url,
            MAIL_FROM="attest@kindling.test",
            PUBLIC_URL="https://kindling.test",
            **env,
        )
        sender = sign_up(server.url, organizationName="Harbour Trust")
        act = {
            "description": "Ran the Saturday food bank shift",
            "category": "community",
            "verificationLevel": 5,
            "recipientId": "a-neighbour",
        }
        act_id = call(server, "POST", "/api/kindness", sender.token, json=act).json()["data"]["id"]
        call(server, "POST", f"/api/kindness/{act_id}/attestations", sender.token, json=ASK)
        return server, sender, act_id, mailbox.token_for(ATTESTER)

    return start


class Browser:
    """Headless Chromium, driven over the DevTools protocol (`socket`) on one page."""

    def __init__(self, socket) -> None:
        self.socket = socket
        self.ids = iter(range(1, 1_000_000))
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def send(self, method: str, session: str | None = None, **params) -> dict:
        message_id = next(self.ids)
        message = {"id": message_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv(timeout=30))
            if reply.get("id") == message_id:
                assert "error" not in reply, reply
                return reply["result"]

    def evaluate(self, expression: str):
        result = self.send(
            "Runtime.evaluate", self.session, expression=expression, returnByValue=True, awaitPromise=True
        )
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # Until the page has loaded, its elements are not there to read.
            value = self.evaluate(f"(() => {{ try {{ return ({expression}); }} catch (error) {{ return null; }} }})()")
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"never true: {expression}; the page says {self.evaluate('document.body.innerText')!r}")

    def open(self, url: str) -> None:
        self.send("Page.navigate", self.session, url=url)

    def press(self, key: str, code: str, text: str = "") -> None:
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                self.session,
                type=kind,
                key=key,
                code=code,
                text=text if kind == "keyDown" else "",
            )


@pytest.fixture
def browser(tmp_path):
    profile = tmp_path / "chromium"
    process = subprocess.Popen(
        [
            chromium("test the /attest page"),
            *FLAGS,
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Chromium writes the port it listens on, and the browser's DevTools path, once it is up.
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().split()) == 2):
            assert time.monotonic() < deadline, "Chromium did not start"
            time.sleep(0.1)
        port, path = port_file.read_text().split()
        with connect(f"ws://127.0.0.1:{port}{path}", max_size=None) as socket:
            yield Browser(socket)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.live
def test_the_page_reads_the_fragment_shows_the_act_and_answers_it(attested_server, browser):
    server, sender, act_id, token = attested_server()
    browser.open(f"{server.url}/attest#{token}")
    browser.wait_for("!document.getElementById('act').hidden")
    shown = browser.evaluate(
        "({description: document.getElementById('description').textContent,"
        " organization: document.getElementById('organization').textContent,"
        " status: document.getElementById('status').textContent, url: location.href})"
    )
    assert shown["description"] == "Ran the Saturday food bank shift" and shown["organization"] == "Harbour Trust"
    assert "Harbour Trust asks you" in shown["status"]
    assert token not in shown["url"]  # dropped from the address bar and the history
    # Screen readers: results are announced, and every field has a label.
    assert browser.evaluate("document.getElementById('status').getAttribute('aria-live')") == "polite"
    assert browser.evaluate(
        "[...document.querySelectorAll('input, textarea')].every(field => field.labels.length === 1)"
    )

    # With the keyboard alone: focus the first choice, pick it with Space, type a name, send with Enter.
    browser.evaluate("document.getElementById('decision-confirm').focus()")
    browser.press(" ", "Space", " ")
    browser.evaluate("document.getElementById('name').focus()")
    browser.send("Input.insertText", browser.session, text="Ada Lovelace")
    browser.press("Enter", "Enter", "\r")
    status = browser.wait_for(
        "document.getElementById('answer').hidden && document.getElementById('status').textContent"
    )
    assert status == "Thank you: your confirmation is recorded."

    act = call(server, "GET", f"/api/kindness/{act_id}", sender.token).json()["data"]
    assert (act["verifiedLevel"], act["verification"]["status"]) == (5, "verified")
    decisions = call(server, "GET", f"/api/kindness/{act_id}/verifications", sender.token).json()["data"]
    assert decisions[0]["attester"]["name"] == "Ada Lovelace"

    # Opened again (a new load, not a jump to a fragment of the page shown), the used link says so.
    browser.open("about:blank")
    browser.open(f"{server.url}/attest#{token}")
    browser.wait_for("document.getElementById('status').textContent.includes('cannot be used')")


@pytest.mark.live
def test_the_token_is_in_no_line_the_server_writes(attested_server):
    # Everything: debug logging, uvicorn's access log, stdout and stderr.
    server, sender, act_id, token = attested_server(LOG_LEVEL="DEBUG")
    assert requests.get(f"{server.url}/attest", timeout=10).status_code == 200
    looked_up = requests.post(f"{server.url}/api/attestations/lookup", json={"token": token}, timeout=10)
    assert looked_up.status_code == 200, looked_up.text
    answered = requests.post(
        f"{server.url}/api/attestations/answer", json={"token": token, "decision": "confirm", "name": "Ada"}, timeout=10
    )
    assert answered.status_code == 200, answered.text
    # A reused token's refusal is logged too.
    assert (
        requests.post(
            f"{server.url}/api/attestations/answer",
            json={"token": token, "decision": "confirm", "name": "Ada"},
            timeout=10,
        ).status_code
        == 404
    )
    written = server.log()
    for request_line in (
        "/api/kindness/",
        "POST /api/attestations/lookup",
        "POST /api/attestations/answer",
        "GET /attest",
    ):
        assert request_line in written, f"the access log is not captured: {written[-2000:]}"
    assert token not in written
    assert token[:16] not in written
