"""`rollout`: attention rollout and flow (Abnar & Zuidema 2020), checked against the recursion and
max-flow written out here, and the gradient x input attribution computed here."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from tests.downloads import csv_names
from tools.core.errors import UserError
from tools.layers.facts import RolloutMethod
from tools.layers.rollout import attention_flow, attention_rollout, residual_attention, rollout, rollout_matrices

TEXT = "The cat sat on the mat because it was tired."


def attentions_direct(lm, text):
    """(L, H, T, T) attention of one unpadded pass, and the inputs."""
    enc = lm.tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        out = lm.encoder(**enc, output_attentions=True)
    return torch.stack(out.attentions)[:, 0].double().numpy(), enc


def rollout_reference(attn):
    """The paper's recursion: Ã_l = 0.5·W_l + 0.5·I (W_l the head mean), rows renormalised; J_1 = Ã_1,
    J_l = Ã_l J_{l-1}."""
    joint = None
    for layer in attn:
        w = layer.mean(axis=0)
        a = 0.5 * w + 0.5 * np.eye(len(w))
        a = a / a.sum(axis=-1)[..., None]
        joint = a if joint is None else a @ joint
    return joint


def test_rollout_rows_sum_to_one_and_equal_the_recursion(lm):
    f = attention_rollout(lm, [TEXT])
    attn, enc = attentions_direct(lm, TEXT)
    assert f.method is RolloutMethod.ROLLOUT and len(f.tokens) == attn.shape[-1]
    np.testing.assert_allclose(f.relevance.sum(axis=-1), 1.0, atol=1e-9)
    np.testing.assert_allclose(f.relevance, rollout_reference(attn), atol=1e-5)
    np.testing.assert_allclose(f.raw, attn[-1].mean(axis=0), atol=1e-5)
    every = rollout_matrices(attn)
    np.testing.assert_allclose(every[0], residual_attention(attn)[0])
    np.testing.assert_allclose(every[-1].sum(axis=-1), 1.0, atol=1e-9)


def hand_matrices():
    """Two layers over three tokens; rows sum to 1."""
    a1 = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    a2 = np.array([[0.7, 0.2, 0.1], [0.25, 0.25, 0.5], [0.0, 0.4, 0.6]])
    return np.stack([a1, a2])


def test_flow_on_a_hand_graph_is_networkx_max_flow_and_the_sum_of_path_minima():
    m = hand_matrices()
    got = attention_flow(m)
    g = nx.DiGraph()
    for i in range(3):
        for k in range(3):
            g.add_edge(("top", i), ("mid", k), capacity=m[1][i, k])
            g.add_edge(("mid", i), ("in", k), capacity=m[0][i, k])
    direct = np.array([[nx.maximum_flow(g, ("top", i), ("in", j))[0] for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(got, direct, atol=1e-12)
    # each path top i -> mid k -> in j is the only way through k: the flow is Σ_k min(A2[i,k], A1[k,j])
    closed = np.array([[sum(min(m[1][i, k], m[0][k, j]) for k in range(3)) for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(got, closed, atol=1e-12)
    assert attention_flow(m[:1]) == pytest.approx(m[0])  # one layer: the flow is the edge itself


def test_flow_on_the_model_is_bounded_and_capped(lm):
    f = attention_rollout(lm, ["A cat sat."], method="flow")
    assert f.method is RolloutMethod.FLOW
    assert f.relevance.shape == (len(f.tokens),) * 2
    assert (f.relevance >= -1e-12).all() and (f.relevance <= 1 + 1e-9).all()
    long_text = " ".join(["cat"] * 30)
    with pytest.raises(UserError, match="at most 24 tokens"):
        attention_rollout(lm, [long_text], method="flow")
    with pytest.raises(UserError, match="at most 48 tokens"):
        attention_rollout(lm, [" ".join(["cat"] * 60)])
    with pytest.raises(UserError, match="rollout, flow"):
        attention_rollout(lm, [TEXT], method="sideways")


def test_the_attribution_is_gradient_times_input_of_the_cls_norm_and_rho_is_spearman(lm):
    f = attention_rollout(lm, [TEXT])
    ids = torch.tensor(lm.tokenizer(TEXT)["input_ids"])
    emb = lm.encoder.get_input_embeddings()
    x = emb(ids).detach().clone().requires_grad_(True)
    out = lm.encoder(inputs_embeds=x[None], attention_mask=torch.ones(1, len(ids), dtype=torch.long))
    out.last_hidden_state[0, 0].norm().backward()
    expected = (x.grad * x).sum(-1).abs().detach().numpy()
    np.testing.assert_allclose(f.attribution, expected, rtol=1e-4, atol=1e-6)
    text = np.array([not s for s in f.special])
    assert f.special[0] and f.special[-1] and text[1:-1].all()
    assert f.rho == pytest.approx(spearmanr(f.relevance[0][text], expected[text]).statistic, abs=1e-6)


@pytest.mark.parametrize("method", ["rollout", "flow"])
def test_the_reply_states_the_definition_with_heatmaps_and_csvs(lm, method):
    result = rollout(lm, ["A cat sat on the mat."], method=method)
    first = result.text.split(". ")[0]
    assert "Abnar & Zuidema" in first and "0.5·mean over heads" in first and "[CLS]" in first
    assert "Spearman" in result.text and "gradient" in result.text
    spec = result.charts[0].chart.to_dict()
    t = result.settings["tokens"]
    assert sum(len(v) for v in spec["datasets"].values()) == 2 * t * t <= 5000
    assert csv_names(result) == ["rollout-1-CLS--row.csv", f"rollout-2-{method}-matrix.csv"]  # each, once
    assert result.table("[CLS] row").shape[0] == t


def test_the_reply_names_the_heaviest_tokens_in_the_tables_order_and_a_repeated_one_by_its_position(lm):
    result = rollout(lm, [TEXT])  # "the" twice, at positions 1 and 5
    row = result.table("[CLS] row")
    text = row[~row["token"].isin(["[CLS]", "[SEP]"])]

    def heaviest(column, values=True):
        named = []
        for _, r in text.sort_values(column, ascending=False, kind="stable").head(3).iterrows():
            where = f" at {r['position']}" if (row["token"] == r["token"]).sum() > 1 else ""
            named.append(f"`{r['token']}`{where}" + (f" ({r[column]:.2f})" if values else ""))
        return ", ".join(named)

    assert f"[CLS] at the top draws most on {heaviest('rollout')} by attention rollout" in result.text
    assert "`the` at " in heaviest("rollout")  # this text's heaviest include a "the": named by its position
    assert f"goes most to {heaviest('raw attention', values=False)}." in result.text


def test_a_text_with_no_token_besides_the_specials_is_refused_with_a_sentence(lm):
    """Found by the fuzzer: a control character alone tokenizes to [CLS] [SEP] and once failed inside."""
    from tools.core.errors import UserError
    from tools.layers.rollout import attention_rollout

    with pytest.raises(UserError, match="no token in"):
        attention_rollout(lm, ["\x08"])


@pytest.mark.parametrize("method", ["rollout", "flow"])
def test_one_tokens_row_read_first_names_what_it_draws_on_from_the_papers_matrix(lm, method):
    """`rollout --token it`: the classic example's pronoun, its row of the same matrix (the recursion computed apart
    for rollout), the heaviest of the text's other tokens named; [CLS]'s sentence still follows."""
    result = rollout(lm, [TEXT], method=method, token="it")
    f = attention_rollout(lm, [TEXT], method=method, token="it")
    at = list(f.tokens).index("it")
    assert f.row == at == 8 and attention_rollout(lm, [TEXT], token="8").row == at
    reference = rollout_reference(attentions_direct(lm, TEXT)[0])[at] if method == "rollout" else f.relevance[at]
    np.testing.assert_allclose(result.tables[0].frame[method], np.round(reference, 6), atol=1e-5)
    assert result.tables[0].name == "it row" and result.table("[CLS] row") is not None
    others = [i for i in np.argsort(-reference, kind="stable") if not f.special[i] and i != at][:3]
    named = ", ".join(f"`{f.tokens[i]}`" + (" at " + str(i) if f.tokens.count(f.tokens[i]) > 1 else "")
                      + f" ({reference[i]:.2f})" for i in others)
    assert f"`it` (position 8) at the top draws most on {named} of the text's other tokens by attention {method}" \
        in result.text and "[CLS] draws most on" in result.text
    raw = attentions_direct(lm, TEXT)[0][-1].mean(axis=0)[at]  # and its raw last-layer attention, heads averaged
    heaviest = [i for i in np.argsort(-raw, kind="stable") if not f.special[i] and i != at][0]
    assert f"and its raw last-layer attention (heads averaged) most on `{f.tokens[heaviest]}` ({raw[heaviest]:.2f})" \
        in result.text
    if method == "rollout":  # what it keeps for itself and gives the specials, so the small weights read right
        assert f"(itself {reference[at]:.2f} and the special tokens " in result.text
    with pytest.raises(UserError, match="--token `dog` is none of the text's tokens"):
        attention_rollout(lm, [TEXT], token="dog")
    with pytest.raises(UserError, match="--token 40 is past the text's 13 tokens"):
        attention_rollout(lm, [TEXT], token="40")
