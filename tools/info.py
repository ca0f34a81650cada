"""Facts about a loaded model: sizes, parameter counts, where it came from."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import pandas as pd
import torch

from tools import charts
from tools.core.results import Chart, Result, Table
from tools.core.timing import timed
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


@timed("model")
def describe(model: LoadedModel | str | None) -> Result:
    """Layers, heads, hidden size, vocabulary, parameters, embedding matrix, device, origin."""
    lm = as_model(model)
    cfg = lm.config
    emb = lm.encoder.get_input_embeddings().weight
    n_params = sum(size for _, size in weights(lm.encoder))
    recipe = lm.sentence_config()
    facts = [
        ("name", lm.name),
        ("architecture", type(lm.encoder).__name__),
        ("layers", lm.num_layers),
        ("attention heads", lm.num_heads),
        ("hidden size", lm.hidden_size),
        ("intermediate size", getattr(cfg, "intermediate_size", "")),
        ("vocabulary size", len(lm.tokenizer)),
        ("parameters", n_params),
        ("input-embedding matrix", f"{tuple(emb.shape)[0]} x {tuple(emb.shape)[1]}"),
        ("max positions", lm.max_tokens),
        ("dtype", str(emb.dtype).replace("torch.", "")),
        ("device", str(lm.device)),
        ("sentence pooling (sbert)",
         "none" if recipe is None else f"{recipe['mode']}{', normalised' if recipe['normalize'] else ''}"
         f", {recipe['max_seq_length']} tokens"),
        ("loaded from", f"{lm.source.kind}: {lm.source.location}"),
    ]
    table = pd.DataFrame(facts, columns=["property", "value"]).astype({"value": str})
    groups = parameter_groups(lm)
    text = (
        f"**{lm.name}** ({lm.source.description or lm.source.location}): {lm.num_layers} layers x "
        f"{lm.num_heads} heads, hidden size {lm.hidden_size}, {len(lm.tokenizer):,} tokens in the vocabulary, "
        f"{n_params / 1e6:.1f} M parameters ({groups.loc[groups['block'] == 'embeddings', 'parameters'].sum() / n_params:.0%} "
        f"in the embeddings), on {lm.device}."
    )
    chart = charts.bars(groups, "block", "parameters", title="Parameters per block", sort=None)
    return Result("model", text, [Table("model", table), Table("parameters", groups)],
                  [Chart("parameters", chart)], model=lm.name)
