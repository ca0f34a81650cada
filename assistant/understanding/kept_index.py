"""Where a routing index is kept between processes: a pickle per model and per set of examples, in the folder
``ASSISTANT_ROUTER_DIR`` names, keyed by everything it was made from; the :data:`KEPT_INDEXES` most recently used
stay (an older one is removed when a new one is written). Beside them, each model's phrasing vectors by text
(:func:`embedded`), so that an index made again for a few new phrasings embeds only those."""

from __future__ import annotations

import contextlib
import hashlib
import pickle
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import torch

from tools.core import kept
from tools.corpus.files import atomic_write
from tools.models.hub import LoadedModel
from tools.models.names import file_name

#: What a kept file holds, in words: a file of another layout is never read (it is made again).
LAYOUT = "one vector per distinct phrasing and row; the words and classifier of every phrasing said (float32)"
#: What a kept file of phrasing vectors holds, in words.
VECTORS_LAYOUT = "the texts in order, then their unit vectors as one float32 matrix"
#: How many kept indexes the folder holds (13 MB each for MiniLM): one per model and set of examples in use.
KEPT_INDEXES = 8


def key(lm: LoadedModel, made: Sequence[str]) -> str:
    """What a kept index was made from: the model's files, the libraries, the file's :data:`LAYOUT` and ``made``
    (the router's settings, the texts and their rows)."""
    import sklearn
    import transformers

    parts = [*lm.source.stamp(), torch.__version__, transformers.__version__, sklearn.__version__, LAYOUT, *made]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def read(path: Path) -> tuple | None:
    """A kept index's parts, or None when there is none (or it cannot be read: it is made again).

    The file is a pickle in the user's own folder (made private when created), written by this code only."""
    try:
        with path.open("rb") as handle:
            parts = pickle.load(handle)  # noqa: S301 - the user's own cache, see above
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError):
        return None
    kept.used(path)
    return parts


@contextlib.contextmanager
def making(folder: Path | None) -> Iterator[None]:
    """Hold ``folder``'s lock while an index is made in it: a process starting beside another that is making the same
    index (two servers, two test workers) waits for it and reads its file rather than making it again on the same
    cores. Without a folder, or where the lock cannot be taken (no ``fcntl``, a read-only folder), it does not wait."""
    if folder is None:
        yield
        return
    try:
        import fcntl

        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = (folder / ".making.lock").open("a")
    except (ImportError, OSError):
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the handle closes, or when the process ends
        yield


def write(path: Path, parts: tuple) -> None:
    """Keep an index's parts (or vectors) for the next process (atomically; a folder that cannot be written is
    skipped); the folder keeps the :data:`KEPT_INDEXES` most recently used files of the same kind."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(path, lambda handle: pickle.dump(parts, handle, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        return
    kept.prune(path.parent, KEPT_INDEXES, f"*{path.suffix}")


def vectors_path(folder: Path, lm: LoadedModel) -> Path:
    """Where ``lm``'s phrasing vectors are kept: one file per model's files and libraries."""
    return folder / f"{file_name(lm.name)}-{key(lm, [VECTORS_LAYOUT])}.vectors"


def embedded(path: Path | None, texts: Sequence[str], embed: Callable[[list[str]], torch.Tensor]) -> torch.Tensor:
    """The unit vectors of ``texts`` (distinct): those kept in ``path`` are read, only the others are embedded;
    the file then keeps these texts' vectors. Adding a few phrasings to a router of thousands costs only theirs."""
    kept_parts = read(path) if path is not None else None
    known: dict[str, torch.Tensor] = {}
    if isinstance(kept_parts, tuple) and len(kept_parts) == 2:
        known = dict(zip(kept_parts[0], torch.from_numpy(kept_parts[1])))
    missing = [t for t in texts if t not in known]
    if missing:
        known.update(zip(missing, embed(missing)))
    vectors = torch.stack([known[t] for t in texts]) if texts else torch.empty(0)
    if missing and path is not None:
        write(path, (tuple(texts), vectors.numpy()))
    return vectors
