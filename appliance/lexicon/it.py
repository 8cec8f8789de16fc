"""Italian."""

from appliance.lexicon.schema import Lexicon, Names

LEXICON = Lexicon(
    code="it",
    regions=("IT",),
    recall=("di nuovo", "prima", "ancora"),
    names=Names(
        self_cues=(r"mi\s+chiamo", r"il\s+mio\s+nome\s+è"),
        self_hints=("chiamo", "nome"),
        particles=("della", "da", "di"),
        part_labels=("cognome",),
        holder_cues=(r"a\s+nome\s+di",),
    ),
)
