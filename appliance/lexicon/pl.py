"""Polish."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(code="pl", regions=("PL",), names=Names(self_cues=(r"nazywam\s+się",), self_hints=("nazywam",)))
