"""Know the customer, through the daemon's app (in-process): an agent's request recorded with
``POST /turns``, the customer's bare answer, then a read-back question. The ledger in
``GET /v1/sessions/{id}`` holds the name, an answer with another name is flagged (and repaired
under ``regenerate``), and a PIN never reaches the database, the prompt or the API."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from appliance.app import Appliance, build
from appliance.config import load_settings
from appliance.serve.api import create_app
from appliance.types import LedgerEntry, current_facts, from_dict

from .fakes import FakeResponder
from .support import write_config


class Daemon:
    """The API over an appliance built with a fake responder whose replies are given."""

    def __init__(self, tmp_path: Path, config: str, replies: list[str]) -> None:
        settings = load_settings(write_config(tmp_path, config), env={})
        self.responder = FakeResponder(replies)
        self.appliance: Appliance = build(
            settings, responder=self.responder, summarizer=FakeResponder(default="Summary."), recall=False
        )
        self.app = create_app(self.appliance)

    def request(self, method: str, path: str, json: Any = None) -> httpx.Response:
        async def main() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://appliance") as http:
                return await http.request(method, path, json=json)

        return asyncio.run(main())

    def post(self, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
        reply = self.request("POST", path, json=body)
        assert reply.status_code == status, reply.text
        return reply.json()


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Any]:
    made: list[Daemon] = []

    def make(replies: list[str], guard: str = "flag") -> Daemon:
        d = Daemon(tmp_path, f'[guard]\npolicy = "{guard}"\n', replies)
        made.append(d)
        return d

    yield make
    for d in made:
        d.appliance.close()


def conversation(d: Daemon) -> str:
    """A session with the agent's request for the name and the customer's bare answer."""
    session = d.post("/v1/sessions", {"policy": "rolling"}, status=201)["id"]
    d.post(f"/v1/sessions/{session}/turns", {"role": "agent", "text": "Could I get your full name, please?"}, 201)
    d.post(f"/v1/sessions/{session}/messages", {"text": "Yes, Sarah Brown."})
    return session


def test_the_name_given_as_a_bare_answer_is_in_the_ledger_and_a_wrong_name_is_flagged(daemon):
    d = daemon(["Thank you, Sarah.", "You gave me the name Sarah Green."])
    session = conversation(d)
    answer = d.post(f"/v1/sessions/{session}/messages", {"text": "What name did I give you?"})
    named = [f for f in answer["check"]["findings"] if f["entity"]["kind"] == "name" and f["status"] != "missing"]
    assert [(f["entity"]["text"], f["status"], f["expected"]) for f in named] == [
        ("Sarah Green", "contradiction", "Sarah Brown")
    ]
    assert answer["check"]["action"] == "flag" and not answer["check"]["ok"]

    detail = d.request("GET", f"/v1/sessions/{session}").json()
    names = [(e["value"], e["turn"], e["speaker"], e["slot"]) for e in detail["ledger"] if e["kind"] == "name"]
    assert names[0] == ("Sarah Brown", 1, "customer", "name:customer")
    # the prompt of the read-back question carried the name
    assert "Sarah Brown" in "".join(m.content for m in d.responder.prompts[-1])


def test_under_regenerate_the_wrong_name_is_repaired(daemon):
    d = daemon(
        ["Thank you, Sarah.", "You gave me the name Sarah Green.", "You gave me the name Sarah Brown."], "regenerate"
    )
    session = conversation(d)
    answer = d.post(f"/v1/sessions/{session}/messages", {"text": "What name did I give you?"})
    assert answer["text"] == "You gave me the name Sarah Brown."
    assert answer["check"]["action"] == "regenerate" and answer["check"]["ok"]
    assert "Sarah Green" in answer["check"]["original"]


def test_a_pin_given_as_a_bare_answer_never_reaches_the_database_prompt_or_api(daemon):
    d = daemon(["Thank you."])
    session = d.post("/v1/sessions", {"policy": "rolling"}, status=201)["id"]
    d.post(f"/v1/sessions/{session}/turns", {"role": "agent", "text": "Right, and your PIN as well please."}, 201)
    turn = d.post(f"/v1/sessions/{session}/turns", {"role": "customer", "text": "3941"}, 201)
    assert turn["text"] == "[PIN withheld]"
    answer = d.post(f"/v1/sessions/{session}/messages", {"text": "Oh, and my card number is 4111 1111 1111 1111."})
    assert answer["customer"]["text"] == "Oh, and my card number is [card ending 1111]."
    detail = d.request("GET", f"/v1/sessions/{session}").text
    assert not _holds_pin(detail) and "4111 1111" not in detail and "PIN given" in detail
    assert not _holds_pin("".join(m.content for p in d.responder.prompts for m in p))
    dump = "\n".join(d.appliance.store.db.iterdump())
    assert not _holds_pin(dump) and "4111 1111" not in dump


def _holds_pin(text: str) -> bool:
    """Whether ``text`` holds the PIN as a number of its own: a timing such as 0.0339416 merely contains
    its digits."""
    return re.search(r"(?<![\d.])3941(?![\d])", text) is not None


@pytest.mark.real_model
def test_a_corrected_account_number_is_read_back_as_corrected(tmp_path: Path):
    """With the default responder: the account number the customer corrects ("Sorry, I gave you the
    wrong one, it's 12345679.") is the one read back; the first stays stored, superseded."""
    settings = load_settings(write_config(tmp_path, "[responder]\nmax_tokens = 48\n"), env={})
    appliance = build(settings, summarizer=FakeResponder(default="Summary."), recall=False)
    try:
        d = Daemon.__new__(Daemon)
        d.appliance, d.app = appliance, create_app(appliance)
        session = d.post("/v1/sessions", {"policy": "rolling"}, status=201)["id"]
        for role, text in (
            ("agent", "What is your account number?"),
            ("customer", "It's 12345678."),
            ("agent", "Thank you, one moment please."),
            ("customer", "Sorry, I gave you the wrong one, it's 12345679."),
        ):
            d.post(f"/v1/sessions/{session}/turns", {"role": role, "text": text}, 201)
        answer = d.post(f"/v1/sessions/{session}/messages", {"text": "Can you read back my account number?"})
        assert "12345679" in answer["text"].replace(" ", "") and "12345678" not in answer["text"].replace(" ", "")
        ledger = [from_dict(LedgerEntry, e) for e in d.request("GET", f"/v1/sessions/{session}").json()["ledger"]]
        said = [(e.value, e.speaker, e.slot) for e in ledger if e.speaker == "customer"]
        assert said == [("12345678", "customer", "account:customer"), ("12345679", "customer", "account:customer")]
        assert [e.value for e in current_facts(ledger) if e.kind == "account"] == ["12345679"]
    finally:
        appliance.close()
