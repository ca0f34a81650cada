"""Every setting and limit, read from ``ASSISTANT_*`` environment variables in one place.

Command-line flags override these by building a new :class:`Settings` with
:func:`dataclasses.replace` (``python -m assistant --max-chars 5000 ...``; the flags
are generated from the fields below); nothing else reads the environment.
"""

from __future__ import annotations

import os
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

#: Rows of data one chart may embed: Altair's own default limit, and the most any chart here carries.
CHART_ROWS_LIMIT = 5000
#: Where corpora live unless ASSISTANT_CORPUS_DIR says otherwise (``~`` is the user's home).
DEFAULT_CORPUS_DIR = "~/.cache/embedding-assistant/corpora"

#: Where conversations are kept for reloads unless ASSISTANT_CONVERSATION_DIR says otherwise.
DEFAULT_CONVERSATION_DIR = "~/.cache/embedding-assistant/conversations"

#: Where reference cosines computed for models other than the embedded one are kept.
DEFAULT_REFERENCE_DIR = "~/.cache/embedding-assistant/references"

#: Where the question router keeps each model's embedded examples and classifier unless ASSISTANT_ROUTER_DIR says
#: otherwise.
DEFAULT_ROUTER_DIR = "~/.cache/embedding-assistant/router"

#: The kinds of value a setting holds (:func:`parse_value` reads each from its text).
Value = TypeVar("Value", str, int, float, bool)


def _setting(default: Value, help: str, minimum: float | None = None, maximum: float | None = None) -> Value:
    """A field of :class:`Settings`: its default, its help line and its bounds (typed as the default's value)."""
    return field(default=default, metadata={"help": help, "minimum": minimum, "maximum": maximum})


@dataclass(frozen=True)
class Settings:
    """Configuration and limits.

    Each field maps to the environment variable ``ASSISTANT_<FIELD>`` (upper case)
    and to the flag ``--<field>`` (dashes for underscores). Limits are checked
    before any model work and named in their messages.
    """

    model: str = _setting("minilm", "default model")
    mlm_model: str = _setting("bert-small", "masked-LM model `mask` falls back to")
    device: str = _setting("", "cpu, cuda, cuda:N or mps; empty picks CUDA when present, else CPU")
    model_roots: str = _setting("", "folders local models may load from, ':'-separated")
    data_dir: str = _setting("", "folders benchmark data may be read from, ':'-separated")
    max_chars: int = _setting(20_000, "characters per text", 1)
    max_texts: int = _setting(64, "texts per command", 1)
    max_line_chars: int = _setting(200_000, "characters per command line", 1)
    max_pairs: int = _setting(10_000, "benchmark pairs", 1)
    max_upload_mb: int = _setting(20, "size of an uploaded file, in MB", 1)
    max_chart_rows: int = _setting(CHART_ROWS_LIMIT, "rows of data in one chart (larger maps are sampled to it)",
                                   1, CHART_ROWS_LIMIT)
    time_limit_s: float = _setting(120.0, "seconds one command may run before the reply gives up (0: no limit)", 0)
    queue_size: int = _setting(64, "requests waiting in the app's queue", 1)
    # 2 measured best on 2 cores (bench/load.py, 16 sessions): forward passes still take turns on the
    # model's lock, while a second command tokenizes, builds tables and serializes charts beside it.
    concurrency: int = _setting(2, "commands running at once in one app process", 1)
    cache_size: int = _setting(4096, "cached encodings per model", 0)
    cache_mb: int = _setting(256, "memory cap of each model's encoding cache, in MiB (0 turns it off)", 0)
    results_mb: int = _setting(64, "memory cap of the latest replies' full results, all visitors together, in MiB "
                                   "(older ones are recomputed when `export` needs them)", 0)
    session_idle_s: float = _setting(1800.0, "seconds an idle conversation is kept on the server (its page "
                                             "open or not)", 1)
    closed_grace_s: float = _setting(60.0, "seconds a conversation is kept after its page closes (a dropped "
                                           "connection that comes back within it loses nothing)", 0)
    conversation_dir: str = _setting(DEFAULT_CONVERSATION_DIR, "folder where each conversation is kept so a reload, "
                                     "a reopened tab or a server restart loses nothing (empty: not kept)")
    conversation_mb: int = _setting(20, "disk one kept conversation may take, in MB (past it the oldest replies "
                                        "go first)", 1)
    max_sessions: int = _setting(2000, "conversations kept at once; past it the longest idle ones are freed", 1)
    trim_memory: bool = _setting(True, "after visitors' conversations are freed, give the memory the allocator "
                                       "keeps back to the system (glibc's malloc_trim)")
    malloc_arenas: int = _setting(2, "malloc arenas the server's threads share (glibc; each keeps the memory freed "
                                     "in it, so fewer arenas keep less after visitors leave); 0 leaves glibc's "
                                     "default of eight per core", 0)
    layers_max_sentences: int = _setting(1000, "sentences `probe`, `contextuality` and `cka` may read (--sentences)", 2)
    rollout_max_tokens: int = _setting(48, "tokens `rollout` reads (its heatmaps stay readable)", 4)
    flow_max_tokens: int = _setting(24, "tokens `rollout --method flow` reads (one max-flow per pair of tokens)", 4)
    onnx_rows: int = _setting(16, "a full-precision CPU model's batches of this many inputs or more (bulk work) "
                                  "switch it to ONNX Runtime, exported once on first use; 0 keeps PyTorch", 0)
    fast: bool = _setting(False, "the int8 fast path for every model, as a `:int8` suffix on its name does "
                                 "(CPU only; scores move slightly)")
    fast_kernel: str = _setting("auto", "what the fast path computes with: auto (OpenVINO bf16 where this CPU has "
                                        "AMX, measured it faster and openvino is installed; else int8 where its "
                                        "measured or timed int8 pays; else full precision), int8, bf16, or fp32")
    corpus_dir: str = _setting(DEFAULT_CORPUS_DIR, "folder that holds the encoded corpora (one folder per corpus: "
                                                   "rows, vectors, index, manifest)")
    corpus_max_mb: int = _setting(500, "size of a corpus file (`corpus load` or an upload), in MB", 1)
    corpus_max_rows: int = _setting(1_000_000, "rows one corpus keeps (later rows are refused and counted)", 1)
    corpus_max_chars: int = _setting(5_000, "characters per corpus text (longer ones are cut and counted)", 1)
    corpus_disk_mb: int = _setting(2048, "disk space the corpora under one corpus folder may take, in MB", 1)
    corpus_shared: bool = _setting(False, "a shared server (--share, a Space): each conversation's corpora are its "
                                          "own, in a folder no other visitor can list or search")
    corpus_conversation_mb: int = _setting(1024, "on a shared server, disk one conversation's own corpora may take "
                                                 "together, in MB", 1)
    corpus_conversation_rows: int = _setting(1_000_000, "on a shared server, rows one conversation's own corpora "
                                                        "may hold together", 1)
    corpus_keep: bool = _setting(False, "on a shared server, keep a conversation's corpora after it ends (off: "
                                        "they are deleted with the conversation)")
    corpus_published: str = _setting("", "a folder of corpora the operator publishes to every visitor (read-only)")
    reference_dir: str = _setting(DEFAULT_REFERENCE_DIR, "folder where a model's STS-B dev reference cosines are kept "
                                                         "once computed (the embedded model's ship with the package)")
    router_dir: str = _setting(DEFAULT_ROUTER_DIR, "folder where the question router keeps each model's embedded "
                                                   "example questions and classifier (made again when they change)")

    def __post_init__(self) -> None:
        for f in fields(self):
            minimum = f.metadata.get("minimum")
            value = getattr(self, f.name)
            maximum = f.metadata.get("maximum")
            name = f"ASSISTANT_{f.name.upper()} (--{f.name.replace('_', '-')})"
            if minimum is not None and value < minimum:
                raise ValueError(f"{name} is {value}; it must be at least {minimum:g}.")
            if maximum is not None and value > maximum:
                raise ValueError(f"{name} is {value}; it can be at most {maximum:g}.")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Read every field from ``ASSISTANT_*`` variables, keeping defaults for the rest."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}  # each parsed to its own field's type by parse_value
        for f in fields(cls):
            raw = env.get(f"ASSISTANT_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            values[f.name] = parse_value(f.name, raw)
        return cls(**values)

    @property
    def model_root_paths(self) -> list[Path]:
        """The folders local models may be loaded from."""
        return _paths(self.model_roots)

    @property
    def data_dir_paths(self) -> list[Path]:
        """The folders benchmark data may be read from."""
        return _paths(self.data_dir)

    @property
    def reference_path(self) -> Path:
        """The folder of computed reference cosines (ASSISTANT_REFERENCE_DIR, ``~`` expanded)."""
        return Path(self.reference_dir or DEFAULT_REFERENCE_DIR).expanduser()

    @property
    def router_path(self) -> Path:
        """The router's folder (ASSISTANT_ROUTER_DIR, ``~`` expanded)."""
        return Path(self.router_dir or DEFAULT_ROUTER_DIR).expanduser()

    @property
    def corpus_path(self) -> Path:
        """The folder that holds the corpora (ASSISTANT_CORPUS_DIR, ``~`` expanded)."""
        return Path(self.corpus_dir or DEFAULT_CORPUS_DIR).expanduser().resolve()


def parse_value(name: str, raw: str) -> str | int | float | bool:
    """Convert ``raw`` to the type of the setting ``name``, with a sentence naming it when it is not."""
    default = next(f for f in fields(Settings) if f.name == name).default
    assert default is not MISSING, "every setting has a default (_setting gives one)"
    kind = type(default)
    try:
        return _flag(raw) if kind is bool else kind(raw)
    except ValueError as exc:
        raise ValueError(f"ASSISTANT_{name.upper()}={raw!r} is not a valid {kind.__name__}.") from exc


def _paths(spec: str) -> list[Path]:
    return [Path(p).expanduser().resolve() for p in spec.split(os.pathsep) if p.strip()]


def _flag(raw: str) -> bool:
    """``1/true/yes/on`` or ``0/false/no/off``; ``bool("0")`` would be True."""
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)
