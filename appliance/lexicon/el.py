"""Greek."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(
    code="el", regions=("GR",), names=Names(self_cues=(r"με\s+λένε", "ονομάζομαι"), self_hints=("λένε", "ονομάζομαι"))
)
