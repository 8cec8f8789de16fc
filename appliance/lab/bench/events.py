"""``appliance bench events``: what live event listeners cost a running daemon (issue 28).

Three figures, against a daemon that is already running (an operator token):

- **TTFT with idle listeners**: rounds of streamed answers, alternately with no listener and with
  ``--listeners`` idle ones open on ``/v1/events``, the same message in a fresh session each time; the
  report gives the median TTFT of each side and their ratio (measured side by side in one run, so a
  drift of the box's speed falls on both sides alike).
- **Event latency**: from sending a turn to be recorded to its event on a listener, median and worst.
- **Memory**: the daemon's resident memory (``--pid``, read from ``/proc``) before and with
  ``--many`` listeners open, and the difference.

Listeners are real HTTP streams read by this process; every one is closed before the report.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
from pathlib import Path
from typing import Any

import click
import httpx

from appliance.cli import edge
from appliance.errors import InputError

SETTLE_S = 1.0
MESSAGE = "Hello, my order A-17731 has not arrived. Where is it?"


async def _listen(http: httpx.AsyncClient, seen: dict[int, float], opened: asyncio.Event) -> None:
    """One idle listener: it reads its stream and notes when each event arrived."""
    async with http.stream("GET", "/v1/events", timeout=httpx.Timeout(30, read=None)) as reply:
        opened.set()
        async for line in reply.aiter_lines():
            if line.startswith("data: "):
                data = json.loads(line[6:])
                if isinstance(data.get("id"), int):
                    seen.setdefault(data["id"], time.perf_counter())


async def _open(http: httpx.AsyncClient, count: int) -> tuple[list[asyncio.Task[None]], list[dict[int, float]]]:
    tasks, logs = [], []
    for _ in range(count):
        seen: dict[int, float] = {}
        opened = asyncio.Event()
        tasks.append(asyncio.create_task(_listen(http, seen, opened)))
        logs.append(seen)
        await asyncio.wait_for(opened.wait(), 30)
    return tasks, logs


async def _close(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
            await task


async def _ttft(http: httpx.AsyncClient) -> float:
    session = (await http.post("/v1/sessions", json={"title": "bench events"})).json()["id"]
    started = time.perf_counter()
    first: float | None = None
    async with http.stream("POST", f"/v1/sessions/{session}/messages", json={"text": MESSAGE, "stream": True}) as reply:
        async for line in reply.aiter_lines():  # read to the end: the answer is stored before the next
            if first is None and line.startswith(("event: token", "event: done")):
                first = time.perf_counter() - started
    if first is None:
        raise InputError("the answer streamed no token", field="url")
    return first


def _rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


async def run_events(
    url: str, *, token: str | None, listeners: int = 20, rounds: int = 5, many: int = 200, pid: int | None = None
) -> dict[str, Any]:
    """The report: TTFT without and with idle listeners and their ratio, event latency, memory."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    limits = httpx.Limits(max_connections=many + 20, max_keepalive_connections=many + 20)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=600, limits=limits) as http:
        try:
            ready = await http.get("/readyz")
        except httpx.HTTPError as exc:
            raise InputError(f"cannot reach the daemon at {url}: {exc}", field="url") from None
        if ready.status_code != 200:
            raise InputError(f"the daemon at {url} is not ready ({ready.status_code})", field="url")
        await _ttft(http)  # a first answer warms the model and its caches for both sides
        without, with_ = [], []
        for _ in range(rounds):
            await asyncio.sleep(SETTLE_S)
            without.append(await _ttft(http))
            tasks, _logs = await _open(http, listeners)
            try:
                await asyncio.sleep(SETTLE_S)  # both sides measured the same time after their last change
                with_.append(await _ttft(http))
            finally:
                await _close(tasks)
        latencies = await _latencies(http)
        before = _rss_mb(pid)
        tasks, _logs = await _open(http, many)
        try:
            await asyncio.sleep(1.0)
            during = _rss_mb(pid)
        finally:
            await _close(tasks)
    a, b = statistics.median(without), statistics.median(with_)
    return {
        "rounds": rounds,
        "listeners": listeners,
        "ttft_s_without": round(a, 4),
        "ttft_s_with": round(b, 4),
        "ttft_ratio": round(b / a, 3) if a else None,
        "event_latency_ms_p50": round(statistics.median(latencies) * 1000, 1),
        "event_latency_ms_max": round(max(latencies) * 1000, 1),
        "many": many,
        "rss_mb_before": None if before is None else round(before, 1),
        "rss_mb_with_many": None if during is None else round(during, 1),
        "rss_mb_extra": None if before is None or during is None else round(during - before, 1),
    }


async def _latencies(http: httpx.AsyncClient, count: int = 20) -> list[float]:
    """Seconds from sending a turn to be recorded to its event on one listener (an upper bound of the
    time from storing it: the request's own time is included)."""
    tasks, logs = await _open(http, 1)
    try:
        session = (await http.post("/v1/sessions", json={"title": "bench events"})).json()["id"]
        await asyncio.sleep(0.5)
        out = []
        for i in range(count):
            known = set(logs[0])
            sent = time.perf_counter()
            await http.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": f"reply {i}"})
            deadline = sent + 10
            while time.perf_counter() < deadline:
                new = [t for event_id, t in logs[0].items() if event_id not in known]
                if new:
                    out.append(min(new) - sent)
                    break
                await asyncio.sleep(0.001)
        return out
    finally:
        await _close(tasks)


@click.command("events")
@click.option("--url", default="http://127.0.0.1:8088", show_default=True, help="The daemon's base URL.")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), help="An operator's bearer token.")
@click.option("--listeners", type=click.IntRange(1, 1000), default=20, show_default=True, help="Idle listeners.")
@click.option("--rounds", type=click.IntRange(1, 1000), default=5, show_default=True, help="Answers on each side.")
@click.option("--many", type=click.IntRange(1, 5000), default=200, show_default=True, help="Listeners for memory.")
@click.option("--pid", type=int, help="The daemon's process id, to read its resident memory.")
@edge
def events_command(url: str, token_file: Path | None, listeners: int, rounds: int, many: int, pid: int | None) -> None:
    """TTFT with and without idle event listeners (a ratio, side by side), event latency, memory."""
    token = token_file.read_text().strip() if token_file else None
    report = asyncio.run(run_events(url, token=token, listeners=listeners, rounds=rounds, many=many, pid=pid))
    click.echo(json.dumps(report, indent=2))
