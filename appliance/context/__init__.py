"""Context: what of the conversation goes into each answer's prompt, within the token budget.

``base`` holds the prompt's shape and the policy protocol, ``baselines`` the ``raw`` and seed
policies (``units``: how they give way), ``rolling`` the appliance's own (``giveway`` fits its parts to the budget, ``trim`` cuts
its summary's middle), ``registry`` the policies by name; ``tokens`` counts tokens and ``recall``
finds the older turns a question points back to. Callers import the policy API from here:
``from appliance.context import PromptSpec, make_policies``.
"""

from appliance.context.base import ContextPolicy, PromptSpec, asking, before_question
from appliance.context.baselines import RawPolicy, SeedQAPolicy, SeedTopicsPolicy, ThresholdPolicy
from appliance.context.registry import POLICIES, make_policies
from appliance.context.rolling import RollingPolicy

__all__ = [
    "POLICIES",
    "ContextPolicy",
    "PromptSpec",
    "asking",
    "before_question",
    "RawPolicy",
    "RollingPolicy",
    "SeedQAPolicy",
    "SeedTopicsPolicy",
    "ThresholdPolicy",
    "make_policies",
]
