"""An example README's Python walkthrough, read from the page so a test can replay it as written:
its command lines, the output it shows, and a Terminal that keeps each terminal's ``cd`` and
``export`` as a shell would."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Dict, List

from support import REPO


class Walkthrough:
    def __init__(self, readme: Path, heading: str = "## Python") -> None:
        text = readme.read_text()
        self.section = text[text.index(heading) :]

    def commands(self) -> List[str]:
        """Each command line of the section's ```sh blocks (comments and blank lines left out)."""
        blocks = re.findall(r"```sh\n(.*?)```", self.section, re.S)
        lines = [line.strip() for block in blocks for line in block.splitlines()]
        return [line for line in lines if line and not line.startswith("#")]

    def shown_output(self) -> str:
        """The section's first ```text block: what the page says the client prints."""
        return re.findall(r"```text\n(.*?)```", self.section, re.S)[0]


class Terminal:
    """One terminal of the page: it starts at the repository root; cd and export change it."""

    def __init__(self, server_url: str) -> None:
        self.cwd = REPO
        self.env: Dict[str, str] = dict(os.environ, SLUICE_URL=server_url, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")

    def builtin(self, words: List[str]) -> bool:
        if words[0] == "cd":
            self.cwd = (REPO / words[1]).resolve()
            return True
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            self.env[name] = ":".join(str((self.cwd / p).resolve()) for p in value.split(":"))
            return True
        return False

    @staticmethod
    def argv(words: List[str]) -> List[str]:
        return [sys.executable if w == "python3" else w for w in words]
