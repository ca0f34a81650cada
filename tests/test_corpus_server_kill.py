"""A server killed while it encodes a corpus: restarted, it resumes from the last finished chunk, and the corpus
ends with every row once, its vectors those of a one-shot encoding."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from gradio_client import Client

from tests.conftest import free_port
from tests.test_corpus_resume import OBJECTS, SUBJECTS, VERBS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from common import start_app  # noqa: E402

ROWS = 5000  # five chunks of 1,024


def _manifest(root: Path) -> dict:
    for path in root.glob("*/manifest.json"):
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):  # replaced while read
            return {}
    return {}


@pytest.mark.slow
def test_a_server_killed_while_encoding_resumes_after_a_restart_with_no_row_lost_or_doubled(lm, tmp_path):
    from tools.encoding.pooling import Pooling, sentence_vectors

    texts = [f"{SUBJECTS[i % 7]} {VERBS[i // 7 % 7]} {OBJECTS[i // 49 % 6]} on day {i}." for i in range(ROWS)]
    data = tmp_path / "data"
    data.mkdir()
    (data / "days.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    corpora = tmp_path / "corpora"
    env = {"ASSISTANT_CORPUS_DIR": str(corpora), "ASSISTANT_DATA_DIR": str(data), "ASSISTANT_TIME_LIMIT_S": "10",
           "ASSISTANT_CONVERSATION_DIR": str(tmp_path / "conversations")}
    port = free_port()
    server = start_app(port, env)
    try:
        reply = Client(f"http://127.0.0.1:{port}/", verbose=False).predict("corpus load days.txt", "",
                                                                          api_name="/run")
        assert reply["ok"], reply
        deadline = time.monotonic() + 300
        while len(_manifest(corpora).get("chunks_done", [])) < 1:
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.05)
        server.send_signal(signal.SIGKILL)
        server.wait(30)
    finally:
        if server.poll() is None:
            server.kill()
    before = _manifest(corpora)
    total = -(-ROWS // before["chunk_rows"])
    assert 1 <= len(before["chunks_done"]) < total and not before["complete"], "the kill came after the corpus was done"

    server = start_app(port, {**env, "ASSISTANT_TIME_LIMIT_S": "0"})
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        reply = client.predict("corpus load days.txt", "", api_name="/run")
        assert reply["ok"], reply
        assert f"{ROWS:,}" in reply["text"]
        found = client.predict("search a tourist repaired the kitchen door on day 4321 --k 1 --corpus days", "",
                               api_name="/run")
        assert found["ok"] and "day 4321" in json.dumps(found["tables"][0]["rows"][0])
    finally:
        server.terminate()
        server.wait(30)
    after = _manifest(corpora)
    assert after["complete"] and after["rows"] == ROWS
    folder = next(corpora.glob("*/manifest.json")).parent
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    assert vectors.shape == (ROWS, 384)  # every row once
    sample = [0, 1023, 1024, 2500, ROWS - 1]  # both sides of the chunk the kill cut
    want = sentence_vectors(lm, [texts[i] for i in sample], Pooling.SBERT)[0].numpy()
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    got = np.asarray(vectors[sample], dtype=np.float32)
    got /= np.linalg.norm(got, axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, atol=1e-4)
