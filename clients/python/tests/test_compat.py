"""The package keeps to what it promises: Python ≥ 3.9 syntax, the standard library only."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "sluice_client"
# Standard-library names added after 3.9 that the package must not use.
NEWER_THAN_39 = {"asyncio.timeout", "asyncio.TaskGroup", "asyncio.Runner", "typing.Self", "typing.TypeAlias", "datetime.UTC"}


def sources():  # type: ignore[no-untyped-def]
    files = sorted(PACKAGE.glob("*.py"))
    assert len(files) > 10
    return [(f, f.read_text()) for f in files]


def test_every_module_parses_as_python_3_9() -> None:
    for path, text in sources():
        ast.parse(text, filename=str(path), feature_version=(3, 9))


def test_no_standard_library_name_newer_than_3_9() -> None:
    for path, text in sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                assert f"{node.value.id}.{node.attr}" not in NEWER_THAN_39, f"{path.name}:{node.lineno}"
            if isinstance(node, ast.keyword) and node.arg in ("slots", "kw_only", "strict"):
                raise AssertionError(f"{path.name}:{node.value.lineno}: {node.arg}= is newer than 3.9")


def _optional_imports(tree: ast.AST) -> set:
    """The import nodes inside ``try: … except ImportError:``: used when installed, never required."""
    optional = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError" for h in node.handlers):
            optional.update(id(n) for stmt in node.body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return optional


def test_imports_only_the_standard_library_and_itself() -> None:
    """Nothing but the standard library, save OpenTelemetry in _tracing.py, and only when installed."""
    stdlib = set(sys.stdlib_module_names)
    for path, text in sources():
        tree = ast.parse(text)
        optional = _optional_imports(tree)
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                if top == "opentelemetry" and path.name == "_tracing.py" and id(node) in optional:
                    continue
                assert top in stdlib or top == "sluice_client", f"{path.name}: imports {name}"
