"""A short load run: bench/load.py starts a real server, drives concurrent gradio_client
sessions through every command, and reports zero errors; the long run is `python bench/load.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.slow  # every command also runs through the page in tests/test_page.py; this adds 3 sessions at once
def test_a_short_load_run_through_every_command_has_no_errors():
    out = subprocess.run([sys.executable, "bench/load.py", "--sessions", "3", "--commands", "6", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=900,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    numbers = json.loads(out.stdout[out.stdout.index("{"):])
    from assistant.commands.registry import COMMANDS

    assert len(numbers["mix"]) == len(COMMANDS)  # every command of the table is in the mix
    assert numbers["warmup_errors"] == [], numbers["warmup_errors"]  # each command once, all fine
    assert numbers["errors"] == 0, numbers["error_samples"]
    assert numbers["ok"] + numbers["refused"] == 18
    # Each command ran once alone first: only those that cannot answer through `run` refused there, because every
    # call of `run` is a fresh conversation (nothing to re-run, list or export), and `lens`, which needs the
    # conversation's own model to have a masked-LM head (minilm has none). The server has STS-B, a tiny masked-LM
    # model and a file of texts (bench/load.py makes them), so `benchmark`, `mask` and the corpus commands answer.
    expected = {"again", "history", "export", "lens"}
    assert set(numbers["refused_in_warmup"]) == expected, numbers["refused_in_warmup"]
    assert numbers["rss_before_mb"] > 100 and numbers["rss_after_mb"] > 100  # the server's memory was read
    assert out.returncode == 0, out.stderr[-2000:]


@pytest.mark.slow
def test_a_thousand_commands_keep_memory_flat():
    out = subprocess.run([sys.executable, "bench/load.py", "--sessions", "16", "--commands", "64", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=7200,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    numbers = json.loads(out.stdout[out.stdout.index("{"):])
    assert numbers["errors"] == 0, numbers["error_samples"]
    assert numbers["rss_growth_pct"] < 10, numbers
