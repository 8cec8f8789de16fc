"""The remote backend against a real OpenAI-compatible server: llama-cpp-python's own, on loopback,
serving the tiny SmolLM2-135M model and requiring a bearer token."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from appliance.app.loading import load_model
from appliance.config import ROOT, load_settings
from appliance.errors import Cancelled, ConfigError, GenerationError, ModelLoadError
from appliance.models.llama import LlamaChatModel
from appliance.models.remote import (
    MESSAGE_OVERHEAD,
    REPLY_OVERHEAD,
    RemoteChatModel,
    ServerTokenizer,
    choose_counter,
    open_remote,
    sse_event,
)
from appliance.store import Store
from appliance.types import Message, Sampling

from .support import MODELS_DIR, TEST_MODEL, free_port, stop_process, wait_until_ready, write_config

pytestmark = pytest.mark.real_model

GGUF = MODELS_DIR / "SmolLM2-135M-Instruct.Q4_1.gguf"
TOKEN = "test-token-7f3a9c"
SAMPLING = Sampling(temperature=0.0, max_tokens=24, seed=7)
MESSAGES = (
    Message("system", "You are a helpful agent at a service counter."),
    Message("user", "Hello! My booking reference is W9945XIS. Can I change the date?"),
)
TEXTS = (
    "Hello world",
    "My booking reference is W9945XIS and the amount is 12.50 EUR.",
    "Grüße aus Köln — ¿qué tal? 你好",
    "  leading and trailing spaces  \n",
)


@dataclass(frozen=True)
class Server:
    url: str  # the OpenAI API root, ending in /v1
    root: str


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(GGUF),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
                "--n_threads",
                "1",  # as the daemon tests: a second llama.cpp thread stalls on a shared 2-core box
                "--api_key",
                TOKEN,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    root = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, f"{root}/v1/models", log, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        yield Server(url=f"{root}/v1", root=root)
    finally:
        stop_process(proc, timeout=10)


@pytest.fixture(scope="module")
def local() -> LlamaChatModel:
    """The vocab-only copy: tokenizer and chat template, no weights."""
    return LlamaChatModel(GGUF, name=TEST_MODEL, n_ctx=2048, vocab_only=True)


@pytest.fixture(scope="module")
def model(server: Server, local: LlamaChatModel) -> RemoteChatModel:
    return RemoteChatModel(server.url, TEST_MODEL, n_ctx=2048, counter=local, token=TOKEN)


class TestGenerate:
    def test_streams_pieces_in_order_and_fills_the_generation(self, model: RemoteChatModel, local: LlamaChatModel):
        pieces: list[str] = []
        done = model.generate(MESSAGES, SAMPLING, on_token=pieces.append)
        assert len(pieces) > 1
        assert "".join(pieces).strip() == done.text and done.text
        assert done.model == TEST_MODEL
        assert done.finish_reason in ("stop", "length")
        # This server sends no usage while streaming, so the counts are the counter's, exactly.
        assert done.prompt_tokens == local.count(MESSAGES)
        assert 0 < done.completion_tokens <= SAMPLING.max_tokens + 1
        assert 0 < done.ttft_s <= done.total_s

    def test_cancel_mid_stream_raises_and_the_server_carries_on(self, model: RemoteChatModel):
        cancel = threading.Event()
        pieces: list[str] = []

        def on_token(piece: str) -> None:
            pieces.append(piece)
            if len(pieces) == 3:
                cancel.set()

        long = Sampling(temperature=0.0, max_tokens=200, seed=7)
        with pytest.raises(Cancelled):
            model.generate(
                [Message("user", "Count from 1 to 100, separated by commas.")], long, on_token=on_token, cancel=cancel
            )
        assert len(pieces) == 3  # nothing more was passed on after the cancel
        assert model.generate(MESSAGES, SAMPLING).text  # the stream was closed cleanly


class TestErrors:
    def test_unreachable_url_is_named_and_the_token_is_not(self, local: LlamaChatModel):
        url = f"http://127.0.0.1:{free_port()}/v1"
        wrong = RemoteChatModel(url, TEST_MODEL, n_ctx=2048, counter=local, token=TOKEN)
        with pytest.raises(GenerationError) as caught:
            wrong.generate(MESSAGES, SAMPLING)
        assert f"{url}/chat/completions" in str(caught.value) and TOKEN not in str(caught.value)

    def test_wrong_path_gives_the_status(self, server: Server, local: LlamaChatModel):
        wrong = RemoteChatModel(f"{server.root}/nope/v1", TEST_MODEL, n_ctx=2048, counter=local, token=TOKEN)
        with pytest.raises(GenerationError, match=r"/nope/v1/chat/completions answered HTTP 404"):
            wrong.generate(MESSAGES, SAMPLING)

    def test_wrong_token_is_refused_without_showing_it(self, server: Server, local: LlamaChatModel):
        wrong = RemoteChatModel(server.url, TEST_MODEL, n_ctx=2048, counter=local, token="not-the-token")
        with pytest.raises(GenerationError, match="HTTP 401") as caught:
            wrong.generate(MESSAGES, SAMPLING)
        assert "not-the-token" not in str(caught.value)


class TestEvents:
    """Server-sent-events lines as the servers write them."""

    def test_chunks_done_and_the_rest(self):
        assert sse_event('data: {"choices": []}', "u") == {"choices": []}
        assert sse_event("data:[DONE]", "u") == "done"
        assert sse_event(": ping", "u") is None and sse_event("", "u") is None and sse_event("event: x", "u") is None

    @pytest.mark.parametrize("line", ['data: {"error": {"message": "boom"}}', 'error: {"message": "boom"}'])
    def test_errors_name_the_url(self, line: str):
        with pytest.raises(GenerationError, match=r"^http://h/v1/chat/completions: .*boom"):
            sse_event(line, "http://h/v1/chat/completions")

    def test_garbage_is_an_error(self):
        with pytest.raises(GenerationError, match="not JSON"):
            sse_event("data: {nope", "u")


class TestCounting:
    def test_server_tokenizer_agrees_with_the_local_copy_on_plain_text(self, server: Server, local: LlamaChatModel):
        tokenizer = ServerTokenizer.probe(server.url, TEST_MODEL, token=TOKEN)
        assert tokenizer.dialect.server == "llama-cpp-python"
        for text in TEXTS:
            assert tokenizer.count_text(text) == local.count_text(text), text
        assert tokenizer.count_text("") == 0

    def test_server_estimate_of_a_chat_prompt_covers_the_exact_count(self, server: Server, local: LlamaChatModel):
        tokenizer = ServerTokenizer.probe(server.url, TEST_MODEL, token=TOKEN)
        exact, estimate = local.count(MESSAGES), tokenizer.count(MESSAGES)
        assert exact <= estimate <= exact + len(MESSAGES) * MESSAGE_OVERHEAD + REPLY_OVERHEAD

    def test_precedence(self, server: Server, local: LlamaChatModel):
        tokenizer = ServerTokenizer.probe(server.url, TEST_MODEL, token=TOKEN)
        assert choose_counter("auto", local=local, server=tokenizer, where="x") is local
        assert choose_counter("auto", local=None, server=tokenizer, where="x") is tokenizer
        assert choose_counter("server", local=local, server=tokenizer, where="x") is tokenizer
        assert choose_counter("local", local=local, server=None, where="x") is local
        with pytest.raises(ModelLoadError, match="no way to count"):
            choose_counter("auto", local=None, server=None, where="x")

    def test_a_local_copy_of_another_model_is_caught(self, server: Server):
        tokenizer = ServerTokenizer.probe(server.url, TEST_MODEL, token=TOKEN)
        with pytest.raises(ModelLoadError, match="not the one served"):
            choose_counter("auto", local=CharCounter(), server=tokenizer, where=server.url)

    def test_server_counting_without_a_server_names_the_url(self):
        root = f"http://127.0.0.1:{free_port()}"
        with pytest.raises(ModelLoadError) as caught:
            open_remote(f"{root}/v1", TEST_MODEL, n_ctx=2048, tokenizer="server")
        assert f"{root}/extras/tokenize" in str(caught.value)

    def test_server_counting_with_a_wrong_token_says_so(self, server: Server):
        with pytest.raises(ModelLoadError, match="HTTP 401: check the token_file") as caught:
            open_remote(server.url, TEST_MODEL, n_ctx=2048, token="not-the-token", tokenizer="server")
        assert "not-the-token" not in str(caught.value)


class CharCounter:
    """A counter for some other model: one token per character."""

    def count(self, messages: Sequence[Message]) -> int:
        return sum(len(m.content) for m in messages)

    def count_text(self, text: str) -> int:
        return len(text)


def remote_section(server: Server, section: str = "responder", **extra: str) -> str:
    lines = [
        f"[{section}]",
        'backend = "remote"',
        f'base_url = "{server.url}"',
        'token_file = "token.txt"',
        f'model = "{TEST_MODEL}"',
        *(f'{k} = "{v}"' for k, v in extra.items()),
    ]
    return "\n".join(lines) + "\n"


class TestBuild:
    def test_settings_require_a_url_for_remote(self, tmp_path: Path):
        cfg = write_config(tmp_path, '[summarizer]\nbackend = "remote"\n')
        with pytest.raises(ConfigError, match="summarizer.base_url must be an http"):
            load_settings(cfg, env={})

    def test_load_model_counts_with_the_verified_local_copy(self, server: Server, tmp_path: Path):
        (tmp_path / "token.txt").write_text(TOKEN + "\n")
        settings = load_settings(write_config(tmp_path, remote_section(server)), env={})
        built = load_model(settings, TEST_MODEL, settings.responder)
        assert isinstance(built, RemoteChatModel) and isinstance(built.counter, LlamaChatModel)
        assert built.generate(MESSAGES, SAMPLING).text

    def test_load_model_counts_with_the_server_when_told(self, server: Server, tmp_path: Path):
        (tmp_path / "token.txt").write_text(TOKEN)
        body = remote_section(server, "summarizer", remote_tokenizer="server", remote_model="smol")
        settings = load_settings(write_config(tmp_path, body), env={})
        built = load_model(settings, TEST_MODEL, settings.summarizer)
        assert isinstance(built, RemoteChatModel) and isinstance(built.counter, ServerTokenizer)
        assert built.name == "smol"

    def test_missing_token_file_is_named(self, server: Server, tmp_path: Path):
        settings = load_settings(write_config(tmp_path, remote_section(server)), env={})
        with pytest.raises(ConfigError, match="responder.token_file: cannot read"):
            load_model(settings, TEST_MODEL, settings.responder)


def test_chat_end_to_end_through_the_remote_server(server: Server, tmp_path: Path):
    (tmp_path / "token.txt").write_text(TOKEN)
    knobs = "n_ctx = 2048\nmax_tokens = 32\ntemperature = 0.2\nseed = 7\n"
    body = remote_section(server, remote_model="smol-remote") + knobs + "[recall]\nenabled = false\n"
    cfg = write_config(tmp_path, body)
    messages = ["Hello, my booking reference is W9945XIS.", "Can I change it to Sunday?"]
    done = subprocess.run(
        [sys.executable, "-m", "appliance", "--config", str(cfg), "chat"],
        input="\n".join(messages) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answers = done.stdout.splitlines()
    assert len(answers) == 2 and all(a.strip() for a in answers)

    store = Store.open(load_settings(cfg, env={}).database)
    try:
        [session] = store.sessions()
        turns = store.turns(session["id"])
        assert [t.role for t in turns] == ["customer", "agent"] * 2
        assert [t.text for t in turns[::2]] == messages
        records = store.records(session["id"])
        # The server's name for the model in every record: the answers came from the server.
        assert all(r.model == "smol-remote" and r.prompt_tokens > 0 and r.completion_tokens > 0 for _, r in records)
    finally:
        store.close()
