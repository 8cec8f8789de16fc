"""Requests and several values: what the agent asked decides what a bare reply is, and several values
of a kind given together are each current, in every language."""

from __future__ import annotations

import pytest

from appliance.facts.ledger import superseded
from appliance.facts.slots import requested
from appliance.types import current_facts

from .said import agent, customer, every, facts, ledger


class TestSeveralValues:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (
                "I have two accounts: checking 11112222 and savings 33334444.",
                [("11112222", "checking"), ("33334444", "savings")],
            ),
            (
                "Ich habe zwei Konten: Girokonto 11112222 und Sparkonto 33334444.",
                [("11112222", "Girokonto"), ("33334444", "Sparkonto")],
            ),
            (
                "J'ai deux comptes : compte courant 11112222 et compte épargne 33334444.",
                [("11112222", "courant"), ("33334444", "épargne")],
            ),
            (
                "Tengo dos cuentas: cuenta corriente 11112222 y cuenta de ahorros 33334444.",
                [("11112222", "corriente"), ("33334444", "ahorros")],
            ),
            (
                "Ik heb twee rekeningen: betaalrekening 11112222 en spaarrekening 33334444.",
                [("11112222", "betaalrekening"), ("33334444", "spaarrekening")],
            ),
        ],
    )
    def test_two_accounts_each_with_its_label_both_current(self, text: str, expected):
        current = current_facts(ledger(customer(text)))
        assert [(e.value, e.label) for e in current if e.kind == "account"] == expected

    @pytest.mark.parametrize(
        ("text", "phones"),
        [
            ("you can reach me at +44 20 7946 0958 or 0049 30 1234567", ["+44 20 7946 0958", "0049 30 1234567"]),
            ("call me on 1-800-555-0199 or +1 212 555 0123", ["1-800-555-0199", "+1 212 555 0123"]),
            ("555-867-5309 is my cell", ["555-867-5309"]),
            ("Sie erreichen mich unter 030 1234567 oder 0171 2345678.", ["030 1234567", "0171 2345678"]),
            ("Handy 0151/23456789, dienstlich +49 89 1234567", ["0151/23456789", "+49 89 1234567"]),
            ("vous pouvez me joindre au 06 12 34 56 78 ou au 01 23 45 67 89", ["06 12 34 56 78", "01 23 45 67 89"]),
            ("me pueden llamar al 612 345 678 o al 912 345 678", ["612 345 678", "912 345 678"]),
            ("u kunt me bereiken op 06-12345678 of 020-1234567", ["06-12345678", "020-1234567"]),
        ],
    )
    def test_several_phone_numbers_in_every_format_all_current(self, text: str, phones: list[str]):
        assert [e.value for e in current_facts(ledger(customer(text))) if e.kind == "phone"] == phones

    @pytest.mark.parametrize(
        "text",
        [
            "I paid 1,234.50 on 12.03.2024 for order 48213377",
            "Ich habe am 12.03.2024 1.234,50 € für Bestellung 48213377 bezahlt.",
            "J'ai payé 1 234,50 € le 12/03/2024 pour la commande 48213377.",
            "Pagué 1.234,50 € el 12/03/2024 por el pedido 48213377.",
            "Ik heb op 12-03-2024 € 1.234,50 betaald voor bestelling 48213377.",
            "The total was $1,899.00, tracking number 9400111899223856",
            "I have a question about invoice 2024/0012",
        ],
    )
    def test_no_phone_in_a_date_an_amount_or_an_order_number(self, text: str):
        assert every(customer(text), kinds=("phone", "name", "account", "card", "number")) == []

    def test_the_agents_values_about_different_things_are_facts_about_different_subjects(self):
        said = (
            agent("The Lakeside Hotel can be reached on 01632 960111."),
            customer("And the restaurant?"),
            agent("The Riverside Grill's number is 01632 960222."),
        )
        current = current_facts(ledger(*said))
        assert [(e.value, e.subject) for e in current] == [
            ("01632 960111", "Lakeside Hotel"),
            ("01632 960222", "Riverside Grill"),
        ]
        assert superseded(ledger(*said)) == ()


class TestRequestsOfEveryLanguage:
    @pytest.mark.parametrize(
        ("text", "kind"),
        [
            ("Which status do you hold in our loyalty programme?", "member_level"),
            ("Which card would you like the refund on?", "card"),
            ("Ihre Vertragskontonummer bitte.", "account"),  # a cue at the end of a compound
            ("Welche Karte haben Sie benutzt?", "card"),
            ("Quelle carte avez-vous utilisée ?", "card"),
            ("¿Qué tarjeta usó?", "card"),
            ("Welke kaart heeft u gebruikt?", "card"),
            ("Op welke naam staat het?", "name"),
        ],
    )
    def test_asks_for(self, text: str, kind: str):
        assert kind in requested(text)

    def test_a_short_cue_does_not_end_a_compound(self):
        assert "otp" not in requested("Das war spontan, können Sie helfen?")  # "tan"


class TestSeveralValuesInEveryLanguage:
    @pytest.mark.parametrize(
        ("text", "kind", "expected"),
        [
            (
                "I have two accounts with you: home 40021178 and business 40021190, both should move",
                "account",
                [("40021178", "home"), ("40021190", "business")],
            ),
            (
                "Ich habe zwei Kundennummern bei Ihnen: privat 5520187 und geschäftlich 5520199.",
                "customer_id",
                [("5520187", "privat"), ("5520199", "geschäftlich")],
            ),
            (
                "J'ai deux comptes chez vous : le compte maison 88120045 et le compte pro 88120067.",
                "account",
                [("88120045", "maison"), ("88120067", "pro")],
            ),
            ("Tengo dos números de socio: 551122 y 551133", "member_number", [("551122", ""), ("551133", "")]),
            ("ik heb twee tickets: 88123 en 88124", "ticket", [("88123", ""), ("88124", "")]),
            (
                "+31 6 11223344 is mijn mobiel en 0031 20 5551234 is thuis",
                "phone",
                [("+31 6 11223344", "mobiel"), ("0031 20 5551234", "thuis")],
            ),
            (
                "my web username is lena_b but in the app it's lenab2020, both are locked",
                "username",
                [("lena_b", "web"), ("lenab2020", "app")],
            ),
            ("I have two usernames: anna_k and anna.k2", "username", [("anna_k", ""), ("anna.k2", "")]),
            ("I have two tickets open, INC-2201 and INC-2290", "ticket", [("INC-2201", ""), ("INC-2290", "")]),
            ("Tengo dos tarjetas, una acabada en 1111 y otra en 2222", "card", [("1111", ""), ("2222", "")]),
            (
                "You can reach me on 0612345678 or on my work number 0201234567",
                "phone",
                [("0612345678", ""), ("0201234567", "work")],
            ),
            (
                "Ich habe zwei Verträge: Strom 100200300 und Gas 100200399.",
                "account",
                [("100200300", "Strom"), ("100200399", "Gas")],
            ),
        ],
    )
    def test_a_count_and_a_kind_each_value_with_its_label(self, text: str, kind: str, expected):
        current = current_facts(ledger(customer(text)))
        assert [(e.value, e.label) for e in current if e.kind == kind] == expected

    @pytest.mark.parametrize(
        "text",
        [
            "I booked 4 tickets for the 10:15 train, reference number 65LWDB9Q",
            "I have two questions about my bill 48213377",
        ],
    )
    def test_a_count_of_other_things_makes_no_kind(self, text: str):
        assert facts(customer(text), kinds=("ticket", "account", "customer_id")) == []


class TestSeveralValuesAskedFor:
    @pytest.mark.parametrize(
        ("asked", "reply", "kind"),
        [
            ("What are your ticket numbers?", "55012 and 55087", "ticket"),
            ("¿Cuáles son sus números de ticket?", "el 55012 y el 55087", "ticket"),
            ("Quels sont vos numéros de compte ?", "11112222 et 33334444", "account"),
            ("Wie lauten Ihre Kundennummern?", "5520187 und 5520199", "customer_id"),
            ("Wat zijn uw klantnummers?", "5520187 en 5520199", "customer_id"),
            ("Which tickets are still open?", "INC0012001 and INC0012002", "ticket"),
        ],
    )
    def test_a_request_in_the_plural(self, asked: str, reply: str, kind: str):
        found = ledger(agent(asked), customer(reply))
        assert [e.kind for e in found] == [kind, kind]
        assert len(current_facts(found)) == 2

    @pytest.mark.parametrize(
        "text",
        [
            "tengo dos tickets abiertos: 55012 y 55087",
            "j'ai deux tickets ouverts : 88213 et 88231",
            "ich habe zwei Tickets: 55012 und 55087",
            "ik heb twee tickets: 55012 en 55087",
        ],
    )
    def test_a_count_before_the_values(self, text: str):
        assert [e.kind for e in ledger(customer(text))] == ["ticket", "ticket"]


class TestTheNounOfAKindInAQuestionIsTheRequest:
    """An agent's question that names a kind's noun asks for it, whatever the wording around it."""

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("ok, and the name?", "sure its Tomasz Łęcki", "Tomasz Łęcki"),
            ("can u send ur name pls", "yeah it's Kofi Boateng", "Kofi Boateng"),
            ("what name is the booking under?", "Siobhán O'Halloran", "Siobhán O'Halloran"),
            ("Ihr Name?", "das ist Özlem Şahin", "Özlem Şahin"),
            ("Votre nom ?", "c'est Zoé Lefèvre", "Zoé Lefèvre"),
            ("¿Su nombre?", "es Íñigo Martínez", "Íñigo Martínez"),
            ("Uw naam?", "Sanne de Vries", "Sanne de Vries"),
            ("what's the name on the card?", "Helen Brooks", "Helen Brooks"),
        ],
    )
    def test_a_name(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply)) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply", "fact"),
        [
            ("and your membership?", "M-448210", ("member_number", "M-448210")),
            ("Ihre Mitgliedschaft?", "M-448210", ("member_number", "M-448210")),
            ("which account?", "55012398", ("account", "55012398")),
            ("votre compte ?", "55012398", ("account", "55012398")),
        ],
    )
    def test_another_kind(self, asked: str, reply: str, fact: tuple[str, str]):
        assert facts(agent(asked), customer(reply)) == [fact]

    @pytest.mark.parametrize(
        ("asked", "reply"),
        [
            ("what's your company name?", "Blue Harbour"),
            ("what is the name of the hotel?", "Grand Palace"),
            ("what's your pet's name?", "Biscuit"),
            ("Wie ist der Name der Straße?", "Lindenweg"),
            ("Quel est le nom de votre chien ?", "Rex"),
            ("¿Cuál es el nombre de la calle?", "Gran Vía"),
            ("Wat is de naam van het hotel?", "Zeezicht"),
        ],
    )
    def test_the_name_of_something_else(self, asked: str, reply: str):
        assert facts(agent(asked), customer(reply)) == []
