"""The app over real HTTP: the `run` endpoint through gradio_client, and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from gradio_client import Client

from tests.conftest import ROOT

SURVEY = ("In 1995, the last survey, those numbers were equal. | The last time the survey was conducted, "
          "in 1995, those numbers matched.")


def test_run_endpoint_returns_the_json_reply(live_app):
    client = Client(live_app, verbose=False)
    data = client.predict(f"compare {SURVEY} --pool all", "", api_name="/run")
    assert data["ok"] is True and data["error"] is None
    assert data["model"] == "minilm"
    assert [row[0] for row in data["tables"][0]["rows"]] == ["cls", "mean", "max", "sbert"]
    assert data["charts"][0]["vega_lite"]["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_run_endpoint_reports_bad_input_as_ok_false(live_app):
    client = Client(live_app, verbose=False)
    data = client.predict("compare just one text", "", api_name="/run")
    assert data["ok"] is False
    assert "needs at least two texts" in data["error"]
    again = client.predict("compare a | b", "", api_name="/run")  # the server keeps serving
    assert again["ok"] is True


def test_run_endpoint_refuses_unsafe_model_names(live_app):
    client = Client(live_app, verbose=False)
    data = client.predict("model", "../../etc", api_name="/run")
    assert data["ok"] is False and "`..`" in data["error"]


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "assistant", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


@pytest.mark.slow
def test_command_line_json_prints_one_row_per_pooling():
    out = cli("run", f"compare {SURVEY} --pool all", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [row[0] for row in data["tables"][0]["rows"]] == ["cls", "mean", "max", "sbert"]


@pytest.mark.slow
def test_command_line_bad_input_exits_2_with_the_sentence():
    out = cli("run", "compare only one", "--json")
    assert out.returncode == 2
    data = json.loads(out.stdout)
    assert data["ok"] is False and "needs at least two texts" in data["error"]
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_command_line_prints_readable_tables():
    out = cli("run", "tokenize Hello world")
    assert out.returncode == 0
    assert "[tokens]" in out.stdout and "[CLS]" in out.stdout and "hello" in out.stdout
