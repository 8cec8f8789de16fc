"""Irish."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(
    code="ga",
    regions=("IE",),
    # "Siobhán Ó Briain", "Aoife Ní Bhriain": particles, written in lower case too
    names=Names(particles=("ó", "ní", "nic", "uí")),
)
