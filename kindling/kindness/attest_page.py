"""The page an attester opens from Kindling's mail: `/attest#<token>` (docs/decisions.md §6).

The token travels in the URL fragment, which browsers never send to a server: it reaches no
access log and no `Referer`. The page's script reads it, drops it from the address bar and the
history, and posts it in request bodies to the lookup and answer operations. The page loads
nothing else; its Content-Security-Policy allows only its own inline script and style, by hash.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
body { font: 1rem/1.5 system-ui, sans-serif; margin: 0; color: #1a1a1a; background: #fafafa; }
main { max-width: 40rem; margin: 0 auto; padding: 1.5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; white-space: pre-wrap; }
fieldset { border: 1px solid #767676; margin: 1rem 0; padding: .75rem; }
label { display: block; margin-top: .75rem; font-weight: 600; }
fieldset label { display: inline; font-weight: normal; margin: 0 1rem 0 .25rem; }
input[type=text], textarea { box-sizing: border-box; width: 100%; font: inherit; padding: .4rem; border: 1px solid #767676; }
button { margin-top: 1rem; font: inherit; padding: .5rem 1.25rem; background: #1f4e8c; color: #fff; border: 0; }
:focus-visible { outline: 3px solid #b35900; outline-offset: 2px; }
#status { margin-top: 1rem; font-weight: 600; }
"""

SCRIPT = """
"use strict";
const token = decodeURIComponent(location.hash.slice(1));
// The token stays in this page only: out of the address bar, the history and any later Referer.
history.replaceState(null, "", location.pathname);
const status = document.getElementById("status");
const form = document.getElementById("answer");
function say(text) { status.textContent = text; status.focus(); }
async function post(path, body) {
  const response = await fetch(path, {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
    credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer"
  });
  let data = null;
  try { data = await response.json(); } catch (error) { data = null; }
  return {ok: response.ok, status: response.status, data: data};
}
function problem(answer) {
  if (answer.status === 404) return "This link cannot be used: it was answered already, replaced by a newer request, or it has expired.";
  if (answer.data && answer.data.error) return answer.data.error;
  return "Something went wrong (" + answer.status + "). Please try again later.";
}
async function show() {
  if (!token) { say("This page needs the link from your invitation mail, in full."); return; }
  const answer = await post("api/attestations/lookup", {token: token});
  if (!answer.ok) { say(problem(answer)); return; }
  const act = answer.data.data;
  document.getElementById("organization").textContent = act.organizationName;
  document.getElementById("category").textContent = act.category.replace("_", " ");
  document.getElementById("date").textContent = act.date;
  document.getElementById("description").textContent = act.description;
  document.getElementById("expires").textContent = act.expiresAt.slice(0, 10);
  document.getElementById("act").hidden = false;
  form.hidden = false;
  say(act.organizationName + " asks you to confirm an act of kindness.");
}
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const fields = new FormData(form);
  const body = {token: token, decision: fields.get("decision"), name: fields.get("name").trim()};
  for (const optional of ["organization", "statement"]) {
    const value = fields.get(optional).trim();
    if (value) body[optional] = value;
  }
  const answer = await post("api/attestations/answer", body);
  if (!answer.ok) { say(problem(answer)); return; }
  form.hidden = true;
  say(body.decision === "confirm" ? "Thank you: your confirmation is recorded." : "Thank you: your answer is recorded.");
});
show();
"""

PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Confirm an act of kindness</title>
<style>{STYLE}</style>
</head>
<body>
<main>
<h1>Confirm an act of kindness</h1>
<div id="status" role="status" aria-live="polite" tabindex="-1">Loading the request…</div>
<section id="act" aria-labelledby="act-heading" hidden>
<h2 id="act-heading">What you are asked to confirm</h2>
<dl>
<dt>Organization</dt><dd id="organization"></dd>
<dt>Kind</dt><dd id="category"></dd>
<dt>Date</dt><dd id="date"></dd>
<dt>What happened</dt><dd id="description"></dd>
<dt>Answer by</dt><dd id="expires"></dd>
</dl>
</section>
<form id="answer" hidden>
<fieldset>
<legend>Your answer</legend>
<input type="radio" id="decision-confirm" name="decision" value="confirm" required>
<label for="decision-confirm">It happened as described</label>
<input type="radio" id="decision-decline" name="decision" value="decline">
<label for="decision-decline">I cannot confirm it</label>
</fieldset>
<label for="name">Your name</label>
<input type="text" id="name" name="name" required maxlength="200" autocomplete="name">
<label for="organization-name">Your organization (optional)</label>
<input type="text" id="organization-name" name="organization" maxlength="200" autocomplete="organization">
<label for="statement">What you saw (optional)</label>
<textarea id="statement" name="statement" rows="4" maxlength="2000"></textarea>
<button type="submit">Send my answer</button>
</form>
</main>
<script>{SCRIPT}</script>
</body>
</html>
"""


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; script-src {_hash(SCRIPT)}; style-src {_hash(STYLE)}; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Type": "text/html",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
