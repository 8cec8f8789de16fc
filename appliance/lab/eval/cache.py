"""The resumable run: each (dialogue, policy) replay cached as JSON under a fingerprint of its inputs.

An interrupted run resumes where it stopped, and a changed setting replays only what it changes.
Files are written whole or not at all; the judge's verdicts are cached the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from appliance.lab.dialogues import BenchSession
from appliance.lab.eval.replay import MakeRig, replay, sample_turns
from appliance.lab.progress import bar

CACHE_VERSION = 3  # 3: probes scored both exactly and as the normaliser equates


def fingerprint(dialogue: BenchSession, policy: str, run: Mapping[str, Any]) -> str:
    """What a cached result depends on: the dialogue, the policy and the run's settings."""
    data = {
        "v": CACHE_VERSION,
        "dialogue": [dialogue.id, dialogue.turns, [p.__dict__ for p in dialogue.probes]],
        "policy": policy,
        "run": run,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def cache_path(out: Path, dialogue_id: str, policy: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", dialogue_id)[:60]
    digest = hashlib.sha1(dialogue_id.encode()).hexdigest()[:8]
    return out / "cache" / policy / f"{slug}-{digest}.json"


def read_cached(path: Path, key: str) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("fingerprint") == key else None


def write_json(path: Path, data: Any) -> None:
    """Write whole or not at all (an interrupted run must not leave half a cache file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def run_units(
    dialogues: Sequence[BenchSession],
    policies: Sequence[str],
    out: Path,
    make_rig: MakeRig,
    *,
    run: Mapping[str, Any],
    samples: int = 3,
    seed: int = 0,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Every (dialogue, policy) result, from the cache where it is there, else replayed and cached."""
    units = []
    with bar(len(dialogues) * len(policies), "eval", "replay", enabled=progress) as shown:
        for dialogue in dialogues:
            chosen = sample_turns(dialogue, samples, seed)
            for policy in policies:
                key = fingerprint(dialogue, policy, {**run, "samples": samples, "seed": seed})
                path = cache_path(out, dialogue.id, policy)
                unit = read_cached(path, key)
                shown.set_postfix_str(f"{policy} {dialogue.id[:40]}{' (cached)' if unit else ''}")
                if unit is None:
                    with tempfile.TemporaryDirectory(prefix="eval-") as folder:
                        rig = make_rig(Path(folder) / "eval.db", policy)
                        try:
                            points = replay(rig, dialogue, policy, chosen)
                        finally:
                            summarizer = rig.close()
                    unit = {
                        "fingerprint": key,
                        "dialogue": dialogue.id,
                        "policy": policy,
                        "turns": len(dialogue.turns),
                        "points": points,
                        "summarizer": summarizer,
                    }
                    write_json(path, unit)
                units.append(unit)
                shown.update(1)
    return units
