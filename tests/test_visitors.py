"""Visitors through the page: a short `bench/visitors.py` run; the 200-visitor run is the bench itself.

Three visitors at once, each a fresh Chromium context that runs five heavy commands (attend twice, word,
project, selfattn) on a fresh `python -m assistant`, then closes its tab.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.browser


def test_visitors_come_and_go_without_a_lost_reply_or_memory_kept():
    out = subprocess.run([sys.executable, "bench/visitors.py", "--visitors", "3", "--wave", "3", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert row["sent"] == 15 and row["received"] == row["sent"] and row["error_replies"] == 0
    assert row["open_files_after"] <= row["open_files_before"] + 2, row  # no handle kept per visitor
    # RSS per departed visitor is not asserted here: over 3 visitors the allocator's growth (7-13 MB each) hides
    # it; over 200 it is 687 KB (README table). That a closed page's conversation is freed is asserted
    # directly in tests/test_sessions.py.
