"""The GPU boundary: ``@gpu(duration=...)`` puts ``spaces.GPU`` on a function on a ZeroGPU Space; a no-op elsewhere.

On a ZeroGPU Space (``SPACES_ZERO_GPU`` set) a GPU is attached only while a
decorated function runs, and it runs in a worker process forked once: every
call's arguments and result cross by **pickle** through queues (``spaces`` 0.51,
``zero/wrappers.py``). So a decorated function takes only small picklable things
(token ids, masks, flags, a model's registry key, see
``tools.models.hub.model_by_key``), finds the model through the process hub (the
worker inherits it through ``fork``; models are placed on ``cuda`` at start-up,
as ZeroGPU prescribes) and returns CPU tensors or numpy arrays. ``tests/test_zerogpu.py``
runs every command through a stand-in that does exactly that to arguments and results.

``spaces`` is imported only when ``SPACES_ZERO_GPU`` is set, never on a laptop, a CPU
Space or in the tests (where the repository's own ``spaces/`` folder would shadow it).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: Seconds ZeroGPU gives a call when the decorator names none.
DEFAULT_DURATION = 60
#: Every function decorated with :func:`gpu`, as written (filled at import; the contract test wraps each).
BOUNDARY: list[Callable[..., Any]] = []


def on_zero_gpu() -> bool:
    """Whether this process runs on a ZeroGPU Space (``SPACES_ZERO_GPU`` is true there)."""
    return os.environ.get("SPACES_ZERO_GPU", "").strip().lower() in ("1", "true", "yes")


def zero_gpu() -> Callable[..., Any] | None:
    """``spaces.GPU`` on a ZeroGPU Space, else None."""
    if not on_zero_gpu():
        return None
    try:
        module = importlib.import_module("spaces")
    except ImportError:
        return None
    decorator = getattr(module, "GPU", None)
    return decorator if callable(decorator) else None


def gpu(fn: F | None = None, *, duration: Callable[..., int] | int | None = None) -> Any:
    """Run the decorated function on a ZeroGPU slot when on such a Space; a no-op elsewhere.

    Use as ``@gpu`` or ``@gpu(duration=seconds_for)``, where ``seconds_for`` takes the
    function's own arguments and returns the seconds the call may need (ZeroGPU
    stops a call at its duration; the default is 60 s).
    """
    def wrap(f: F) -> F:
        BOUNDARY.append(f)
        decorator = zero_gpu()
        if decorator is None:
            return f
        return decorator(f, duration=duration) if duration is not None else decorator(f)

    return wrap(fn) if fn is not None else wrap
