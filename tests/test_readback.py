"""Read-back questions: which facts are asked for, where the prompt puts them, and the guard's repair."""

from __future__ import annotations

import dataclasses

import pytest

from appliance.context import PromptSpec, RollingPolicy
from appliance.errors import InputError
from appliance.facts import readback
from appliance.facts.readback import Asked, Request
from appliance.facts.vocabulary import Vocabulary
from appliance.turn.pipeline import Pipeline
from appliance.types import LedgerEntry, current_facts

from .fakes import FakeResponder
from .said import agent, customer, ledger
from .test_context import FakeCounter, context_of, snapshot


def entry(kind: str, value: str, turn: int, slot: str = "", norm: str = "", speaker: str = "customer") -> LedgerEntry:
    return LedgerEntry(kind, value, turn, speaker, slot=slot or f"{kind}={value}", norm=norm or value.lower())  # type: ignore[arg-type]


ACCOUNT = entry("account", "95381901", 2, slot="account:customer")
NAME = entry("name", "Katarina Miller", 4, slot="name:customer", norm="katarina miller")
AGENT_NAME = entry("name", "Tom", 1, slot="name:agent", norm="tom", speaker="agent")
BIRTH = entry("date", "10/08/1980", 6, norm="1980/10/08")
FACTS = (AGENT_NAME, ACCOUNT, NAME, BIRTH)


class TestRequest:
    @pytest.mark.parametrize(
        ("message", "topics", "language"),
        [
            ("Can you read back the account number I gave you?", ("account",), "en"),
            ("What was my account number?", ("account",), "en"),
            ("What name did I give you?", ("name",), "en"),
            ("What date of birth did I give you?", ("birthdate",), "en"),
            ("Sorry, could you tell me the reference number again?", ("reference",), "en"),
            ("Which train ID was that again?", ("train",), "en"),
            ("Can you remind me of the postcode?", ("postcode",), "en"),
            ("How much money was that again?", ("amount",), "en"),
            ("Wie war meine Kontonummer?", ("account",), "de"),
            ("Welchen Namen habe ich Ihnen genannt?", ("name",), "de"),
            ("Können Sie mir meine Telefonnummer noch einmal sagen?", ("phone",), "de"),
            ("Quel était mon numéro de compte ?", ("account",), "fr"),
            ("Quel nom vous ai-je donné ?", ("name",), "fr"),
            ("¿Cuál era mi número de cuenta?", ("account",), "es"),
            ("¿Qué nombre le di?", ("name",), "es"),
            ("Wat was mijn rekeningnummer?", ("account",), "nl"),
            ("Welke naam heb ik u gegeven?", ("name",), "nl"),
            ("What name and date of birth did I give you?", ("name", "birthdate"), "en"),
        ],
    )
    def test_read_back_questions(self, message: str, topics: tuple[str, ...], language: str):
        assert readback.request(message) == Request(topics, language)

    def test_earlier_points_at_older_values(self):
        message = "What was the phone number you gave me earlier?"
        assert readback.request(message) == Request(("phone",), "en", earlier=True)

    @pytest.mark.parametrize(
        "message",
        [
            "I need a new card.",
            "Can I get a new card again?",  # "again" without a question word or a verb of telling
            "What is the weather like?",
            "Book it again please.",
            "I'd like to change my address.",
            "Ich brauche eine neue Karte.",
            "Guten Tag!",
        ],
    )
    def test_other_messages_are_not(self, message: str):
        assert readback.request(message) is None

    @pytest.mark.parametrize(
        "message",
        [
            "What name did I give you at the start?",
            "Which account number did I give you first?",
            "Welchen Namen habe ich Ihnen am Anfang genannt?",
            "¿Qué nombre le di al principio?",
        ],
    )
    def test_the_first_value_given(self, message: str):
        req = readback.request(message)
        assert req is not None and req.first

    def test_a_first_name_is_not_the_first_value(self):
        assert readback.request("What first name did I give you?") == Request(("name",), "en", False)


class TestConfiguredCues:
    """``facts.readback_cues``: a language's request phrases and topic words, added or replaced."""

    def test_a_new_language(self):
        cues = Vocabulary.build(readback_cues={"it": {"request": ["mi ricorda"], "account": ["numero di conto"]}})
        assert readback.request("Mi ricorda il numero di conto?", cues) == Request(("account",), "it")
        assert readback.request("Mi ricorda il numero di conto?") is None
        assert readback.request("What was my account number?", cues) == Request(("account",), "en")

    def test_replacing_and_turning_off(self):
        cues = Vocabulary.build(readback_cues={"en": {"request": [], "name": ["moniker"]}})
        assert readback.request("What was my account number?", cues) is None
        assert readback.request("Wie war mein Name?", cues) == Request(("name",), "de")
        assert readback.request("Wie war mein Moniker?", cues) == Request(("name",), "de")

    def test_phrases_match_without_case_or_accents(self):
        cues = Vocabulary.build(readback_cues={"it": {"request": ["Può ripetere"], "name": ["il mio nome"]}})
        assert readback.request("puo RIPETERE il mio   nome?", cues) == Request(("name",), "it")

    def test_read_from_the_settings_and_checked(self, tmp_path):
        from appliance.config import load_settings
        from appliance.errors import ConfigError

        from .support import write_config

        settings = load_settings(write_config(tmp_path, '[facts.readback_cues.it]\nrequest = ["mi ricorda"]\n'), env={})
        assert settings.facts.readback_cues == {"it": {"request": ("mi ricorda",)}}
        with pytest.raises(ConfigError, match="did you mean 'request'"):
            load_settings(write_config(tmp_path, '[facts.readback_cues.it]\nrequets = ["x"]\n'), env={})
        with pytest.raises(ConfigError, match="facts.readback_cues.it.name: a cue is empty"):
            load_settings(write_config(tmp_path, '[facts.readback_cues.it]\nname = [""]\n'), env={})


class TestWanted:
    def test_the_customers_own_name_not_the_agents(self):
        assert readback.wanted(Request(("name",)), FACTS) == (Asked("name", (NAME,)),)

    def test_a_bare_number_stands_in_for_an_account_when_no_account_is_known(self):
        bare = entry("number", "85731890", 2)
        assert readback.wanted(Request(("account",)), (bare,)) == (Asked("account", (bare,)),)
        assert readback.wanted(Request(("account",)), (bare, ACCOUNT)) == (Asked("account", (ACCOUNT,)),)

    def test_a_date_of_birth_falls_back_to_dates_and_topics_without_facts_are_left_out(self):
        asked = readback.wanted(Request(("birthdate", "phone")), FACTS)
        assert asked == (Asked("birthdate", (BIRTH,)),)
        assert readback.wanted(None, FACTS) == ()

    def test_at_the_start_means_the_first_value_not_the_current_one(self):
        later = entry("name", "Ben", 54, slot="name:customer", norm="ben")
        assert readback.wanted(Request(("name",)), (*FACTS, later)) == (Asked("name", (later,)),)
        assert readback.wanted(Request(("name",), first=True), (*FACTS, later)) == (Asked("name", (NAME,)),)

    def test_facts_of_are_by_turn(self):
        asked = readback.wanted(Request(("birthdate", "account")), FACTS)
        assert readback.facts_of(asked) == (ACCOUNT, BIRTH)


class TestLacking:
    def test_the_value_in_any_spacing_or_a_form_the_normaliser_equates(self):
        (asked,) = readback.wanted(Request(("birthdate",)), FACTS)
        assert readback.lacking("Your date of birth is 10/08/1980.", [asked]) == ()
        assert readback.lacking("You were born on October 8, 1980.", [asked]) == ()
        assert readback.lacking("You were born on October 8, 1981.", [asked]) == (asked,)
        (account,) = readback.wanted(Request(("account",)), FACTS)
        assert readback.lacking("It is 9538 1901.", [account]) == ()
        assert readback.lacking("Yes, I can read back the account number you gave me.", [account]) == (account,)

    def test_names_without_case_or_accents(self):
        siobhan = entry("name", "Siobhán O'Connor", 1, slot="name:customer", norm="siobhan o connor")
        (asked,) = readback.wanted(Request(("name",)), (siobhan,))
        assert readback.lacking("You are siobhan o'connor.", [asked]) == ()
        assert readback.lacking("You are Siobhán.", [asked]) == (asked,)

    def test_missing_findings_name_the_ledgers_value(self):
        (asked,) = readback.wanted(Request(("account",)), FACTS)
        (finding,) = readback.findings([asked])
        assert (finding.status, finding.expected, finding.entity.text, finding.entity.start) == (
            "missing",
            "95381901",
            "95381901",
            -1,
        )


class TestPhrase:
    @pytest.mark.parametrize(
        ("language", "text"),
        [
            ("en", "Your account number is 95381901."),
            ("de", "Ihre Kontonummer ist 95381901."),
            ("fr", "Votre numéro de compte est 95381901."),
            ("es", "Su número de cuenta es 95381901."),
            ("nl", "Uw rekeningnummer is 95381901."),
            ("it", "Your account number is 95381901."),  # a language without phrases: English
        ],
    )
    def test_one_value(self, language: str, text: str):
        assert readback.phrase(readback.wanted(Request(("account",)), FACTS), language) == text

    def test_several_values_and_topics(self):
        refs = (entry("reference", "U81JS4T8", 5), entry("reference", "OYNGUI4L", 17))
        asked = readback.wanted(Request(("reference", "name")), (*refs, NAME))
        assert (
            readback.phrase(asked) == "The references I have are U81JS4T8 and OYNGUI4L. Your name is Katarina Miller."
        )
        assert (
            readback.phrase(asked, "de") == "Die Referenzen sind U81JS4T8 und OYNGUI4L. Ihr Name ist Katarina Miller."
        )
        assert "U81JS4T8, OYNGUI4L" in readback.instruction(asked)


class TestPrompt:
    """``rolling`` puts the asked facts right before the question, within the budget, named in the manifest."""

    SPEC = PromptSpec("You are a helpful agent.", "Reply briefly.", 512)

    def test_the_part_comes_last_before_the_question(self):
        snap = snapshot([f"turn {i} text." for i in range(8)], None, FACTS)
        spec = dataclasses.replace(self.SPEC, readback=(ACCOUNT,))
        prompt = RollingPolicy().build(snap, "What was my account number?", spec, FakeCounter())
        context = context_of(prompt)
        assert context.endswith(f"{readback_header()}\naccount 95381901 (said in turn 2)")
        names = [p.name for p in prompt.manifest.parts]
        assert names[-4:] == ["ledger-readback", "question", "instruction", "template"]
        part = prompt.manifest.parts[names.index("ledger-readback")]
        assert part.turns == (2,) and part.tokens > 0
        # Without read-back facts the prompt is what it was.
        plain = RollingPolicy().build(snap, "What was my account number?", self.SPEC, FakeCounter())
        assert "ledger-readback" not in [p.name for p in plain.manifest.parts]
        assert context.startswith(context_of(plain))

    def test_it_gives_way_last_and_never_over_budget(self):
        snap = snapshot([f"turn {i} with some words." for i in range(12)], None, FACTS)
        spec = dataclasses.replace(self.SPEC, readback=(ACCOUNT, NAME))
        counter = FakeCounter()
        kept_alone = False
        for budget in range(200, 20, -2):
            try:
                prompt = RollingPolicy(recent_pairs=2).build(
                    snap, "q?", dataclasses.replace(spec, budget=budget), counter
                )
            except InputError:
                break
            m = prompt.manifest
            assert counter.count(prompt.messages) == m.total_tokens <= budget
            if "ledger-readback" in [p.name for p in m.parts]:
                kept_alone = kept_alone or not m.verbatim_turns
            else:
                assert any(c.startswith("read-back: ") for c in m.cuts)
                assert not m.verbatim_turns and "Exact facts" not in context_of(prompt)
        assert kept_alone  # the read-back part outlived the last pair


def readback_header() -> str:
    from appliance.context.rolling import READBACK_HEADER

    return READBACK_HEADER


class TestRepair:
    """The guard on a read-back answer, with a fake responder that does not give the value back."""

    def setup(self, pipeline: Pipeline, guard: str = "regenerate") -> str:
        pipeline.settings = dataclasses.replace(pipeline.settings, guard=guard)
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "agent", "Could I get your account number, please?")
        pipeline.sessions.record_turn(session.id, "customer", "My account number is 95381901.")
        pipeline.sessions.record_turn(session.id, "agent", "Thank you. How can I help?")
        return session.id

    def test_a_complete_answer_is_left_alone(self, pipeline: Pipeline, fake_responder: FakeResponder):
        sid = self.setup(pipeline)
        fake_responder.replies = ["Your account number is 95381901."]
        result = pipeline.answer(sid, "Can you read back the account number I gave you?")
        assert result.record.check.action == "none" and len(fake_responder.prompts) == 1

    def test_the_first_prompt_already_holds_the_asked_facts_before_the_question(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        sid = self.setup(pipeline)
        fake_responder.replies = ["Your account number is 95381901."]
        pipeline.answer(sid, "Can you read back the account number I gave you?")
        first = fake_responder.prompts[0][-1].content
        assert first[: first.index("[QUESTION]")].rstrip().endswith("account 95381901 (said in turn 1)")
        assert first.endswith("written exactly as here: the customer's account number: 95381901.")
        assert fake_responder.samplings[0].temperature == 0.0  # facts repeated greedily
        fake_responder.replies = ["You are welcome."]
        pipeline.answer(sid, "Thanks, that is all.")  # not a read-back question: no such part
        assert "(said in turn 1)\n\n[QUESTION]" not in fake_responder.prompts[-1][-1].content
        assert "written exactly" not in fake_responder.prompts[-1][-1].content
        assert fake_responder.samplings[-1] == pipeline.settings.sampling

    def test_regenerated_with_the_value_named_and_placed(self, pipeline: Pipeline, fake_responder: FakeResponder):
        sid = self.setup(pipeline)
        fake_responder.replies = ["Yes, please.", "Sure: it is 95381901."]
        result = pipeline.answer(sid, "Can you read back the account number I gave you?")
        check = result.record.check
        assert result.agent.text == "Sure: it is 95381901." and check.ok and check.action == "regenerate"
        assert check.original == "Yes, please."
        assert [(f.status, f.expected) for f in check.original_findings] == [("missing", "95381901")]
        retry = fake_responder.prompts[-1][-1].content
        assert "written exactly as here: the customer's account number: 95381901." in retry
        before_question = retry[: retry.index("[QUESTION]")]
        assert before_question.rstrip().endswith("account 95381901 (said in turn 1)")
        assert pipeline.store.turns(sid)[-1].text == result.agent.text

    def test_answered_from_the_ledger_when_the_retry_lacks_it_too(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        sid = self.setup(pipeline)
        fake_responder.replies = ["Yes, please.", "Yes, I can read back the account number you gave me."]
        result = pipeline.answer(sid, "Can you read back the account number I gave you?")
        check = result.record.check
        assert result.agent.text == "Your account number is 95381901."
        assert check.action == "readback" and check.ok and check.original == "Yes, please."
        assert [f.status for f in check.original_findings] == ["missing"]

    def test_in_the_questions_language(self, pipeline: Pipeline, fake_responder: FakeResponder):
        sid = self.setup(pipeline)
        fake_responder.replies = ["Ja.", "Gerne."]
        result = pipeline.answer(sid, "Wie war meine Kontonummer?")
        assert result.agent.text == "Ihre Kontonummer ist 95381901." and result.record.check.action == "readback"

    def test_flag_keeps_the_answer_with_a_missing_finding(self, pipeline: Pipeline, fake_responder: FakeResponder):
        sid = self.setup(pipeline, "flag")
        fake_responder.replies = ["Yes, please."]
        result = pipeline.answer(sid, "What was my account number?")
        check = result.record.check
        assert result.agent.text == "Yes, please." and check.action == "flag" and not check.ok
        assert [(f.status, f.expected) for f in check.findings] == [("missing", "95381901")]

    def test_redact_answers_from_the_ledger_at_once(self, pipeline: Pipeline, fake_responder: FakeResponder):
        sid = self.setup(pipeline, "redact")
        fake_responder.replies = ["Yes, please."]
        result = pipeline.answer(sid, "What was my account number?")
        assert result.agent.text == "Your account number is 95381901." and result.record.check.action == "readback"
        assert len(fake_responder.prompts) == 1

    def test_the_name_given_at_the_start_is_no_contradiction_of_a_later_one(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        pipeline.settings = dataclasses.replace(pipeline.settings, guard="flag")
        session = pipeline.sessions.new_session()
        for role, text in [
            ("agent", "Could I get your full name, please?"),
            ("customer", "My name is Tyler Jones."),
            ("agent", "Thank you. Anything else?"),
            ("customer", "Actually, my name is Ben Carter, I am calling for him."),
        ]:
            pipeline.sessions.record_turn(session.id, role, text)
        fake_responder.replies = ["You gave me the name Tyler Jones at the start."]
        result = pipeline.answer(session.id, "What name did I give you at the start?")
        assert result.record.check.ok and result.record.check.action == "none"

    def test_a_question_about_something_not_in_the_ledger_is_not_repaired(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        sid = self.setup(pipeline)
        fake_responder.replies = ["I do not have a phone number on record."]
        result = pipeline.answer(sid, "What was my phone number again?")
        assert result.record.check.action == "none" and len(fake_responder.prompts) == 1


def test_current_facts_feed_the_selection():
    """A corrected account number: the current one is read back, not the old one."""
    old = entry("account", "11112222", 1, slot="account:customer")
    asked = readback.wanted(Request(("account",)), current_facts((old, ACCOUNT)))
    assert asked == (Asked("account", (ACCOUNT,)),)


class TestReadBackOfTypedFacts:
    def test_several_values_are_read_back_with_their_labels(self):
        facts_ = ledger(customer("I have two accounts: checking 11112222 and savings 33334444."))
        asked = readback.wanted(readback.request("What were my account numbers again?"), facts_)
        assert readback.phrase(asked) == "The account numbers I have are 11112222 (checking) and 33334444 (savings)."
        assert "11112222 (checking), 33334444 (savings)" in readback.instruction(asked)

    def test_a_read_back_gives_only_the_corrected_value(self):
        said = (customer("My account number is 12345678."), agent("Thanks."), customer("Sorry, I meant 12345679."))
        asked = readback.wanted(readback.request("Can you read back my account number?"), ledger(*said))
        assert readback.phrase(asked) == "Your account number is 12345679."

    def test_earlier_prefers_the_older_values(self):
        said = [agent(f"The number of place {i} is 01632 96000{i}.") for i in range(5)]
        facts_ = ledger(*said)
        newest = readback.wanted(readback.request("What was the phone number you gave me?"), facts_)
        older = readback.wanted(readback.request("What was the phone number you gave me earlier?"), facts_)
        assert [e.value for e in readback.facts_of(newest)] == ["01632 960002", "01632 960003", "01632 960004"]
        assert [e.value for e in readback.facts_of(older)] == ["01632 960000", "01632 960001", "01632 960002"]

    @pytest.mark.parametrize(
        ("question", "language", "phrase"),
        [
            ("What was my username?", "en", "Your username is rkowalski77."),
            ("Wie war mein Benutzername?", "de", "Ihr Benutzername ist rkowalski77."),
            ("Quel était mon nom d'utilisateur ?", "fr", "Votre nom d'utilisateur est rkowalski77."),
            ("¿Cuál era mi nombre de usuario?", "es", "Su nombre de usuario es rkowalski77."),
            ("Wat was mijn gebruikersnaam?", "nl", "Uw gebruikersnaam is rkowalski77."),
        ],
    )
    def test_a_handle_in_every_language(self, question: str, language: str, phrase: str):
        facts_ = ledger(agent("What is your username?"), customer("sure.  it's rkowalski77"))
        req = readback.request(question)
        assert req is not None and req.language == language
        assert readback.phrase(readback.wanted(req, facts_), req.language) == phrase

    def test_a_card_is_read_back_by_its_last_digits(self):
        facts_ = ledger(customer("my card ending 4821 was swallowed by your ATM"))
        asked = readback.wanted(readback.request("Which card did I tell you about again?"), facts_)
        assert readback.phrase(asked) == "Your card ends in 4821."
