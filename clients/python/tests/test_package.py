"""The package as a user gets it: built offline into a wheel and an sdist (Debian's python3-build,
setuptools and wheel, no network), installed into a fresh virtual environment outside the
repository with nothing but the artifact, and the READMEs' Python snippets run from a directory
there against a real server, printing what their comments say."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from support import REPO, SluiceServer

README_URL = "http://127.0.0.1:9324"


def run(args: List[str], cwd: Path, env: Dict[str, str] = None, timeout: float = 300) -> subprocess.CompletedProcess:  # type: ignore[assignment]
    result = subprocess.run(args, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{args} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def clean_env() -> Dict[str, str]:
    """A user's environment: no PYTHONPATH pointing into this repository."""
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and not k.startswith("VIRTUAL_ENV")} | {"PYTHONDONTWRITEBYTECODE": "1"}


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Path]]:
    work = tmp_path_factory.mktemp("sluice-py-pkg")
    # Built from a copy: a build in place would leave build/ and *.egg-info in the repository.
    src = work / "src"
    shutil.copytree(REPO / "clients" / "python", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist"))
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"), str(src)], work, clean_env())
    wheels = list((work / "dist").glob("*.whl"))
    sdists = list((work / "dist").glob("*.tar.gz"))
    assert [w.name for w in wheels] == ["sluice_client-0.1.0-py3-none-any.whl"] and len(sdists) == 1
    yield {"work": work, "wheel": wheels[0], "sdist": sdists[0]}
    shutil.rmtree(work, ignore_errors=True)


def venv_with(work: Path, name: str, wheel: Path) -> Path:
    """A fresh virtual environment (no system site-packages) with only ``wheel`` installed, offline."""
    venv = work / name
    run([sys.executable, "-m", "venv", str(venv)], work, clean_env())
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check", str(wheel)], work, clean_env())
    return python


def snippets(readme: Path) -> List[str]:
    """The README's runnable Python examples: the fenced blocks that use the SDK and print a result."""
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    return [b for b in blocks if "sluice_client" in b and re.search(r"^\s*print\(.*\)  # .+$", b, re.M)]


def run_snippet(python: Path, app: Path, snippet: str, server_url: str) -> None:
    assert README_URL in snippet
    (app / "snippet.py").write_text(snippet.replace(README_URL, server_url))
    out = run([str(python), "snippet.py"], app, clean_env(), timeout=90).stdout
    expected = re.search(r"^\s*print\(.*\)  # (.+)$", snippet, re.M).group(1)  # type: ignore[union-attr]
    assert out.strip() == expected, snippet


def test_the_wheel_holds_the_package_typed_with_no_dependencies(artifacts: Dict[str, Path]) -> None:
    with zipfile.ZipFile(artifacts["wheel"]) as wheel:
        names = wheel.namelist()
        metadata = wheel.read("sluice_client-0.1.0.dist-info/METADATA").decode()
    assert "sluice_client/py.typed" in names and "sluice_client/__main__.py" in names
    assert not [n for n in names if n.startswith("tests/") or n.endswith((".so", ".pyc"))]
    assert "Requires-Python: >=3.9" in metadata and "Requires-Dist" not in metadata
    with tarfile.open(artifacts["sdist"]) as sdist:
        members = sdist.getnames()
    assert any(m.endswith("src/sluice_client/client.py") for m in members)
    assert any(m.endswith("pyproject.toml") for m in members)


def test_the_wheel_installed_outside_the_repository_runs_the_readmes_snippets(artifacts: Dict[str, Path], own_server: SluiceServer) -> None:
    work = artifacts["work"]
    python = venv_with(work, "venv-wheel", artifacts["wheel"])
    app = work / "app"
    app.mkdir()
    where = run([str(python), "-c", "import sluice_client; print(sluice_client.__file__)"], app, clean_env()).stdout.strip()
    assert where.startswith(str(work / "venv-wheel")), where
    found = snippets(REPO / "README.md") + snippets(REPO / "clients" / "python" / "README.md")
    assert len(found) == 3  # README.md's, and the SDK README's quick start and asyncio examples
    for snippet in found:
        run_snippet(python, app, snippet, own_server.url)


def test_the_sdist_builds_a_wheel_that_installs_and_works(artifacts: Dict[str, Path], own_server: SluiceServer) -> None:
    work = artifacts["work"]
    out = work / "from-sdist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--disable-pip-version-check", "-w", str(out), str(artifacts["sdist"])], work, clean_env())
    (wheel,) = out.glob("*.whl")
    python = venv_with(work, "venv-sdist", wheel)
    app = work / "app-sdist"
    app.mkdir()
    run_snippet(python, app, snippets(REPO / "clients" / "python" / "README.md")[0], own_server.url)
    # And the worker CLI, from the installed package.
    usage = subprocess.run([str(python), "-m", "sluice_client", "worker", "--help"], cwd=str(app), env=clean_env(), capture_output=True, text=True)
    assert usage.returncode == 0 and "module:function" in usage.stdout
