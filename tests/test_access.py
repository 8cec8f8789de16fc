"""Which sessions a kiosk or integration token may reach: kept with the session, so it survives a restart."""

from __future__ import annotations

import pytest

from appliance.errors import SessionNotFound
from appliance.serve.auth import Access, Principal
from appliance.store import Store


def test_ownership_survives_a_restart_and_strangers_get_404(store: Store):
    kiosk, other = Principal("kiosk", "token:aaaa"), Principal("kiosk", "token:bbbb")
    session = store.create_session(policy="raw")
    Access(lambda reason, status: None, store).created(kiosk, session.id)
    after_restart = Access(lambda reason, status: None, store)  # a new daemon: nothing cached
    after_restart.check(kiosk, "talk", session.id)
    refused: list[str] = []
    with pytest.raises(SessionNotFound):
        Access(lambda reason, status: refused.append(reason), store).check(other, "talk", session.id)
    assert refused == ["not_owner"]
