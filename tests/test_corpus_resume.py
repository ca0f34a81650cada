"""Encoding survives a killed process: a restart encodes only what was not on disk, and the vectors are
those of a one-shot encoding."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np

from tests.conftest import ROOT
from tools.core.config import Settings
from tools.corpus.encode import ChunkEncoder, encode_corpus, open_corpus
from tools.corpus.read import read_texts
from tools.corpus.store import CorpusStore
from tools.encoding.pooling import Pooling, sentence_vectors

ROWS, CHUNK = 2000, 32
SUBJECTS = ["The cat", "A child", "My neighbour", "The old farmer", "A tourist", "The pilot", "Her brother"]
VERBS = ["painted", "found", "carried", "forgot", "repaired", "sold", "described"]
OBJECTS = ["a red bicycle", "the kitchen door", "an umbrella", "two letters", "the garden fence", "a small boat"]

CHILD = """
import sys
from tools.core.config import Settings
from tools.models.hub import ModelHub
from tools.corpus.encode import load_corpus
from tools.corpus.store import CorpusStore
settings = Settings(corpus_dir=sys.argv[1])
lm = ModelHub(settings).get("minilm")
load_corpus(CorpusStore.from_settings(settings), sys.argv[2], lm, settings, chunk_rows=int(sys.argv[3]))
"""


def _texts() -> list[str]:
    return [f"{SUBJECTS[i % 7]} {VERBS[i // 7 % 7]} {OBJECTS[i // 49 % 6]} on day {i}." for i in range(ROWS)]


def _chunks_done(root) -> list[int]:
    for manifest in root.glob("*/manifest.json"):
        try:
            return json.loads(manifest.read_text())["chunks_done"]
        except (json.JSONDecodeError, OSError):  # replaced while read: try again
            return []
    return []


def test_a_killed_encoding_resumes_without_encoding_a_row_twice(lm, tmp_path):
    texts = _texts()
    path = tmp_path / "days.txt"
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    root = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(path), str(CHUNK)], env=env, cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while len(_chunks_done(root)) < 3:
            assert child.poll() is None, child.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the child encoded nothing in 120 s"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    store = CorpusStore(root)
    corpus, encoder = open_corpus(store, read_texts(path, Settings()), lm, chunk_rows=CHUNK)
    done = [c for c in range(corpus.manifest.chunks_total) if c not in corpus.pending_chunks()]
    assert len(done) >= 3 and corpus.pending_chunks(), "the kill came after the whole corpus was encoded"
    on_disk = {i for c in done for i in range(*corpus.chunk_span(c))}
    seen: list[str] = []

    def counting(batch):
        seen.extend(batch)
        return encoder(batch)

    counting.model, counting.pooling = encoder.model, encoder.pooling  # type: ignore[attr-defined]
    report = encode_corpus(corpus, counting)
    assert report.chunks_skipped == len(done) and report.info.complete
    index_of = {t: i for i, t in enumerate(texts)}
    encoded_now = [index_of[t] for t in seen]
    assert len(encoded_now) == len(set(encoded_now))  # nothing twice in the restart
    assert set(encoded_now) == set(range(ROWS)) - on_disk  # and exactly what the killed run had not saved
    one_shot = sentence_vectors(lm, texts, Pooling.SBERT)[0].numpy()
    np.testing.assert_allclose(store.open(corpus.name).vectors(), one_shot, atol=1e-5)
    assert isinstance(encoder, ChunkEncoder)
