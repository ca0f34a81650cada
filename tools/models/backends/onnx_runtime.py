"""Hidden states from an ONNX export run in ONNX Runtime (the only module importing it).

Two backends share it: ``onnx`` (full precision, the default for large hidden-state passes
of a CPU model, exported on first use) and ``onnx-int8`` (the fast path, MatMuls quantised to
int8, exported when the ``:int8`` model loads). Passes that need attention weights run on
the PyTorch encoder in both.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import queue
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

from tools.core import kept
from tools.models.backends import EncoderModel
from tools.models.backends.torch_fp32 import TorchBackend
from tools.models.names import file_name
from tools.models.threads import max_threads

log = logging.getLogger(__name__)
#: The hidden-state inputs an exported encoder takes, in this order (those its tokenizer gives).
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: Every hidden state (L+1, batch, tokens, hidden), and the last alone (a pass that pools it asks only for it).
ONNX_OUTPUTS = ("hidden_states", "last_hidden_state")
#: Several batches run on this many sessions side by side (at most one per core), each with its share of the
#: cores, instead of one after another on one session over every core: a small encoder's operators are too
#: short to keep two threads busy between their joins. On a 2-core AMD EPYC (25/17, AVX2), 5,000 short texts
#: in length-sorted batches of 32: two one-thread sessions 14.9 s and 15.6 s against 17.5 s and 19.1 s for one
#: two-thread session (3 interleaved repeats each, two runs; vectors identical); batches split in halves
#: across the two sessions gained only 6%. Measured on 2 cores only: above 4 cores each worker gets
#: several threads (and each worker's session holds its own copy of the weights).
MAX_WORKERS = 4
#: How many models' exports the temporary folder keeps (the most recently used; each holds a float and maybe an
#: int8 file, 90 and 60 MB for MiniLM): older ones go when a new export is made.
KEPT_EXPORTS = 6


class OnnxBackend:
    """Hidden states from ONNX Runtime; passes with attentions (or off the CPU) run the PyTorch encoder.

    Attributes:
        name: ``"onnx"`` or ``"onnx-int8"``: named in replies and benchmarks.
        path: the ONNX file, or None until the lazy full-precision export has run.
    """

    def __init__(self, path: str | None, name: str = "onnx-int8", fallback: TorchBackend | None = None,
                 export: Callable[[], str | None] | None = None, min_rows: int = 0) -> None:
        self.path = path
        self.name = name
        self.fallback = fallback or TorchBackend("torch-int8")
        self._export = export
        self._min_rows = min_rows
        self._sessions: dict[tuple[int, int], Any] = {}
        self._lock = threading.Lock()

    @classmethod
    def lazy(cls, lm: Any, min_rows: int) -> OnnxBackend:
        """Full precision: PyTorch until a batch of ``min_rows`` inputs or more (bulk work: a benchmark, a
        corpus, the question router's examples), which exports the model once (seconds; the file is reused by
        later processes); that pass and every later one then run in ONNX Runtime, as does every pass of a later
        process that finds the export made (a small pass of two short texts: 5 ms there against 17 ms in PyTorch
        on a 2-core AMD EPYC 25/17). A chat's few texts never pay for the export."""
        return cls(kept_export(lm, int8=False), "onnx", TorchBackend("torch"),
                   export=lambda: export_onnx(lm, int8=False), min_rows=min_rows)

    def session(self, threads: int, worker: int = 0) -> Any:
        """The ONNX Runtime session of ``worker`` with ``threads`` intra-op threads (built once each)."""
        with self._lock:
            if (threads, worker) not in self._sessions:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
                path = str(self.path)
                self._sessions[threads, worker] = onnxruntime.InferenceSession(
                    path, options, providers=["CPUExecutionProvider"])
                kept.used(Path(path).parent)
            return self._sessions[threads, worker]

    def _ready(self, rows: int) -> bool:
        """Whether this pass runs in ONNX Runtime, exporting the model first when it is the first large one."""
        if self.path is not None and (self._sessions or Path(self.path).is_file()):
            return True
        self.path = None  # an export removed from the temporary folder before any session read it: made again
        if self._export is None or rows < self._min_rows:
            return False
        with self._lock:
            if self.path is None and self._export is not None:
                self.path = self._export()
                if self.path is None:  # an architecture the exporter cannot trace stays on PyTorch
                    self._export = None
        return self.path is not None

    def run(self, lm: EncoderModel, feed: dict[str, torch.Tensor], attentions: bool,
            threads: int, last_only: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """See :class:`tools.models.backends.Backend`."""
        return self.run_many(lm, [feed], attentions, threads, last_only)[0]

    def run_many(self, lm: EncoderModel, feeds: list[dict[str, torch.Tensor]], attentions: bool,
                 threads: int, last_only: bool = False) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        """See :class:`tools.models.backends.Backend`: one batch on a session over every core, several on up
        to :data:`MAX_WORKERS` sessions side by side, each taking the next batch when it is free."""
        rows = max(int(feed["input_ids"].shape[0]) for feed in feeds)
        if attentions or lm.device.type != "cpu" or not self._ready(rows):
            return self.fallback.run_many(lm, feeds, attentions, threads, last_only)
        # ONNX Runtime's own pool on every core: on STS-B test (2 cores, load 1.2-2) a 2-thread session took
        # 5.5 s where the torch thread chooser's 1-or-2 mix took 7.7-10.4 s. Passes never overlap: the
        # caller holds the process-wide pass lock.
        cores = max(threads, max_threads())
        # one worker count per machine, so the sessions made are too: a short last group uses fewer, not new ones
        workers = min(cores, MAX_WORKERS)
        if workers == 1 or len(feeds) == 1:
            session = self.session(cores)
            return [_states(session, feed, last_only) for feed in feeds]
        out: list[tuple[torch.Tensor, torch.Tensor | None]] = [None] * len(feeds)  # type: ignore[list-item]
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(feeds)):
            todo.put(i)

        def work(worker: int) -> None:
            session = self.session(cores // workers, worker)
            while True:
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                out[i] = _states(session, feeds[i], last_only)

        busy = min(workers, len(feeds))
        with ThreadPoolExecutor(busy, thread_name_prefix="onnx-worker") as pool:
            for done in [pool.submit(work, w) for w in range(busy)]:
                done.result()  # an error in a worker is raised here
        return out


def _states(session: Any, feed: dict[str, torch.Tensor], last_only: bool) -> tuple[torch.Tensor, None]:
    """One batch's hidden states from ``session``: every layer stacked, or the last alone."""
    inputs = {i.name: feed[i.name].numpy() for i in session.get_inputs()}
    if last_only:  # ONNX Runtime then runs only the nodes that output needs: no stacking of every layer
        return torch.from_numpy(session.run(["last_hidden_state"], inputs)[0])[None], None
    return torch.from_numpy(session.run(["hidden_states"], inputs)[0]), None


class _QuantiserNotes(logging.Filter):
    """Drops ONNX Runtime's quantiser notes (one INFO line per tensor, and the advice to pre-process the model,
    some on the root logger) wherever they would be written; its other warnings and errors pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        from_ort = record.name.startswith("onnxruntime") or f"{os.sep}onnxruntime{os.sep}" in record.pathname
        advice = str(record.msg).startswith("Please consider to run pre-processing")
        return not from_ort or (record.levelno >= logging.WARNING and not advice)


@contextlib.contextmanager
def quiet_quantiser() -> Iterator[None]:
    """Keep the quantiser's INFO lines off the terminal (and out of every log handler) while it runs; the
    application's logging is left as it was configured, warnings included."""
    notes = _QuantiserNotes()
    handlers = {h for lg in (logging.getLogger(), logging.getLogger("onnxruntime")) for h in lg.handlers}
    loggers = [logging.getLogger(), logging.getLogger("onnxruntime")]
    for h in handlers:
        h.addFilter(notes)
    for lg in loggers:
        lg.addFilter(notes)
    try:
        yield
    finally:
        for h in handlers:
            h.removeFilter(notes)
        for lg in loggers:
            lg.removeFilter(notes)


def _export_path(lm: Any, int8: bool) -> Path | None:
    """Where the export of ``lm`` is kept: a temporary folder keyed by the model's files and the library versions
    (None without ONNX Runtime)."""
    try:
        import onnxruntime
    except ImportError:
        return None
    stamp = [*lm.source.stamp(), torch.__version__, onnxruntime.__version__, ",".join(ONNX_OUTPUTS)]
    key = hashlib.sha256("|".join(stamp).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / "assistant-onnx" / f"{file_name(lm.name)}-{key}"
    return target / ("int8.onnx" if int8 else "float.onnx")


def kept_export(lm: Any, int8: bool) -> str | None:
    """The path of an export an earlier pass (of this process or another) already made, else None."""
    path = _export_path(lm, int8)
    if path is None or not path.is_file():
        return None
    kept.used(path.parent)
    return str(path)


def export_onnx(lm: Any, int8: bool) -> str | None:
    """The float encoder's hidden-state forward as an ONNX model; its path, or None when it cannot be made.

    The float encoder (``sdpa``) is exported with every hidden state as one output,
    (L+1, batch, tokens, hidden); for ``int8`` its MatMuls are then quantised dynamically
    by ONNX Runtime (per-channel int8 weights). The file lives in a temporary folder keyed
    by the model's folder, its weights' dates and the library versions, so later
    processes reuse it; the :data:`KEPT_EXPORTS` most recently used models' exports stay there (older ones are
    removed when a new one is made); nothing is written into the project. Attention weights are
    not exported: passes that need them stay on the PyTorch encoder.
    """
    try:
        import onnx  # noqa: F401  (torch's exporter needs it)
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        return None
    final = _export_path(lm, int8)
    if final is None:
        return None
    if final.is_file():
        kept.used(final.parent)
        return str(final)
    target = final.parent
    names = [n for n in ONNX_INPUTS if n == "input_ids" or n in lm.tokenizer.model_input_names]
    try:
        target.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=target))
        _export(lm, names, work / "float.onnx")
        if int8:
            with warnings.catch_warnings(), quiet_quantiser():
                warnings.simplefilter("ignore")
                quantize_dynamic(str(work / "float.onnx"), str(work / "int8.onnx"), weight_type=QuantType.QInt8,
                                 per_channel=True, op_types_to_quantize=["MatMul"])
        os.replace(work / final.name, final)  # atomic: a process beside this one sees all of it or none
        for f in work.iterdir():
            f.unlink()
        work.rmdir()
        kept.prune(target.parent, KEPT_EXPORTS)
    except Exception as exc:  # an architecture the exporter cannot trace keeps the PyTorch path
        log.warning("ONNX export of %s failed (%s); staying on PyTorch", lm.name, exc)
        return None
    return str(final)


def export_int8(lm: Any) -> str | None:
    """The fast path's int8 export (see :func:`export_onnx`)."""
    return export_onnx(lm, int8=True)


#: The fast path's backend: an int8 export, attentions on the PyTorch int8 encoder.
OnnxInt8Backend = OnnxBackend


def _export(lm: Any, names: list[str], path: Path) -> None:
    encoder = lm.encoder

    class HiddenStates(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            out = self.encoder(**dict(zip(names, inputs)), output_hidden_states=True)
            return torch.stack(out.hidden_states, dim=0), out.last_hidden_state

    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102], [101, 2023, 102, 0, 0, 0]])
    ids = ids.clamp(max=int(lm.config.vocab_size) - 1)
    sample = {"input_ids": ids, "attention_mask": (ids != 0).long(), "token_type_ids": torch.zeros_like(ids)}
    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    axes["hidden_states"] = {1: "batch", 2: "tokens"}
    axes["last_hidden_state"] = {0: "batch", 1: "tokens"}
    before = getattr(encoder.config, "_attn_implementation", None)
    try:
        if before not in (None, "sdpa"):
            try:
                encoder.set_attn_implementation("sdpa")
            except (ValueError, ImportError):
                pass
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(HiddenStates().eval(), tuple(sample[n] for n in names), str(path), dynamo=False,
                              opset_version=17, input_names=names, output_names=list(ONNX_OUTPUTS),
                              dynamic_axes=axes)
    finally:
        if before is not None and getattr(encoder.config, "_attn_implementation", None) != before:
            encoder.set_attn_implementation(before)
