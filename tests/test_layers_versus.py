"""`--vs MODEL` on the layer measures: `probe`, `contextuality`, `rollout` and `lens` answer on two tiny masked-LM
models in one reply, each model's numbers its own reply's, every table with a `model` column and each chart once
per model, titled with it; `cka` compares models with `--with` and says so when given `--vs`."""

from __future__ import annotations

import pytest

from assistant.dispatch import execute
from assistant.session import Session
from tests.layers_models import build_tiny_mlm
from tests.test_versus import _compiles, _panels
from tools.core.config import Settings
from tools.core.text import md
from tools.models.hub import ModelHub

MODELS = ("tiny-mlm", "tiny-mlm-b")


@pytest.fixture(scope="module")
def two_hub(tmp_path_factory, stsb_dir):
    """Two tiny BertForMaskedLM folders (same vocabulary, different weights) and STS-B."""
    root = tmp_path_factory.mktemp("two-models")
    for seed, name in enumerate(MODELS):
        build_tiny_mlm(root / name, seed=seed)
    return ModelHub(Settings(model_roots=str(root), data_dir=str(stsb_dir)))


def side_by_side(hub, line: str):
    """The reply to ``line --vs tiny-mlm-b`` on tiny-mlm, and each model's own reply to ``line``."""
    both = execute(f"{line} --vs {MODELS[1]}", Session(model=MODELS[0]), hub)
    assert both.ok, both.error
    own = [execute(line, Session(model=m), hub) for m in MODELS]
    assert all(r.ok for r in own)
    return both.result, [r.result for r in own]


def assert_joined(both, own, table: str, chart: str) -> None:
    """``table`` is both models' own tables with a model column; ``chart`` is drawn once per model, titled."""
    joined = both.table(table)
    assert joined.groupby("model", sort=False).size().index.tolist() == list(MODELS)
    for model, result in zip(MODELS, own):
        mine = joined[joined["model"] == model].drop(columns=["model"]).reset_index(drop=True)
        assert mine.equals(result.table(table))
    spec = next(c for c in both.to_json()["charts"] if c["name"] == chart)["vega_lite"]
    panels = _panels(spec)
    assert [p["title"].split(":")[0] for p in panels] == list(MODELS)
    _compiles(spec)
    assert both.text.startswith(f"**{md(MODELS[0])}** vs **{md(MODELS[1])}**: ")
    assert both.settings["models"] == ", ".join(MODELS)


def test_probe_vs(two_hub):
    both, own = side_by_side(two_hub, "probe --sentences 8 --task pos")
    assert_joined(both, own, "probe by layer", "probe")
    peak = own[0].table("probe summary")["peak layer"][0]
    assert f"pos peaks at hidden state {peak} of 2 in {MODELS[0]}" in both.text
    assert "on the same sentences" in both.text


def test_contextuality_vs(two_hub):
    both, own = side_by_side(two_hub, "contextuality --sentences 20")
    assert_joined(both, own, "contextuality by layer", "contextuality")
    assert "words are most context-specific at hidden state" in both.text and "anisotropy baseline" in both.text


def test_rollout_vs(two_hub):
    both, own = side_by_side(two_hub, "rollout the cat sat on the mat .")
    assert_joined(both, own, "[CLS] row", "rollout")
    assert "[CLS] draws most on" in both.text and "Spearman ρ with gradient x input is" in both.text


def test_lens_vs(two_hub):
    both, own = side_by_side(two_hub, "lens the cat sat on the [MASK] .")
    assert_joined(both, own, "lens by layer", "lens")
    answers = [r.table("lens by layer")["top 1"].iloc[-1].split(" (")[0] for r in own]
    assert f"{MODELS[0]} answers `{answers[0]}`" in both.text and f"{MODELS[1]} answers `{answers[1]}`" in both.text


@pytest.mark.parametrize("other", ["minilm:int8", "bert-small"])
def test_cka_refuses_vs_naming_with(run, other):
    reply = run(f"cka --sentences 4 --vs {other}")
    assert reply.error == ("`cka` does not take --vs; it compares two models itself: `cka --with MODEL` sets every "
                           "layer of one against every layer of the other.")
