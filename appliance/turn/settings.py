"""What the turn is told: the pipeline's settings, resolved from the configuration by the composition
root (:func:`appliance.app.pipeline_settings`), and the session services' part of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from appliance.facts.vocabulary import Vocabulary
from appliance.turn.sessions import SessionRules
from appliance.types import Sampling, Stage


@dataclass(frozen=True)
class PipelineSettings:
    """What the pipeline is told, resolved from the settings by the composition root
    (:func:`appliance.app.pipeline_settings`). No defaults here: the configuration holds them."""

    system_prompt: str  # chat.system_prompt
    instruction: str  # chat.instruction, then stage.NEVER_ASK (stage.standing)
    budget_tokens: int  # context.budget_tokens
    max_message_chars: int  # chat.max_message_chars
    default_policy: str  # context.policy
    sampling: Sampling  # the responder's
    early_turns: int  # stage.early_turns
    late_cues: Mapping[str, Sequence[str]]  # stage.late_cues, merged with the built-in lists
    open_cues: Mapping[str, Sequence[str]]  # stage.open_cues, merged with the built-in lists
    instructions: Mapping[Stage, str]  # stage.instructions over the built-in ones
    guard: str  # guard.policy
    redact_phrase: str  # guard.redact_phrase
    stream: str  # guard.stream: checked (the client reads only what the checker passed) or raw
    recall_k: int  # recall.k
    recall_min_score: float  # recall.min_score
    # facts.request_cues/readback_cues over the lexicons' own, and what is masked (privacy), compiled once.
    vocabulary: Vocabulary
    mask_secrets: bool  # privacy.mask_secrets: secrets are masked before anything is stored
    safe_answers: Mapping[str, str]  # privacy.safe_answer over the built-in texts, by language
    passage_tokens: int  # the settings' passage_tokens: knowledge.budget_tokens within context.budget_tokens
    grounded_instruction: str  # knowledge.instruction, else the built-in one: the directive of a turn with passages
    grounded_temperature: float  # knowledge.temperature: the sampling temperature of a turn with passages
    not_found: Mapping[str, str]  # knowledge.not_found, by language
    min_answerable: float  # knowledge.min_answerable: the least judged probability that the passages answer
    covered: Mapping[str, str]  # knowledge.covered over the built-in texts, by language
    languages: Sequence[str]  # summarizer.languages: the conversation's language is one of them (the first by default)


def session_rules(settings: PipelineSettings) -> SessionRules:
    """The session services' part of the pipeline's settings."""
    return SessionRules(settings.default_policy, settings.max_message_chars, settings.vocabulary, settings.mask_secrets)
