"""Stage detection: early by position, late by resolution cues in any configured language, and its config."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from appliance.config import Settings, load_settings
from appliance.errors import ConfigError
from appliance.stage import LATE_CUES, OPEN_CUES, STAGE_INSTRUCTIONS, cue_table, detect, prompt_texts
from appliance.types import Turn

from .support import dev_conversations, write_config


def history(customer_turns: int) -> tuple[Turn, ...]:
    turns = []
    for k in range(customer_turns):
        turns += [Turn("s", 2 * k, "customer", "I need a train."), Turn("s", 2 * k + 1, "agent", "Where to?")]
    return tuple(turns)


class TestDetect:
    def test_first_customer_turns_are_early_whatever_they_say(self):
        assert [detect(history(n), "Thanks, bye!") for n in range(4)] == ["early", "early", "early", "late"]

    def test_early_turns_is_configurable(self):
        assert detect(history(1), "I need a taxi.", early_turns=1) == "mid"
        assert detect(history(4), "I need a taxi.", early_turns=5) == "early"

    def test_real_closing_turns_are_late(self):
        conv = next(c for c in dev_conversations() if c["id"] == "multiwoz21:MUL0036")
        turns = tuple(Turn("s", i, t["role"], t["text"]) for i, t in enumerate(conv["turns"]))
        assert detect(turns[:18], turns[18].text) == "late"  # "No thank you , all of my questions have been answered ."
        assert detect(turns[:16], turns[16].text) == "mid"  # "May I have the contact number for the taxi service ?"

    @pytest.mark.parametrize(
        ("message", "stage"),
        [
            ("That's all, thank you.", "late"),
            ("Thanks! I'd also like a taxi to the hotel.", "mid"),
            ("Vielen Dank, das ist alles.", "late"),
            ("Danke! Können Sie noch ein Taxi buchen?", "mid"),
            ("Merci, c'est tout.", "late"),
            ("Bedankt, tot ziens!", "late"),
            ("Gracias, eso es todo.", "late"),
            ("My card was charged twice.", "mid"),
            ("Thanks , I do n't need any further assistance . Bye !", "late"),
            ("Thanks, you've been really helpful. That's all the help I need.", "late"),
            ("No thanks . I just need the phone number and postcode for each .", "mid"),
            ("Merci, pouvez-vous aussi réserver un taxi", "mid"),
        ],
    )
    def test_cues_in_several_languages(self, message: str, stage: str):
        assert detect(history(5), message) == stage

    def test_cues_match_whole_words_only(self):
        assert detect(history(5), "The thanksgiving booking, please.") == "mid"

    def test_a_flat_cue_list_works_too(self):
        assert detect(history(5), "fertig", late_cues=["fertig"]) == "late"


class TestConfiguredCues:
    def test_a_configured_language_replaces_its_built_in_list_only(self):
        table = cue_table({"de": ["fertig"], "fr": []}, LATE_CUES)
        assert table["de"] == ("fertig",) and "fr" not in table and table["en"] == LATE_CUES["en"]
        assert detect(history(5), "Fertig.", late_cues=table) == "late"
        assert detect(history(5), "Danke.", late_cues=table) == "mid"
        assert detect(history(5), "Merci.", late_cues=table) == "mid"

    def test_the_standing_directive_joins_the_role_and_the_stage_directive_follows_the_question(self):
        additions = {"early": "Ask for the order number first.", "late": " "}
        assert prompt_texts("early", additions, "You are an agent.", "Reply briefly.") == (
            "You are an agent.\nReply briefly.",
            "Ask for the order number first.",
        )
        assert prompt_texts("late", additions, "You are an agent.", "Reply briefly.")[1] == ""
        assert prompt_texts("mid", additions, "You are an agent.", "Reply briefly.")[1] == ""

    def test_every_stage_has_a_built_in_addition_and_a_configured_one_replaces_only_its_own(self, tmp_path: Path):
        from appliance.app import pipeline_settings

        assert set(STAGE_INSTRUCTIONS) == {"early", "mid", "late"} and all(STAGE_INSTRUCTIONS.values())
        assert pipeline_settings(Settings()).instructions == STAGE_INSTRUCTIONS
        cfg = write_config(tmp_path, '[stage.instructions]\nearly = "Ask for the order number."\nlate = ""\n')
        got = pipeline_settings(load_settings(cfg, env={})).instructions
        assert got == {"early": "Ask for the order number.", "mid": STAGE_INSTRUCTIONS["mid"], "late": ""}
        chat = Settings().chat
        system, instruction = prompt_texts("late", got, chat.system_prompt, chat.instruction)
        assert instruction == "" and system.endswith(chat.instruction)  # turned off: the standing directive stays


class TestConfig:
    def test_defaults(self):
        s = Settings()
        assert s.stage.early_turns == 3 and s.stage.late_cues == {} and s.stage.instructions == {}
        assert s.guard.policy == "regenerate" and s.guard.redact_phrase == "[please check with staff]"
        assert s.routing.early == "" and s.refine.enabled is False and s.refine.model == ""

    def test_sections_load_from_toml(self, tmp_path: Path):
        cfg = write_config(
            tmp_path,
            '[stage]\nearly_turns = 2\n[stage.late_cues]\nde = ["fertig", "passt"]\n'
            '[stage.instructions]\nearly = "Ask for the order number."\n'
            '[guard]\npolicy = "redact"\nredact_phrase = "[ask staff]"\n'
            '[routing]\nearly = "qwen2.5-coder-1.5b-instruct"\n[refine]\nenabled = true\nmodel = "qwen2.5-coder-0.5b-instruct"\n',
        )
        s = load_settings(cfg, env={})
        assert s.stage.early_turns == 2 and s.stage.late_cues == {"de": ("fertig", "passt")}
        assert s.stage.instructions == {"early": "Ask for the order number."}
        assert (s.guard.policy, s.guard.redact_phrase) == ("redact", "[ask staff]")
        assert s.routing.early == "qwen2.5-coder-1.5b-instruct" and s.refine.enabled

    @pytest.mark.parametrize(
        ("body", "expected"),
        [
            ('[guard]\npolicy = "ignore"\n', "guard.policy"),
            ('[stage.late_cues]\nGerman = ["danke"]\n', "'German' is not a language code"),
            ('[stage.late_cues]\nde = [" "]\n', "stage.late_cues.de: a cue is empty"),
            ('[stage.instructions]\nfinal = "x"\n', "stage.instructions"),
            ("[refine]\nenabled = true\n", "refine.model names no model"),
            ("[stage]\nearly_turns = -1\n", "stage.early_turns"),
        ],
    )
    def test_invalid_values_are_named(self, tmp_path: Path, body: str, expected: str):
        cfg = write_config(tmp_path, body)
        with pytest.raises(ConfigError, match=re.escape(expected)):
            load_settings(cfg, env={})

    def test_built_in_tables_cover_the_same_languages(self):
        assert set(LATE_CUES) == set(OPEN_CUES) == {"en", "de", "fr", "es", "nl"}
