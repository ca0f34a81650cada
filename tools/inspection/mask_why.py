"""`mask … --why`: which input tokens drove each mask's top prediction.

Integrated gradients of the top fill's logit at the mask's position, over the input
tokens' word embeddings, against the same sentence with its words blanked out
(special tokens and masks kept; :mod:`tools.similarity.attribution`). The completeness check
(attributions sum vs the logit minus the baseline's logit) is reported.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from tools.core.timing import answer
from tools.inspection import masking, replies
from tools.inspection.facts import FillReasons
from tools.models.hub import LoadedModel, ModelHub, default_hub
from tools.similarity.attribution import BASELINE, logit_attribution
from tools.similarity.why import token_kind

#: Masks explained per command (each one is a full integrated-gradients run).
MAX_EXPLAINED = 3


def explanation(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    top: int = 5,
    mlm_model: LoadedModel | str | None = None,
    fallback: str | None = None,
    hub: ModelHub | None = None,
) -> FillReasons:
    """The ``mask`` reply plus, for each mask's top fill, each input token's integrated-gradients attribution.

    Args:
        model, texts, top, mlm_model, fallback, hub: as :func:`tools.inspection.masking.mask`.

    Returns:
        The facts; ``mask_why`` (the same call) answers with a Result:
        The fill-mask result with a ``why`` table (mask, position, token, kind,
        contribution), a ``completeness`` table and bars over the sentence.
    """
    hub = hub or default_hub()
    fills = masking.filling(model, texts, top=top, mlm_model=mlm_model, fallback=fallback, hub=hub)
    conversation = model if isinstance(model, LoadedModel) else hub.get(model)
    lm, head, _ = masking.choose_model(conversation, mlm_model, fallback or hub.settings.mlm_model, hub)
    prep = masking.prepare(lm, texts[0])
    tokens = lm.tokenizer.convert_ids_to_tokens(prep.input_ids.tolist())
    rows, checks = [], []
    for m, pos in enumerate(prep.positions[:MAX_EXPLAINED]):
        best = fills.candidates[m].iloc[0]
        found = logit_attribution(lm, head.network, prep.input_ids, pos, int(best["id"]))
        rows.append(pd.DataFrame({
            "mask": m + 1, "fill": best["token"], "position": range(len(tokens)), "token": tokens,
            "kind": [token_kind(lm, t, int(i)) for t, i in zip(tokens, prep.input_ids.tolist())],
            "contribution": found.scores,
        }))
        checks.append({"mask": m + 1, "fill": best["token"], "logit": found.value,
                       "baseline logit": found.baseline_value, "attributions sum": found.total,
                       "gap": found.gap, "relative gap": found.relative_gap, "steps": found.steps})
    skipped = len(prep.positions) - min(len(prep.positions), MAX_EXPLAINED)
    return FillReasons(fills, pd.concat(rows, ignore_index=True), pd.DataFrame(checks), skipped, MAX_EXPLAINED,
                       BASELINE)


#: The one-call tool: :func:`explanation` answered as a Result by the family's formatter.
mask_why = answer(explanation, replies.mask_why, "mask_why")
