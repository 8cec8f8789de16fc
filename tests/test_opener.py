"""appliance.facts.opener: a yes that the answer's own statement takes back, in five languages."""

from __future__ import annotations

import pytest

from appliance.facts.opener import settled


@pytest.mark.parametrize(
    ("answer", "kept", "dropped"),
    [
        (
            "Yes, dogs are not allowed at the Corridor Restaurant.",
            "Dogs are not allowed at the Corridor Restaurant.",
            "Yes,",
        ),
        (
            "Yes, Haas-Lilienthal House doesn't accept Apple Pay.",
            "Haas-Lilienthal House doesn't accept Apple Pay.",
            "Yes,",
        ),
        ("Yes. Walk-ins cannot be served.", "Walk-ins cannot be served.", "Yes."),
        ("yeah, the branch is no longer open on Saturdays", "The branch is no longer open on Saturdays", "yeah,"),
        ("Ja, Hunde sind in der Filiale nicht erlaubt.", "Hunde sind in der Filiale nicht erlaubt.", "Ja,"),
        ("Ja, dafür gibt es keine Gebühr.", "Dafür gibt es keine Gebühr.", "Ja,"),
        ("Oui, les chiens ne sont pas admis.", "Les chiens ne sont pas admis.", "Oui,"),
        ("Oui, l'agence n'ouvre jamais le dimanche.", "L'agence n'ouvre jamais le dimanche.", "Oui,"),
        ("Sí, no aceptan perros.", "No aceptan perros.", "Sí,"),
        ("Ja, honden zijn niet toegestaan.", "Honden zijn niet toegestaan.", "Ja,"),
    ],
)
def test_a_yes_its_statement_takes_back_is_dropped(answer: str, kept: str, dropped: str):
    assert settled(answer) == (kept, dropped)


@pytest.mark.parametrize(
    "answer",
    [
        "Yes, they accept Apple Pay.",
        "Yes, but not on Sundays.",  # a limit, not a no
        "Yes, except on public holidays, when we are not open.",
        "Yes, we open at 9, not at 8.",  # the negation is in a later clause
        "Yes, there is no charge for WiFi.",  # "no charge" is the yes
        "Yesterday the branch did not open.",  # no yes at all
        "Dogs are not allowed.",
        "Ja, aber nicht am Sonntag.",
        "Oui, mais pas le dimanche.",
        "Sí, pero no los domingos.",
        "Ja, maar niet op zondag.",
        "",
    ],
)
def test_a_yes_that_stands_is_kept(answer: str):
    assert settled(answer) == (answer, "")
