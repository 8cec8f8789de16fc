"""Hindi."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(code="hi", regions=("IN",), names=Names(self_cues=(r"मेरा\s+नाम",), self_hints=("नाम",)))
