"""Seed 002's overflow rule on the summary's real structure: middle lines (categories) first, then
middle sentences within the lines left, the first and last staying; the manifest names what went.

The summaries are the ones the shipped summarizer model wrote for dev sessions (tests/data/summaries.json
says how): one category per line, several without a full stop.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from appliance.context import PromptSpec, RollingPolicy
from appliance.context.trim import GAP, SummaryTrim, label_of, split_sentences
from appliance.errors import InputError
from appliance.types import Prompt, Snapshot, SummaryVersion, Turn

from .support import SHARED_DATA
from .test_context import SESSION, FakeCounter, assert_accounted, context_of

FIXTURE = json.loads((Path(__file__).parent / "data" / "summaries.json").read_text())
REAL = [s["text"] for s in FIXTURE["summaries"]]


def lines_of(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def session_snapshot(entry: dict, text: str | None = None) -> Snapshot:
    """The fixture's session, its turns up to 8 after the summary's end, with the summary."""
    rows = (SHARED_DATA / Path(entry["data"]).name).read_text().splitlines()
    d = next(json.loads(r) for r in rows if json.loads(r)["id"] == entry["session"])
    turns = tuple(Turn("s", i, t["role"], t["text"]) for i, t in enumerate(d["turns"][: entry["covers_to"] + 9]))
    summary = SummaryVersion("s", 1, entry["text"] if text is None else text, covers_to=entry["covers_to"])
    return Snapshot(SESSION, turns, summary)


def summary_of(prompt: Prompt) -> str | None:
    """The summary's text in the prompt (without its header), or None when it gave way."""
    for block in context_of(prompt).split("\n\n"):
        if block.startswith("Summary of turns"):
            return block.split("\n", 1)[1]
    return None


def sweep(snap: Snapshot, budgets: range = range(700, 60, -2)) -> list[tuple[int, Prompt]]:
    """The rolling policy's prompts at falling budgets (FakeCounter), until the question alone does not fit."""
    out = []
    for budget in budgets:
        try:
            prompt = RollingPolicy(recent_pairs=4).build(snap, "And the reference?", PromptSpec("s", "i", budget), C)
        except InputError:
            break
        assert C.count(prompt.messages) == prompt.manifest.total_tokens <= budget
        assert_accounted(snap, prompt)
        out.append((budget, prompt))
    return out


C = FakeCounter()


def test_the_fixture_is_the_summarizers_line_format():
    assert len(REAL) >= 3
    for text in REAL:
        lines = lines_of(text)
        assert len(lines) >= 5 and lines[0].startswith("Issue and status: ")
        assert all(label_of(line).endswith(":") for line in lines)
    # Lines without a full stop, which a sentence splitter cannot cut.
    assert "Names: Customer, Agent, Peterborough" in lines_of(REAL[0])


class TestSummaryTrim:
    @pytest.mark.parametrize("text", REAL, ids=["multiwoz-0", "multiwoz-1", "star-0"])
    def test_middle_lines_go_centre_out_then_sentences_first_and_last_stay(self, text):
        lines = lines_of(text)
        first, last = split_sentences(lines[0])[0], split_sentences(lines[-1])[-1]
        trim = SummaryTrim(text, C.count_text)
        steps = []
        while (kind := trim.drop()) is not None:
            steps.append(kind)
            shown = trim.text()
            assert shown.startswith(first) and shown.endswith(last)  # the seed's rule holds at every step
            if len(trim.cut_sentences) <= trim.each_line_from:  # until then, each line keeps its ends
                kept = shown.splitlines()
                for line, kept_line in ((lines[0], kept[0]), (lines[-1], kept[-1])):
                    whole = split_sentences(line)
                    assert kept_line.startswith(whole[0]) and kept_line.endswith(whole[-1])
            if steps == ["line"]:
                assert shown.splitlines()[trim.cut_lines[0]] == GAP  # the gap stands in the cut line's place
            # The estimate is a running sum of the pieces: near the rendered text's own count.
            assert abs(trim.cost - C.count_text(shown)) <= len(shown.splitlines()) + 2
        n = len(lines)
        assert steps[: n - 2] == ["line"] * (n - 2)  # every middle line goes before any sentence
        assert set(steps[n - 2 :]) <= {"sentence"} and "sentence" in steps
        centre = (n - 1) / 2
        assert trim.cut_lines == sorted(range(1, n - 1), key=lambda i: (abs(i - centre), i))
        # What is left at the end: the summary's first and last sentence, one gap between.
        assert trim.text().replace("\n", " ") == f"{first} {GAP} {last}"

    def test_one_line_falls_back_to_sentences(self):
        text = " ".join(lines_of(REAL[2]))  # the star summary, as a model writes it without line breaks
        sentences = split_sentences(text)
        trim = SummaryTrim(text, C.count_text)
        kinds = []
        while (kind := trim.drop()) is not None:
            kinds.append(kind)
        assert kinds == ["sentence"] * (len(sentences) - 2)
        assert trim.text() == f"{sentences[0]} {GAP} {sentences[-1]}"
        note = trim.describe_sentences()
        assert note.startswith(f"summary: {len(sentences) - 2} middle sentence(s) of {len(sentences)} cut (")
        assert note.endswith("first and last kept") and '"Names: Tyler Jones, Cooper, …"' in note

    def test_each_piece_is_counted_once(self):
        calls: Counter[str] = Counter()

        def count(text: str) -> int:
            calls[text] += 1
            return C.count_text(text)

        trim = SummaryTrim(REAL[2], count)
        while trim.drop() is not None:
            pass
        pieces = lines_of(REAL[2]) + [s for line in lines_of(REAL[2]) for s in split_sentences(line)]
        assert max(calls[p] for p in pieces) == 1
        assert calls[GAP] == 1


class TestRollingOnRealSummaries:
    @pytest.mark.parametrize("k", range(len(REAL)), ids=["multiwoz-0", "multiwoz-1", "star-0"])
    def test_under_pressure_the_middle_goes_not_the_whole(self, k):
        entry = FIXTURE["summaries"][k]
        lines = lines_of(entry["text"])
        middle = lines[1:-1]
        cut_seen = 0
        for _, prompt in sweep(session_snapshot(entry)):
            shown = summary_of(prompt)
            notes = [c for c in prompt.manifest.cuts if c.startswith("summary: ")]
            if shown is None or not notes:
                continue
            cut_seen += 1
            kept = shown.splitlines()
            assert kept[0].startswith(split_sentences(lines[0])[0])
            assert kept[-1].endswith(split_sentences(lines[-1])[-1])
            gone = [line for line in middle if line not in kept]
            assert gone and GAP in shown
            # The manifest names the cut lines by their labels, first in the order they went.
            assert notes[0].startswith(f"summary: {len(gone)} middle line(s) of {len(lines)} cut (")
            names = ", ".join(label_of(line) for line in gone)
            assert notes[0].endswith(f"cut ({names}), first and last kept")
            if len(notes) > 1:  # sentences only once every middle line is gone
                assert gone == middle and len(kept) <= 3 and notes[1].startswith("summary: ")
                assert "middle sentence(s)" in notes[1] and notes[1].endswith("first and last kept")
        assert cut_seen >= 2

    def test_period_less_lines_are_cut_by_line(self):
        """Without any full stop a sentence rule has nothing to cut: the summary went whole. By lines it stays."""
        entry = FIXTURE["summaries"][1]
        text = "\n".join(line.replace(". ", ", ").rstrip(".?") for line in lines_of(entry["text"]))
        assert len(split_sentences(text)) == 1
        lines = lines_of(text)
        kept_states = set()
        for _, prompt in sweep(session_snapshot(entry, text)):
            shown = summary_of(prompt)
            if shown is not None and shown != text:
                kept = shown.splitlines()
                assert kept[0] == lines[0] and kept[-1] == lines[-1]
                kept_states.add(len(kept))
        # 8 lines: 1 to 6 of the 6 middle lines gone, one gap line standing for them; then the whole of it.
        assert kept_states == {3, 4, 5, 6, 7, 8}

    def test_when_only_first_and_last_lines_are_left_their_middle_sentences_go(self):
        entry = FIXTURE["summaries"][2]
        last = split_sentences(lines_of(entry["text"])[-1])
        assert len(last) == 3  # "Current state: ... They will walk 3 blocks east ... You will walk 3 blocks ..."
        seen_inner = seen_ends = False
        for _, prompt in sweep(session_snapshot(entry)):
            shown = summary_of(prompt)
            if shown is None or last[1] in shown:
                continue
            if last[0] in shown:  # each line keeps its first and last sentence
                seen_inner = True
                assert shown.splitlines()[-1] == f"{last[0]} {GAP} {last[-1]}"
                note = 'summary: 1 middle sentence(s) of 5 cut ("They will walk 3 …"), each line\'s first and last kept'
                assert note in prompt.manifest.cuts
            else:  # then the rest between the summary's first and last sentence
                seen_ends = True
                assert shown.endswith(f"{GAP}\n{last[-1]}") or shown.endswith(f"{GAP} {last[-1]}")
                assert any(c.endswith("the summary's first and last kept") for c in prompt.manifest.cuts)
        assert seen_inner and seen_ends

    def test_the_summary_goes_whole_only_after_its_middle(self):
        entry = FIXTURE["summaries"][0]
        prompts = sweep(session_snapshot(entry))
        first_gone = next(i for i, (_, p) in enumerate(prompts) if summary_of(p) is None)
        before = summary_of(prompts[first_gone - 1][1])
        lines = lines_of(entry["text"])
        first, last = split_sentences(lines[0])[0], split_sentences(lines[-1])[-1]
        assert before is not None and before.replace("\n", " ") == f"{first} {GAP} {last}"  # seed 002's rule, last
        assert "summary dropped entirely (its first and last sentences too)" in prompts[first_gone][1].manifest.cuts
