"""Arabic."""

from appliance.lexicon.schema import Lexicon, Names

# The particles of Arabic names, in Malay names too ("binti").
LEXICON = Lexicon(
    code="ar",
    names=Names(self_cues=("اسمي",), self_hints=("اسمي",), particles=("al", "bin", "binti", "ibn")),
)
