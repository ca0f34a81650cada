"""Encoding survives a killed process: a restart encodes only what was not on disk, and the vectors are
those of a one-shot encoding, each at its row although chunks follow text length."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.conftest import ROOT
from tools.core import cancel
from tools.core.config import Settings
from tools.corpus.encode import ChunkEncoder, encode_corpus, open_corpus
from tools.corpus.read import read_texts
from tools.corpus.store import CorpusStore
from tools.encoding.pooling import Pooling, sentence_vectors

pytestmark = pytest.mark.long

ROWS, CHUNK = 800, 32
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
    on_disk = {int(i) for c in done for i in corpus.chunk_ids(c)}
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


def _uneven_texts(n: int = 40) -> list[str]:
    """``n`` distinct texts from two words to a paragraph, their lengths shuffled so file order is not length order."""
    words = " ".join(SUBJECTS + VERBS + OBJECTS).split()
    sizes = np.random.default_rng(7).permutation(np.geomspace(1, 150, n).astype(int))
    return [f"Note {i}: " + " ".join(words[(i + j) % len(words)] for j in range(size)) for i, size in enumerate(sizes)]


def test_every_row_keeps_its_own_vector_when_chunks_follow_text_length_across_a_resume(lm, tmp_path):
    texts = _uneven_texts()
    path = tmp_path / "notes.txt"
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    alone = np.stack([sentence_vectors(lm, [t], Pooling.SBERT)[0].numpy()[0] for t in texts])

    whole, encoder = open_corpus(CorpusStore(tmp_path / "whole"), read_texts(path, Settings()), lm, chunk_rows=8)
    lengths = [len(texts[i]) for i in whole.order()]
    assert lengths == sorted(lengths) and whole.order().tolist() != list(range(len(texts)))
    encode_corpus(whole, encoder)
    np.testing.assert_allclose(CorpusStore(tmp_path / "whole").open(whole.name).vectors(), alone, atol=1e-5)

    store = CorpusStore(tmp_path / "resumed")
    corpus, _ = open_corpus(store, read_texts(path, Settings()), lm, chunk_rows=8)
    token, batches = cancel.CancelToken(), []

    def stopping(batch):  # stopped once its second chunk is done: the chunks after it are left
        batches.append(list(batch))
        vectors = encoder(batch)
        if len(batches) == 2:
            token.cancel("The command passed its time limit.")
        return vectors

    stopping.model, stopping.pooling = encoder.model, encoder.pooling  # type: ignore[attr-defined]
    with cancel.scope(token), pytest.raises(cancel.Cancelled):
        encode_corpus(corpus, stopping)
    assert max(map(len, batches[0])) <= min(map(len, batches[1]))  # the shortest texts went first
    resumed = CorpusStore(tmp_path / "resumed").open(corpus.name)  # a new process sees only the folder
    assert resumed.pending_chunks() == [2, 3, 4]
    report = encode_corpus(resumed, stopping)
    assert report.chunks_skipped == 2 and report.chunks_encoded == 3
    assert sorted(t for b in batches for t in b) == sorted(texts)  # every text encoded once over both runs
    np.testing.assert_allclose(CorpusStore(tmp_path / "resumed").open(corpus.name).vectors(), alone, atol=1e-5)
