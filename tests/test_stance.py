"""Which of yes and no a text says (``appliance.facts.stance``): an answer, and a document's own answer."""

from __future__ import annotations

import pytest

from appliance.facts.stance import first_sentence, opens, stance


@pytest.mark.parametrize(
    ("text", "said", "opened"),
    [
        ("No, you must use public street parking nearby.", "no", True),
        ("Yes. The park allows dogs on a lead.", "yes", True),
        ("Yes, but not on Sundays.", "yes", True),  # a yes with a limit
        ("Unfortunately, the branch is closed on Sundays.", "no", True),
        ("Apple Pay is not an accepted form of payment here.", "no", False),
        ("The museum doesn't allow dogs.", "no", False),
        ("There is no WiFi at the welcome centre.", "no", False),
        ("The lounge has never had a television.", "no", False),
        ("Bike parking is available at the restaurant.", "yes", False),
        ("Sure, they do not accept Google Pay.", "no", False),  # courtesy, then a no
        ("The branch opens at 9. It does not open on Sundays.", "yes", False),  # the first sentence decides
        ("Nobody answers the phone after six.", "no", False),
        ("Yesterday's rates were lower.", "yes", False),  # "yes" inside a word is not an opening yes
        ("No charge applies.", "no", False),  # a bare "no" before a noun reads as a no, not an opening one
        ("Nein, wir haben sonntags geschlossen.", "no", True),
        ("Ja, Sie können mit Karte zahlen.", "yes", True),
        ("Die Filiale hat keine Parkplätze.", "no", False),
        ("Non, l'agence n'ouvre pas le dimanche.", "no", True),
        ("L'agence n'accepte pas les chèques.", "no", False),
        ("Oui, un conseiller parle français.", "yes", True),
        ("No aceptamos cheques.", "no", False),
        ("Sí, aceptamos tarjetas.", "yes", True),
        ("Nee, er is geen parkeerplaats.", "no", True),
        ("De bank heeft geen kluizen.", "no", False),
    ],
)
def test_stance_and_whether_the_text_opens_with_a_yes_or_a_no(text: str, said: str, opened: bool):
    assert stance(text) == said
    assert opens(text) is opened


def test_the_first_sentence_ends_at_its_stop():
    assert first_sentence("  Yes. It is. ") == "Yes."
    assert first_sentence("No sentence end") == "No sentence end"
