"""``to_dict``/``from_dict``: the JSON the store keeps and the API returns, and the way back.

The shapes are pinned as the store has written them since the first release, so that stored
manifests and check results still load; a union field round-trips as the member it holds, and a
value its field cannot hold fails loudly instead of passing through as it came.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from pydantic import ValidationError

from appliance.types import (
    CheckResult,
    Entity,
    Finding,
    GuardAction,
    Manifest,
    PartManifest,
    Session,
    Timings,
    TurnRecord,
    from_dict,
    to_dict,
)

ENTITY = Entity("order", "A-12345", 10, 17, "a12345")
RECORD = TurnRecord(
    "mid",
    "tiny",
    Manifest(
        "rolling",
        900,
        412,
        (PartManifest("summary", 40, (0, 1)), PartManifest("recent", 300, (2, 3), "last 1 pair")),
        verbatim_turns=(2, 3),
        summarized_turns=(0, 1),
        cuts=("recall: none",),
    ),
    412,
    17,
    Timings(context_ms=1.5, ttft_s=0.25, total_s=1.0),
    CheckResult(
        (Finding(ENTITY, "missing", expected="A-12345"),),
        GuardAction.READBACK,
        1,
        "first",
        (Finding(ENTITY, "unsupported"),),
    ),
)

# As the store writes them into turn_records (one JSON column each).
STORED_MANIFEST = (
    '{"policy": "rolling", "budget": 900, "total_tokens": 412, "parts": [{"name": "summary", "tokens": 40, '
    '"turns": [0, 1], "note": ""}, {"name": "recent", "tokens": 300, "turns": [2, 3], "note": "last 1 pair"}], '
    '"verbatim_turns": [2, 3], "summarized_turns": [0, 1], "recalled_turns": [], "cut_turns": [], '
    '"cuts": ["recall: none"], "fallback": false}'
)
STORED_CHECK = (
    '{"findings": [{"entity": {"kind": "order", "text": "A-12345", "start": 10, "end": 17, "norm": "a12345"}, '
    '"status": "missing", "expected": "A-12345"}], "action": "readback", "checked": 1, "original": "first", '
    '"original_findings": [{"entity": {"kind": "order", "text": "A-12345", "start": 10, "end": 17, '
    '"norm": "a12345"}, "status": "unsupported", "expected": ""}], "refine": ""}'
)
STORED_TIMINGS = (
    '{"context_ms": 1.5, "recall_ms": 0.0, "ttft_s": 0.25, "generate_s": 0.0, "check_ms": 0.0, '
    '"repair_s": 0.0, "store_ms": 0.0, "total_s": 1.0}'
)


# Fields added since, written after the older ones (issue 25: passages and the knowledge phase).
ADDED_TO_MANIFEST = ', "passages": [], "cut_passages": []'
ADDED_TO_TIMINGS = ', "knowledge_ms": 0.0, "probe_ms": 0.0'
ADDED_TO_CHECK = ', "opener": ""'


def _appended(stored: str, added: str) -> str:
    return stored[:-1] + added + "}"


class TestShapes:
    def test_the_stored_json_is_byte_for_byte_what_it_was(self):
        """What was stored is written byte for byte as before; fields added since come after it."""
        assert json.dumps(to_dict(RECORD.manifest)) == _appended(STORED_MANIFEST, ADDED_TO_MANIFEST)
        assert json.dumps(to_dict(RECORD.check)) == _appended(STORED_CHECK, ADDED_TO_CHECK)
        assert json.dumps(to_dict(RECORD.timings)) == _appended(STORED_TIMINGS, ADDED_TO_TIMINGS)

    def test_fields_keep_their_order_and_tuples_stay_tuples(self):
        data = to_dict(RECORD)
        assert list(data) == [
            "stage",
            "model",
            "manifest",
            "prompt_tokens",
            "completion_tokens",
            "timings",
            "check",
            "knowledge",
            "source",  # added since: the stored record has it as a column of its own
        ]
        assert data["manifest"]["parts"][1] == {"name": "recent", "tokens": 300, "turns": (2, 3), "note": "last 1 pair"}

    def test_stored_records_load(self):
        stored = {
            "stage": "mid",
            "model": "tiny",
            "prompt_tokens": 412,
            "completion_tokens": 17,
            "manifest": json.loads(STORED_MANIFEST),
            "timings": json.loads(STORED_TIMINGS),
            "check": json.loads(STORED_CHECK),
        }
        assert from_dict(TurnRecord, stored) == RECORD

    def test_older_json_loads_with_defaults_and_without_keys_that_went(self):
        older = {"id": "s1", "created_at": 1.5, "owner": "token:ab", "retired": True}
        assert from_dict(Session, older) == Session("s1", 1.5)


@dataclass(frozen=True)
class Quote:
    amount: float
    currency: str


@dataclass(frozen=True)
class Refusal:
    reason: str


@dataclass(frozen=True)
class Reply:
    outcome: Quote | Refusal
    note: Quote | Refusal | None = None


class TestUnions:
    def test_a_union_field_round_trips_as_the_member_it_holds(self):
        for reply in (Reply(Quote(40.0, "EUR")), Reply(Refusal("closed"), Quote(1.0, "USD")), Reply(Refusal("x"))):
            assert from_dict(Reply, json.loads(json.dumps(to_dict(reply)))) == reply

    def test_a_value_no_member_can_hold_fails_loudly(self):
        with pytest.raises(ValidationError, match="outcome"):
            from_dict(Reply, {"outcome": {"price": 3}})

    def test_a_wrong_literal_or_type_names_its_field(self):
        with pytest.raises(ValidationError, match=r"check\.findings\.0\.status"):
            from_dict(
                TurnRecord, {**to_dict(RECORD), "check": {"findings": [{"entity": to_dict(ENTITY), "status": "?"}]}}
            )
        with pytest.raises(ValidationError, match="budget"):
            from_dict(Manifest, {"policy": "raw", "budget": "lots", "total_tokens": 1, "parts": []})
