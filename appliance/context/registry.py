"""The policies by name, configured from the ``[context]`` section.

Policies are chosen in config and per session, so that the same sessions can be compared under
each; this is the one place that knows them all and their tunables.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from appliance.context.base import ContextPolicy
from appliance.context.baselines import RawPolicy, SeedQAPolicy, SeedTopicsPolicy, ThresholdPolicy
from appliance.context.rolling import RollingPolicy
from appliance.types import TokenCounter


@dataclass(frozen=True)
class ContextOptions:
    """The policies' tunables (``[context]`` in the config). The seeds' own numbers are their defaults."""

    recent_pairs: int = 4
    question_reserve_tokens: int = 64
    seed_recent_pairs: int = 8
    seed_older_pairs: int = 12
    seed_topic_chars: int = 100
    seed_question_chars: int = 150
    seed_answer_chars: int = 100
    threshold_tokens: int = 518  # the appliance's default budget (768) less the summary's cap (250)

    @classmethod
    def from_section(cls, section: object) -> ContextOptions:
        """The options from any object with the same attribute names (the config's ``[context]``)."""
        return cls(**{f.name: getattr(section, f.name) for f in fields(cls)})


def make_policies(
    options: ContextOptions = ContextOptions(), threshold_counter: TokenCounter | None = None
) -> dict[str, ContextPolicy]:
    """Every policy, configured; ``threshold_counter`` counts the ``threshold`` policy's trigger
    (for example OpenAI tokens), and defaults to the budget's own counter."""
    policies: list[ContextPolicy] = [
        RawPolicy(),
        SeedTopicsPolicy(options.seed_recent_pairs, options.seed_older_pairs, chars=options.seed_topic_chars),
        SeedQAPolicy(
            options.seed_recent_pairs,
            options.seed_older_pairs,
            question_chars=options.seed_question_chars,
            answer_chars=options.seed_answer_chars,
        ),
        ThresholdPolicy(options.threshold_tokens, threshold_counter),
        RollingPolicy(options.recent_pairs, options.question_reserve_tokens),
    ]
    return {p.name: p for p in policies}


POLICIES: dict[str, ContextPolicy] = make_policies()
