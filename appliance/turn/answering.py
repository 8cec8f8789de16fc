"""One answer generated, checked and guarded: the turn's step between its prompt and its record.

Under ``guard.stream = "checked"`` the client receives only what the checker passed, as it passes
(:mod:`appliance.turn.stream`), and what it received is the answer kept: a unit that fails under
``regenerate`` is answered once more with the stricter directive, continuing the text shown where
the model can (``continues``), else only where nothing was shown. An answer held whole instead (a
read-back question, whose values the guard may supply from the ledger; a refiner's rewrite) is
guarded as a whole (:func:`appliance.turn.guard.apply`) and then sent. Under ``raw`` the client
receives the first generation as it comes, and the guard acts after.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence

from appliance.protocols import OnToken
from appliance.turn import guard
from appliance.turn.plan import Parts, TurnPlan
from appliance.turn.stream import CheckedStream, Stopped, streamed_check
from appliance.turn.timing import TurnTimer
from appliance.types import Generation, GuardAction, Message, Prompt


def answer(
    plan: TurnPlan,
    prompt: Prompt,
    rules: guard.Rules,
    timer: TurnTimer,
    *,
    stream: str,
    on_token: OnToken | None,
    cancel: threading.Event | None,
) -> tuple[Generation, guard.Guarded]:
    """The answer to ``prompt``: the first generation, and the answer kept (``stream`` is
    ``guard.stream``)."""
    raw = stream == "raw"
    if not raw and not plan.wanted and rules.refiner is None:
        return streamed(plan, prompt, rules, timer, on_token=on_token, cancel=cancel)
    first = rules.parts.model(plan).generate(
        prompt.messages, plan.sampling, on_token=on_token if raw else None, cancel=cancel, cache_key=plan.cache_key
    )
    with timer.phase("check"):
        checked = plan.check(first.text)
    with timer.phase("repair"):
        kept = guard.apply(plan, first, checked, rules)
    if not raw and on_token is not None:
        on_token(kept.answer.text)
    return first, kept


def streamed(
    plan: TurnPlan,
    prompt: Prompt,
    rules: guard.Rules,
    timer: TurnTimer,
    *,
    on_token: OnToken | None,
    cancel: threading.Event | None,
) -> tuple[Generation, guard.Guarded]:
    """The answer generated through a checked stream: the first generation (as far as the stream let
    it run) and the answer kept, which is exactly the text the client received."""
    continues = bool(getattr(rules.parts.model(plan), "continues", False))
    checked = CheckedStream(plan, rules, on_token, continues=continues)
    first = _through(checked, plan, rules.parts, prompt.messages, cancel)
    with timer.phase("check"):
        out = checked.outcome()
        said = plan.check(out.model_text)
    if not checked.retry:
        return first, guard.Guarded(dataclasses.replace(first, text=out.text), streamed_check(plan, out, said))
    with timer.phase("repair"):
        again = CheckedStream(plan, rules, on_token, may_retry=False, shown=out.text)
        strict = rules.parts.prompt(plan, guard.strict_spec(plan, checked.retry)).messages
        if out.text:  # the retry continues what the customer has read
            strict = (*strict, Message("assistant", out.text))
        second = _through(again, plan, rules.parts, strict, cancel)
        kept = again.outcome()
        result = streamed_check(plan, kept, plan.check(kept.model_text))
        action = result.action if result.action not in (GuardAction.NONE, GuardAction.FLAG) else GuardAction.REGENERATE
        result = dataclasses.replace(result, action=action, original=out.model_text, original_findings=said.findings)
    return first, guard.Guarded(dataclasses.replace(second, text=kept.text), result)


def _through(
    checked: CheckedStream, plan: TurnPlan, parts: Parts, messages: Sequence[Message], cancel: threading.Event | None
) -> Generation:
    """The answer to ``messages`` generated into ``checked``: the generation, or, where the stream
    ended it (:class:`~appliance.turn.stream.Stopped`), the generation as far as it went."""
    start = time.perf_counter()
    model = parts.model(plan)
    try:
        return model.generate(messages, plan.sampling, on_token=checked.feed, cancel=cancel, cache_key=plan.cache_key)
    except Stopped:
        took = time.perf_counter() - start
        return Generation(
            text=checked.raw.strip(),
            model=model.name,
            prompt_tokens=parts.counter(plan).count(messages),
            completion_tokens=checked.pieces,
            ttft_s=checked.first_s or took,
            total_s=took,
            finish_reason="guard",
        )
