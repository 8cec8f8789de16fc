"""Turkish."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(code="tr", regions=("TR",), names=Names(self_cues=(r"benim\s+adım",), self_hints=("adım",)))
