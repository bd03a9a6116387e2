"""The SDK's modules import one another without cycles, type-only imports included: a cycle
makes import order matter and hides which module owns what (the dependency rule for Python)."""
import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "src" / "sluice_client"


def _imports_of(path: Path) -> Set[str]:
    """The package's modules that ``path`` imports (relative ``from .x import`` and absolute)."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1:
                found.update(alias.name for alias in node.names)
            elif node.module and node.module.startswith("sluice_client."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("sluice_client."))
    return found


def _graph() -> Dict[str, Set[str]]:
    modules = {p.stem: p for p in PACKAGE_DIR.glob("*.py")}
    return {name: {m for m in _imports_of(path) if m in modules and m != name} for name, path in modules.items()}


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    cycles: List[List[str]] = []
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return cycles


def test_the_graph_sees_the_package():
    graph = _graph()
    assert "_core" in graph and "_submit" in graph["_core"], "the import scan found no edges: is the package path right?"


def test_no_import_cycles_between_sdk_modules():
    assert _cycles(_graph()) == []


def test_a_cycle_is_found_when_there_is_one():
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
