"""Every setting and limit, read from ``ASSISTANT_*`` environment variables in one place.

Command-line flags override these by building a new :class:`Settings` with
:func:`dataclasses.replace`; nothing else reads the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    """Configuration and limits.

    Each field maps to the environment variable ``ASSISTANT_<FIELD>`` (upper case).
    Limits are checked before any model work and named in their messages.
    """

    model: str = "minilm"
    mlm_model: str = "bert-small"
    device: str = ""  # "" picks CUDA when present, else CPU
    model_roots: str = ""  # ":"-separated folders local models may load from
    data_dir: str = ""  # ":"-separated folders benchmark data may be read from
    max_chars: int = 20_000  # characters per text
    max_texts: int = 64  # texts per command
    max_line_chars: int = 200_000  # characters per command line
    max_pairs: int = 10_000  # benchmark pairs
    max_upload_mb: int = 20  # uploaded file size
    max_chart_rows: int = 5_000  # rows of data in one chart
    time_limit_s: float = 120.0  # per command
    queue_size: int = 64  # requests waiting in the app's queue
    concurrency: int = 1  # commands running at once in one app process
    cache_size: int = 4096  # cached encodings per model

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Settings":
        """Read every field from ``ASSISTANT_*`` variables, keeping defaults for the rest."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = env.get(f"ASSISTANT_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            default = f.default
            try:
                values[f.name] = type(default)(raw)
            except ValueError as exc:
                raise ValueError(
                    f"ASSISTANT_{f.name.upper()}={raw!r} is not a valid {type(default).__name__}."
                ) from exc
        return cls(**values)

    @property
    def model_root_paths(self) -> list[Path]:
        """The folders local models may be loaded from."""
        return _paths(self.model_roots)

    @property
    def data_dir_paths(self) -> list[Path]:
        """The folders benchmark data may be read from."""
        return _paths(self.data_dir)


def _paths(spec: str) -> list[Path]:
    return [Path(p).expanduser().resolve() for p in spec.split(os.pathsep) if p.strip()]
