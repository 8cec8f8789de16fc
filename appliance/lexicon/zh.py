"""Chinese."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(
    code="zh",
    regions=("CN",),
    recall=("再", "刚才", "之前"),
    names=Names(self_cues=("我叫", "我的名字是", "我是"), self_hints=("我",)),
)
