"""The Ray engine writes the store the local engine writes: a real local Ray (2 CPUs, a pool of 1 actor that
loads the packaged model once) encodes 2,000 texts, and the vectors and the search results are the local ones."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from tools.core.config import Settings
from tools.core.errors import UserError
from tools.corpus import search
from tools.corpus.encode import encode_corpus, engine_named, open_corpus
from tools.corpus.engines import ray as ray_engine
from tools.corpus.engines.ray import RayEngine, pool_size
from tools.corpus.read import read_texts
from tools.corpus.store import CorpusStore

pytestmark = pytest.mark.long

ROWS, CHUNK = 600, 100  # a few chunks through a real Ray; the benchmark runs thousands
SUBJECTS = ["The cat", "A child", "My neighbour", "The old farmer", "A tourist", "The pilot", "Her brother"]
VERBS = ["painted", "found", "carried", "forgot", "repaired", "sold", "described"]
OBJECTS = ["a red bicycle", "the kitchen door", "an umbrella", "two letters", "the garden fence", "a small boat"]
QUERIES = ["someone fixed a fence", "a boat was sold", "the pilot lost his umbrella"]


def _texts() -> list[str]:
    return [f"{SUBJECTS[i % 7]} {VERBS[i // 7 % 7]} {OBJECTS[i // 49 % 6]} on day {i}." for i in range(ROWS)]


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray of 2 CPUs for this module, shut down after it (the engine uses a Ray it did not start as is)."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray = pytest.importorskip("ray", reason="the Ray extra (requirements-ray.txt) is part of the test extra")
    assert ray._private.services.get_node_ip_address() == "127.0.0.1"  # loopback mode (set in conftest)

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False,
             _node_ip_address="127.0.0.1")  # the test cluster listens on loopback only
    try:
        yield ray
    finally:
        ray.shutdown()


def test_the_ray_engine_writes_the_store_the_local_engine_writes(lm, local_ray, tmp_path):
    path = tmp_path / "days.txt"
    path.write_text("\n".join(_texts()) + "\n", encoding="utf-8")
    settings = Settings()
    read = read_texts(path, settings)
    stores = {}
    took = {}
    for kind in ("local", "ray"):
        corpus, encoder = open_corpus(CorpusStore(tmp_path / kind), read, lm, chunk_rows=CHUNK, settings=settings)
        engine = RayEngine(actors=1) if kind == "ray" else engine_named("local")
        start = time.perf_counter()
        report = encode_corpus(corpus, encoder, engine)
        took[kind] = time.perf_counter() - start
        assert report.engine == kind and report.chunks_encoded == ROWS // CHUNK and report.rows_encoded == ROWS
        stores[kind] = corpus
    assert engine.pool == 1
    assert local_ray.is_initialized()  # a Ray the engine found running is left running
    local, remote = stores["local"], stores["ray"]
    for corpus in (local, remote):
        assert corpus.manifest.complete and sorted(corpus.manifest.chunks_done) == list(range(ROWS // CHUNK))
    assert sorted(p.name for p in local.folder.iterdir()) == sorted(p.name for p in remote.folder.iterdir())
    np.testing.assert_allclose(remote.vectors(), local.vectors(), atol=1e-5, rtol=0)
    for query in QUERIES:
        a, b = search.search(lm, local, [query], 10).hits, search.search(lm, remote, [query], 10).hits
        assert a["id"].tolist() == b["id"].tolist() and a["text"].tolist() == b["text"].tolist(), query
        np.testing.assert_allclose(a["score"].to_numpy(), b["score"].to_numpy(), atol=1e-5)
    print(f"local {took['local']:.1f} s, ray {took['ray']:.1f} s for {ROWS} texts")


def test_the_pool_stays_below_the_cpu_count():
    assert pool_size(2) == 1 and pool_size(16) == 15 and pool_size(16, 4) == 4 and pool_size(8, 99) == 7
    with pytest.raises(UserError, match="at least 2"):
        pool_size(1)


def test_without_ray_the_engine_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(ray_engine, "ray_installed", lambda: False)
    with pytest.raises(UserError, match="requirements-ray.txt"):
        engine_named("ray")


def test_an_address_goes_with_the_ray_engine_and_unknown_engines_are_refused():
    with pytest.raises(UserError, match="--engine ray"):
        engine_named("local", "auto")
    with pytest.raises(UserError, match="local, ray"):
        engine_named("spark")


def test_only_the_command_line_may_name_a_cluster(hub, tmp_path):
    import dataclasses

    from assistant.dispatch import execute
    from assistant.session import Session
    from tools.benchmark.access import DataAccess

    settings = dataclasses.replace(hub.settings, corpus_dir=str(tmp_path / "corpora"))
    web = execute("corpus load mine.csv --engine ray --address ray://10.0.0.1:10001", Session(), hub, settings)
    assert not web.ok and "Only the command line may name a Ray cluster" in web.error
    (tmp_path / "mine.txt").write_text("one\ntwo\n", encoding="utf-8")
    cli = execute(f"corpus load {tmp_path / 'mine.txt'} --address auto", Session(), hub, settings,
                  access=DataAccess.local())
    assert not cli.ok and "--engine ray" in cli.error  # an address goes with the Ray engine
