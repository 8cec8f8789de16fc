"""Research tooling: the evaluation, the benchmarks and the training export.

The lab uses the appliance as a client would (through :func:`appliance.app.build` and the parts it
hands over); nothing in the product imports it, so ``appliance serve`` never loads matplotlib or
the benchmarks. ``eval/`` replays dialogues and scores the policies, ``bench/`` measures one
property each, ``export`` writes fine-tuning examples; the modules at this level are what several
of them share (``dialogues``, ``harness``, ``stats``, ``progress``) and the lab's commands (``cli``).
"""
