"""ZeroGPU on Hugging Face Spaces: ``@gpu`` wraps a function with ``spaces.GPU`` when that package is there.

On a ZeroGPU Space a GPU is attached only while a function decorated with
``@spaces.GPU`` runs. Everywhere else (a laptop, a CPU Space, the tests) the
``spaces`` package is absent and :func:`gpu` returns the function unchanged.
The repository's own ``spaces/`` folder (the Space bundle, no ``__init__.py``)
imports as an empty namespace package, which has no ``GPU`` and so counts as absent.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def zero_gpu() -> Callable[[F], F] | None:
    """``spaces.GPU`` when the Hugging Face ``spaces`` package is importable, else None."""
    try:
        module = importlib.import_module("spaces")
    except ImportError:
        return None
    decorator = getattr(module, "GPU", None)
    return decorator if callable(decorator) else None


def gpu(fn: F) -> F:
    """Run ``fn`` on a ZeroGPU slot when on such a Space; a no-op elsewhere."""
    decorator = zero_gpu()
    return decorator(fn) if decorator is not None else fn
