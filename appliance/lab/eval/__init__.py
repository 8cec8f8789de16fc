"""``appliance eval``: replay real dialogues through the real pipeline and score what each policy keeps.

Why a replay and not a chat with the model: the dialogues' agent turns were written by people, so
every real turn is *recorded* (teacher forcing), which runs the ledger and the summary worker
exactly as in production, and the model is asked only where a question is scored. That keeps every
policy on the same transcript, turn for turn.

* At each probe (formats of ``shared/data/SOURCES.md``) the probe's question is answered without
  being stored. The probe's fact counts as *in context* when an expected value occurs in the
  messages actually sent to the model (compared lower-cased without spaces and commas), and the
  answer as *correct* when it states one in any form the entity normaliser equates ("October 8,
  1980" for "10/08/1980"); the data's exact-string score is kept beside it (``_exact``).
* At a few sampled customer turns (seeded per dialogue, the same turns for every policy) the
  appliance's answer is generated next to the real agent's reply, for latency, context size and the
  optional judge.
* Seeds are fixed and the summary worker is drained after every recorded turn, so runs repeat.

The modules, in the order a run uses them: ``replay`` (one dialogue under one policy, through an
appliance built per replay), ``cache`` (each replay's points cached under a fingerprint of its
inputs: an interrupted run resumes), ``metrics`` (``report.json``, pure functions of the cached
points), ``judge`` (the optional model verdicts), ``report`` (``report.md``), ``plots`` (the PNGs),
and ``run`` (the command's flow).
"""

from appliance.lab.eval.report import format_summary
from appliance.lab.eval.run import EvalOptions, evaluate, run_eval

__all__ = ["EvalOptions", "evaluate", "format_summary", "run_eval"]
