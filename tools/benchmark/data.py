"""Sentence-pair data for the STS benchmark: safe loading from the data folders, and sampling.

Every loader returns a :class:`~tools.benchmark.files.Pairs` whose frame has the columns ``sentence1``,
``sentence2``, ``score`` (float) and ``genre`` (str). On the web faces files are only
read from inside the configured data folders (``ASSISTANT_DATA_DIR``), or exactly the
files the caller allows (this conversation's uploads), never from anywhere else on the
server; on the command line the user's own paths are read too (:mod:`tools.benchmark.access`).
The named STS-B splits come from a data folder, else from the ``datasets`` library
(``sentence-transformers/stsb``) where the hub is reachable.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

import numpy as np
import pandas as pd

from tools.benchmark.access import WEB, DataAccess
from tools.benchmark.files import HOW_TO_PASS, Pairs, read_file, resolve_path
from tools.core.config import Settings
from tools.core.errors import UserError

log = logging.getLogger(__name__)

BIN_EDGES = (0.0, 1.0, 2.0, 3.0, 4.0)

class Split(str, Enum):
    """The STS-B splits the command knows by name."""

    DEV = "stsb-dev"
    TEST = "stsb-test"
    TRAIN = "stsb-train"

    @property
    def filename(self) -> str:
        return {"stsb-dev": "sts-dev.tsv", "stsb-test": "sts-test.tsv", "stsb-train": "sts-train.tsv"}[self.value]

    @property
    def hf_split(self) -> str:
        return {"stsb-dev": "validation", "stsb-test": "test", "stsb-train": "train"}[self.value]


# --- the named splits ----------------------------------------------------------------------------

def load_split(split: Split, settings: Settings) -> Pairs:
    """STS-B's ``split`` from a data folder; else the Hugging Face dataset when reachable; else a sentence."""
    for root in settings.data_dir_paths:
        path = root / split.filename
        if path.is_file():
            pairs = read_file(path, settings)
            return Pairs(pairs.frame, split.value)
    try:
        import datasets  # a Space has it; looked for first so that the reply can say it is missing
    except ImportError:
        reason = "the `datasets` library is not installed"
    else:
        del datasets  # from_datasets imports it where it is used
        if hub_offline():
            reason = "the Hugging Face hub is switched off (HF_HUB_OFFLINE)"
        elif not hub_reachable():  # `datasets` itself would retry for about 20 s before giving up
            reason = "the Hugging Face hub cannot be reached from here"
        else:
            try:
                return from_datasets(split)
            except Exception:  # the hub went away meanwhile, or the dataset moved
                log.info("loading %s from %s failed", split.value, HF_DATASET, exc_info=True)
                reason = f"{HF_DATASET} could not be loaded from the Hugging Face hub"
    raise UserError(
        f"No {split.filename} in the data folders and {reason}, so there is no {split.value} here; "
        f"{HOW_TO_PASS}."
    )


#: The STS-B copy on the Hugging Face hub (scores scaled to 0-1; splits train / validation / test).
HF_DATASET = "sentence-transformers/stsb"
#: Seconds to wait for the hub's address and a connection before saying it cannot be reached.
PROBE_TIMEOUT_S = 3.0


def hub_offline() -> bool:
    """True when the user switched the hub off (``HF_HUB_OFFLINE=1``), as huggingface_hub reads it."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the hub's endpoint opens within ``timeout`` seconds.

    ``datasets`` retries a failed request for about 20 s; this probe answers "no" at once
    where there is no network (the name does not resolve) and within ``timeout`` where
    packets are dropped. The name lookup runs in a worker thread, since it has no timeout.
    """
    import socket
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import TimeoutError as FutureTimeout
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)

    def connect() -> bool:
        with socket.create_connection((host, port), timeout=timeout):
            return True

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hub-probe")
    try:
        return pool.submit(connect).result(timeout=timeout)
    except (OSError, FutureTimeout):
        return False
    finally:
        pool.shutdown(wait=False)


def from_datasets(split: Split, data_files: str | Path | None = None) -> Pairs:
    """STS-B's ``split`` through the ``datasets`` library: the hub's copy, or a local file of the same shape.

    Args:
        split: the split to load.
        data_files: a local ``.parquet`` / ``.csv`` / ``.jsonl`` with the hub copy's columns
            (``sentence1``, ``sentence2``, ``score`` in 0-1), loaded with ``load_dataset``'s
            ``data_files=`` (no network); None loads :data:`HF_DATASET` from the hub.
    """
    import datasets

    if data_files is None:
        ds = datasets.load_dataset(HF_DATASET, split=split.hf_split)
        source = f"{split.value} (Hugging Face {HF_DATASET})"
    else:
        path = Path(data_files)
        builder = {".parquet": "parquet", ".csv": "csv", ".jsonl": "json", ".json": "json"}[path.suffix.lower()]
        ds = datasets.load_dataset(builder, data_files={split.hf_split: str(path)}, split=split.hf_split)
        source = f"{split.value} ({path.name})"
    frame = ds.to_pandas()
    return Pairs(pd.DataFrame({
        "sentence1": frame["sentence1"].astype(str),
        "sentence2": frame["sentence2"].astype(str),
        "score": frame["score"].astype(float) * 5.0,  # that copy is scaled to 0-1; STS-B's gold runs 0-5
        "genre": "unknown",
    }), source)


def load(data: str, settings: Settings, uploads: Sequence[Path | str] = (), access: DataAccess = WEB) -> Pairs:
    """Pairs named by ``--data``: ``stsb-dev`` / ``stsb-test`` / ``stsb-train``, or a file.

    Args:
        data: a split name or a path (relative to a data folder, or absolute inside one; on the
            command line also any path of the user's, relative to the folder the command started in).
        settings: supplies the data folders and the size limits.
        uploads: files this conversation uploaded; each may be named by its full path or its file name.
        access: which files this face may read (:data:`tools.benchmark.access.WEB` unless the caller says otherwise).
    """
    name = (data or "").strip()
    if not name:
        raise UserError(f"--data needs a value: stsb-dev, stsb-test, or {HOW_TO_PASS}.")
    try:
        split = Split(name.lower())
    except ValueError:
        split = None
    if split is not None:
        return load_split(split, settings)
    own = access.local_file(name)
    if own is not None:
        return read_file(own, settings)
    if access.local_files and not settings.data_dir_paths:
        raise access.missing(name)
    try:
        path = resolve_path(name, settings.data_dir_paths, uploads)
    except UserError:
        if access.local_files:
            raise access.missing(name) from None
        raise
    return read_file(path, settings)


# --- sampling ------------------------------------------------------------------------------------

def score_bins(scores: pd.Series) -> pd.Series:
    """The gold-score bin of each pair: 0 for [0,1) ... 4 for [4,5] (scores above 5 go to the top bin)."""
    return pd.Series(np.clip(np.searchsorted(BIN_EDGES, scores.to_numpy(), side="right") - 1, 0,
                             len(BIN_EDGES) - 1), index=scores.index, name="bin")


def stratified_sample(frame: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` pairs whose gold-score bins keep the data's proportions, the same for the same ``seed``.

    Each bin gets its share of ``n`` rounded by largest remainder (so the counts add
    up to ``n`` and no bin is off by more than one), then pandas draws that many
    rows of the bin with the seed.
    """
    if n >= len(frame):
        return frame.reset_index(drop=True)
    bins = score_bins(frame["score"])
    counts = bins.value_counts().sort_index()
    exact = counts / counts.sum() * n
    take = np.floor(exact).astype(int)
    short = n - int(take.sum())
    order = (exact - take).sort_values(ascending=False, kind="stable").index[:short]
    take[order] += 1
    parts = [frame[bins == b].sample(n=int(k), random_state=seed) for b, k in take.items() if k > 0]
    return pd.concat(parts).sort_index().reset_index(drop=True)
