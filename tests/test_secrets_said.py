"""Secrets however they are said (issue 27, item 3): digits said apart or in words where a secret is
asked for or named, and national identification numbers by their shapes and check digits, masked
before anything is stored: checked in the raw bytes of the database file and its WAL. Ordinary
numbers stay as they were said."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.app import pipeline_settings
from appliance.config import load_settings
from appliance.context import POLICIES
from appliance.errors import ConfigError
from appliance.facts import national_ids, secrets, slots, spoken
from appliance.facts.secrets import Masking
from appliance.store import Store
from appliance.turn.pipeline import Pipeline
from appliance.types import Turn

from .fakes import FakeResponder
from .support import write_config

# (the agent's turn before, or None; the customer's message; the secret as said; its placeholder's label)
SAID = [
    # English
    ("Could you give me your PIN, please?", "Sure, it's 4 4 3 1.", "4 4 3 1", "PIN"),
    ("Could you give me your PIN, please?", "four eight two six", "four eight two six", "PIN"),
    (None, "My PIN is four eight two six.", "four eight two six", "PIN"),
    (None, "my pin is 4-4-3-1", "4-4-3-1", "PIN"),
    (None, "My PIN is 4.4.3.1, I think", "4.4.3.1", "PIN"),
    (None, "my PIN is double four three one", "double four three one", "PIN"),
    (None, "pin number: seven oh two nine", "seven oh two nine", "PIN"),
    ("And your PIN?", "it's nine, nine, one, two", "nine, nine, one, two", "PIN"),
    (None, "The one-time code is 4 8 2 9 1 3", "4 8 2 9 1 3", "one-time code"),
    (
        "Could you read me the verification code?",
        "sure: six two two nine zero one",
        "six two two nine zero one",
        "one-time code",
    ),
    (None, "the security code is seven seven one", "seven seven one", "card security code"),
    ("What is your password?", "it's four four three one", "four four three one", "password"),
    (None, "my password is nine nine eight eight one", "nine nine eight eight one", "password"),
    ("Can I have the code we sent you?", "4-8-2-9-1-3", "4-8-2-9-1-3", "one-time code"),
    (None, "my passcode is triple seven two", "triple seven two", "password"),
    (None, "my PIN is forty-four thirty-one", "forty-four thirty-one", "PIN"),
    ("Right, and your PIN as well please.", "fourteen ninety two", "fourteen ninety two", "PIN"),
    # German
    (None, "Meine PIN ist vier vier drei eins.", "vier vier drei eins", "PIN"),
    ("Und Ihre Geheimzahl, bitte?", "Die ist 7 4 0 2.", "7 4 0 2", "PIN"),
    (None, "Die TAN lautet eins zwei drei vier fünf sechs", "eins zwei drei vier fünf sechs", "one-time code"),
    (None, "Geheimzahl: null acht eins fünf", "null acht eins fünf", "PIN"),
    (None, "mein Passwort ist zwo zwo vier vier", "zwo zwo vier vier", "password"),
    ("Wie lautet Ihre Geheimzahl?", "sieben, vier, null, zwei", "sieben, vier, null, zwei", "PIN"),
    (None, "Die Prüfnummer ist drei zwei eins", "drei zwei eins", "card security code"),
    # French
    (None, "Mon code PIN est quatre quatre trois un.", "quatre quatre trois un", "PIN"),
    ("Quel est votre code PIN ?", "c'est le 4 4 3 1", "4 4 3 1", "PIN"),
    (None, "mon mot de passe est neuf huit sept six", "neuf huit sept six", "password"),
    (None, "le code de vérification est deux-deux-neuf-zéro-un-un", "deux-deux-neuf-zéro-un-un", "one-time code"),
    (None, "Mon code secret : cinq, six, sept, huit", "cinq, six, sept, huit", "PIN"),
    (None, "Le cryptogramme est un deux trois", "un deux trois", "card security code"),
    # Spanish
    (None, "mi número secreto es cuatro cuatro tres uno", "cuatro cuatro tres uno", "PIN"),
    ("¿Me dice su clave personal, por favor?", "sí, es 4-4-3-1", "4-4-3-1", "PIN"),
    (None, "mi contraseña es siete siete ocho ocho", "siete siete ocho ocho", "password"),
    (
        None,
        "El código de verificación es cero uno dos tres cuatro cinco",
        "cero uno dos tres cuatro cinco",
        "one-time code",
    ),
    (None, "código de seguridad: nueve, ocho, siete", "nueve, ocho, siete", "card security code"),
    # Dutch
    (None, "mijn pincode is vier vier drie een", "vier vier drie een", "PIN"),
    ("Wat is uw pincode?", "Die is 7 4 0 2", "7 4 0 2", "PIN"),
    (None, "mijn wachtwoord is negen negen acht acht", "negen negen acht acht", "password"),
    (None, "de eenmalige code is 4.8.2.9.1.3", "4.8.2.9.1.3", "one-time code"),
    (None, "beveiligingscode: drie twee een", "drie twee een", "card security code"),
    # National identification numbers
    (None, "My social security number is 536-90-4412", "536-90-4412", "social security number"),
    (None, "SSN 536904412, date of birth in March", "536904412", "social security number"),
    ("What is your social security number?", "it's 536 90 4412", "536 90 4412", "social security number"),
    (None, "my NI number is AB 12 34 56 C", "AB 12 34 56 C", "National Insurance number"),
    (None, "National Insurance: ab123456c", "ab123456c", "National Insurance number"),
    (None, "Meine Steuer-ID ist 86095742719", "86095742719", "Steuer-ID"),
    (None, "Steuer-ID: 86 095 742 719", "86 095 742 719", "Steuer-ID"),
    (None, "Mi DNI es 12345678Z", "12345678Z", "DNI/NIE"),
    (None, "Tengo NIE, X-1234567-L", "X-1234567-L", "DNI/NIE"),
    (None, "mon numéro de sécurité sociale est 1 85 05 78 006 084 91", "1 85 05 78 006 084 91", "NIR"),
    (None, "voilà : 185057800608491", "185057800608491", "NIR"),
    (None, "mijn BSN is 123456782", "123456782", "BSN"),
    (None, "burgerservicenummer 1234.56.782", "1234.56.782", "BSN"),
    (None, "en mijn sofinummer: 1112 22 333", "1112 22 333", "BSN"),
]

# Ordinary turns: order numbers, amounts, dates, phone numbers, IBANs and references, numbers in
# words, and numbers of a national identification number's length that fail its checks.
ORDINARY = [
    "My order number is 4431-2209-17.",
    "The amount was 1,500.00 EUR on 12.03.2024.",
    "Call me on +44 20 7946 0958.",
    "My IBAN is DE89 3704 0044 0532 0130 00.",
    "Reference W9945XIS, booked for 3 nights.",
    "I was born on 4.4.1985.",
    "The transfer of 12-03-2024 is missing.",
    "Statement dated 2024-03-12, please.",
    "Mobile 06 12 34 56 78, any time after five.",
    "My number is 0171 234 5678.",
    "You can reach me at (555) 123-4567.",
    "Office line 555-123-4567.",
    "Order ORD-536-90-4412 never arrived.",
    "Ticket 4-4-3-1 is still open.",
    "Flight LH 4431 departs at 10.45.",
    "Postcode 1012 AB, Amsterdam.",
    "Mi teléfono es 612 34 56 78.",
    "Numéro de commande 2024-0456-778.",
    "Bestellnummer 4431 2209, bitte prüfen.",
    "Total 12 345,67 € for the tax year 2023/24.",
    "We are two or three people, one or two nights.",
    "One two three, can you hear me?",
    "Ich habe vier oder fünf Überweisungen gemacht.",
    "Nous sommes deux, trois peut-être.",
    "Somos cuatro personas y dos niños.",
    "Wij zijn met z'n vieren, twee volwassenen.",
    "000-12-3456 is on the form",  # no SSN has area 000
    "666-12-3456 was printed there",  # nor 666
    "912-34-5678 on the letter",  # nor 9xx
    "123-00-4567 on the slip",  # nor group 00
    "123-45-0000 on the receipt",  # nor serial 0000
    "Account 12345678901 at the bank.",  # eleven digits, not a Steuer-ID's check digit
    "Kundennummer 01234567890.",  # a Steuer-ID never starts with 0
    "Account 123456782 please.",  # passes the eleven-test, but no cue says BSN
    "Reference 12345678A.",  # not the DNI letter of 12345678 (Z)
    "Dossier 185057800608436.",  # not the NIR key of 1850578006084 (91)
    "QQ 12 34 56 C is the form's example.",  # no NI number starts with Q
    "Code GB123456A on the parcel.",  # nor with GB
    "my locker is ab123456c",  # lower case with no cue: a code
    "The invoice says 4 431,00 EUR.",
    "Room 4 4, building 3.",
    "Room four, floor three, desk one.",
]

# Where a PIN was spoken of just before: dates, amounts, phones and words that are not a PIN.
AFTER_A_PIN = [
    "The transfer was 1,500 euros on 12.03.24.",
    "Call me on 06 12 34 56 78.",
    "We were two or three at the counter.",
    "It happened on 4.4.2024 at 10:30.",
    "My phone ends in 12 34 56 78 90.",
]


def raw_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def _pipeline(tmp_path: Path, body: str = "") -> tuple[Pipeline, Store, Path]:
    settings = load_settings(write_config(tmp_path, body), env={})
    path = tmp_path / "said.db"
    store = Store.open(path)
    return Pipeline(store, FakeResponder(), POLICIES, pipeline_settings(settings)), store, path


class TestSaidAnyWay:
    def test_the_table_covers_five_languages_and_every_kind(self):
        assert len(SAID) >= 40 and len(ORDINARY) >= 40
        labels = {label for *_, label in SAID}
        assert labels == {secrets.LABELS[k] for k in secrets.LABELS}

    @pytest.mark.parametrize(("asked", "message", "said", "label"), SAID)
    def test_masked_whole_before_anything_is_stored(
        self, tmp_path: Path, asked: str | None, message: str, said: str, label: str
    ):
        pipeline, store, path = _pipeline(tmp_path)
        try:
            session = pipeline.sessions.new_session()
            if asked is not None:
                pipeline.sessions.record_turn(session.id, "agent", asked)
            result = pipeline.answer(session.id, message)
            stored = result.customer.text
            assert f"[{label} withheld]" in stored and said not in stored
            assert stored == message.replace(said, f"[{label} withheld]")  # the whole span as said
            kinds = {e.value for e in store.ledger(session.id) if e.kind == "secret"}
            assert kinds == {f"{label} given"}
            assert said.encode() not in raw_bytes(path)
        finally:
            store.close()
        assert said.encode() not in raw_bytes(path)

    @pytest.mark.parametrize("message", ORDINARY)
    def test_ordinary_turns_are_stored_as_said(self, message: str):
        assert secrets.find(message) == ()
        assert slots.mask(message) == message

    @pytest.mark.parametrize("message", AFTER_A_PIN)
    def test_ordinary_numbers_after_a_pin_was_spoken_of(self, message: str):
        before = [Turn("s", 0, "customer", "I forgot my PIN."), Turn("s", 1, "agent", "I can help you with that.")]
        assert slots.mask(message, before) == message

    def test_ordinary_turns_reach_the_database_as_said(self, tmp_path: Path):
        pipeline, store, path = _pipeline(tmp_path)
        try:
            session = pipeline.sessions.new_session()
            for message in ORDINARY[:10]:
                pipeline.sessions.record_turn(session.id, "customer", message)
            assert [t.text for t in store.turns(session.id)] == ORDINARY[:10]
        finally:
            store.close()
        assert all(m.encode() in raw_bytes(path) for m in ORDINARY[:10])


class TestSpoken:
    @pytest.mark.parametrize(
        ("said", "digits"),
        [
            ("4 4 3 1", "4431"),
            ("4-4-3-1", "4431"),
            ("4.4.3.1", "4431"),
            ("four four three one", "4431"),
            ("double four three one", "4431"),
            ("triple seven two", "7772"),
            ("oh seven oh two", "0702"),
            ("vier vier drei eins", "4431"),
            ("zwo null", "20"),
            ("quatre quatre trois un", "4431"),
            ("cuatro cuatro tres uno", "4431"),
            ("vier vier drie een", "4431"),
            ("12 34 56", "123456"),
            ("forty four thirty one", "4431"),
            ("forty-four thirty-one", "4431"),
            ("fourteen ninety two", "1492"),
            ("twenty oh five", "2005"),
            ("tre tre tre, uno due tre", "333123"),
            ("três três um", "331"),
            ("deux-deux-neuf-zéro", "2290"),
        ],
    )
    def test_a_run_is_read_as_its_digits(self, said: str, digits: str):
        assert spoken.fold(said) == digits

    @pytest.mark.parametrize("text", ["12.03.24", "1,500", "4431", "four", "Room 12"])
    def test_dates_amounts_and_single_tokens_are_no_run(self, text: str):
        assert spoken.runs(text) == ()

    def test_a_named_secret_without_a_value_masks_nothing(self):
        assert secrets.mask("I forgot my PIN, it was four digits") == "I forgot my PIN, it was four digits"


class TestNationalIds:
    @pytest.mark.parametrize(
        ("valid", "wrong"),
        [
            ("Steuer-ID 86095742719", "Steuer-ID 86095742718"),
            ("DNI 12345678Z", "DNI 12345678Y"),
            ("NIE X1234567L", "NIE X1234567M"),
            ("NIR 185057800608491", "NIR 185057800608492"),
            ("BSN 123456782", "BSN 123456783"),
            ("BSN 1234.56.782", "BSN 1234.56.783"),
            ("Steuer-ID 86095742719", "Steuer-ID 86095742710"),
            ("BSN 111222333", "BSN 000000000"),
        ],
    )
    def test_a_check_digit_holds_whatever_the_cue(self, valid: str, wrong: str):
        assert len(national_ids.find(valid)) == 1
        assert national_ids.find(wrong) == ()

    def test_a_cue_widens_the_forms_read(self):
        assert national_ids.find("123456782") == ()
        assert [n.kind for n in national_ids.find("my BSN: 123456782")] == ["bsn"]
        assert national_ids.find("536904412") == ()
        assert [n.kind for n in national_ids.find("SSN 536904412")] == ["ssn"]
        assert [n.kind for n in national_ids.find("536904412", cued={"ssn"})] == ["ssn"]

    def test_the_ledger_records_that_one_was_given(self):
        from appliance.facts.ledger import entries

        text = slots.mask("My social security number is 536-90-4412")
        assert [(e.kind, e.value) for e in entries([Turn("s", 0, "customer", text)])] == [
            ("secret", "social security number given")
        ]

    def test_an_answer_that_states_one_is_a_finding(self):
        from appliance.facts.checker import check

        result = check("Your BSN is 1234.56.782.", ledger=(), summary="", transcript=(), question="")
        assert [(f.entity.kind, f.entity.norm) for f in result.findings] == [("secret", "bsn")]


class TestMaskingSettings:
    def test_mask_kinds_choose_what_is_masked(self):
        text = "SSN 536-90-4412, PIN 7402"
        only_pins = Masking(frozenset({"pin"}))
        assert secrets.mask(text, masking=only_pins) == "SSN 536-90-4412, PIN [PIN withheld]"
        assert secrets.mask(text) == "SSN [social security number withheld], PIN [PIN withheld]"

    def test_a_sites_pattern_is_masked_with_its_label(self):
        masking = Masking.of(secrets.ALL.kinds, {"staff badge": r"SB-\d{6}"})
        assert secrets.mask("my badge is SB-123456", masking=masking) == "my badge is [staff badge withheld]"

    def test_the_settings_reach_the_database(self, tmp_path: Path):
        body = '[privacy]\nmask_kinds = ["pin"]\npatterns = { "staff badge" = \'SB-\\d{6}\' }\n'
        pipeline, store, path = _pipeline(tmp_path, body)
        try:
            session = pipeline.sessions.new_session()
            result = pipeline.answer(session.id, "Badge SB-123456, SSN 536-90-4412, my PIN is four four three one")
            assert result.customer.text == "Badge [staff badge withheld], SSN 536-90-4412, my PIN is [PIN withheld]"
        finally:
            store.close()
        data = raw_bytes(path)
        assert b"SB-123456" not in data and b"four four three one" not in data and b"536-90-4412" in data

    @pytest.mark.parametrize(
        ("body", "named"),
        [
            (
                '[privacy]\npatterns = { "badge" = "SB-(\\\\d{6}" }\n',
                "privacy.patterns.badge: not a regular expression",
            ),
            ('[privacy]\npatterns = { "badge" = "x*" }\n', "privacy.patterns.badge: matches empty text"),
            (
                '[privacy]\nmask_kinds = ["pin", "ssm"]\n',
                "privacy.mask_kinds: unknown kind 'ssm' (did you mean 'ssn'?)",
            ),
            ('[privacy]\nsafe_answer = { de = " " }\n', "privacy.safe_answer.de is empty"),
        ],
    )
    def test_a_bad_setting_names_the_file_and_the_key(self, tmp_path: Path, body: str, named: str):
        path = write_config(tmp_path, body)
        with pytest.raises(ConfigError) as caught:
            load_settings(path, env={})
        assert str(path) in str(caught.value) and named in str(caught.value)
