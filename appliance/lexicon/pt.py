"""Portuguese."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(
    code="pt",
    regions=("PT", "BR"),
    recall=("novamente", "de novo"),
    names=Names(
        self_cues=(r"meu\s+nome\s+é", r"me\s+chamo"),
        self_hints=("nome", "chamo"),
        particles=("da", "dos", "de"),
        part_labels=("sobrenome", "apelido"),
        holder_cues=(r"(?:em|no)\s+nome\s+de",),
    ),
)
