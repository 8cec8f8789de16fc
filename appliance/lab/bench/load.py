"""``appliance bench load``: N concurrent customer sessions against a running daemon.

Each client opens a session and sends its turns one after another (as a kiosk would); the clients
run at the same time, so the daemon's queue, fairness and storage are exercised together. Success
is not taken on the server's word: afterwards every answered turn is looked up in the session's
stored transcript (``GET /v1/sessions/{id}``), and only turns found there, word for word, count
as stored. After each of its turns a client also reads how many turns its session's summary is
behind (``summary_lag_turns``), so the report shows whether summaries keep up under load.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from appliance.errors import InputError
from appliance.lab.stats import percentile, spread

# Customer messages with the kind of facts the appliance must keep (ids, amounts, dates, names).
MESSAGES = (
    "Hello, I ordered a kettle last week and it has not arrived. My order number is A-{n}7731.",
    "It was paid by card, 49.90 EUR, on 3 March.",
    "Can you tell me where the parcel is now?",
    "My name is Dana Weiss and the delivery address is Lindenstrasse {n}.",
    "Could you send a replacement instead of a refund?",
    "What is the reference for this request?",
    "Please note my phone number, +49 30 1234 56{n}.",
    "When will the replacement arrive?",
    "Thank you. Is there anything else you need from me?",
    "One more thing: can I change the delivery day to Friday?",
)

RETRIES_ON_BUSY = 5


@dataclass
class _Client:
    session_id: str | None = None
    answered: list[tuple[int, str]] = field(default_factory=list)  # (agent turn index, text)
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    retried: int = 0
    lags: list[int] = field(default_factory=list)  # summary_lag_turns after each answered turn


async def _one_client(http: httpx.AsyncClient, n: int, turns: int) -> _Client:
    me = _Client()
    try:
        created = await http.post("/v1/sessions", json={"title": f"bench load client {n}"})
        created.raise_for_status()
    except httpx.HTTPError:
        me.errors = turns
        return me
    me.session_id = created.json()["id"]
    for t in range(turns):
        text = MESSAGES[t % len(MESSAGES)].format(n=n)
        started = time.perf_counter()
        try:
            for attempt in range(RETRIES_ON_BUSY + 1):
                reply = await http.post(f"/v1/sessions/{me.session_id}/messages", json={"text": text})
                if reply.status_code != 429 or attempt == RETRIES_ON_BUSY:
                    break
                me.retried += 1
                await asyncio.sleep(float(reply.headers.get("Retry-After", "1")))
            reply.raise_for_status()
        except httpx.HTTPError:
            me.errors += 1
            continue
        me.latencies.append(time.perf_counter() - started)
        body = reply.json()
        me.answered.append((body["agent"]["index"], body["agent"]["text"]))
        lag = await _lag(http, me.session_id)
        if lag is not None:
            me.lags.append(lag)
    return me


async def _lag(http: httpx.AsyncClient, session_id: str) -> int | None:
    """How many turns the session's summary is behind now; None for a policy without a summary (or
    a daemon that does not say)."""
    try:
        detail = await http.get(f"/v1/sessions/{session_id}")
        detail.raise_for_status()
    except httpx.HTTPError:
        return None
    lag = detail.json().get("summary_lag_turns")
    return lag if isinstance(lag, int) else None


def lag_report(lags: list[int]) -> dict[str, float]:
    """``{"p50": ..., "max": ...}`` of the lag samples (0 for none)."""
    return {"p50": round(percentile(lags, 50), 1), "max": max(lags, default=0)}


async def _stored(http: httpx.AsyncClient, client: _Client) -> int:
    """How many of the client's answered turns are in the database exactly as they were returned."""
    if client.session_id is None:
        return 0
    detail = await http.get(f"/v1/sessions/{client.session_id}")
    detail.raise_for_status()
    body = detail.json()
    agent_turns = {t["index"]: t["text"] for t in body["turns"] if t["role"] == "agent"}
    recorded = {r["index"] for r in body["records"]}
    return sum(1 for index, text in client.answered if agent_turns.get(index) == text and index in recorded)


async def run_load(
    url: str,
    clients: int,
    turns: int,
    *,
    token: str | None = None,
    socket_path: str | None = None,
    timeout_s: float = 900.0,
) -> dict[str, Any]:
    """Drive ``clients`` sessions of ``turns`` messages each; the report of the issue's shape."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = httpx.AsyncHTTPTransport(uds=socket_path) if socket_path else None
    async with httpx.AsyncClient(base_url=url, headers=headers, transport=transport, timeout=timeout_s) as http:
        try:
            ready = await http.get("/readyz")
        except httpx.HTTPError as exc:
            raise InputError(f"cannot reach the daemon at {url}: {exc}", field="url") from None
        if ready.status_code != 200:
            raise InputError(f"the daemon at {url} is not ready ({ready.status_code}): {ready.text}", field="url")
        started = time.perf_counter()
        done = await asyncio.gather(*(_one_client(http, n, turns) for n in range(clients)))
        wall = time.perf_counter() - started
        stored = sum(await asyncio.gather(*(_stored(http, c) for c in done)))
    latencies = [x for c in done for x in c.latencies]
    return {
        "clients": clients,
        "turns": clients * turns,
        "errors": sum(c.errors for c in done),
        "stored_turns": stored,
        "latency_s": spread(latencies, 3),
        "throughput_turns_per_s": round(len(latencies) / wall, 3) if wall > 0 else 0.0,
        "retried_busy": sum(c.retried for c in done),
        "summary_lag_turns": lag_report([x for c in done for x in c.lags]),
        "wall_s": round(wall, 3),
    }
