"""The lexicons: one module per language, each filling the fields the parts read, and the one fold and
sentence splitter every part uses."""

from __future__ import annotations

import dataclasses
import re

import pytest

from appliance.facts import spoken
from appliance.lexicon import CODES, LEXICONS, NATIONAL_ID_KINDS, Lexicon, each
from appliance.lexicon.text import fold, phrase_form, sentences, straight
from appliance.types import KINDS, READBACK_TOPICS

ENTITY_KINDS = {"reference", "order", "case", "ticket", "account", "card", "customer_id", "member_number"}
SECRET_KINDS = {"pin", "cvv", "password", "otp"}


def patterns(lexicon: Lexicon) -> list[str]:
    """Every pattern of a lexicon (the fields that are regular expressions)."""
    r, b, s, n, e = lexicon.readback, lexicon.requests, lexicon.secrets, lexicon.names, lexicon.entities
    found = [*r.topics.values(), *r.request, *r.again, *r.asking, *r.first, *b.asking, *b.pointing, *b.leads]
    found += [p for cues in s.cues.values() for p in cues]
    found += [*s.joins, *s.hedges, *s.quantities, *s.password_verbs, *s.password_replies, *s.cards, *s.not_cards]
    found += [*n.self_cues, *n.your_cues, *n.here, *n.greetings, *n.addressing, *n.assent, *n.titles, *n.after]
    found += [*n.leads, *n.it_is, *(p for cues in e.labels.values() for p in cues), *e.compounds, *e.number_words]
    found += [*e.label_verbs, *e.day_of, *e.phone_cues, *e.birth_cues, *e.address_cues, *e.address_verbs]
    found += [*e.address_joins, *e.phone_words, *e.credit, *e.balance, *e.balance_verbs, *e.percent_words]
    found += [*e.username_labels, *e.level_labels, *e.levels, *e.card_words, *e.card_tails, *e.card_last]
    found += [*n.firm_cues, *n.sign_offs, *r.earlier, *lexicon.ledger.corrections, *lexicon.ledger.denials]
    found += [*lexicon.ledger.additions, *lexicon.ledger.subjects]
    found += [p for words in lexicon.ledger.value_labels.values() for p in words]
    found += [*n.labels, *n.introductions, *n.unmarked_cues, *n.word_forms]
    found += [*e.level_nouns, *e.card_ends_before, *e.card_ends, *e.counts, *e.number_nouns, *e.qualifiers]
    found += [*n.part_labels, *n.holder_cues, *n.holder_words, *n.reply_holders, *n.greeted, *n.openers, *n.kin]
    found += [p for cues in s.national_ids.values() for p in cues]
    found += [*s.asks, *s.warnings, *s.pointers]
    return found


@pytest.mark.parametrize("code", CODES)
class TestEachLexicon:
    def test_is_registered_under_its_code(self, code: str):
        assert LEXICONS[code].code == code

    def test_keys_are_the_known_kinds(self, code: str):
        lexicon = LEXICONS[code]
        assert set(lexicon.requests.cues) <= set(KINDS)
        assert set(lexicon.readback.topics) <= set(READBACK_TOPICS)
        assert set(lexicon.secrets.cues) <= SECRET_KINDS
        assert set(lexicon.secrets.national_ids) <= set(NATIONAL_ID_KINDS)
        assert set(lexicon.entities.labels) <= ENTITY_KINDS

    def test_patterns_compile_without_groups_of_their_own(self, code: str):
        for pattern in patterns(LEXICONS[code]):
            assert re.compile(pattern).groups == 0, pattern

    def test_calendars_are_whole(self, code: str):
        entities = LEXICONS[code].entities
        assert len(entities.months) in (0, 12) and len(entities.weekdays) in (0, 7)
        assert set(entities.ambiguous_months) <= {m for spellings in entities.months for m in spellings}

    def test_a_read_back_phrase_has_every_topic(self, code: str):
        readback = LEXICONS[code].readback
        if readback.labels:
            assert set(readback.labels) == set(READBACK_TOPICS)
            assert all(readback.verbs) and readback.conjunction

    def test_cues_come_with_hints(self, code: str):
        """A hint is a cheap test before the cue patterns: cues without one would never be tried."""
        names = LEXICONS[code].names
        pairs = (
            (names.self_cues, names.self_hints),
            (names.your_cues, names.your_hints),
            (names.labels, names.label_hints),
        )
        for cues, hints in pairs:
            assert bool(cues) == bool(hints)
        assert bool(names.here) == bool(names.here_hints)
        assert set(names.openers) <= set(names.greeted)
        assert bool(LEXICONS[code].secrets.cues) == bool(LEXICONS[code].secrets.hints)
        assert bool(LEXICONS[code].secrets.national_ids) == bool(LEXICONS[code].secrets.id_hints)

    def test_spellings_of_numbers_are_lower_case_and_say_a_digit(self, code: str):
        numbers = LEXICONS[code].numbers
        assert all(w == w.lower() and d.isdigit() and len(d) == 1 for w, d in numbers.spellings.items())
        assert all(w == w.lower() and n > 1 for w, n in numbers.repeats.items())


class TestRegistry:
    def test_the_five_full_languages(self):
        for code in ("en", "de", "fr", "es", "nl"):
            lexicon = LEXICONS[code]
            assert lexicon.requests.cues and lexicon.readback.topics and lexicon.stage.late and lexicon.recall
            assert code in spoken.LANGUAGES and lexicon.secrets.asks and lexicon.secrets.warnings

    def test_every_field_defaults_to_empty(self):
        """A new language may start with a few fields: the rest need not be written."""
        bare = Lexicon(code="xx")
        for field in dataclasses.fields(bare):
            value = getattr(bare, field.name)
            if field.name != "code" and not dataclasses.is_dataclass(value):
                assert not value, field.name

    def test_each_takes_every_language_once_in_order(self):
        cues = each(lambda lexicon: lexicon.recall)
        assert cues[0] == "again" and "nochmal" in cues and cues[-1] == "さっき"
        assert len(cues) == len(set(cues))


class TestText:
    def test_fold(self):
        assert fold("Siobhán ÇA") == "siobhan ca"
        assert fold("I’m") == "i’m" and straight("I’m") == "I'm"

    def test_phrase_form(self):
        assert phrase_form("Your E-mail, D.O.B.?") == "your e mail d o b"
        assert phrase_form("That’s  all?!", keep="'?-") == "that's all?"
        assert phrase_form("Geburtsdatum") == "geburtsdatum"

    def test_sentences(self):
        assert sentences("Thanks. Could you give me your PIN?\nAnd the code") == [
            "Thanks.",
            " Could you give me your PIN?",
            "And the code",
        ]
        assert sentences("my name; read it back", ".?!;") == ["my name;", " read it back"]
        assert sentences("?? ...") == ["??", " ..."]
