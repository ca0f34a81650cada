"""Limits: set in one place, overridable by ASSISTANT_* and flags, checked before model work,
each named in its message; the per-command time limit gives up while the app keeps serving."""

from __future__ import annotations

import contextvars
import dataclasses
import json
import os
import subprocess
import sys
import threading

import pytest

from assistant.commands.base import Command as CommandSpec
from assistant.commands.registry import registered
from assistant.dispatch import chart_rows, execute
from assistant.session import Session
from tests.conftest import ROOT, STSB_DIR
from tools.core.config import Settings
from tools.models.hub import ModelHub


class NoModelHub(ModelHub):
    """A hub that fails loudly if anything asks it for a model: proves a limit was checked first."""

    def get(self, name=None, device=None):
        raise AssertionError("model work started before the limit was checked")


def refused(line: str, **limits) -> str:
    settings = Settings(**limits)
    reply = execute(line, Session(), NoModelHub(settings), settings)
    assert not reply.ok, line
    assert "Something went wrong" not in reply.error, reply.error
    return reply.error


def test_settings_come_from_the_environment_and_bad_values_name_the_variable():
    s = Settings.from_env({"ASSISTANT_MAX_CHARS": "50", "ASSISTANT_TIME_LIMIT_S": "2.5",
                           "ASSISTANT_QUEUE_SIZE": "7", "ASSISTANT_MAX_PAIRS": "9"})
    assert (s.max_chars, s.time_limit_s, s.queue_size, s.max_pairs) == (50, 2.5, 7, 9)
    with pytest.raises(ValueError, match="ASSISTANT_MAX_TEXTS='many' is not a valid int"):
        Settings.from_env({"ASSISTANT_MAX_TEXTS": "many"})
    with pytest.raises(ValueError, match="ASSISTANT_MAX_CHARS .*at least 1"):
        Settings.from_env({"ASSISTANT_MAX_CHARS": "0"})


def test_characters_per_text_are_refused_before_the_model_loads():
    error = refused("compare " + "x" * 101 + " | short", max_chars=100)
    assert "Text 1 is 101 characters long; the limit is 100" in error and "ASSISTANT_MAX_CHARS" in error


def test_texts_per_command_are_refused_before_the_model_loads():
    error = refused("compare " + " | ".join(f"t{i}" for i in range(9)), max_texts=8)
    assert "at most 8 texts per command (ASSISTANT_MAX_TEXTS); got 9" in error


def test_a_whole_line_over_its_limit_is_refused_unread():
    error = refused("compare " + "a | " * 100, max_line_chars=300)
    assert "the limit is 300" in error and "ASSISTANT_MAX_LINE_CHARS" in error


def test_too_many_tokens_are_cut_with_a_warning_naming_the_models_limit(run, lm):
    long = " ".join(["word"] * 1200)
    reply = run(f"compare {long} | a short text")
    assert reply.ok, reply.error
    assert any(f"truncated to {lm.max_tokens} tokens" in w for w in reply.result.warnings), reply.result.warnings


def test_benchmark_pairs_over_the_limit_are_refused(hub):
    settings = dataclasses.replace(hub.settings, max_pairs=50, data_dir=str(STSB_DIR))
    reply = execute("benchmark --sample 60", Session(), hub, settings)
    assert not reply.ok
    assert "50" in reply.error and "ASSISTANT_MAX_PAIRS" in reply.error
    reply = execute("benchmark --data stsb-dev", Session(), hub, settings)  # 1,500 pairs, no --sample
    assert not reply.ok and "ASSISTANT_MAX_PAIRS" in reply.error


def test_an_upload_over_the_size_limit_is_refused(hub, tmp_path):
    data = tmp_path / "big.csv"
    row = "A man plays a guitar.,Someone plays an instrument.,4.2\n"
    data.write_text("sentence1,sentence2,score\n" + row * (1024 * 1024 * 2 // len(row)))
    settings = dataclasses.replace(hub.settings, max_upload_mb=1, data_dir=str(tmp_path))
    reply = execute(f"benchmark --data {data.name}", Session(uploads=(str(data),)), hub, settings)
    assert not reply.ok
    assert "the limit is 1 MB" in reply.error and "ASSISTANT_MAX_UPLOAD_MB" in reply.error


def test_a_chart_over_the_row_limit_is_left_out_with_a_warning_and_the_table_stays(hub):
    settings = dataclasses.replace(hub.settings, max_chart_rows=10)
    line = "compare A cat. | A dog. | A car. | A tree. | A bird."  # a 5 x 5 heatmap: 25 rows
    reply = execute(line, Session(), hub, settings)
    assert reply.ok, reply.error
    assert reply.result.charts == []
    assert any("ASSISTANT_MAX_CHART_ROWS" in w and "10" in w for w in reply.result.warnings)
    assert len(reply.result.tables[0].frame) >= 5
    roomy = execute(line, Session(), hub, hub.settings)
    assert roomy.ok and chart_rows(roomy.result.charts[0].chart) == 25


@pytest.fixture()
def slow_command(monkeypatch):
    """A `sleepy` command that waits until released, then switches the conversation's model."""
    release, finished = threading.Event(), threading.Event()
    seen: dict[str, object] = {}
    marker = contextvars.ContextVar("marker", default="unset")

    class Sleepy(CommandSpec):
        name, summary = "sleepy", "waits"

        def compute(self, ctx, texts, params):
            seen["marker"] = marker.get()
            release.wait(60)
            ctx.session.model = "switched-by-the-abandoned-command"
            finished.set()
            from tools.core.results import Result
            return Result("sleepy", "done")

    with registered(Sleepy):
        yield release, finished, seen, marker


def test_a_command_over_the_time_limit_gives_up_and_the_app_keeps_serving(hub, lm, slow_command):
    release, finished, seen, marker = slow_command
    settings = dataclasses.replace(hub.settings, time_limit_s=0.3)
    session = Session()
    marker.set("from the page")
    reply = execute("sleepy", session, hub, settings)
    assert not reply.ok
    assert "`sleepy` gave up after 0.3 seconds" in reply.error and "ASSISTANT_TIME_LIMIT_S" in reply.error
    assert seen["marker"] == "from the page"  # the worker sees the caller's context (Gradio's progress)
    after = execute("compare A cat sat. | A kitten sat.", session, hub, settings)
    assert after.ok, after.error  # served while the abandoned worker still waits
    release.set()
    assert finished.wait(30)
    assert session.model == ""  # the abandoned command's change never reaches the conversation
    assert session.history == ["compare A cat sat. | A kitten sat."]


def test_a_real_command_gives_up_under_a_tiny_time_limit(hub, lm):
    settings = dataclasses.replace(hub.settings, time_limit_s=0.001)
    reply = execute("vocab --n 30000", Session(), hub, settings)
    assert not reply.ok and "gave up" in reply.error


def test_the_queue_is_bounded_and_every_command_shares_one_concurrency_group(hub):
    from assistant.app import build, launch_options

    settings = dataclasses.replace(hub.settings, queue_size=3, concurrency=2, max_upload_mb=7, corpus_max_mb=9)
    demo = build(hub, settings)
    assert demo._queue.max_size == 3
    assert demo._queue.default_concurrency_limit == 2
    commands = [fn for fn in demo.fns.values() if fn.name in ("respond", "run")]
    assert len({fn.concurrency_id for fn in commands}) == 1  # the page and the API share the limit
    options = launch_options(settings)
    # the server takes files up to the larger limit; each kind of upload is checked against its own
    assert options["max_file_size"] == "9mb" and options["show_error"] is False


def test_each_kind_of_upload_has_its_own_size_limit(tmp_path):
    from assistant.app import _remember_upload

    path = tmp_path / "texts.csv"
    path.write_bytes(b"text\n" + b"a sentence\n" * 200_000)  # 2.2 MB
    session = Session()
    _remember_upload(str(path), session, "benchmark", 1)
    assert session.uploads == ()  # over the benchmark's 1 MB: refused with a sentence, not remembered
    _, box = _remember_upload(str(path), session, "corpus", 5)
    assert session.uploads == (str(path),) and box["value"] == 'corpus load "texts.csv"'


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "assistant", *args], capture_output=True, text=True,
                          cwd=ROOT, env=full, timeout=300)


@pytest.mark.slow
def test_flags_override_the_environment():
    out = cli("run", "compare abcdefghij | b", "--max-chars", "5", "--json",
              env={"ASSISTANT_MAX_CHARS": "1000"})
    assert out.returncode == 2, out.stderr
    assert "the limit is 5 characters per text" in json.loads(out.stdout)["error"]
    bad = cli("--time-limit-s", "soon", "run", "help")
    assert bad.returncode == 2 and "ASSISTANT_TIME_LIMIT_S='soon' is not a valid float" in bad.stderr
    listed = cli("--help")
    for flag in ("--max-chars", "--max-texts", "--max-pairs", "--max-upload-mb", "--max-chart-rows",
                 "--time-limit-s", "--queue-size", "--concurrency"):
        assert flag in listed.stdout


@pytest.mark.parametrize("line", ["project The cat sat on the mat. | A dog ran in the park.", "vocab --n 3000"])
def test_maps_are_sampled_to_the_chart_row_limit_not_left_out(hub, line):
    settings = dataclasses.replace(hub.settings, max_chart_rows=12)
    reply = execute(line, Session(), hub, settings)
    assert reply.ok, reply.error
    assert reply.result.charts, "the map was dropped instead of sampled"
    assert 0 < chart_rows(reply.result.charts[0].chart) <= 12
    assert max(len(t.frame) for t in reply.result.tables) > 12  # the table keeps every point
    assert any("sample" in w for w in reply.result.warnings)


def test_a_chart_row_limit_above_altairs_is_refused_with_its_name():
    with pytest.raises(ValueError, match="ASSISTANT_MAX_CHART_ROWS .* at most 5000"):
        dataclasses.replace(Settings(), max_chart_rows=20_000)
