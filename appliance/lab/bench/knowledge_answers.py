"""``bench knowledge``'s answers: each knowledge-seeking item's last customer turn answered by the
appliance, with the documents synced, after the item's earlier turns.

The earlier turns are recorded as they were said (teacher forcing, as ``appliance eval`` does:
:meth:`Sessions.record_turn`), then the last message is answered without being stored, by the
appliance built the production way (its responder, the fetch check, retrieval, the budget, the
checker and the guard). No summary worker runs: the dialogues are a few turns long and fit the
budget verbatim. Only items with ``needs_knowledge`` are answered (the others' figures are the fetch
check's, in :mod:`.knowledge`).

* ``answers.agreement``: the mean score of the items with a gold answer that the score applies to
  (``answers.scored`` of ``answers.items``). An item's score is the mean of what applies to it:

  - *polarity*, where the gold answer is a yes or a no (it opens with one, or the question is a
    yes/no question: an auxiliary such as "do", "is", "can" comes before any question word such as
    "what" or "when", among its first words): the answer's polarity
    must be the gold's. A text's polarity is its first sentence's: "yes" when it opens with a yes,
    "no" when it opens with a negative word ("no", "unfortunately", "sorry") or holds a negation
    ("not", "n't", "never"; after an opening "sure" or "of course", which is courtesy), else "yes";
  - *key values*, where the gold answer has any: the share of them the answer states. The values
    are what the appliance's entity extractor finds (times, amounts, percentages, dates, phone numbers, codes;
    not names or week days), compared by their normalised forms, and every bare number (as digits,
    or as an English word up to twenty).

  An item with neither (a gold answer that is a plain statement without values, to a question
  that is not yes/no) is not scored. ``answers.quoted``: the answers the guard replaced by the
  document's own yes or no (action ``quote``), gold or not.
* ``not_found_answers.rate``: on the items with ``needs_knowledge`` and no gold (no document answers them),
  the share that abstain: answered with ``knowledge.not_found`` (for want of a passage, judged
  unanswered by the responder, or by the guard in place of an answer with an invented fact), or with
  an answer that says the documents do not cover it (:func:`abstains`, in the languages of
  :data:`NOT_COVERED`). An answer built on passages that do not answer the question fails, whatever
  its facts. ``not_found_answers.fixed`` is the share given the fixed text alone; ``lenient`` is the
  rate as it was counted before (the fixed text, or any answer without an unsupported fact), for
  comparison.
* ``unsupported``: the checker's unsupported entities in the first answers (before the guard's repair)
  and in the answers kept.
* ``ttft``: for each answered item whose answer was generated from placed passages (not judged
  unanswered), at the same point of its session (its
  earlier turns recorded, the model's context emptied, then the prompt up to the question warmed as
  the daemon warms it while the customer types), the time to the first token of its answer, and of the same message answered by
  the same model with knowledge off; ``ttft_ratio`` is the median of the first over the median of the
  second, measured in one run, the two answers of an item one after the other. ``ttft_draft``: the
  same with the prefix warmed from the draft the kiosk sends while the customer types
  (``POST /v1/sessions/{id}/draft``), passages included: ``full`` when the last draft is the whole
  message, ``partial`` when it lacks the message's last word (the passages it retrieves may differ);
  ``ttft_ratio_draft`` is each median over the median without knowledge.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appliance.config import Settings
from appliance.errors import ApplianceError
from appliance.facts.entities import extract
from appliance.lab.bench.bare import forget_prefix
from appliance.lab.dialogues import equated
from appliance.lab.harness import evolve
from appliance.models.llama import LlamaChatModel
from appliance.protocols import ChatModel, PrefixWarmer, Recaller
from appliance.turn.warmup import Warmup
from appliance.types import AnswerSource, TurnResult

if TYPE_CHECKING:
    from appliance.app import Appliance

Progress = Callable[[str], None]

# The score's words (English, with the branch example's French and the other lexicon languages' yes and no).
YES = ("yes", "yeah", "yep", "oui", "ja", "si", "sí")
# An opening "sure" or "of course" is courtesy before the answer ("Sure, they do not accept Google Pay."):
# the rest of the sentence decides.
COURTESY = ("sure", "certainly", "absolutely", "of course", "indeed")
NO = ("no", "nope", "unfortunately", "sorry", "non", "nein", "nee", "lo siento", "leider", "malheureusement")
NEGATIONS = ("not", "n't", "never", "no", "none", "nothing", "cannot", "pas", "nicht", "kein", "keine", "niet", "geen")
AUXILIARIES = (
    "do does did is are was were am can could will would should shall may might have has had "
    "est-ce est peut puis avez as sont ist sind kann kannst haben hat gibt hay tienen puedo puede es son "
    "heeft hebben kan is zijn"
).split()
WH_WORDS = set(
    "what when where which who whom whose how why quand où comment combien quel quelle quels quelles pourquoi "
    "wann wo wie was welche welcher warum cuándo cuando dónde donde cómo como cuánto qué que cuál wanneer waar hoe wat welke".split()
)
NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty"
).split()
WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
# What an answer that says the documents do not cover the question says, in the lexicons' languages (the
# measuring stick's words, not the product's): matched in the answer's first two sentences, lower case.
NOT_COVERED = (
    r"(?:do not|don't|does not|doesn't|cannot|can't)\s+(?:have|find|see)\s+(?:that|this|any|the)?\s*(?:information|details|answer)",
    r"no\s+(?:information|details|mention)\s+(?:about|on|of|regarding)",
    r"(?:documents?|information|text|passages?)\s+(?:do not|don't|does not|doesn't)\s+(?:say|mention|cover|contain|include|specify|provide)",
    r"not\s+(?:mentioned|covered|stated|specified|included)\s+in",
    r"(?:i'm|i am)\s+(?:not sure|unable to)",
    r"i\s+(?:do not|don't)\s+know",
    r"keine\s+(?:information|informationen|angaben)",
    r"habe\s+ich\s+(?:hier\s+)?nicht",
    r"wei(?:ß|ss)\s+ich\s+nicht",
    r"pas\s+(?:cette|d')\s*information",
    r"ne\s+(?:sais|trouve)\s+pas",
    r"no\s+tengo\s+(?:esa|esta|informaci[oó]n)",
    r"no\s+(?:lo\s+)?s[eé]",
    r"heb\s+ik\s+(?:hier\s+)?niet",
    r"geen\s+informatie",
    r"weet\s+ik\s+niet",
)
_NOT_COVERED = re.compile("|".join(NOT_COVERED))


def abstains(answer: str) -> bool:
    """Whether ``answer`` says, in its first two sentences, that the documents do not cover the question."""
    opening = " ".join(re.split(r"(?<=[.!?])\s+", answer.strip().lower().replace("’", "'"))[:2])
    return bool(_NOT_COVERED.search(opening))


_WORD = re.compile(r"[\w'’-]+")
_NUMBER = re.compile(r"(?<![\w.,:])\d+(?:[.,]\d+)?(?![\w:])")


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?;])\s", text.strip(), maxsplit=1)[0]


def polarity(text: str) -> str:
    """``yes`` or ``no``: how the text's first sentence answers (see the module's docstring)."""
    first = " ".join(_words(_first_sentence(text)))
    if any(first == w or first.startswith(w + " ") for w in YES):
        return "yes"
    if any(first == w or first.startswith(w + " ") for w in NO):
        return "no"
    for w in COURTESY:
        if first.startswith(w + " "):
            first = first[len(w) + 1 :]
    words = first.split()
    return "no" if any(w in NEGATIONS or w.endswith("n't") for w in words) else "yes"


def is_yes_no(question: str, gold: str) -> bool:
    """Whether the gold answer is a yes or a no: it opens with one, or the question opens (after
    the words a spoken question starts with) with an auxiliary before any question word."""
    opening = " ".join(_words(gold)[:2])
    if any(opening == w or opening.startswith(w + " ") for w in (*YES[:1], *NO[:1], "oui", "non", "ja", "nein")):
        return True
    for word in _words(_first_sentence(question))[:6]:
        if word in WH_WORDS:
            return False
        if word in AUXILIARIES:
            return True
    return False


def key_values(text: str) -> list[str]:
    """The gold answer's key values, each once: the extractor's entities (not names, week days or
    commitments) and the bare numbers outside them."""
    values: list[str] = []
    spans: list[tuple[int, int]] = []
    for e in extract(text):
        if e.kind in ("name", "commitment", "secret") or e.norm in WEEKDAYS:
            continue
        values.append(e.text)
        spans.append((e.start, e.end))
    for m in _NUMBER.finditer(text):
        if not any(s <= m.start() < e for s, e in spans):
            values.append(m.group())
    return list(dict.fromkeys(values))


def states(value: str, answer: str) -> bool:
    """Whether ``answer`` states ``value`` (a number as digits or as a word, another value as the
    extractor equates it)."""
    if _NUMBER.fullmatch(value):
        digits = value.replace(",", ".")
        found = {m.group().replace(",", ".") for m in _NUMBER.finditer(answer)}
        n = int(float(digits)) if float(digits).is_integer() else -1
        return digits in found or (0 <= n < len(NUMBER_WORDS) and NUMBER_WORDS[n] in _words(answer))
    return equated([value], answer)


def agreement(question: str, gold: str, answer: str) -> float | None:
    """The item's score (the mean of polarity and the share of key values stated), or None when
    neither applies."""
    parts: list[float] = []
    if is_yes_no(question, gold):
        parts.append(float(polarity(answer) == polarity(gold)))
    values = key_values(gold)
    if values:
        parts.append(sum(states(v, answer) for v in values) / len(values))
    return sum(parts) / len(parts) if parts else None


@dataclass
class Rigs:
    """The appliance with the documents; the same model with knowledge off; and with the documents,
    warmed from a draft (these two answer one token: only their TTFT counts)."""

    grounded: Appliance
    plain: Appliance
    drafted: Appliance

    def close(self) -> None:
        self.drafted.close()
        self.plain.close()
        self.grounded.close()


def rigs(settings: Settings, database: Path, responder: ChatModel | None, encoder: Recaller | None) -> Rigs:
    """Both appliances over ``database`` (its documents synced), around one loaded responder."""
    from appliance.app import build

    local = evolve(settings, paths={"database": database})
    grounded = build(local, responder=responder, recall=encoder if encoder is not None else True, worker=False)
    timed: dict[str, dict[str, Any]] = {
        "responder": {"max_tokens": 1},
        "guard": {"policy": "flag"},
        "refine": {"enabled": False},
    }
    built = [grounded]
    try:
        for knowledge in (False, True):
            built.append(
                build(
                    evolve(local, knowledge={"enabled": knowledge}, **timed),
                    responder=grounded.responder,
                    recall=encoder if knowledge and encoder is not None else knowledge,
                    worker=False,
                    prewarm=False,
                )
            )
        return Rigs(*built)
    except BaseException:
        for app in built:
            app.close()
        raise


def _warm(app: Appliance, session_id: str, draft: str = "") -> None:
    """The session's next prompt up to its question evaluated, as the daemon does while idle (for
    ``draft``: as it does while the customer types it, passages included, and the passages judged),
    from an empty context: what an answer before it left there (the same prompt, question included)
    is not reused."""
    if isinstance(app.responder, LlamaChatModel):
        forget_prefix(app.responder)
    warmup = Warmup(app.pipeline)
    found = warmup.next_prefix(session_id, draft)
    if found is None and draft:
        found = warmup.next_prefix(session_id)
    if found is not None and isinstance(found[0], PrefixWarmer):
        found[0].prepare(found[1], cache_key=session_id)
        if draft:  # as the daemon's warm-up does once the draft's prefix is warm
            warmup.judge_ahead(session_id)


def _answer(app: Appliance, session_id: str, text: str, draft: str = "") -> TurnResult | str:
    _warm(app, session_id, draft)
    try:
        return app.pipeline.answer(session_id, text, persist=False)
    except ApplianceError as exc:  # a message that cannot fit the budget: scored as a miss, the run goes on
        return f"{type(exc).__name__}: {exc}"


def answer_item(r: Rigs, item: dict[str, Any], order: int) -> dict[str, Any]:
    """One item answered after its earlier turns, and (where passages were placed) its TTFT without them."""
    sessions = r.grounded.sessions
    session = sessions.new_session(title=str(item.get("id", "")))
    said = item["turns"]
    for turn in said[:-1]:
        sessions.record_turn(session.id, turn["role"], turn["text"])
    message = said[-1]["text"]
    plain_first = order % 2 == 1  # alternate which of the two answers comes first
    before = _answer(r.plain, session.id, message) if plain_first else None
    result = _answer(r.grounded, session.id, message)
    if isinstance(result, str):
        return {"answer": "", "error": result}
    k, check = result.record.knowledge, result.record.check
    sources = k.sources if k is not None else ()
    row: dict[str, Any] = {
        "question": message,
        "answer": result.agent.text,
        "not_found_text": bool(k and k.not_found) or check.action == "not_found",
        "quoted": check.action == "quote",
        "sources": [f"{c.doc} > {c.heading}" for c in sources],
        "first_unsupported": sum(
            f.status == "unsupported" for f in (check.original_findings if check.original else check.findings)
        ),
        "kept_unsupported": sum(f.status == "unsupported" for f in check.findings),
        "ttft_s": _ttft(result),
        "answerable": k.answerable if k is not None else None,
        "yes": k.yes if k is not None else None,
        "judged_not_found": bool(k and k.not_found),
        "placed_passages": len(sources),
    }
    if sources and not row["judged_not_found"]:  # an answer generated from placed passages
        plain = before if before is not None else _answer(r.plain, session.id, message)
        if not isinstance(plain, str):
            row["ttft_plain_s"] = _ttft(plain)
        for name, draft in (("full", message), ("partial", message.rsplit(maxsplit=1)[0])):
            drafted = _answer(r.drafted, session.id, message, draft=draft)
            if not isinstance(drafted, str) and drafted.record.source != AnswerSource.NOT_FOUND:
                row[f"ttft_draft_{name}_s"] = _ttft(drafted)
    return row


def _ttft(result: TurnResult) -> float:
    """Seconds to the answer's first token, the judgement before it included (the customer waits for both)."""
    return result.record.timings.ttft_s + result.record.timings.probe_ms / 1000


def run_probes(
    settings: Settings,
    database: Path,
    items: Sequence[dict[str, Any]],
    *,
    responder: ChatModel | None = None,
    encoder: Recaller | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any] | None]:
    """Each knowledge-seeking item's last message judged as the turn judges it, after its earlier turns
    (recorded as said): whether its passages were placed and the responder's probability that they
    answer it (:meth:`Pipeline.grounding_of`: nothing generated). None for the other items."""
    from appliance.app import build

    say = progress or (lambda _msg: None)
    local = evolve(settings, paths={"database": database})
    app = build(
        local, responder=responder, recall=encoder if encoder is not None else True, worker=False, prewarm=False
    )
    rows: list[dict[str, Any] | None] = [None] * len(items)
    asked = [i for i, item in enumerate(items) if item.get("needs_knowledge")]
    try:
        for n, i in enumerate(asked, start=1):
            say(f"judging {n}/{len(asked)}: {items[i].get('id', i)}")
            session = app.sessions.new_session(title=str(items[i].get("id", "")))
            for turn in items[i]["turns"][:-1]:
                app.sessions.record_turn(session.id, turn["role"], turn["text"])
            try:
                found = app.pipeline.grounding_of(session.id, items[i]["turns"][-1]["text"])
            except ApplianceError as exc:  # a message that cannot fit the budget: a miss, the run goes on
                rows[i] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            rows[i] = {
                "answerable": found.answerable if found is not None else None,
                "yes": found.yes if found is not None else None,
                "judged_not_found": bool(found and found.not_found),
                "placed_passages": len(found.sources) if found is not None else 0,
            }
    finally:
        app.close()
    return rows


def abstention(rows: Sequence[dict[str, Any]], thresholds: Sequence[float] = ()) -> dict[str, Any]:
    """Abstention on the knowledge questions: ``unanswerable``, the share of those no document answers
    that get the not-found answer; ``refused``, the share of answerable ones that get it; and the same
    two as a curve over ``knowledge.min_answerable`` (``curve``: threshold, refused, answered
    unanswerable), from each row's ``answerable``: a question retrieval found no passage for is
    refused at every threshold; one the fetch check did not fetch is answered without the documents,
    neither refused nor judged."""
    unanswerable = [r for r in rows if r["needs"] and not r["gold"] and "answerable" in r]
    answerable = [r for r in rows if r["gold"] and "answerable" in r]
    share = lambda n, d: round(n / d, 3) if d else None  # noqa: E731

    def refuses(row: dict[str, Any], t: float) -> bool:
        p = row.get("answerable")
        return bool(row.get("not_found")) or (p is not None and p < t)

    curve = [
        {
            "threshold": t,
            "refused_answerable": share(sum(refuses(r, t) for r in answerable), len(answerable)),
            "answered_unanswerable": share(sum(not refuses(r, t) for r in unanswerable), len(unanswerable)),
        }
        for t in thresholds
    ]
    return {
        "unanswerable": share(sum(r["judged_not_found"] for r in unanswerable), len(unanswerable)),
        "refused": share(sum(r["judged_not_found"] for r in answerable), len(answerable)),
        "items": {"unanswerable": len(unanswerable), "answerable": len(answerable)},
        "auc": _auc(
            [r["answerable"] for r in answerable if r.get("answerable") is not None],
            [r["answerable"] for r in unanswerable if r.get("answerable") is not None],
        ),
        "curve": curve,
    }


def _auc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """The probability that an answerable question's yes is above an unanswerable one's (ties half), of
    the questions judged."""
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


def run_answers(
    settings: Settings,
    database: Path,
    items: Sequence[dict[str, Any]],
    *,
    responder: ChatModel | None = None,
    encoder: Recaller | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any] | None]]:
    """The answers' figures over ``items`` (the documents already synced into ``database``), and
    each item's row (None for an item not answered); ``responder`` and ``encoder`` replace the
    configured ones (tests)."""
    say = progress or (lambda _msg: None)
    asked = [i for i, item in enumerate(items) if item.get("needs_knowledge")]
    rows: list[dict[str, Any] | None] = [None] * len(items)
    r = rigs(settings, database, responder, encoder)
    try:
        for n, i in enumerate(asked, start=1):
            say(f"answering {n}/{len(asked)}: {items[i].get('id', i)}")
            row = answer_item(r, items[i], n)
            gold = items[i].get("gold") or []
            row["gold_answer"] = gold[0]["answer"] if gold else ""
            if gold and not row.get("error"):
                row["agreement"] = agreement(row["question"], gold[0]["answer"], row["answer"])
            rows[i] = row
    finally:
        r.close()
    return score_answers([row for row in rows if row is not None]), rows


def score_answers(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The report's ``answers``, ``not_found_answers``, ``unsupported``, ``ttft`` and ``ttft_ratio`` from the rows."""
    with_gold = [r for r in rows if r.get("gold_answer")]
    scored = [r["agreement"] for r in with_gold if r.get("agreement") is not None]
    unknown = [r for r in rows if not r.get("gold_answer")]
    good = [r for r in unknown if not r.get("error") and (r["not_found_text"] or abstains(r["answer"]))]
    lenient = [r for r in unknown if not r.get("error") and (r["not_found_text"] or r["kept_unsupported"] == 0)]
    timed = [r for r in rows if "ttft_plain_s" in r]
    share = lambda n, d: round(n / d, 3) if d else None  # noqa: E731
    with_p50 = statistics.median(r["ttft_s"] for r in timed) if timed else None
    plain_p50 = statistics.median(r["ttft_plain_s"] for r in timed) if timed else None
    drafts = {
        name: _median([r[f"ttft_draft_{name}_s"] for r in timed if f"ttft_draft_{name}_s" in r])
        for name in ("full", "partial")
    }
    return {
        "answers": {
            "agreement": share(sum(scored), len(scored)),
            "scored": len(scored),
            "items": len(with_gold),
            "quoted": sum(bool(r.get("quoted")) for r in rows),
        },
        "not_found_answers": {
            "rate": share(len(good), len(unknown)),
            "fixed": share(sum(r.get("not_found_text", False) for r in unknown), len(unknown)),
            "lenient": share(len(lenient), len(unknown)),
            "items": len(unknown),
        },
        "unsupported": {
            "first": sum(r.get("first_unsupported", 0) for r in rows),
            "kept": sum(r.get("kept_unsupported", 0) for r in rows),
            "answers": len(rows),
        },
        "ttft": {"with_passages_s": with_p50, "without_s": plain_p50, "items": len(timed)},
        "ttft_ratio": round(with_p50 / plain_p50, 3) if with_p50 and plain_p50 else None,
        "ttft_draft": drafts,
        "ttft_ratio_draft": {
            name: round(p50 / plain_p50, 3) if p50 and plain_p50 else None for name, p50 in drafts.items()
        },
        "errors": sum(bool(r.get("error")) for r in rows),
    }


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def format_answers(report: dict[str, Any]) -> list[str]:
    """The answers' lines of the text report (none when the answers were not run)."""
    if "answers" not in report:
        return []
    a, nf, u, t = report["answers"], report["not_found_answers"], report["unsupported"], report["ttft"]
    ttft = (
        f"TTFT with passages {t['with_passages_s']:.2f} s, without {t['without_s']:.2f} s: ratio {report['ttft_ratio']}"
        + f"; warmed from a draft (whole message / but its last word): ratio {report['ttft_ratio_draft']['full']}"
        + f" / {report['ttft_ratio_draft']['partial']}"
        if t["items"]
        else "TTFT: no answer placed passages"
    )
    return [
        f"answers: agreement {a['agreement']} ({a['scored']} of {a['items']} items with a gold answer scored;"
        + f" {a['quoted']} answers replaced by the document's own yes or no)",
        f"not found (answers): abstained {nf['rate']}, the fixed text {nf['fixed']}; counted as before (no unsupported "
        f"fact) {nf['lenient']} ({nf['items']} items no document answers)",
        f"unsupported entities: {u['first']} in first answers, {u['kept']} kept ({u['answers']} answers)",
        f"{ttft} ({t['items']} items)",
    ]
