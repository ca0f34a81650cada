"""The model hub under its old name: a thin re-export of ``tools.models`` (import from there in new code)."""

from __future__ import annotations

from tools.models.hub import (LoadedModel, ModelHub, ModelState, as_model, default_hub, load, model_by_key,
                              quantize)
from tools.models.loading import load_failure, refuse_remote_code
from tools.models.names import (ALIASES, EMBEDDED, FAST_SUFFIX, OFFLINE_DEFAULT, ModelSource, hub_reachable,
                                pick_device, resolve, split_fast)
from tools.models.st_config import local_folder

__all__ = ["ALIASES", "EMBEDDED", "FAST_SUFFIX", "OFFLINE_DEFAULT", "LoadedModel", "ModelHub", "ModelSource",
           "ModelState", "as_model", "default_hub", "hub_reachable", "load", "load_failure", "local_folder",
           "model_by_key", "pick_device", "quantize", "refuse_remote_code", "resolve", "split_fast"]
