"""Hidden states in bf16 from OpenVINO on the full-precision ONNX export (the only module importing openvino).

The fast path's kernels on CPUs with AMX (``amx_bf16``): OpenVINO's CPU plugin runs the export's MatMuls on the
AMX tiles in bf16. On STS-B test it scored Spearman 0.8204 against full precision's 0.8203 (int8: 0.8176), and
on an Intel Xeon 6/207 with AMX (2 cores) it ran 1.20x, 1.15x, 1.06x and 0.96x ONNX Runtime's int8 in four runs
of ``bench/throughput.py`` (0.95x, 1.08x, 0.76x and 0.96x on bulk passes): about int8's speed, at full precision's
scores. Without AMX, bf16 is emulated or widened and slower than fp32, so the table in :mod:`tools.models.cpu`
chooses it only where it was measured. Passes with attention weights run the PyTorch encoder (full precision).
``openvino`` is optional (``requirements-openvino.txt``): :func:`available` says whether it is installed.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

import torch

from tools.core import kept
from tools.models.backends import EncoderModel
from tools.models.backends.torch_fp32 import TorchBackend
from tools.models.threads import max_threads

#: The setting OpenVINO's CPU plugin gets: bf16 inference, several batches in flight (its "streams" split the
#: cores, as ONNX Runtime's side-by-side sessions do), every core this process may use.
PRECISION = "bf16"


def available() -> bool:
    """Whether the ``openvino`` package is installed (it is imported only when a model first runs on it)."""
    return importlib.util.find_spec("openvino") is not None


class OpenVinoBackend:
    """Hidden states from OpenVINO in bf16; passes with attentions (or off the CPU) run the PyTorch encoder.

    Attributes:
        name: ``"openvino-bf16"``: named in replies and benchmarks.
        path: the full-precision ONNX export it compiles.
    """

    name = "openvino-bf16"

    def __init__(self, path: str, fallback: TorchBackend | None = None) -> None:
        self.path = path
        self.fallback = fallback or TorchBackend("torch")
        self._compiled: Any = None
        self._requests: Any = None
        self._lock = threading.Lock()

    def compiled(self) -> tuple[Any, Any]:
        """The export compiled for this CPU in bf16 and its queue of requests (made once; about half a second for
        MiniLM)."""
        with self._lock:
            if self._compiled is None:
                import openvino

                core = openvino.Core()
                self._compiled = core.compile_model(core.read_model(self.path), "CPU", {
                    "INFERENCE_PRECISION_HINT": PRECISION, "PERFORMANCE_HINT": "THROUGHPUT",
                    "INFERENCE_NUM_THREADS": str(max_threads())})
                self._requests = openvino.AsyncInferQueue(
                    self._compiled, self._compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS"))
                kept.used(Path(self.path).parent)
            return self._compiled, self._requests

    def run(self, lm: EncoderModel, feed: dict[str, torch.Tensor], attentions: bool,
            threads: int, last_only: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """See :class:`tools.models.backends.Backend`."""
        return self.run_many(lm, [feed], attentions, threads, last_only)[0]

    def run_many(self, lm: EncoderModel, feeds: list[dict[str, torch.Tensor]], attentions: bool,
                 threads: int, last_only: bool = False) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        """See :class:`tools.models.backends.Backend`: the batches go to OpenVINO's queue of requests, as many in
        flight as it finds best for this CPU, and come back in order."""
        if attentions or lm.device.type != "cpu" or not Path(self.path).is_file():
            return self.fallback.run_many(lm, feeds, attentions, threads, last_only)
        # passes never overlap (the caller holds the process-wide pass lock), so one queue serves them all
        compiled, requests = self.compiled()
        output = compiled.output("last_hidden_state" if last_only else "hidden_states")
        names = [i.get_any_name() for i in compiled.inputs]
        out: list[tuple[torch.Tensor, torch.Tensor | None]] = [None] * len(feeds)  # type: ignore[list-item]

        def done(request: Any, i: int) -> None:
            states = torch.from_numpy(request.get_tensor(output).data.copy())
            out[i] = (states[None] if last_only else states), None

        requests.set_callback(done)
        for i, feed in enumerate(feeds):
            requests.start_async({n: feed[n].numpy() for n in names}, i)
        requests.wait_all()
        return out
