from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from appliance.config import DEFAULT_FILE, ROOT, Settings, load_settings, reference_table
from appliance.errors import ConfigError

from .support import write_config


class TestLoading:
    def test_repository_default_file_is_valid_and_matches_field_defaults(self):
        settings = load_settings(DEFAULT_FILE, env={})
        defaults = Settings()
        assert settings.responder == defaults.responder
        assert settings.context == defaults.context
        assert settings.database == ROOT / "data" / "appliance.db"

    def test_relative_paths_start_at_the_config_file(self, tmp_path: Path):
        cfg = tmp_path / "c.toml"
        cfg.write_text('[paths]\ndatabase = "state/x.db"\n')
        assert load_settings(cfg, env={}).database == tmp_path / "state" / "x.db"

    def test_every_path_setting_is_absolute_from_the_config_files_folder(self, tmp_path: Path):
        cfg = tmp_path / "etc" / "c.toml"
        cfg.parent.mkdir()
        cfg.write_text(
            '[server]\nsocket = "run/a.sock"\ntoken_file = "op.token"\n[server.tokens]\n"k.token" = "kiosk"\n'
            '[tui]\ntoken_file = "~/t.token"\n[responder]\ntoken_file = "/abs/r.token"\n'
            '[context]\ntiktoken_file = "ranks.tiktoken"\n'
        )
        settings = load_settings(cfg, env={})
        base = tmp_path / "etc"
        assert settings.server.socket == str(base / "run" / "a.sock")
        assert settings.server.token_file == str(base / "op.token")
        assert settings.server.tokens == {str(base / "k.token"): "kiosk"}
        assert settings.tui.token_file == str(Path.home() / "t.token")
        assert settings.responder.token_file == "/abs/r.token"
        assert settings.context.tiktoken_file == str(base / "ranks.tiktoken")
        assert settings.summarizer.token_file == ""  # none stays none
        assert settings.models_dir == base / "models"

    def test_paths_from_the_command_line_and_environment_start_there_too(self, tmp_path: Path):
        cfg = write_config(tmp_path)
        settings = load_settings(
            cfg,
            env={"APPLIANCE__TUI__TOKEN_FILE": "tui.token"},
            overrides=["server.token_file=op.token"],
            options={"server.socket": "a.sock", "server.port": 9},
        )
        assert settings.tui.token_file == str(tmp_path / "tui.token")
        assert settings.server.token_file == str(tmp_path / "op.token")
        assert (settings.server.socket, settings.server.port) == (str(tmp_path / "a.sock"), 9)

    def test_a_commands_options_are_named_in_errors(self, tmp_path: Path):
        with pytest.raises(ConfigError, match="command line: server.port"):
            load_settings(write_config(tmp_path), env={}, options={"server.port": -1})

    def test_environment_selects_the_file(self, tmp_path: Path):
        cfg = write_config(tmp_path, "[responder]\nn_threads = 3\n")
        assert load_settings(None, env={"APPLIANCE_CONFIG": str(cfg)}).responder.n_threads == 3

    def test_precedence_command_line_over_environment_over_file(self, tmp_path: Path):
        cfg = write_config(tmp_path, "[responder]\nn_threads = 3\ntop_k = 7\n")
        env = {"APPLIANCE__RESPONDER__N_THREADS": "5", "APPLIANCE__RESPONDER__TOP_K": "9"}
        settings = load_settings(cfg, env=env, overrides=["responder.n_threads=6"])
        assert settings.responder.n_threads == 6
        assert settings.responder.top_k == 9

    def test_settings_are_frozen(self, settings: Settings):
        with pytest.raises(ValidationError):
            settings.responder.n_ctx = 1  # type: ignore[misc]


class TestRejection:
    def check(self, tmp_path: Path, body: str, *expected: str) -> str:
        cfg = tmp_path / "bad.toml"
        cfg.write_text(body)
        with pytest.raises(ConfigError) as info:
            load_settings(cfg, env={})
        message = str(info.value)
        assert str(cfg) in message
        for part in expected:
            assert part in message
        return message

    @pytest.mark.parametrize(
        ("repack", "parallel", "repacked"),
        [("auto", 1, False), ("auto", 4, True), ("on", 1, True), ("off", 4, False)],
    )
    def test_weights_are_repacked_when_asked_or_when_batched(self, repack: str, parallel: int, repacked: bool):
        settings = load_settings(
            env={"APPLIANCE__RESPONDER__REPACK": repack, "APPLIANCE__RESPONDER__PARALLEL": str(parallel)}
        )
        assert settings.responder.repacked is repacked

    def test_unknown_key_suggests_the_nearest(self, tmp_path: Path):
        self.check(tmp_path, "[responder]\nn_thread = 2\n", "responder.n_thread", "did you mean 'responder.n_threads'")

    def test_unknown_section_suggests_the_nearest(self, tmp_path: Path):
        self.check(tmp_path, "[responer]\nn_ctx = 2\n", "'responer'", "did you mean 'responder'")

    def test_wrong_type(self, tmp_path: Path):
        self.check(tmp_path, '[responder]\nn_ctx = "big"\n', "responder.n_ctx", "valid integer")

    def test_out_of_range(self, tmp_path: Path):
        self.check(tmp_path, "[responder]\ntemperature = 9.0\n", "responder.temperature", "less than or equal to 2")

    def test_unknown_policy(self, tmp_path: Path):
        self.check(tmp_path, '[context]\npolicy = "everything"\n', "context.policy")

    def test_unknown_weights_layout(self, tmp_path: Path):
        self.check(tmp_path, '[responder]\nrepack = "yes"\n', "responder.repack", "'auto', 'on' or 'off'")

    def test_budget_must_leave_room_for_the_answer(self, tmp_path: Path):
        self.check(
            tmp_path,
            "[responder]\nn_ctx = 1024\nmax_tokens = 512\n[context]\nbudget_tokens = 900\n",
            "context.budget_tokens",
            "responder.n_ctx",
        )

    def test_malformed_toml(self, tmp_path: Path):
        self.check(tmp_path, "[responder\n", "not valid TOML")

    def test_environment_override_is_named_as_such(self, tmp_path: Path):
        cfg = write_config(tmp_path)
        with pytest.raises(ConfigError, match="environment: responder.top_k"):
            load_settings(cfg, env={"APPLIANCE__RESPONDER__TOP_K": "-4"})

    def test_missing_file(self, tmp_path: Path):
        with pytest.raises(ConfigError, match="config file not found"):
            load_settings(tmp_path / "nope.toml", env={})

    def test_cli_exits_2_naming_file_and_key(self, tmp_path: Path):
        cfg = tmp_path / "bad.toml"
        cfg.write_text("[chat]\nmax_mesage_chars = 5\n")
        done = subprocess.run(
            [sys.executable, "-m", "appliance", "--config", str(cfg), "config", "check"],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert done.returncode == 2
        assert str(cfg) in done.stderr and "did you mean 'chat.max_message_chars'" in done.stderr


class TestReference:
    def test_the_configuration_doc_documents_every_key(self):
        doc = (ROOT / "docs" / "configuration.md").read_text()
        table = reference_table()
        assert table in doc, "docs/configuration.md's table is stale: run scripts/update-docs"
        keys = set(re.findall(r"^\| `([a-z_]+\.[a-z_]+)`", table, re.M))
        expected = {
            f"{s}.{k}" for s, m in Settings.model_fields.items() if not m.exclude for k in m.annotation.model_fields
        }  # type: ignore[union-attr]
        assert keys == expected
