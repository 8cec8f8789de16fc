"""Japanese."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(
    code="ja",
    regions=("JP",),
    recall=("もう一度", "さっき"),
    names=Names(self_cues=("私の名前は",), self_hints=("私",)),
)
