"""A model's sentence-transformers pooling recipe, read from its own folder (never from the network)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tools.models.names import ModelSource

#: pooling config key -> mode, in sentence-transformers' order.
_MODES = (
    ("pooling_mode_cls_token", "cls"),
    ("pooling_mode_mean_tokens", "mean"),
    ("pooling_mode_max_tokens", "max"),
    ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len"),
    ("pooling_mode_lasttoken", "lasttoken"),
)


@dataclass(frozen=True)
class SentenceConfig:
    """How ``SentenceTransformer.encode`` pools this model.

    Attributes:
        mode: cls, mean, max, mean_sqrt_len or lasttoken.
        normalize: whether the vector is scaled to unit length.
        max_seq_length: the most tokens it reads.
    """

    mode: str
    normalize: bool
    max_seq_length: int

    def as_dict(self) -> dict[str, object]:
        """The recipe as ``{"mode", "normalize", "max_seq_length"}``."""
        return {"mode": self.mode, "normalize": self.normalize, "max_seq_length": self.max_seq_length}


def local_folder(source: ModelSource) -> Path | None:
    """The folder a model was (or would be) loaded from, looking only on disk."""
    if source.kind in ("embedded", "local"):
        return Path(source.location)
    try:  # a hub model already downloaded: look in the cache, never on the network
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(source.location, local_files_only=True))
    except Exception:
        return None


def read_sentence_config(source: ModelSource, max_tokens: int) -> SentenceConfig | None:
    """The recipe from the folder's ``modules.json``, pooling ``config.json`` and ``sentence_bert_config.json``.

    Returns None when the model has no single pooling mode (concatenated poolings
    are rare; refuse rather than guess).
    """
    folder = local_folder(source)
    if folder is None or not (folder / "modules.json").is_file():
        return None
    modules = json.loads((folder / "modules.json").read_text())
    pooling_dir = next((m["path"] for m in modules if m.get("type", "").endswith("Pooling")), None)
    if pooling_dir is None:
        return None
    pool_cfg = json.loads((folder / pooling_dir / "config.json").read_text())
    modes = [mode for key, mode in _MODES if pool_cfg.get(key)]
    if len(modes) != 1:
        return None
    st_cfg_path = folder / "sentence_bert_config.json"
    st_cfg = json.loads(st_cfg_path.read_text()) if st_cfg_path.is_file() else {}
    return SentenceConfig(modes[0], any(m.get("type", "").endswith("Normalize") for m in modules),
                          int(st_cfg.get("max_seq_length") or max_tokens))
