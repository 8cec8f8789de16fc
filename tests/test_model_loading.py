"""Loading model files: verified by sha256 first, and llama.cpp loads side by side without silencing
the process (they point stdout and stderr at /dev/null while they run)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from appliance.app.loading import load_concurrently
from appliance.models.files import find, sha256_of, verified_path
from appliance.models.llama import LlamaChatModel
from appliance.models.native import Loading, log_errors

from .support import MODELS_DIR, TEST_MODEL


class TestSha256:
    @pytest.mark.parametrize("data", [b"", b"abc", os.urandom(3 << 20)], ids=["empty", "short", "3 MB"])
    def test_is_hashlib_sha256_of_the_bytes(self, tmp_path: Path, data: bytes):
        path = tmp_path / "model.bin"
        path.write_bytes(data)
        assert sha256_of(path) == hashlib.sha256(data).hexdigest()

    def test_one_changed_byte_changes_it(self, tmp_path: Path):
        path = tmp_path / "model.bin"
        data = bytearray(os.urandom(1 << 20))
        path.write_bytes(data)
        before = sha256_of(path)
        data[-1] ^= 1
        path.write_bytes(data)
        assert sha256_of(path) != before


def _writes_reach(capfd: pytest.CaptureFixture[str], text: str) -> bool:
    os.write(1, text.encode())
    os.write(2, text.encode())
    out, err = capfd.readouterr()
    return text in out and text in err


class TestLoading:
    """The loading state is shared: the first to enter points fds 1 and 2 at /dev/null and turns
    repacking off, the last to leave undoes both, in whichever order the loads end."""

    @pytest.mark.parametrize("last_out", ["first in", "second in"])
    def test_overlapping_loads_leave_the_process_writing(self, capfd, last_out: str):
        quiet = Loading()
        first, second = quiet, quiet
        first.__enter__()
        second.__enter__()
        assert not _writes_reach(capfd, "while both load\n")
        (second if last_out == "first in" else first).__exit__(None, None, None)
        assert not _writes_reach(capfd, "while one loads\n")
        (first if last_out == "first in" else second).__exit__(None, None, None)
        assert _writes_reach(capfd, "after both\n")

    def test_weights_are_not_repacked_while_any_model_loads_and_only_then(self):
        import llama_cpp.llama_cpp as native

        def repacks() -> bool:
            return bool(native.llama_model_default_params().use_extra_bufts)

        assert repacks()  # llama.cpp's own default, which the appliance turns off
        loading = Loading()
        with loading:
            with loading:
                assert not repacks()
            assert not repacks()
        assert repacks()

    def test_each_loading_thread_gets_the_layout_it_asked_for(self):
        import llama_cpp.llama_cpp as native

        loading = Loading()
        inside = threading.Barrier(2, timeout=10)
        seen: dict[bool, bool] = {}

        def load(repack: bool) -> None:
            with loading.laid_out(repack=repack):
                inside.wait()  # both loads in at once: one patched default, two layouts
                seen[repack] = bool(native.llama_model_default_params().use_extra_bufts)
                inside.wait()

        threads = [threading.Thread(target=load, args=(r,)) for r in (True, False)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert seen == {True: True, False: False}

    def test_threads_entering_and_leaving_at_random_leave_it_writing(self, capfd):
        quiet = Loading()
        start = threading.Barrier(4, timeout=10)

        def load() -> None:
            start.wait()
            for _ in range(50):
                with quiet:
                    pass

        threads = [threading.Thread(target=load) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert _writes_reach(capfd, "after the loads\n")


def test_between_loads_only_llama_cpps_errors_reach_the_log(caplog):
    with caplog.at_level("DEBUG", logger="appliance.llama"):
        log_errors(1, b"llama_model_loader: loaded meta data\n", None)  # INFO
        log_errors(2, b"a warning\n", None)
        log_errors(3, b"failed to find a memory slot for batch of size 512\n", None)
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("ERROR", "llama.cpp: failed to find a memory slot for batch of size 512")
    ]


@pytest.mark.real_model
def test_two_real_models_load_at_once_and_the_process_still_writes(capfd):
    path = verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL))
    loaded = load_concurrently(
        {
            name: (lambda name=name: LlamaChatModel(path, name=name, n_ctx=512, repack=name == "repacked"))
            for name in ("as in the file", "repacked")
        },
        workers=2,
    )
    assert sorted(loaded) == ["as in the file", "repacked"]
    assert all(m.count_text("hello") > 0 for m in loaded.values())
    assert {name: bool(m._llama.model_params.use_extra_bufts) for name, m in loaded.items()} == {
        "as in the file": False,
        "repacked": True,
    }
    assert _writes_reach(capfd, "after two loads\n")


def test_threads_default_to_the_cpus_the_process_may_use(monkeypatch: pytest.MonkeyPatch):
    """``n_threads = 0``: one per CPU in the process's affinity (systemd's CPUAffinity=, a cpuset), not
    every CPU of the box; every CPU where the system keeps no affinity."""
    from appliance.models import native

    monkeypatch.setattr(native.os, "sched_getaffinity", lambda pid: {2, 5}, raising=False)
    assert native.usable_cpus() == 2

    def none(pid: int) -> set[int]:
        raise OSError("no affinity here")

    monkeypatch.setattr(native.os, "sched_getaffinity", none, raising=False)
    monkeypatch.setattr(native.os, "cpu_count", lambda: 6)
    assert native.usable_cpus() == 6
