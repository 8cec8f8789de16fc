"""Entity check of an answer: is every fact it states backed by the conversation?

Small models invent account numbers, amounts and dates. After generation every entity of the
answer (found by the same extractors as the ledger) is looked up, by its matching form, in the
ledger, the summary, the full transcript, the current question and the passages of the operator's
documents its prompt carried:

- found somewhere → supported;
- found nowhere, but a ledger code, phone number, email or long amount differs from it by a small
  edit (one wrong digit of an order number, two swapped characters) → ``contradiction``, with the
  right value;
- found nowhere else → ``unsupported``;
- equal to a value since corrected (a superseded value of its slot, ``phone:customer`` or an
  account number corrected "sorry, it's 12345679") → ``contradiction`` with the current value;
  any of several current values of a kind (two accounts, two phones) is supported;
- a name the answer calls the customer by ("Thanks, Sarah Green", "your name is John Smith") that
  is not the customer's name in the ledger → ``contradiction`` with that name, and likewise a date
  of birth that is not theirs; names are compared without case ("Mei Lin Chen" is "mei lin chen");
- a secret (a PIN, a card security code...) → always a finding: it is never to be repeated;
- a sentence that asks the customer for a secret (:mod:`appliance.facts.asking`) → a finding of
  kind ``secret_request`` (its ``norm`` the kind asked for): a bank's agent never asks for one.

Pure functions, imports only leaves; what to do about findings (flag, regenerate, redact) is
decided by the caller with :func:`redact` and :func:`strict_instruction`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property, lru_cache

from appliance.facts import asking, names
from appliance.facts.entities import compact, extract, family, fold_words, index_keys, lookup_keys, spaced
from appliance.types import CheckResult, Entity, Finding, LedgerEntry, Turn, current_facts

# Codes shorter than this are not searched for inside running text (too many chance hits).
MIN_SUBSTRING = 4
# The kind of a finding's entity that is a sentence asking for a secret.
REQUEST = "secret_request"


class _Sources:
    """Everything an answer may quote, indexed once per check and only as far as needed.

    The ledger is the transcript's facts already extracted, so most answers are settled by it, the
    summary and the question; the transcript itself is extracted (a cached, per-turn cost) only when
    an entity is not found there, and its plain text is only built for names, commitments and codes.
    """

    def __init__(self, ledger: Sequence[LedgerEntry], first: Sequence[str], transcript: Sequence[str]) -> None:
        self.ledger = ledger
        self.texts = [*first, *transcript]
        self.transcript = transcript
        self.keys: set[str] = {k for entry in ledger for k in index_keys(entry.kind, entry.norm)}
        for text in first:
            self.keys.update(_text_keys(text))
        self._transcript_keys = False

    def supports(self, e: Entity) -> bool:
        wanted = lookup_keys(e.kind, e.norm)
        if any(k in self.keys for k in wanted):
            return True
        if not self._transcript_keys:
            self._transcript_keys = True
            for text in self.transcript:
                self.keys.update(_text_keys(text))
            if any(k in self.keys for k in wanted):
                return True
        if e.kind == "name":
            return all(w in self.words for w in e.norm.split())
        if e.kind == "commitment":
            return f" {e.norm} " in f" {self.spaced} "
        if family(e.kind) in ("id", "email", "address") and len(e.norm) >= MIN_SUBSTRING:
            # a code written across tokens or in a form no extractor saw ("CB2 3QB" in a list)
            return compact(e.norm) in self.compact
        return False

    @cached_property
    def words(self) -> set[str]:
        words = {w for entry in self.ledger for w in _words(entry.value)}
        for text in self.texts:
            words.update(_words(text))
        return words

    @cached_property
    def compact(self) -> str:
        return "\n".join(_compact(t) for t in self.texts)

    @cached_property
    def spaced(self) -> str:
        return " | ".join(_spaced(t) for t in self.texts)


@lru_cache(maxsize=8192)
def _text_keys(text: str) -> frozenset[str]:
    return frozenset(k for e in extract(text) for k in index_keys(e.kind, e.norm))


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    return fold_words(text)


@lru_cache(maxsize=8192)
def _compact(text: str) -> str:
    return compact(text)


@lru_cache(maxsize=8192)
def _spaced(text: str) -> str:
    return spaced(text)


def clear_caches() -> None:
    """Forget every extraction made so far (benchmarks measure a cold check with it)."""
    for cached in (extract, _text_keys, _words, _compact, _spaced):
        cached.cache_clear()


def check(
    answer: str,
    *,
    ledger: Sequence[LedgerEntry],
    summary: str,
    transcript: Sequence[Turn],
    question: str,
    passages: Sequence[str] = (),
) -> CheckResult:
    """Findings for the entities of ``answer`` that the conversation and ``passages`` (the texts of
    the documents' passages placed in its prompt) do not support."""
    requests = tuple(
        Finding(Entity(REQUEST, answer[a.start : a.end], a.start, a.end, a.kind), "unsupported")
        for a in asking.find(answer)
    )
    entities = extract(answer)
    if not entities:
        return CheckResult(findings=requests, checked=0)
    sources = _Sources(ledger, [summary, question, *passages], [t.text for t in transcript])
    stale = _stale(ledger)
    own = _customer_facts(ledger)
    findings: list[Finding] = []
    for e in entities:
        if e.kind == "secret":
            findings.append(Finding(e, "unsupported"))
            continue
        whose = names.role(answer, e.start, e.end) if e.kind == "name" else ""
        given = own.get("name") if whose in ("addressee", "holder") else None
        if given is not None and not any(set(e.norm.split()) <= set(n.split()) for n in _own_names(ledger)):
            findings.append(Finding(e, "contradiction", expected=given.value))
            continue
        if sources.supports(e):
            replaced = stale.get(_key(e))
            if replaced is not None:
                findings.append(Finding(e, "contradiction", expected=replaced.value))
            continue
        near = nearest(e, ledger) or (own.get("birthdate") if e.kind == "birthdate" else None)
        findings.append(Finding(e, "contradiction", expected=near.value) if near else Finding(e, "unsupported"))
    return CheckResult(findings=(*requests, *findings), checked=len(entities))


def _customer_facts(ledger: Sequence[LedgerEntry]) -> dict[str, LedgerEntry]:
    """The customer's current name and date of birth, by kind (``name:customer``...)."""
    return {e.kind: e for e in current_facts(ledger) if e.slot in ("name:customer", "birthdate:customer")}


def _own_names(ledger: Sequence[LedgerEntry]) -> set[str]:
    """Every name the customer has given as theirs: a session may pass from one person to another
    ("this is Mark, her husband"), and calling either by their name is no contradiction."""
    return {e.norm for e in ledger if e.slot == "name:customer"}


def _key(e: Entity | LedgerEntry) -> tuple[str, str]:
    return family(e.kind), e.norm


def _stale(ledger: Sequence[LedgerEntry]) -> dict[tuple[str, str], LedgerEntry]:
    """Old values of a slot (a corrected phone or account number) → the value that replaced them."""
    last: dict[str, LedgerEntry] = {}
    for entry in ledger:
        if entry.slot:
            last[entry.slot] = entry
    stale: dict[tuple[str, str], LedgerEntry] = {}
    for entry in ledger:
        newest = last.get(entry.slot)
        if newest is not None and not _same(entry, newest):
            stale[_key(entry)] = newest
    # a value that is current in any slot is not stale (the same number given for two people)
    for newest in last.values():
        stale.pop(_key(newest), None)
    return stale


def _same(old: LedgerEntry, new: LedgerEntry) -> bool:
    """Whether a later value of a slot restates the earlier one rather than correcting it
    ("+44 1223 842725" after "01223 842725"; "Dana Whitfield" after "Dana", or "Dana" after it)."""
    if old.kind == "name" and new.kind == "name":
        a, b = set(old.norm.split()), set(new.norm.split())
        return a <= b or b <= a
    return bool(set(lookup_keys(old.kind, old.norm)) & set(index_keys(new.kind, new.norm)))


def nearest(e: Entity, ledger: Iterable[LedgerEntry]) -> LedgerEntry | None:
    """The ledger fact of the same family that ``e`` is a near miss of, if any (latest wins ties)."""
    fam = family(e.kind)
    best: tuple[int, LedgerEntry] | None = None
    for entry in ledger:
        if family(entry.kind) != fam or entry.norm == e.norm:
            continue
        d = _distance_between(fam, e.norm, entry.norm)
        if d is None:
            continue
        limit = 2 if len(e.norm) >= 8 else 1
        if d <= limit and (best is None or d <= best[0]):
            best = (d, entry)
    return best[1] if best else None


def _distance_between(fam: str, a: str, b: str) -> int | None:
    """Edit distance between two values that one could be a mistyped copy of, else ``None``.

    Codes, phone numbers and emails are sparse: one wrong character almost always means a typo.
    Prices, dates and times are dense: "$78" next to "$70", or 06:01 next to 05:01, are as likely two
    real values as one typo, so only long amounts (4+ digits, same currency and length) count, and
    dates and times never do (they are reported unsupported, with no guessed right value).
    """
    if fam == "amount":
        cur_a, cur_b = a.lstrip("0123456789."), b.lstrip("0123456789.")
        num_a, num_b = a[: len(a) - len(cur_a)], b[: len(b) - len(cur_b)]
        if cur_a != cur_b or len(num_a) != len(num_b) or sum(ch.isdigit() for ch in num_a) < 4:
            return None
        return osa(num_a, num_b)
    if fam == "phone":
        a, b = a.lstrip("+0"), b.lstrip("+0")
        n = min(len(a), len(b))
        if abs(len(a) - len(b)) > 3:
            return None
        return osa(a[-n:], b[-n:])
    if fam in ("id", "email"):
        return osa(a, b)
    return None  # dates, times, names, deadlines: a different one is not a typo of the right one


def osa(a: str, b: str) -> int:
    """Edit distance counting a swap of two neighbouring characters as one edit."""
    if a == b:
        return 0
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def redact(answer: str, result: CheckResult, phrase: str) -> str:
    """``answer`` with every unsupported or contradicting span replaced by ``phrase``.

    Overlapping spans (a commitment containing its deadline) are replaced once, as one span.
    """
    spans = sorted((f.entity.start, f.entity.end) for f in result.findings)
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out = answer
    for start, end in reversed(merged):
        out = out[:start] + phrase + out[end:]
    return out


def strict_instruction(ledger: Sequence[LedgerEntry], findings: Sequence[Finding] = ()) -> str:
    """The stricter instruction of the regenerate policy: the known facts, verbatim, and a ban on others.

    Pass the ledger's current entries (``appliance.types.current_facts``) so that corrected values are not listed.
    ``findings`` of the rejected answer are named, so the retry does not repeat them.
    """
    seen: dict[tuple[str, str], LedgerEntry] = {}
    for entry in ledger:
        seen.pop((entry.kind, entry.norm), None)
        seen[(entry.kind, entry.norm)] = entry
    lines = [
        "Answer using only facts from the conversation. Copy every number, code, amount, date, time, "
        "phone number, email address and name exactly as listed below; do not state any other. "
        "If the customer asks for something that is not known, say that you will check with staff."
    ]
    if seen:
        lines.append("Known facts:")
        lines.extend(f"- {e.about}: {e.value}" for e in seen.values())
    else:
        lines.append("No numbers, codes, amounts, dates or names are known yet; do not state any.")
    if findings:
        lines.append("Do not repeat these, which the conversation does not support:")
        lines.extend(
            f"- {f.entity.text}" + (f" (the right value is {f.expected})" if f.expected else "") for f in findings
        )
    return "\n".join(lines)
