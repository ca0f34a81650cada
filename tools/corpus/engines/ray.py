"""The Ray engine: pending chunks go through Ray Data to a pool of actors that each load the model once.

``ray.data.from_items`` holds one row per pending chunk (its number and texts, one block each);
``map_batches`` sends each row to an actor of an :class:`~ray.data.ActorPoolStrategy` pool. An
actor builds its encoder once, in its constructor, from the encoder's ``recipe`` (the model's
name and pooling and the settings that load it: the loaded model is never pickled) with one
torch thread, and returns float32 vectors. The rows come back as each chunk finishes and are
yielded to :func:`tools.corpus.encode.encode_corpus`, which writes the same store the local
engine's chunks make.

Ray is imported here only, when a run starts; without it the engine refuses with the command
that installs the extra. ``address=None`` starts a new local cluster for the job
(``address="local"``: usage stats off, no dashboard) and shuts it down after; an address
(``auto``, ``ray://HOST:10001``) connects to a running cluster, which is only disconnected from
afterwards, never stopped; a Ray this process already started is used as it is. Ray Data cannot
stream over Ray Client (a ``ray://`` address: Ray issue #48682), so there the same actors run in
a plain :class:`ray.util.ActorPool`. The pool stays below the cluster's CPU count: Ray Data's own
tasks need a CPU, and actors that take every CPU stall the pipeline (Ray issue #44687).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from tools.core.errors import UserError
from tools.corpus.engines.base import EncodeChunk

#: How the extra is installed (the sentence every refusal ends with).
INSTALL = ("install the Ray extra: `pip install -r requirements-ray.txt -c constraints.txt` "
           "(or `pip install 'embedding-assistant[ray]'`), or use `--engine local`")
#: The folder that holds this checkout's ``tools`` package: a local cluster's workers import the same code.
SOURCE_ROOT = str(Path(__file__).resolve().parents[3])
#: One Ray run at a time in this process: a run that started Ray shuts it down when it ends.
_ONE_RUN = threading.Lock()


def ray_installed() -> bool:
    """Whether ``import ray`` would work, without importing it (that takes a second)."""
    return importlib.util.find_spec("ray") is not None


def pool_size(cpus: float, wanted: int | None = None) -> int:
    """Actors for a cluster of ``cpus`` CPUs: ``wanted`` (default: as many as fit), always below the CPU count."""
    most = int(cpus) - 1
    if most < 1:
        raise UserError(f"The Ray cluster has {cpus:g} CPU(s); the engine needs at least 2 (one for the actor "
                        "that encodes, one for Ray Data's own tasks).")
    return most if wanted is None else max(1, min(int(wanted), most))


def _import_ray(local: bool = False) -> Any:
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # read when Ray starts; no usage report leaves the machine
    if local:  # a cluster of this machine only: Ray's loopback mode (read when ray is first imported)
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
        import ray.data
    except ImportError:
        raise UserError(f"`--engine ray` needs Ray, which is not installed here: {INSTALL}.") from None
    return ray


class _EncodeActor:
    """One actor of the pool: the encoder is built once, then each call encodes one chunk."""

    def __init__(self, make: Callable[[int], EncodeChunk] | None, encode: EncodeChunk | None, threads: int) -> None:
        self.encode = make(threads) if make is not None else encode

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        assert self.encode is not None
        start = time.perf_counter()
        vectors = [np.asarray(self.encode([str(t) for t in texts]), dtype=np.float32) for texts in batch["texts"]]
        return {"chunk": np.asarray(batch["chunk"], dtype=np.int64), "vectors": np.stack(vectors),
                "seconds": np.full(len(vectors), (time.perf_counter() - start) / max(1, len(vectors)))}


class RayEngine:
    """Encode chunks on a Ray cluster (a local one by default) through Ray Data and an actor pool.

    Args:
        address: a running cluster (``auto``, ``ray://HOST:10001``); None starts a local one for the job.
        num_cpus: CPUs of the local cluster (default: this process's cores); not used with an address.
        actors: actors in the pool (default: the cluster's CPUs less one); always below the CPU count.
        threads: torch threads per actor.
    """

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None, actors: int | None = None,
                 threads: int = 1) -> None:
        if not ray_installed():
            raise UserError(f"`--engine ray` needs Ray, which is not installed here: {INSTALL}.")
        self.address = address.strip() if address and address.strip() else None
        self.num_cpus = num_cpus
        self.actors = actors
        self.threads = threads
        self.pool = 0  # the pool size of the latest run
        self.actor_seconds = 0.0  # seconds the actors spent encoding in the latest run (their per-core speed)

    def run(self, encode_chunk: EncodeChunk, jobs: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, np.ndarray]]:
        items = [{"chunk": chunk, "texts": list(texts)} for chunk, texts in jobs]
        if not items:
            return
        ray = _import_ray(local=self.address is None)
        with _ONE_RUN:
            started = self._connect(ray)
            try:
                yield from self._encode(ray, encode_chunk, items)
            finally:
                if started:
                    ray.shutdown()  # the local cluster this run started, or the connection it opened

    def _connect(self, ray: Any) -> bool:
        """Start or join Ray; True when this run did (and so ends it), False when the process already had one."""
        if ray.is_initialized():
            return False
        quiet = {"logging_level": logging.WARNING, "log_to_driver": False}
        if self.address is None:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            ray.init(address="local", num_cpus=self.num_cpus or cores, include_dashboard=False,
                     _node_ip_address="127.0.0.1", **quiet)  # a local cluster listens on this machine only
            return True
        try:
            ray.init(address=self.address, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UserError(f"No Ray cluster answered at {self.address!r} ({str(exc).splitlines()[0][:200]}). "
                            "Start one (`ray start --head`) or leave out --address for a local one.") from None
        return True

    def _encode(self, ray: Any, encode_chunk: EncodeChunk,
                items: list[dict[str, Any]]) -> Iterator[tuple[int, np.ndarray]]:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # encode_corpus reports progress per chunk
        context.print_on_execution_start = False
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        self.pool, self.actor_seconds = pool_size(ray.cluster_resources().get("CPU", 0), self.actors), 0.0
        recipe = getattr(encode_chunk, "recipe", None)  # a ChunkEncoder: rebuilt from its name where it runs
        args = (recipe, None, self.threads) if recipe is not None else (None, encode_chunk, self.threads)
        from ray.util.client import ray as ray_client

        if ray_client.is_connected():  # Ray Data does not run over Ray Client (issue #48682)
            yield from self._encode_through_client(ray, args, items)
            return
        data = ray.data.from_items(items, override_num_blocks=len(items))
        # Workers on this machine import the driver's own `tools` (Ray passes them only its working folder);
        # a cluster named by address must have the project installed.
        local = {"env_vars": {"PYTHONPATH": os.pathsep.join([SOURCE_ROOT, "${PYTHONPATH}"])}}
        encoded = data.map_batches(_EncodeActor, fn_constructor_args=args, batch_size=1, batch_format="numpy",
                                   compute=ray.data.ActorPoolStrategy(size=self.pool), num_cpus=1,
                                   runtime_env=local if self.address is None else None)
        for row in encoded.iter_rows():
            self.actor_seconds += float(row["seconds"])
            yield int(row["chunk"]), np.asarray(row["vectors"], dtype=np.float32)

    def _encode_through_client(self, ray: Any, args: tuple[Any, ...],
                               items: list[dict[str, Any]]) -> Iterator[tuple[int, np.ndarray]]:
        """Over Ray Client (``ray://``), where Ray Data cannot stream: the same actors in a plain actor pool."""
        from ray.util import ActorPool

        actor = ray.remote(num_cpus=1)(_EncodeActor)
        pool = ActorPool([actor.remote(*args) for _ in range(self.pool)])
        batches = ({"chunk": np.asarray([item["chunk"]]), "texts": [item["texts"]]} for item in items)
        for out in pool.map_unordered(lambda a, batch: a.__call__.remote(batch), batches):
            self.actor_seconds += float(out["seconds"][0])
            yield int(out["chunk"][0]), np.asarray(out["vectors"][0], dtype=np.float32)
