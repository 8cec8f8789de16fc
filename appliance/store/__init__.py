"""The SQLite store: the only package that imports sqlite_utils.

One file, WAL mode, named append-only migrations applied on open (:mod:`~appliance.store.migrations`).
The transcript is append-only: triggers refuse any UPDATE or DELETE of a turn. An answered turn is
written in one transaction, so it is stored whole or not at all (:class:`~appliance.store.database.Store`).
"""

from appliance.store.database import Store
from appliance.store.floor import Logged

__all__ = ["Logged", "Store"]
