"""The README stays true: every command is documented and CI runs the README's test command."""

from __future__ import annotations

import re

from assistant.commands.registry import COMMANDS
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_every_command_is_in_the_readme_table_with_its_generated_usage():
    rows: dict[str, str] = {}
    for m in re.finditer(r"^\| `([^`]+)`", README, flags=re.M):  # the command table comes first
        rows.setdefault(m.group(1).split()[0], m.group(1).replace("\\|", "|"))
    wrong = {c.name: (rows.get(c.name), c.usage) for c in COMMANDS if rows.get(c.name) != c.usage}
    assert not wrong, f"README's command table differs from the commands' own usage: {wrong}"


def test_ci_runs_the_readme_test_command():
    assert "make test    #" in README and "make run     #" in README
    assert re.search(r"^make test$", (ROOT / ".ci" / "run").read_text(), flags=re.M)


def test_every_setting_is_documented():
    from dataclasses import fields

    from tools.core.config import Settings

    for f in fields(Settings):
        assert f"`ASSISTANT_{f.name.upper()}`" in README, f.name
