"""The optional judge: a local model that scores sampled answers and compares policies pairwise.

Seed 002's four dimensions, 1-5 each, asked at temperature 0; small judges add prose, code fences
and odd spellings, so the parsers accept any of them and count what they cannot read as unparsed.
The judge is not an input of a replay (changing it must not invalidate the replay cache); its
verdicts are cached apart, in ``OUT/judge.json``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appliance.errors import ApplianceError
from appliance.lab.eval.cache import write_json
from appliance.lab.progress import bar
from appliance.protocols import ChatModel
from appliance.types import STAGES, Message, Sampling

if TYPE_CHECKING:
    from appliance.lab.eval.replay import Point

JUDGE_DIMENSIONS = ("human_likeness", "continuity", "tone_clarity", "task_appropriateness")


def judge_prompt(history: str, question: str, answer: str) -> tuple[Message, ...]:
    """Seed 002's four dimensions, 1-5 each, asked for as one JSON object."""
    system = "You are a strict evaluator of customer-service replies. You answer with JSON only."
    user = (
        "Rate the agent's reply on four dimensions, each an integer from 1 (poor) to 5 (excellent):\n"
        "human_likeness: does it sound like a real agent, not a bot?\n"
        "continuity: does it correctly use what was said earlier in the conversation?\n"
        "tone_clarity: is it professional, clear and polite?\n"
        "task_appropriateness: does it actually address the customer's message?\n\n"
        f"Conversation so far:\n{history or '(none)'}\n\nCustomer: {question}\n\nAgent's reply: {answer}\n\n"
        'Answer with exactly: {"human_likeness": N, "continuity": N, "tone_clarity": N, "task_appropriateness": N}'
    )
    return (Message("system", system), Message("user", user))


def pairwise_prompt(history: str, question: str, first: str, second: str) -> tuple[Message, ...]:
    system = "You are a strict evaluator of customer-service replies. You answer with JSON only."
    user = (
        "Two agents replied to the same customer message. Which reply is better for the customer "
        "(correct use of the conversation, addresses the message, clear and polite)?\n\n"
        f"Conversation so far:\n{history or '(none)'}\n\nCustomer: {question}\n\n"
        f"Reply A: {first}\n\nReply B: {second}\n\n"
        'Answer with exactly one of: {"better": "A"} or {"better": "B"} or {"better": "tie"}'
    )
    return (Message("system", system), Message("user", user))


_NUMBER = r"\s*[\"']?\s*[:=]\s*[\"']?\s*([1-5])(?:\.\d+)?"


def parse_scores(text: str) -> dict[str, int] | None:
    """The four scores from a judge's reply: JSON if there is an object, else ``name: N`` pairs in any
    spelling (small judges add prose, code fences, spaces or capitals); None if any is missing."""
    for match in re.finditer(r"\{[^{}]*\}", text):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(data, dict):
            norm = {re.sub(r"[^a-z]", "", str(k).lower()): v for k, v in data.items()}
            got = {d: _score(norm.get(d.replace("_", ""))) for d in JUDGE_DIMENSIONS}
            if all(v is not None for v in got.values()):
                return got  # type: ignore[return-value]
    flat = text.lower()
    out: dict[str, int] = {}
    for d in JUDGE_DIMENSIONS:
        words = r"[\s_\-&/and]*".join(re.escape(w) for w in d.split("_"))
        m = re.search(words + _NUMBER, flat)
        if m is None:
            return None
        out[d] = int(m.group(1))
    return out


def _score(value: Any) -> int | None:
    try:
        number = round(float(value))
    except (TypeError, ValueError):
        return None
    return number if 1 <= number <= 5 else None


def parse_choice(text: str) -> str | None:
    """ "A", "B" or "tie" from a pairwise verdict, JSON or not; None when it says nothing usable."""
    m = re.search(r"better[\"'\s]*[:=][\"'\s]*(a|b|tie)\b", text, re.IGNORECASE)
    if m is None:
        m = re.search(r"^\W*(a|b|tie)\W*$", text.strip(), re.IGNORECASE)
    if m is None:
        return None
    word = m.group(1).lower()
    return "tie" if word == "tie" else word.upper()


class Judge:
    """A local model asked for verdicts at temperature 0; each verdict cached in ``OUT/judge.json``."""

    def __init__(self, model: ChatModel, cache: Path, *, seed: int = 0, max_tokens: int = 96) -> None:
        self.model = model
        self.cache = cache
        self.sampling = Sampling(
            temperature=0.0, top_p=1.0, top_k=1, repeat_penalty=1.0, max_tokens=max_tokens, seed=seed
        )
        try:
            self.verdicts: dict[str, str] = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.verdicts = {}

    def ask(self, messages: tuple[Message, ...]) -> str:
        key = hashlib.sha256(json.dumps([self.model.name, [m.__dict__ for m in messages]]).encode()).hexdigest()
        if key not in self.verdicts:
            try:
                self.verdicts[key] = self.model.generate(messages, self.sampling).text
            except ApplianceError as exc:  # a prompt too long for the judge: recorded as no verdict
                self.verdicts[key] = f"(no verdict: {exc})"
            write_json(self.cache, self.verdicts)
        return self.verdicts[key]


def judge_units(
    judge: Judge, units: Sequence[Mapping[str, Any]], policies: Sequence[str], *, seed: int = 0, progress: bool = True
) -> dict[str, Any]:
    """Scores of every sampled answer, and pairwise verdicts between every two policies on the same turn
    (the order shown to the judge is drawn per comparison, so position bias cancels out)."""
    samples = [
        (u["policy"], u["dialogue"], p)
        for u in units
        for p in u["points"]
        if p["kind"] == "sample" and not p.get("error")
    ]
    by_turn: dict[tuple[str, int], dict[str, Point]] = {}
    for policy, dialogue, p in samples:
        by_turn.setdefault((dialogue, p["turn"]), {})[policy] = p
    pairs = list(itertools.combinations(policies, 2))
    total = len(samples) + sum(1 for v in by_turn.values() for a, b in pairs if a in v and b in v)
    scores: dict[str, list[tuple[str, dict[str, int] | None]]] = {name: [] for name in policies}
    pairwise: dict[str, dict[str, Any]] = {}
    rng = random.Random(seed)
    with bar(total, "judge", "verdict", enabled=progress) as shown:
        for policy, _dialogue, p in samples:
            verdict = parse_scores(judge.ask(judge_prompt(p["history"], p["question"], p["answer"])))
            scores[policy].append((p["stage"], verdict))
            shown.update(1)
        for a, b in pairs:
            tally: dict[str, Any] = {
                "a": a,
                "b": b,
                "comparisons": 0,
                "a_wins": 0,
                "b_wins": 0,
                "ties": 0,
                "unparsed": 0,
            }
            for key in sorted(by_turn):
                both = by_turn[key]
                if a not in both or b not in both:
                    continue
                swap = rng.random() < 0.5
                first, second = (both[b], both[a]) if swap else (both[a], both[b])
                choice = parse_choice(
                    judge.ask(pairwise_prompt(first["history"], first["question"], first["answer"], second["answer"]))
                )
                tally["comparisons"] += 1
                if choice is None:
                    tally["unparsed"] += 1
                elif choice == "tie":
                    tally["ties"] += 1
                elif (choice == "A") != swap:
                    tally["a_wins"] += 1
                else:
                    tally["b_wins"] += 1
                shown.update(1)
            decided = tally["comparisons"] - tally["unparsed"]
            tally["a_win_rate"] = round((tally["a_wins"] + 0.5 * tally["ties"]) / decided, 4) if decided else None
            pairwise[f"{a} vs {b}"] = tally
    return {"scores": {name: judge_metrics(v) for name, v in scores.items()}, "pairwise": pairwise}


def judge_metrics(verdicts: Sequence[tuple[str, dict[str, int] | None]]) -> dict[str, Any]:
    """Mean score per dimension and overall, overall and by stage; unparsed verdicts are counted apart."""

    def means(items: Sequence[dict[str, int]]) -> dict[str, Any]:
        out: dict[str, Any] = {
            d: round(statistics.fmean(v[d] for v in items), 3) if items else None for d in JUDGE_DIMENSIONS
        }
        out["overall"] = round(statistics.fmean(statistics.fmean(v.values()) for v in items), 3) if items else None
        out["answers"] = len(items)
        return out

    parsed = [(s, v) for s, v in verdicts if v is not None]
    result = means([v for _, v in parsed])
    result["unparsed"] = len(verdicts) - len(parsed)
    result["by_stage"] = {s: means([v for st, v in parsed if st == s]) for s in STAGES}
    return result
