"""`mask … --why`: which input tokens drove each mask's top prediction.

Integrated gradients of the top fill's logit at the mask's position, over the input
tokens' word embeddings, against the same sentence with its words blanked out
(special tokens and masks kept; :mod:`tools.similarity.attribution`). The completeness check
(attributions sum vs the logit minus the baseline's logit) is reported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from tools import masking
from tools.charts import why as why_charts
from tools.core.results import Chart, Result, Table
from tools.core.text import code
from tools.models.hub import LoadedModel, ModelHub, default_hub
from tools.similarity.attribution import BASELINE, logit_attribution
from tools.similarity.why import token_kind

#: Masks explained per command (each one is a full integrated-gradients run).
MAX_EXPLAINED = 3
#: Tokens named per mask in the reply.
NAMED = 3


def mask_why(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    top: int = 5,
    mlm_model: LoadedModel | str | None = None,
    fallback: str | None = None,
    hub: ModelHub | None = None,
) -> Result:
    """The ``mask`` reply plus, for each mask's top fill, each input token's integrated-gradients attribution.

    Args:
        model, texts, top, mlm_model, fallback, hub: as :func:`tools.masking.mask`.

    Returns:
        The fill-mask result with a ``why`` table (mask, position, token, kind,
        contribution), a ``completeness`` table and bars over the sentence.
    """
    hub = hub or default_hub()
    result = masking.mask(model, texts, top=top, mlm_model=mlm_model, fallback=fallback, hub=hub)
    conversation = model if isinstance(model, LoadedModel) else hub.get(model)
    lm, head, _ = masking.choose_model(conversation, mlm_model, fallback or hub.settings.mlm_model, hub)
    prep = masking.prepare(lm, texts[0])
    tokens = lm.tokenizer.convert_ids_to_tokens(prep.input_ids.tolist())
    rows, checks, parts = [], [], []
    for m, pos in enumerate(prep.positions[:MAX_EXPLAINED]):
        best = result.table(f"mask {m + 1}").iloc[0]
        found = logit_attribution(lm, head.network, prep.input_ids, pos, int(best["id"]))
        fill = f"mask {m + 1} → {best['token']}"
        frame = pd.DataFrame({
            "mask": m + 1, "fill": best["token"], "text": fill, "position": range(len(tokens)), "token": tokens,
            "label": [f"{i} {t}" for i, t in enumerate(tokens)],
            "kind": [token_kind(lm, t, int(i)) for t, i in zip(tokens, prep.input_ids.tolist())],
            "contribution": found.scores,
        })
        rows.append(frame)
        checks.append({"mask": m + 1, "fill": best["token"], "logit": found.value,
                       "baseline logit": found.baseline_value, "attributions sum": found.total,
                       "gap": found.gap, "relative gap": found.relative_gap, "steps": found.steps})
        named = frame[frame["kind"] != "special"].sort_values("contribution", ascending=False).head(NAMED)
        parts.append(f"{code(best['token'], 20)} for mask {m + 1} comes most from "
                     + ", ".join(f"{code(r.token, 20)} ({r.contribution:+.3f})" for r in named.itertuples()))
    why = pd.concat(rows, ignore_index=True)
    check = pd.DataFrame(checks)
    skipped = len(prep.positions) - min(len(prep.positions), MAX_EXPLAINED)
    note = f" (the first {MAX_EXPLAINED} masks; {skipped} more not explained)" if skipped else ""
    steps = int(check["steps"].max())
    text = (f"{result.text}\n\n**Why** (integrated gradients of the top fill's logit, {steps} steps; baseline: "
            f"{BASELINE} and the masks){note}: {'; '.join(parts)}. Completeness: the attributions add up to the "
            f"logit minus the baseline's within {float(check['relative gap'].max()):.1%}.")
    chart = why_charts.token_bars(why, title=f"Which tokens drove the top fill ({lm.name}, integrated gradients)")
    return dataclasses.replace(
        result, text=text,
        tables=[*result.tables, Table("why", why.drop(columns=["label", "text"])), Table("completeness", check)],
        charts=[*result.charts, Chart("why", chart)],
        settings={**result.settings, "why": "integrated gradients", "steps": steps, "baseline": BASELINE},
    )
