"""The audit trail (issue 42): one content-free, hash-chained record per answer and per operator action.

The store writes each record in the transaction of the fact it reports (:mod:`.record` builds and
seals it), so a record exists exactly when its fact does; a :class:`~.ship.Shipper` then copies the
records, off the hot path, to a JSON-lines file with rotation and to syslog (:mod:`.sinks`), and
:func:`~.verify.verify` walks the files and names the first broken link.

A leaf: it imports only the standard library and the other leaves, so the store can seal records
inside its transaction and the CLI can verify files without opening anything else.
"""
