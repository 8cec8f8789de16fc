"""The policies by name, configured from the ``[context]`` section.

Policies are chosen in config and per session, so that the same sessions can be compared under
each; this is the one place that knows them all and which of the section's settings each takes.
"""

from __future__ import annotations

from appliance.config import ContextSettings, Settings
from appliance.context.base import ContextPolicy
from appliance.context.baselines import RawPolicy, SeedQAPolicy, SeedTopicsPolicy, ThresholdPolicy
from appliance.context.rolling import RollingPolicy
from appliance.protocols import TokenCounter


def make_policies(
    context: ContextSettings, threshold_tokens: int, threshold_counter: TokenCounter | None = None
) -> dict[str, ContextPolicy]:
    """Every policy, configured by ``context``. ``threshold_tokens`` is the ``threshold`` policy's
    trigger as the settings resolve it (:attr:`~appliance.config.Settings.threshold_tokens`), and
    ``threshold_counter`` what counts it (for example OpenAI tokens; by default the budget's own counter)."""
    policies: list[ContextPolicy] = [
        RawPolicy(),
        SeedTopicsPolicy(context.seed_recent_pairs, context.seed_older_pairs, chars=context.seed_topic_chars),
        SeedQAPolicy(
            context.seed_recent_pairs,
            context.seed_older_pairs,
            question_chars=context.seed_question_chars,
            answer_chars=context.seed_answer_chars,
        ),
        ThresholdPolicy(threshold_tokens, threshold_counter),
        RollingPolicy(context.recent_pairs, context.question_reserve_tokens),
    ]
    return {p.name: p for p in policies}


def _defaults() -> dict[str, ContextPolicy]:
    settings = Settings()
    return make_policies(settings.context, settings.threshold_tokens)


# Every policy as the default settings configure it (tests and the lab's defaults; the appliance
# builds its own from its settings, in appliance.app).
POLICIES: dict[str, ContextPolicy] = _defaults()
