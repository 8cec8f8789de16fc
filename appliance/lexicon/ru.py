"""Russian."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(
    code="ru", regions=("RU",), names=Names(self_cues=(r"меня\s+зовут", r"мо[её]\s+имя"), self_hints=("зовут", "имя"))
)
