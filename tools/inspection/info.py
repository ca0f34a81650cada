"""Facts about a loaded model: sizes, parameter counts, where it came from."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pandas as pd
import torch

from tools.core.timing import answer
from tools.inspection import replies
from tools.inspection.facts import ModelFacts
from tools.models.cpu import measured_like, this_cpu
from tools.models.hub import LoadedModel, as_model


def weights(encoder: torch.nn.Module) -> Iterator[tuple[str, int]]:
    """(name, size) of every weight, including int8 layers' packed weights (not torch parameters)."""
    for name, param in encoder.named_parameters():
        yield name, param.numel()
    for name, module in encoder.named_modules():
        if callable(getattr(module, "weight", None)):  # a dynamically quantised Linear
            yield f"{name}.weight", module.weight().numel()
            bias = module.bias() if callable(getattr(module, "bias", None)) else None
            if bias is not None:
                yield f"{name}.bias", bias.numel()


def parameter_groups(lm: LoadedModel) -> pd.DataFrame:
    """Parameters per top-level block (embeddings, each encoder layer, pooler)."""
    counts: dict[str, int] = defaultdict(int)
    for name, size in weights(lm.encoder):
        parts = name.split(".")
        if parts[0] == "encoder" and len(parts) > 2 and parts[2].isdigit():
            group = f"layer {parts[2]}"
        else:
            group = parts[0]
        counts[group] += size
    return pd.DataFrame({"block": list(counts), "parameters": list(counts.values())})


def description(model: LoadedModel | str | None) -> ModelFacts:
    """Layers, heads, hidden size, vocabulary, parameters, embedding matrix, device, origin."""
    lm = as_model(model)
    emb = lm.encoder.get_input_embeddings().weight
    return ModelFacts(
        name=lm.name,
        architecture=type(lm.encoder).__name__,
        num_layers=lm.num_layers,
        num_heads=lm.num_heads,
        hidden_size=lm.hidden_size,
        intermediate_size=getattr(lm.config, "intermediate_size", ""),
        vocabulary=len(lm.tokenizer),
        parameters=sum(size for _, size in weights(lm.encoder)),
        embedding_shape=(int(emb.shape[0]), int(emb.shape[1])),
        max_tokens=lm.max_tokens,
        dtype=str(emb.dtype).replace("torch.", ""),
        device=str(lm.device),
        sentence_recipe=lm.sentence_config(),
        source_kind=lm.source.kind,
        source_location=lm.source.location,
        source_description=lm.source.description,
        groups=parameter_groups(lm),
        **compute_paths(lm),
    )


def compute_paths(lm: LoadedModel) -> dict[str, Any]:
    """Which backend runs each kind of pass now, on which CPU, and what was measured on a CPU of its kind.

    An ONNX backend runs every hidden-state pass once its export exists; before that (the lazy full-precision
    export) passes under its row threshold run its PyTorch fallback. Attention weights always come from PyTorch.
    """
    backend = lm.state.backend
    fallback = getattr(backend, "fallback", None)
    if lm.device.type != "cpu" or fallback is None:
        return {"paths": {"chat": backend.name, "bulk": backend.name, "attention": backend.name}}
    exported = getattr(backend, "path", None) is not None
    rows = 0 if exported else getattr(backend, "_min_rows", 0)
    paths = {"chat": backend.name if exported or not rows else fallback.name, "bulk": backend.name,
             "attention": fallback.name}
    cpu = this_cpu()
    return {"paths": paths, "bulk_rows": rows, "cpu": cpu, "measured": measured_like(cpu),
            "kernel": lm.state.kernel}


#: The one-call tool: :func:`description` answered as a Result by the family's formatter.
describe = answer(description, replies.describe, "describe")
