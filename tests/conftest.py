"""Fixtures: every path of the app points at the test's tmp_path; the models are the repo's."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.app import pipeline_settings
from appliance.config import Settings, load_settings
from appliance.context import POLICIES
from appliance.store import Store
from appliance.turn.pipeline import Pipeline

from .fakes import FakeResponder
from .support import write_config


@pytest.fixture(autouse=True)
def _real_models_only_where_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that loads a real GGUF in this process must carry the real_model marker, so that the
    fast lane (``scripts/test --fast``) really runs without one."""
    if request.node.get_closest_marker("real_model"):
        return
    from appliance.models import llama

    def refuse(self: object, *args: object, **kwargs: object) -> None:
        raise AssertionError(f"{request.node.nodeid} loads a real model: mark it @pytest.mark.real_model")

    monkeypatch.setattr(llama.LlamaChatModel, "__init__", refuse)


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return write_config(tmp_path)


@pytest.fixture
def settings(config_file: Path) -> Settings:
    return load_settings(config_file, env={})


@pytest.fixture
def store(tmp_path: Path):
    s = Store.open(tmp_path / "store.db")
    yield s
    s.close()


@pytest.fixture
def fake_responder() -> FakeResponder:
    return FakeResponder()


@pytest.fixture
def pipeline(settings: Settings, store: Store, fake_responder: FakeResponder) -> Pipeline:
    return Pipeline(store, fake_responder, POLICIES, pipeline_settings(settings))
