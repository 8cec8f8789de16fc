"""The benchmarks: each measures one property and prints ratios measured side by side in one run.

``guards`` (the entity check and the stage guess on real dialogues), ``facts`` (the ledger alone, on
a written table and the dev probes), ``context`` (the early facts each context policy keeps, and at
what size), ``load`` (concurrent sessions against a running daemon), ``perf`` (the appliance's own
cost beside the model's), ``slow-clients`` (one client's many slow connections against a real
daemon, and a second client's answers meanwhile), ``lookup`` (prompt-lookup decoding on and off, on
grounded answers, read-backs and ordinary ones).
"""
