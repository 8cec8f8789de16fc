"""Phone numbers: found by libphonenumber in every language's formats, kept by what the message says,
and read in a region (``facts.region``) where they carry no country code."""

from __future__ import annotations

import pytest

from appliance.config import FactsSettings
from appliance.facts import phones
from appliance.facts.entities import extract

from .said import customer, facts


class TestRegion:
    @pytest.mark.parametrize(
        ("locale", "region"),
        [("de_DE.UTF-8", "DE"), ("en_GB", "GB"), ("fr_BE.utf8@euro", "BE"), ("C.UTF-8", ""), ("en", ""), ("", "")],
    )
    def test_the_locale_names_the_region(self, locale: str, region: str):
        assert phones.locale_region(locale) == region

    @pytest.mark.parametrize(
        ("norm", "region"),
        [("+493012345678", "DE"), ("+33612345678", "FR"), ("+14155550199", "US"), ("0301234567", "")],
    )
    def test_an_international_number_names_its_country(self, norm: str, region: str):
        assert phones.region_of(norm) == region

    @pytest.mark.parametrize(
        ("text", "norm"),
        [
            # no possible number in Britain: read whole in the lexicons' regions in turn
            ("call me on 0151 23456789", "015123456789"),
            ("ring 1-800-555-0199 for the claims line", "18005550199"),
            ("mi móvil es 612 345 678", "612345678"),
        ],
    )
    @pytest.mark.parametrize("region", ["GB", "DE", "US", "ES"])
    def test_a_number_reads_whole_whatever_the_region(self, text: str, norm: str, region: str):
        assert [e.norm for e in extract(text, region) if e.kind == "phone"] == [norm]

    @pytest.mark.parametrize("region", ["uk", "GBR", "1"])
    def test_a_region_that_is_no_code_is_refused(self, region: str):
        with pytest.raises(ValueError, match="facts.region"):
            FactsSettings(region=region)


class TestWhatIsNoPhone:
    @pytest.mark.parametrize(
        "text",
        [
            "the error says 0x80070005 when installing Office 2021",  # a hexadecimal code
            "Ik heb op 12-03-2024 een iPhone besteld",  # a date in no region's grouping
            "my client number is CU-4471-9902",  # part of a code
            "invoice 2024/0012 is unpaid",
        ],
    )
    def test_numbers_in_other_shapes(self, text: str):
        assert facts(customer(text), kinds=("phone",)) == []


class TestSaidInWords:
    @pytest.mark.parametrize(
        ("said", "phone"),
        [
            (
                customer("you can reach me on oh two oh, seven nine four six, double oh one eight"),
                "oh two oh, seven nine four six, double oh one eight",
            ),
            (
                customer("il mio numero è tre tre tre, uno due tre, quattro cinque sei sette"),
                "tre tre tre, uno due tre, quattro cinque sei sette",
            ),
            (
                customer("mi número es seis uno dos, tres cuatro cinco, seis siete ocho"),
                "seis uno dos, tres cuatro cinco, seis siete ocho",
            ),
            (
                customer("meine Nummer ist null drei null, eins zwei drei vier fünf sechs sieben"),
                "null drei null, eins zwei drei vier fünf sechs sieben",
            ),
            (
                customer("mon numéro : zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit"),
                "zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit",
            ),
            (
                customer("mijn nummer is nul zes, een twee drie vier vijf zes zeven acht"),
                "nul zes, een twee drie vier vijf zes zeven acht",
            ),
            (
                customer("o meu número é nove um dois, três quatro cinco, seis sete oito"),
                "nove um dois, três quatro cinco, seis sete oito",
            ),
        ],
    )
    def test_a_phone_said_in_words_in_every_language(self, said: tuple[str, str], phone: str):
        assert facts(said, kinds=("phone",)) == [("phone", phone)]

    def test_a_phone_beside_a_forgotten_pin(self):
        said = customer("I don't think I remember my PIN, but you can call me on 020 7946 0018")
        assert facts(said) == [("phone", "020 7946 0018")]

    @pytest.mark.parametrize(
        ("text", "fact"),
        [
            ("my card ending four four three one", ("card", "four four three one")),
            ("my order number is four five six seven eight", ("order", "four five six seven eight")),
        ],
    )
    def test_numbers_said_in_words_wherever_a_number_is_read(self, text: str, fact: tuple[str, str]):
        assert [(e.kind, e.text) for e in extract(text)] == [fact]

    @pytest.mark.parametrize(
        "text",
        [
            "I have one or two questions",
            "Average wind speed of 8 miles per hour",  # Spanish "miles" is thousands
            "me pueden llamar al 612 345 678 o al 912 345 678",  # Spanish "o" is "or", no zero
            "a hundred and five people, two three-bedroom flats",
            "one\u2028two\u2029three\x85four\rfive\nsix",  # one number a line
        ],
    )
    def test_words_that_say_no_run_of_digits(self, text: str):
        said = [e.text for e in extract(text) if e.kind in ("phone", "number", "card", "order")]
        assert not any(c.isalpha() for text in said for c in text)


class TestNumbersThatAreNoPhones:
    @pytest.mark.parametrize(
        "text",
        [
            "Meine neue Adresse ist Hauptstraße 12, 10115 Berlin.",
            "Ma nouvelle adresse est 12 rue de la Paix, 75002 Paris.",
            "Mi nueva dirección es Calle Mayor 15, 28013 Madrid.",
            "mon code postal est 75011",
            "mi código postal es 28013",
            "Ik heb op 12-03-2024 een iPhone 15 Pro besteld, bestelnummer 500-2291-7734.",
            "the model number is 55-887-1234 and it is broken",
        ],
    )
    def test_postcodes_order_and_model_numbers(self, text: str):
        assert facts(customer(text), kinds=("phone", "number", "account")) == []

    def test_a_short_run_after_00_is_no_international_number(self):
        assert facts(customer("my member number is 00418827")) == [("member_number", "00418827")]

    @pytest.mark.parametrize(
        ("text", "phone"),
        [
            ("mi móvil es 612345678", "612345678"),
            ("Meine Handynummer: 0171 1234567", "0171 1234567"),
            ("vous pouvez m'appeler au 06.12.34.56.78", "06.12.34.56.78"),
            ("Tel.: 0043 1 5124567", "0043 1 5124567"),
            ("bel mij op +31(0)20 1234567", "+31(0)20 1234567"),
            ("mijn nummer is 020 - 123 45 67", "020 - 123 45 67"),
        ],
    )
    def test_phones_by_the_cues_of_every_language(self, text: str, phone: str):
        assert facts(customer(text), kinds=("phone",)) == [("phone", phone)]
