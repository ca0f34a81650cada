"""Facts about a loaded model: sizes, parameter counts, where it came from."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import pandas as pd
import torch

from tools.core.timing import answer
from tools.inspection import replies
from tools.inspection.facts import ModelFacts
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
    )


#: The one-call tool: :func:`description` answered as a Result by the family's formatter.
describe = answer(description, replies.describe, "describe")
