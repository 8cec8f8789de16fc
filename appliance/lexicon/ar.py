"""Arabic."""

from appliance.lexicon.schema import Lexicon, Names

# The particles of Arabic names, in Malay names too ("binti"), and as North Africa writes them ("El Idrissi").
LEXICON = Lexicon(
    code="ar",
    regions=("EG", "SA"),
    names=Names(self_cues=("اسمي",), self_hints=("اسمي",), particles=("al", "el", "bin", "binti", "ibn", "abu")),
)
