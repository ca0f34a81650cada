"""The Hugging Face Space's entry point: the embedding assistant's page.

Assembled next to ``tools/`` and ``assistant/`` by ``python spaces/build.py OUT_DIR``.
Gradio reads the address from GRADIO_SERVER_NAME / GRADIO_SERVER_PORT (a Space sets
them; elsewhere 127.0.0.1:7860) and the MCP switch from GRADIO_MCP_SERVER.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

if os.environ.get("SPACES_ZERO_GPU", "").strip().lower() in ("1", "true", "yes"):
    # ZeroGPU: `spaces` patches torch before anything touches CUDA; elsewhere it is never imported.
    import spaces  # noqa: F401 - imported first, before torch, as ZeroGPU requires

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from assistant.app import launch
from tools.core.config import Settings

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # `launch` loads the default model before it serves (on ZeroGPU onto `cuda`, at start-up, as ZeroGPU
    # prescribes; the forked GPU worker inherits it), so the first visitor finds it ready.
    launch(Settings.from_env(), host=None, port=None)
