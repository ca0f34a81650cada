"""Which files `benchmark --data` reads on each face, and where STS-B comes from when no folder holds it.

The command line reads the user's own files (relative to the folder it started in);
the page, HTTP and MCP read only the data folders and the conversation's uploads.
The `datasets` path is covered offline by loading a local parquet through the same function.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from gradio_client import Client

from assistant.dispatch import execute
from assistant.session import Session
from tests.conftest import ROOT
from tools.benchmark import data as stsdata
from tools.benchmark import files
from tools.benchmark.access import WEB, DataAccess
from tools.core.config import Settings
from tools.core.errors import UserError

PAIRS = pd.DataFrame({
    "sentence1": ["A man plays a guitar.", "A cat sleeps.", "The sky is blue.", "A woman cuts onions.",
                  "Kids play football.", "The train is late."],
    "sentence2": ["Someone plays an instrument.", "A dog barks.", "The sky is clear and blue.",
                  "A woman is slicing an onion.", "Children are playing soccer.", "The stock market fell."],
    "score": [3.8, 0.6, 4.2, 4.6, 4.4, 0.0],
})


@pytest.fixture()
def folders(tmp_path) -> dict[str, Path]:
    """A data folder and, beside it, a folder of the user's own that no setting names."""
    data, mine = tmp_path / "data", tmp_path / "mine"
    data.mkdir()
    mine.mkdir()
    PAIRS.to_csv(mine / "pairs.csv", index=False)
    PAIRS.to_csv(data / "shared.csv", index=False)
    return {"data": data, "mine": mine}


# --- the command line: the user's own files ------------------------------------------------------------

@pytest.mark.slow
def test_the_command_line_reads_a_file_relative_to_the_folder_it_runs_in(folders):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}  # no data folder at all
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-m", "assistant", "run", "benchmark --data pairs.csv --pool mean",
                           "--json"], cwd=folders["mine"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    reply = json.loads(done.stdout)
    assert reply["ok"] and reply["settings"]["pairs"] == len(PAIRS)
    assert "pairs.csv" in reply["text"] and str(folders["mine"]) not in reply["text"]  # a name, not a path


def test_the_command_line_takes_absolute_and_parent_paths_and_still_searches_the_data_folders(hub, folders):
    settings = dataclasses.replace(hub.settings, data_dir=str(folders["data"]))
    cli = DataAccess.local(folders["data"])  # started in the data folder
    for raw in (str(folders["mine"] / "pairs.csv"), "../mine/pairs.csv", "shared.csv"):
        assert len(stsdata.load(raw, settings, access=cli).frame) == len(PAIRS)
    reply = execute("benchmark --data ../mine/pairs.csv --pool mean", Session(), hub, settings, access=cli)
    assert reply.ok, reply.error
    assert reply.result.settings["pairs"] == len(PAIRS)


def test_the_command_line_says_where_it_looked_for_a_missing_file_or_that_a_folder_is_not_a_file(folders):
    cli = DataAccess.local(folders["mine"])
    with pytest.raises(UserError) as caught:
        stsdata.load("nope.csv", Settings(), access=cli)
    message = str(caught.value)
    # the folder it looked in, by its start and its own name (a deep one is cut in its middle)
    start, name = str(folders["mine"])[:20], folders["mine"].parent.name[-8:] + "/mine`"
    assert "There is no file" in message and "nope.csv" in message and start in message and name in message
    with pytest.raises(UserError) as caught:  # a long path typed: cut in its middle, its file's name kept
        stsdata.load("/".join(["deep"] * 20) + "/reviews-2026.csv", Settings(), access=cli)
    assert "There is no file `deep/deep" in str(caught.value) and "/reviews-2026.csv`" in str(caught.value)
    with pytest.raises(UserError, match="is a folder"):
        stsdata.load(str(folders["data"]), Settings(), access=cli)
    with pytest.raises(UserError, match="not a usable file name"):
        stsdata.load("a\x00b.csv", Settings(), access=cli)


# --- the web faces: data folders and uploads only ------------------------------------------------------

def test_the_web_face_refuses_the_users_files_etc_passwd_and_parent_paths(hub, folders):
    settings = dataclasses.replace(hub.settings, data_dir=str(folders["data"]))
    assert execute("benchmark --data shared.csv --pool mean", Session(), hub, settings).ok  # the default is WEB
    for raw in ("/etc/passwd", "../mine/pairs.csv", str(folders["mine"] / "pairs.csv")):
        reply = execute(f"benchmark --data {raw}", Session(), hub, settings, access=WEB)
        assert not reply.ok and "outside the allowed data folders" in reply.error, raw
        assert "root:" not in reply.error


def test_the_page_and_http_refuse_etc_passwd_and_parent_paths(live_app, hub):
    client = Client(live_app, verbose=False)
    # `make test` exports the STS-B folder as the data folder; a bare `pytest` has none
    because = "outside the allowed data folders" if hub.settings.data_dir else "No data folder is configured"
    for raw in ("/etc/passwd", "../../../../etc/passwd", "../README.md"):
        data = client.predict(f"benchmark --data {raw}", "", api_name="/run")
        assert data["ok"] is False and "root:" not in json.dumps(data), raw
        assert data["error"].endswith(".") and because in data["error"], data["error"]


# --- STS-B through the `datasets` library ---------------------------------------------------------------

def test_the_datasets_path_maps_the_hub_copys_columns_and_scales_its_scores(tmp_path):
    hub_copy = PAIRS.assign(score=PAIRS["score"] / 5.0)  # sentence-transformers/stsb scores run 0-1
    hub_copy.to_parquet(tmp_path / "validation.parquet")
    pairs = stsdata.from_datasets(stsdata.Split.DEV, data_files=tmp_path / "validation.parquet")
    assert list(pairs.frame.columns) == files.COLUMNS
    assert pairs.frame["sentence1"].tolist() == PAIRS["sentence1"].tolist()
    assert pairs.frame["score"].to_numpy() == pytest.approx(PAIRS["score"].to_numpy(), rel=1e-12)
    assert pairs.source.startswith("stsb-dev")


def _never_asked(*args, **kwargs):
    raise AssertionError("the hub was asked although it cannot be reached")


def test_with_no_data_at_all_one_sentence_names_the_three_ways(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)  # as HF_HUB_OFFLINE=1 sets it
    monkeypatch.setattr("datasets.load_dataset", _never_asked)
    with pytest.raises(UserError) as caught:
        stsdata.load("stsb-dev", Settings(data_dir=str(tmp_path)))
    message = str(caught.value)
    assert "sts-dev.tsv" in message and "HF_HUB_OFFLINE" in message
    assert all(way in message for way in ("upload it on the page", "path on the command line", "data folder"))
    assert message.count(". ") == 0 and message.endswith(".")  # one sentence


def test_an_unreachable_hub_is_never_asked_for_the_dataset(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", "https://no-such-host.invalid")
    monkeypatch.setattr("datasets.load_dataset", _never_asked)
    assert stsdata.hub_reachable(timeout=2.0) is False  # the name does not resolve: no wait
    with pytest.raises(UserError, match="cannot be reached from here"):
        stsdata.load("stsb-test", Settings(data_dir=str(tmp_path)))


def test_a_reachable_hub_loads_the_split_through_datasets(tmp_path, monkeypatch):
    """Where the hub answers (a Space), `stsb-dev` comes from sentence-transformers/stsb; served here from a file."""
    import datasets

    hub_copy = tmp_path / "validation.parquet"
    PAIRS.assign(score=PAIRS["score"] / 5.0).to_parquet(hub_copy)
    asked = []
    real = datasets.load_dataset

    def from_the_hub(name, split=None, **kwargs):
        asked.append((name, split))
        return real("parquet", data_files={split: str(hub_copy)}, split=split)

    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    monkeypatch.setattr(stsdata, "hub_reachable", lambda timeout=stsdata.PROBE_TIMEOUT_S: True)
    monkeypatch.setattr("datasets.load_dataset", from_the_hub)
    pairs = stsdata.load("stsb-dev", Settings(data_dir=str(tmp_path / "empty")))
    assert asked == [("sentence-transformers/stsb", "validation")]
    assert pairs.frame["score"].max() == pytest.approx(4.6, rel=1e-12) and "sentence-transformers/stsb" in pairs.source
