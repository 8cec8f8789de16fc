"""``appliance bench events``: what live event listeners cost a running daemon (issue 28).

Three figures, against a daemon that is already running (an operator token):

- **TTFT with idle listeners**: rounds of streamed answers, each round one answer with no listener
  and one with ``--listeners`` idle ones open on ``/v1/events`` (in alternating order, so a drift of
  the box's speed falls on both sides alike), the same message in a new session each time, as a
  kiosk sends its first message (the new session's event reaches the listeners while the answer
  starts). The report gives each side's median TTFT as the client saw it and as the daemon timed
  it, and their ratios. The listeners live in a child process of their own, at the lowest priority:
  they stand in for consoles on other machines, and read in this process their events would queue
  on the loop that times the answer. The side without listeners starts a child with none, so both
  sides give the daemon the same time after the answer before (``--settle`` more).
- **Event latency**: from the moment the daemon stored an event (its ``at`` stamp, this box's clock)
  to its arrival on a listener, median and worst; and, as an upper bound, from sending the request
  that records the turn, which also holds the wait in the session's lane.
- **Memory**: the daemon's resident memory (``--pid``, read from ``/proc``) before and with
  ``--many`` listeners open, and the difference.

Listeners are real HTTP streams; every one is closed before the report.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import statistics
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import click
import httpx

from appliance.cli import edge
from appliance.errors import InputError

OPEN_S = 60.0  # how long a crowd of listeners may take to connect
MESSAGE = "Hello, my order A-17731 has not arrived. Where is it?"


async def _listen(http: httpx.AsyncClient, seen: dict[int, tuple[float, float]], opened: asyncio.Event) -> None:
    """One idle listener: it reads its stream and notes, for each event, when it arrived (a
    monotonic and a wall-clock reading) and when the daemon stored it."""
    async with http.stream("GET", "/v1/events", timeout=httpx.Timeout(30, read=None)) as reply:
        opened.set()
        async for line in reply.aiter_lines():
            if line.startswith("data: "):
                data = json.loads(line[6:])
                if isinstance(data.get("id"), int) and data["id"] not in seen:
                    seen[data["id"]] = (time.perf_counter(), time.time() - float(data.get("at", 0.0)))


async def _open(http: httpx.AsyncClient, count: int) -> tuple[list[asyncio.Task[None]], list[dict[int, Any]]]:
    tasks, logs = [], []
    for _ in range(count):
        seen: dict[int, tuple[float, float]] = {}
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


def _client(url: str, headers: dict[str, str], connections: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections + 20, max_keepalive_connections=connections + 20)
    return httpx.AsyncClient(base_url=url, headers=headers, timeout=600, limits=limits)


# the crowd: idle listeners in a child process ----------------------------------------------------


def _crowd_main(url: str, headers: dict[str, str], count: int, pipe: Connection) -> None:
    # The listeners stand in for consoles on other machines: reading their streams here must not take
    # the cores from the daemon whose answers are timed, so they get what the daemon leaves.
    os.nice(19)
    asyncio.run(_crowd(url, headers, count, pipe))


async def _crowd(url: str, headers: dict[str, str], count: int, pipe: Connection) -> None:
    """Open ``count`` listeners, say so, hold them until told to stop, then report the events seen."""
    async with _client(url, headers, count) as http:
        try:
            tasks, logs = await _open(http, count)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it
            pipe.send(("error", repr(exc)))
            return
        pipe.send(("open", count))
        await asyncio.get_running_loop().run_in_executor(None, pipe.recv)
        await _close(tasks)
    pipe.send(("seen", sum(len(log) for log in logs)))


class Crowd:
    """``count`` idle listeners held by a child process while the ``async with`` block runs."""

    def __init__(self, url: str, headers: dict[str, str], count: int) -> None:
        self.url, self.headers, self.count = url, headers, count
        self.seen = 0

    async def __aenter__(self) -> Crowd:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(
            target=_crowd_main, args=(self.url, self.headers, self.count, child), daemon=True
        )
        self._process.start()
        child.close()
        loop = asyncio.get_running_loop()
        if not await loop.run_in_executor(None, self._pipe.poll, OPEN_S):
            self._stop()
            raise InputError(f"{self.count} listeners did not connect within {OPEN_S:.0f} s", field="url")
        try:
            kind, value = self._pipe.recv()
        except EOFError:  # the child died before it could say
            kind, value = "error", f"the listeners' process ended (exit code {self._process.exitcode})"
        if kind != "open":
            self._stop()
            raise InputError(f"the listeners could not connect: {value}", field="url")
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self._pipe.send("stop")
            if await asyncio.get_running_loop().run_in_executor(None, self._pipe.poll, 30):
                self.seen = self._pipe.recv()[1]
        self._stop()

    def _stop(self) -> None:
        self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._pipe.close()


# the figures ----------------------------------------------------------------------------------------


async def _ttft(http: httpx.AsyncClient) -> tuple[float, float]:
    """One answer's TTFT as this client saw it, and as the daemon timed it (its ``done`` event)."""
    session = (await http.post("/v1/sessions", json={"title": "bench events"})).json()["id"]
    started = time.perf_counter()
    first: float | None = None
    done: dict[str, Any] = {}
    async with http.stream("POST", f"/v1/sessions/{session}/messages", json={"text": MESSAGE, "stream": True}) as reply:
        event = ""
        async for line in reply.aiter_lines():  # read to the end: the answer is stored before the next
            if first is None and line.startswith(("event: token", "event: done")):
                first = time.perf_counter() - started
            if line.startswith("event: "):
                event = line[7:]
            elif event == "done" and line.startswith("data: "):
                done = json.loads(line[6:])
    if first is None or "ttft_s" not in done.get("timings", {}):
        raise InputError("the answer streamed no token", field="url")
    return first, float(done["timings"]["ttft_s"])


async def _ttft_sides(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], listeners: int, rounds: int, settle_s: float
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Each round: one answer without listeners and one with them, the order alternating by round."""
    without: list[tuple[float, float]] = []
    with_: list[tuple[float, float]] = []
    for index in range(rounds):
        for crowded in (False, True) if index % 2 == 0 else (True, False):
            # The side without listeners starts a crowd of none, so that both sides leave the daemon
            # the same time after the last answer (its warm-up for that session runs meanwhile).
            async with Crowd(url, headers, listeners if crowded else 0):
                await asyncio.sleep(settle_s)
                (with_ if crowded else without).append(await _ttft(http))
    return without, with_


async def _latencies(http: httpx.AsyncClient, count: int = 20) -> tuple[list[float], list[float]]:
    """Seconds from storing a recorded turn's event to its arrival on one listener, and from sending
    the request that records it (an upper bound: it holds the request's own time)."""
    tasks, logs = await _open(http, 1)
    try:
        session = (await http.post("/v1/sessions", json={"title": "bench events"})).json()["id"]
        await asyncio.sleep(0.5)
        stored, requested = [], []
        for i in range(count):
            known = set(logs[0])
            sent = time.perf_counter()
            await http.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": f"reply {i}"})
            deadline = sent + 10
            while time.perf_counter() < deadline:
                new = [seen for event_id, seen in logs[0].items() if event_id not in known]
                if new:
                    arrived, after_store = min(new)
                    requested.append(arrived - sent)
                    stored.append(after_store)
                    break
                await asyncio.sleep(0.001)
        return stored, requested
    finally:
        await _close(tasks)


def _rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def _sides(name: str, without: list[float], with_: list[float]) -> dict[str, Any]:
    """Each side's median, their ratio, and the median of each round's own ratio."""
    a, b = statistics.median(without), statistics.median(with_)
    return {
        f"{name}_s_without": round(a, 4),
        f"{name}_s_with": round(b, 4),
        f"{name}_ratio": round(b / a, 3) if a else None,
        f"{name}_ratio_median_of_rounds": round(
            statistics.median(y / x for x, y in zip(without, with_, strict=True)), 3
        ),
    }


def _ms(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values) * 1000, 1), "max": round(max(values) * 1000, 1)}


async def run_events(
    url: str,
    *,
    token: str | None,
    listeners: int = 20,
    rounds: int = 10,
    many: int = 200,
    pid: int | None = None,
    settle_s: float = 2.0,
) -> dict[str, Any]:
    """The report: TTFT without and with idle listeners and their ratio, event latency, memory."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with _client(url, headers, 1) as http:
        try:
            ready = await http.get("/readyz")
        except httpx.HTTPError as exc:
            raise InputError(f"cannot reach the daemon at {url}: {exc}", field="url") from None
        if ready.status_code != 200:
            raise InputError(f"the daemon at {url} is not ready ({ready.status_code})", field="url")
        await _ttft(http)  # a first answer warms the model and its caches for both sides
        without, with_ = await _ttft_sides(http, url, headers, listeners, rounds, settle_s)
        stored, requested = await _latencies(http)
        before = _rss_mb(pid)
        async with Crowd(url, headers, many):
            await asyncio.sleep(1.0)
            during = _rss_mb(pid)
    return {
        "rounds": rounds,
        "listeners": listeners,
        **_sides("ttft", [c for c, _ in without], [c for c, _ in with_]),
        **_sides("daemon_ttft", [d for _, d in without], [d for _, d in with_]),
        "event_latency_ms_from_store": _ms(stored),
        "event_latency_ms_from_request": _ms(requested),
        "many": many,
        "rss_mb_before": None if before is None else round(before, 1),
        "rss_mb_with_many": None if during is None else round(during, 1),
        "rss_mb_extra": None if before is None or during is None else round(during - before, 1),
    }


@click.command("events")
@click.option("--url", default="http://127.0.0.1:8088", show_default=True, help="The daemon's base URL.")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), help="An operator's bearer token.")
@click.option("--listeners", type=click.IntRange(1, 1000), default=20, show_default=True, help="Idle listeners.")
@click.option("--rounds", type=click.IntRange(1, 1000), default=10, show_default=True, help="Answers on each side.")
@click.option("--many", type=click.IntRange(1, 5000), default=200, show_default=True, help="Listeners for memory.")
@click.option("--pid", type=int, help="The daemon's process id, to read its resident memory.")
@click.option(
    "--settle", type=click.FloatRange(0, 60), default=2.0, show_default=True, help="Seconds before each timed answer."
)
@edge
def events_command(
    url: str, token_file: Path | None, listeners: int, rounds: int, many: int, pid: int | None, settle: float
) -> None:
    """TTFT with and without idle event listeners (a ratio, side by side), event latency, memory."""
    token = token_file.read_text().strip() if token_file else None
    report = asyncio.run(
        run_events(url, token=token, listeners=listeners, rounds=rounds, many=many, pid=pid, settle_s=settle)
    )
    click.echo(json.dumps(report, indent=2))
