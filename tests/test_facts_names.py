"""Names: found by their cue, their place in the conversation and their shape, never from a list of
people's names."""

from __future__ import annotations

import pytest

from .said import agent, customer, facts


class TestWordsOfDatesAndPlaces:
    """A word that is also a weekday, a month or a place's is a name's where the customer introduces
    themselves or a name was asked for."""

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("My name is Marta Lunes", "Marta Lunes"),
            ("Me llamo Marta Lunes y tengo un problema", "Marta Lunes"),
            ("My name is Domingo Pérez", "Domingo Pérez"),
            ("je m'appelle Jean Mardi", "Jean Mardi"),
            ("Ich heiße Anna Freitag", "Anna Freitag"),
            ("mijn naam is Els Zondag", "Els Zondag"),
            ("I am Mardi Domingo, calling about my order", "Mardi Domingo"),
            ("My name is April", "April"),
            ("My name is Florence Madrid", "Florence Madrid"),
        ],
    )
    def test_after_a_cue_of_ones_own_name(self, text: str, name: str):
        assert facts(customer(text), kinds=("name", "date")) == [("name", name)]

    @pytest.mark.parametrize(
        ("asked", "reply", "name"),
        [
            ("Could I get your name?", "Marta Lunes", "Marta Lunes"),
            ("What is your name?", "June Sunday", "June Sunday"),
            ("Your name, please?", "Paris Hilton", "Paris Hilton"),
            ("Who am I speaking with?", "Sydney Park", "Sydney Park"),
            ("Could I have your name?", "John Smith Thanks", "John Smith"),
            ("Wie ist Ihr Name?", "Anna Freitag, danke", "Anna Freitag"),
            ("¿Su nombre, por favor?", "Lucía Martes", "Lucía Martes"),
            ("Votre nom, s'il vous plaît ?", "Paul Avril", "Paul Avril"),
            ("Wat is uw naam?", "Sanne Maandag", "Sanne Maandag"),
        ],
    )
    def test_in_the_reply_to_a_name_request(self, asked: str, reply: str, name: str):
        assert facts(agent(asked), customer(reply), kinds=("name", "date")) == [("name", name)]

    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("Hi, I am Tom. Friday works for me", [("name", "Tom"), ("date", "Friday")]),
            ("Can we move it to Lunes?", [("date", "Lunes")]),
            ("Dr Johnson Saturday 10am", [("name", "Johnson"), ("date", "Saturday")]),
        ],
    )
    def test_elsewhere_a_day_stays_a_date(self, text: str, found: list[tuple[str, str]]):
        assert facts(customer(text), kinds=("name", "date")) == found
