"""``appliance bench footprint``: what the configured appliance costs the box it runs on.

An operator sizing a box needs a few figures measured on the real thing, not estimated: the runtime
install (the Python packages the daemon, chat and TUI need, without model files), the daemon's
resident memory once it reports ready and after it has answered, the seconds from start to ready,
the shared libraries it loaded (which shows what it carries: no PyTorch), and what one recall
embedding costs.

* **Install** is computed from the installed distributions' RECORD files: the appliance's runtime
  requirements (no extras) and theirs, recursively, as installed in this environment, file sizes on
  disk. Test and lab extras installed beside them are not counted, nor are model files (they are
  not Python packages) or the interpreter. The appliance's own package tree is counted even when it
  is installed editable.
* **Daemon**: a real ``appliance serve`` subprocess with the same configuration on a free loopback
  port and a throw-away database (the operator's data is never touched). ``/readyz`` is polled
  from the moment it starts; resident memory (VmRSS) is read once it is ready and idle, and again
  after it has answered one message in a new session. ``rss_split_mb`` splits the first into the
  process's own memory (``anon``) and pages of mapped files (``file``: mostly the GGUF models).
* **KV cache**: what the responder's context holds beside the weights, from the model's shape:
  ``responder.parallel`` sequences of ``responder.n_ctx`` tokens each (batched decoding multiplies it).
* **Embedding**: the configured recall model loaded here, verified like in the daemon, and one
  message embedded ``runs`` times after a warm-up (milliseconds, p50 and p95).

MB are 10^6 bytes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.errors import ApplianceError, InputError
from appliance.lab.stats import spread

# A customer message that points back (so recall's gate passes), as a typical one of the dev sessions.
MESSAGE = "Sorry, could you tell me the reference number again?"
TARGETS = {"install_mb": 500.0, "rss_idle_ready_mb": 2400.0, "ready_s": 6.0, "embed_p50_ms": 5.0}
MB = 1e6


# install size ------------------------------------------------------------------------------------


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_closure(root: str = "appliance") -> list[metadata.Distribution]:
    """``root`` and every distribution its runtime requirements pull in, as installed here (no extras
    of ``root``; a dependency's extras are followed when a requirement names them)."""
    from packaging.requirements import Requirement

    seen: dict[str, metadata.Distribution] = {}
    todo: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (_key(name), extras) in done:
            continue
        done.add((_key(name), extras))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement whose marker excluded it on this platform, or an optional one
        seen.setdefault(_key(dist.metadata["Name"]), dist)
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
                continue
            todo.append((req.name, frozenset(req.extras)))
    return [seen[k] for k in sorted(seen)]


def distribution_bytes(dist: metadata.Distribution) -> int:
    """Bytes on disk of the files a distribution's RECORD lists, and of its package tree when it is
    installed editable (RECORD then lists only the link to it)."""
    paths = {Path(str(dist.locate_file(f))).resolve() for f in dist.files or []}
    if '"editable": true' in (dist.read_text("direct_url.json") or ""):
        for name in (dist.read_text("top_level.txt") or "").split():
            tree = _package_tree(name)
            if tree is not None:
                paths |= {p for p in tree.rglob("*") if "__pycache__" not in p.parts}
    total = 0
    for path in paths:
        try:
            total += path.stat().st_size if path.is_file() else 0
        except OSError:
            continue
    return total


def _package_tree(name: str) -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def install_report(root: str = "appliance") -> dict[str, Any]:
    """Runtime install size and its largest distributions."""
    sizes = {dist.metadata["Name"]: distribution_bytes(dist) for dist in runtime_closure(root)}
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:8]
    return {
        "mb": round(sum(sizes.values()) / MB, 1),
        "basis": "RECORD files of the runtime requirements' closure installed in " + sys.prefix,
        "distributions": len(sizes),
        "largest_mb": {name: round(size / MB, 1) for name, size in largest},
    }


# the daemon --------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def memory_bytes(pid: int) -> dict[str, int]:
    """Resident memory of a process: ``rss`` (VmRSS), of which ``anon`` (its own, RssAnon) and
    ``file`` (pages of mapped files such as the GGUF models, RssFile, which the kernel can drop and
    read again)."""
    fields = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file"}
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in fields:
            found[fields[key]] = int(value.split()[0]) * 1024
    if "rss" not in found:
        raise ApplianceError(f"process {pid} has no VmRSS")
    return found


def rss_bytes(pid: int) -> int:
    """Resident memory of a process (VmRSS)."""
    return memory_bytes(pid)["rss"]


def shared_libraries(pid: int) -> list[str]:
    """File names of the shared libraries mapped into a process, sorted."""
    names = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and re.search(r"\.so(\.|$)", fields[5].strip()):
            names.add(Path(fields[5].strip()).name)
    return sorted(names)


@dataclass(frozen=True)
class DaemonFigures:
    ready_s: float
    rss_idle_ready: int
    rss_after_turn: int
    split_idle_ready: dict[str, int]
    loaded: tuple[str, ...]
    answer: str


def _request(url: str, body: dict[str, Any] | None, token: str | None, timeout: float) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, None


def measure_daemon(
    command: Sequence[str],
    *,
    url: str,
    message: str = MESSAGE,
    token: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = 600.0,
    settle_s: float = 1.0,
    log: Path,
    progress: Callable[[str], None] = lambda _m: None,
) -> DaemonFigures:
    """Start the daemon with ``command``, time it to READY, read its memory idle and after one turn,
    then stop it with SIGTERM. ``url`` is where ``command`` makes it listen."""
    base = url.rstrip("/")
    with log.open("wb") as out:
        started = time.monotonic()
        proc = subprocess.Popen(
            list(command), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=cwd
        )
    try:
        deadline = started + timeout_s
        while True:
            if proc.poll() is not None:
                tail = log.read_text(errors="replace").strip().splitlines()[-8:]
                raise ApplianceError("the daemon exited during start-up:\n" + "\n".join(tail))
            try:
                status, _ = _request(f"{base}/readyz", None, token, timeout=2)
            except (urllib.error.URLError, OSError):
                status = 0
            if status == 200:
                break
            if time.monotonic() > deadline:
                raise ApplianceError(f"the daemon was not ready after {timeout_s:.0f} s; see {log}")
            time.sleep(0.05)
        ready_s = time.monotonic() - started
        progress(f"ready after {ready_s:.1f} s; answering one message")
        time.sleep(settle_s)
        split = memory_bytes(proc.pid)
        status, session = _request(f"{base}/v1/sessions", {}, token, timeout=30)
        if status != 201:
            raise ApplianceError(f"the daemon refused a new session ({status}); see {log}")
        status, answer = _request(
            f"{base}/v1/sessions/{session['id']}/messages",
            {"text": message, "stream": False},
            token,
            timeout=max(deadline - time.monotonic(), 30),
        )
        if status != 200:
            raise ApplianceError(f"the daemon did not answer ({status}); see {log}")
        after = rss_bytes(proc.pid)
        loaded = tuple(shared_libraries(proc.pid))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return DaemonFigures(ready_s, split["rss"], after, split, loaded, str((answer or {}).get("text", "")))


def serve_command(
    config: str | None, overrides: Iterable[str], database: Path, port: int, python: str = sys.executable
) -> list[str]:
    """``appliance serve`` with the operator's configuration, a throw-away database and this port."""
    args = [python, "-m", "appliance"]
    if config:
        args += ["--config", config]
    for item in overrides:
        args += ["--set", item]
    args += ["--set", f"paths.database={database}", "--set", "server.socket="]
    return [*args, "serve", "--host", "127.0.0.1", "--port", str(port)]


def daemon_env() -> dict[str, str]:
    """This environment without systemd's notification variables (the daemon would ping them)."""
    return {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}


# embedding ---------------------------------------------------------------------------------------


def embed_times_ms(embed: Callable[[list[str]], Any], message: str = MESSAGE, runs: int = 100) -> list[float]:
    """Milliseconds of ``runs`` embeddings of one message, after five warm-up runs."""
    for _ in range(5):
        embed([message])
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        embed([message])
        times.append((time.perf_counter() - t0) * 1000)
    return times


# the report --------------------------------------------------------------------------------------


def run_footprint(
    settings: Settings,
    *,
    config: str | None,
    overrides: Sequence[str] = (),
    message: str = MESSAGE,
    runs: int = 100,
    timeout_s: float = 600.0,
    progress: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    """Measure everything for the configured models (see the module's docstring)."""
    from appliance.app.loading import load_recall

    if not message.strip():
        raise InputError("the message is empty", field="message")
    progress("install size from the installed distributions' RECORD files")
    install = install_report()
    embed_ms: dict[str, float] | None = None
    embeddings = None
    recall = load_recall(settings)
    if recall is not None:
        progress(f"embedding one message {runs} times")
        embed_ms = spread(embed_times_ms(recall.embed, message, runs), 2)
        embeddings = recall.model_name
        del recall  # the daemon is measured alone
    token = None
    if settings.server.token_file:
        from appliance.config import read_token_file

        token = read_token_file(Path(settings.server.token_file), "server.token_file")
    with tempfile.TemporaryDirectory(prefix="appliance-footprint-") as tmp:
        port = free_port()
        progress(f"starting `appliance serve` on 127.0.0.1:{port}")
        figures = measure_daemon(
            serve_command(config, overrides, Path(tmp) / "footprint.db", port),
            url=f"http://127.0.0.1:{port}",
            message=message,
            token=token,
            env=daemon_env(),
            timeout_s=timeout_s,
            log=Path(tmp) / "daemon.log",
            progress=progress,
        )
    report: dict[str, Any] = {
        "install_mb": install["mb"],
        "kv_cache_mb": kv_cache_mb(settings),
        "rss_mb": {
            "idle_ready": round(figures.rss_idle_ready / MB, 1),
            "after_turn": round(figures.rss_after_turn / MB, 1),
        },
        "ready_s": round(figures.ready_s, 2),
        "embed_ms": embed_ms,
        "loaded": list(figures.loaded),
        "rss_split_mb": {k: round(v / MB, 1) for k, v in figures.split_idle_ready.items() if k != "rss"},
        "models": {
            "responder": settings.responder.model,
            "summarizer": settings.summarizer.model,
            "embeddings": embeddings,
        },
        "install": install,
        "targets": TARGETS,
    }
    report["met"] = met(report)
    return report


def kv_cache_mb(settings: Settings) -> dict[str, Any] | None:
    """The responder's KV cache: per sequence, and for all ``responder.parallel`` of them (None for a
    remote responder). Read from the model's shape (a vocab-only load of its verified file)."""
    r = settings.responder
    if r.backend == "remote":
        return None
    from appliance.models.batch_context import kv_bytes_per_token
    from appliance.models.files import find, verified_path
    from appliance.models.llama import LlamaChatModel

    entry = find(settings.models_dir, r.model)
    shape = LlamaChatModel(verified_path(settings.models_dir, entry), name=entry.name, n_ctx=r.n_ctx, vocab_only=True)
    per_sequence = kv_bytes_per_token(shape) * r.n_ctx
    return {
        "n_ctx": r.n_ctx,
        "parallel": r.parallel,
        "per_sequence": round(per_sequence / MB, 1),
        "total": round(per_sequence * r.parallel / MB, 1),
    }


def met(report: dict[str, Any]) -> dict[str, bool | None]:
    embed = report["embed_ms"]
    return {
        "install_mb": report["install_mb"] <= TARGETS["install_mb"],
        "rss_idle_ready_mb": report["rss_mb"]["idle_ready"] <= TARGETS["rss_idle_ready_mb"],
        "ready_s": report["ready_s"] <= TARGETS["ready_s"],
        "embed_p50_ms": None if embed is None else embed["p50"] <= TARGETS["embed_p50_ms"],
    }


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report)


def format_text(report: dict[str, Any]) -> str:
    rss, embed, ok = report["rss_mb"], report["embed_ms"], report["met"]

    def mark(key: str) -> str:
        return {True: "ok", False: "OVER", None: "-"}[ok[key]]

    largest = ", ".join(f"{k} {v:.0f}" for k, v in report["install"]["largest_mb"].items())
    embed_line = "recall off" if embed is None else f"p50 {embed['p50']:.2f} ms, p95 {embed['p95']:.2f} ms"
    libs = report["loaded"]
    return "\n".join(
        [
            f"models: {report['models']}",
            f"runtime install   {report['install_mb']:8.1f} MB   target <= {TARGETS['install_mb']:.0f}  {mark('install_mb')}"
            f"   (largest MB: {largest})",
            f"RSS after READY   {rss['idle_ready']:8.1f} MB   target <= {TARGETS['rss_idle_ready_mb']:.0f} "
            f" {mark('rss_idle_ready_mb')}",
            f"RSS after a turn  {rss['after_turn']:8.1f} MB   (after READY: {report['rss_split_mb']})",
            _kv_line(report.get("kv_cache_mb")),
            f"start to READY    {report['ready_s']:8.2f} s    target <= {TARGETS['ready_s']:.0f}     {mark('ready_s')}",
            f"recall embedding  {embed_line}   target p50 <= {TARGETS['embed_p50_ms']:.0f} ms  {mark('embed_p50_ms')}",
            f"shared libraries  {len(libs)}: {' '.join(libs)}",
        ]
    )


def _kv_line(kv: dict[str, Any] | None) -> str:
    if kv is None:
        return "KV cache          remote responder"
    return (
        f"KV cache          {kv['total']:8.1f} MB   ({kv['parallel']} x {kv['n_ctx']} tokens, "
        f"{kv['per_sequence']:.1f} MB a sequence)"
    )
