"""The layers family, measured the way the papers measure them: probe, contextuality, cka, rollout, lens."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command, Context, Invocation, Meaning, Texts
from assistant.commands.corpus import _corpus
from assistant.commands.fillmask import BLANK_BONUS
from assistant.commands.options import param
from assistant.commands.registry import register
from assistant.commands.slots import MODEL, TARGET_WORD, Slots, asking_words
from tools.core.errors import UserError
from tools.core.results import Result
from tools.core.text import code
from tools.layers import cka, contextuality, lens, probe, replies, replies_maps, rollout
from tools.layers.facts import CkaEstimator, ProbeTask, RolloutMethod
from tools.layers.inputs import Pool, corpus_pool
from tools.models.mlm_head import head_known_missing

ORDER = 55
#: After `lens`, a question for the model's own answer alone ("just the final predictions", "the final top 10").
FINAL_ONLY = re.compile(r"\bfinal\s+(?:top\b|(?:\w+\s+)?(?:predictions?|guess(?:es)?|answers?|fills?|outputs?)\b)",
                        re.I)
CORPUS_HELP = "draw the sentences from this corpus's texts instead of STS-B train"


def _pool(ctx: Context, named: str | None, least: int, verb: str) -> Pool | None:
    """The texts of the corpus ``--corpus`` names (as every corpus command finds it), or None for STS-B."""
    if named is None:
        return None
    corpus = _corpus(ctx, named)
    pool = corpus_pool(corpus.name, corpus.texts())
    if len(pool.sentences) < least:
        have = len(pool.sentences)
        raise UserError(f"Corpus {code(corpus.name, 40)} has {have} distinct text{'' if have == 1 else 's'} and "
                        f"`{verb}` needs at least {least}; load a larger one with `corpus load FILE`, or leave out "
                        "--corpus to read STS-B.")
    return pool


@register
class Probe(Command[Any, Any]):
    name, aliases = "probe", ("probing",)
    every_layer = "it probes every layer at once, a row per layer in its table"
    terms = ("probe", "probing", "probes", "hewitt", "tenney", "control task", "selectivity", "expected layer")
    meanings = (
        Meaning("probe", "a linear classifier (multinomial logistic regression) trained on one hidden state's word "
                "vectors to predict a label; its accuracy on held-out sentences says how much of the label that "
                "hidden state holds in a linearly readable form."),
        Meaning("control task", "the same words given labels of no linguistic meaning: each word type keeps one "
                "random label, drawn from the real labels' frequencies (Hewitt & Liang 2019); a probe scores on it "
                "only by memorising word types."),
        Meaning("selectivity", "a probe's held-out accuracy minus its accuracy on the control task (Hewitt & Liang "
                "2019): high when the hidden state carries the label, not when the probe can memorise words."),
        Meaning("expected layer", "Σ l·Δ_l / Σ Δ_l, where Δ_l is how much hidden state l's probe gains over the best "
                "one below it (after Tenney et al. 2019, without their scalar mix): the depth at which the label "
                "is resolved, on average."),
    )
    summary = ("what each layer knows: a linear probe per layer for spaCy's part-of-speech or dependency labels, "
               "against the control task (Hewitt & Liang 2019), with the peak and expected layer (Tenney et al. 2019)")
    texts = Texts(0, None, "optional sentences to probe (default: STS-B train or --corpus)", "[sentences ...]")
    examples = ("probe --sentences 30", "probe --task pos --sentences 40 --seed 3",
                "probe --corpus reviews --sentences 40")
    phrasings = (
        "which layer knows part of speech?",
        "what does each layer know about syntax?",
        "probe the layers for parts of speech",
        "train a linear probe on every layer",
        "where in the network are dependency labels encoded?",
        "does the model encode grammar in its middle layers?",
        "probing classifier accuracy per layer with a control task",
        "how selective is a POS probe at each layer?",
        "which layer encodes dependency relations best?",
        "how well can each layer predict the part of speech of a word?",
    )

    @dataclass(frozen=True)
    class Params:
        task: str = param("what to predict from each word's vector: part of speech, dependency label, or both",
                          "all", choices=ProbeTask)
        sentences: int = param("how many sentences to draw from STS-B train or --corpus (when no texts are given)",
                               probe.DEFAULT_SENTENCES, minimum=probe.MIN_SENTENCES)
        seed: int = param("seed of the sentence sample and the train/test split", 0, minimum=0, maximum=2**32 - 1)
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        if texts and p.corpus:
            raise UserError("`probe` reads either the sentences you give or --corpus, not both; drop one.")
        return probe.probing(ctx.model(), texts, task=p.task, sentences=p.sentences, seed=p.seed,
                             pool=_pool(ctx, p.corpus, probe.MIN_SENTENCES, self.name),
                             settings=ctx.settings, progress=ctx.progress)

    def reply(self, facts: Any) -> Result:
        return replies.probe(facts)

    def differ(self, a: Any, b: Any, names: tuple[str, str]) -> str:
        return replies.probe_difference(a, b, names)


#: Words a question lists for `contextuality` without quotes: "for charge, table and run", "of bank and play".
_LISTED_WORDS = re.compile(r"\b(?:for|of|is|are(?=\s+[A-Za-z'-]+\s*,))\s+(?:the\s+words?\s+)?(?!(?:from|in|on|of|"
                           r"across|within|over|through|with|by|to|at)\b)([A-Za-z'-]+(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)"
                           r"[A-Za-z'-]+)*)", re.I)  # ("how contextual are run, set and go?": a list)
#: One word said as what changes ("how much does light change with context", "bank's self-similarity").
_CHANGING_WORD = re.compile(r"\bdoes\s+([A-Za-z-]+)\s+(?:change|vary|shift|drift)\b"
                            r"|\b([A-Za-z-]+)'s\s+(?:self-similarity|contextuality|vectors?|representations?)\b", re.I)


@register
class Contextuality(Command[Any, Any]):
    name, aliases = "contextuality", ("contextual", "anisotropy")
    every_layer = "it measures every layer at once, a row per layer in its table"
    terms = ("contextuality", "ethayarajh", "anisotropy", "anisotropic", "self-similarity",
             "intra-sentence similarity", "mev", "maximum explainable variance")
    meanings = (
        Meaning("self-similarity", "the mean cosine between one word's vectors in different sentences at one hidden "
                "state (Ethayarajh 2019): 1 when the word has one vector whatever its context."),
        Meaning("intra-sentence similarity", "the mean cosine between each word's vector in a sentence and the "
                "sentence's mean vector (Ethayarajh 2019)."),
        Meaning("maximum explainable variance", "the share of the variance of a word's vectors across its "
                "sentences that their first principal component explains (MEV, Ethayarajh 2019): how well one "
                "static vector could stand for all of them."),
        Meaning("anisotropy", "the mean cosine between the vectors of random words in random sentences at one hidden "
                "state (Ethayarajh 2019): high when every vector points into one narrow cone, so that any two are "
                "similar; the measures are shown beside it and adjusted for it."),
    )
    summary = ("how contextual each layer is (Ethayarajh 2019): self-similarity, intra-sentence similarity and "
               "maximum explainable variance, beside and adjusted for the anisotropy baseline")
    texts = Texts(0, contextuality.MAX_WORDS, "optional words to follow (default: frequent words)", "[word | ...]")
    examples = ("contextuality --sentences 40", "contextuality bank | light --sentences 60",
                "contextuality --corpus reviews --sentences 60")
    phrasings = (
        "how contextual is 'w'?",
        "how contextual are the representations in each layer?",
        "does the word vector of 'w' change with context across layers?",
        "how anisotropic is the embedding space?",
        "self-similarity of words across contexts per layer",
        "measure contextuality like Ethayarajh",
        "how much do upper layers depend on context?",
        "what is the anisotropy baseline of each layer?",
    )

    @dataclass(frozen=True)
    class Params:
        sentences: int = param("how many sentences of STS-B train or --corpus to read the words in",
                               contextuality.DEFAULT_SENTENCES, minimum=contextuality.MIN_SENTENCES)
        seed: int = param("seed of the sentence sample and the random word pairs", 0, minimum=0, maximum=2**32 - 1)
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        """The word a question names without quotes ("for the word play"), the words it lists after "for", "of" or
        "is" ("self-similarity of bank and play", "how contextual is light across layers?"), else its quoted
        words."""
        if slots.quoted:
            return None
        named = TARGET_WORD.search(slots.question)
        if named:
            return [named.group(1)]
        asking = asking_words(self.phrasings)
        changing = _CHANGING_WORD.search(slots.rest)
        if changing and (word := changing.group(1) or changing.group(2)).lower() not in asking | {
                "a", "an", "model", "encoder", "network"} and not MODEL.fullmatch(word):  # (not "minilm's" nor "this
            # model's representations")
            return [word]
        listed = _LISTED_WORDS.search(slots.rest)
        options = {o.name for o in self.options}  # (not "seed" of "run, set and go, seed 4")
        words = [w for w in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", listed.group(1))
                 if w.lower() not in asking | options and not MODEL.fullmatch(w)] if listed else []  # (not "of minilm")
        return words[:contextuality.MAX_WORDS] or None

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        return contextuality.contextuality_measures(
            ctx.model(), texts, sentences=p.sentences, seed=p.seed,
            pool=_pool(ctx, p.corpus, contextuality.MIN_SENTENCES, self.name),
            settings=ctx.settings, progress=ctx.progress)

    def reply(self, facts: Any) -> Result:
        return replies.contextuality(facts)

    def differ(self, a: Any, b: Any, names: tuple[str, str]) -> str:
        return replies.contextuality_difference(a, b, names)


#: A question that sets layers side by side without texts ("is layer 3 more like layer 4 or layer 6?", "how similar
#: are layers 2 and 5?"): `cka`, which compares every layer with every other; what it adds to `cka`'s score.
_LAYERS_SIDE_BY_SIDE = re.compile(r"\blayers?\s+\d+\b(?:\s+\w+){0,5}?\s+(?:and|or|vs\.?|versus|with|than)\s+"
                                  r"(?:(?:layer|to)\s+)?\d+\b", re.I)
_ALIKE = re.compile(r"\b(?:similar|similarity|like|alike|close|closer|differ|different|same|compare|correlated?|"
                    r"related|match)\b", re.I)
LAYERS_BONUS = 0.3


@register
class Cka(Command[Any, Any]):
    name, aliases = "cka", ("layer-similarity",)
    every_layer = "it compares every layer with every other at once, a row and a column per layer in its matrix"
    terms = ("cka", "kornblith", "centered kernel alignment", "centred kernel alignment")
    meanings = (
        Meaning("CKA", "linear centred kernel alignment (Kornblith et al. 2019): for two representations X and Y of "
                "the same examples, centred, ||YᵀX||² / (||XᵀX|| ||YᵀY||) (Frobenius norms): 1 when one is the "
                "other rotated and scaled, near 0 when unrelated; debiased, each term is the unbiased HSIC estimate "
                "(Song et al. 2012), for when examples are few."),
    )
    summary = ("linear CKA (Kornblith et al. 2019) between every pair of layers, or against another model's "
               "layers (--with); debiased when examples are few")
    examples = ("cka --sentences 20", "cka --sentences 30 --estimator biased", "cka --corpus reviews --sentences 20")
    phrasings = (
        "do the layers of this model represent text alike?",
        "compare every layer with every other layer",
        "CKA between layers",
        "which layers learn similar representations?",
        "centered kernel alignment heatmap of the layers",
        "a layer similarity heatmap",
        "layer-by-layer similarity of this model against another model",
        "compare the layers of minilm with those of bert-base",
        "how do the layers of this model line up with mpnet's?",
        "do neighbouring layers represent text the same way?",
    )

    @dataclass(frozen=True)
    class Params:
        with_: str | None = param("compare this model's layers with another model's", metavar="MODEL", name="with")
        sentences: int = param("how many sentences of STS-B train or --corpus", cka.DEFAULT_SENTENCES,
                               minimum=cka.MIN_SENTENCES)
        seed: int = param("seed of the sentence sample", 0, minimum=0, maximum=2**32 - 1)
        estimator: str = param("HSIC estimator: auto (debiased when examples are under ten times the hidden size)",
                               "auto", choices=CkaEstimator)
        corpus: str | None = param(CORPUS_HELP, metavar="NAME")

    def fit(self, slots: Slots) -> float:
        side_by_side = _LAYERS_SIDE_BY_SIDE.search(slots.rest) and _ALIKE.search(slots.rest)
        return LAYERS_BONUS if side_by_side and not slots.quoted else 0.0

    vs_instead = ("it compares two models itself: `cka --with MODEL` sets every layer of one against every layer "
                  "of the other.")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        other = ctx.model(p.with_) if p.with_ else None
        return cka.layer_similarity(ctx.model(), texts, other=other, sentences=p.sentences, seed=p.seed,
                                    estimator=p.estimator, pool=_pool(ctx, p.corpus, cka.MIN_SENTENCES, self.name),
                                    settings=ctx.settings, progress=ctx.progress)

    def reply(self, facts: Any) -> Result:
        return replies.cka(facts)


@register
class Rollout(Command[Any, Any]):
    name, aliases = "rollout", ("flow", "attention-flow")
    every_layer = "it combines the attention of every layer into one map"
    terms = ("rollout", "rolled-out", "roll(?:ed)? out", "abnar", "zuidema", "attention flow")
    meanings = (
        Meaning("attention rollout", "each layer's attention averaged over heads, mixed half and half with attention "
                "to oneself (the residual connection), multiplied through the layers (Abnar & Zuidema 2020): how "
                "much each output token draws on each input token across all layers."),
        Meaning("attention flow", "the same layers of attention read as a network whose edges carry at most their "
                "attention weight: the maximum flow from an output token to an input token (Abnar & Zuidema 2020)."),
    )
    summary = ("attention rollout and attention flow (Abnar & Zuidema 2020) from every output token to every "
               "input token, beside the raw last-layer attention; what [CLS] draws on")
    texts = Texts(1, 1, "one text", "text")
    examples = ("rollout The cat sat on the mat because it was tired.",
                "rollout The bank raised its rates. --method flow")
    phrasings = (
        "where does the [CLS] vector get its information?",
        "attention rollout for \"A\"",
        "compute attention flow through the layers of \"A\"",
        "which input tokens does the output draw on in \"A\"?",
        "follow attention down all the layers of \"A\"",
        "roll out the attention of \"A\"",
        "show the rolled-out attention of \"A\"",
        "where does the attention flow from the output back to the inputs of \"A\"?",
    )

    @dataclass(frozen=True)
    class Params:
        method: str = param("rollout (matrix products) or flow (max-flow; at most ASSISTANT_FLOW_MAX_TOKENS "
                            "tokens)", "rollout", choices=RolloutMethod)
        token: str | None = param("the output token whose row is read first: a word of the text or its position "
                                  "(default [CLS])", metavar="WORD|POSITION")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        flow = p.method == RolloutMethod.FLOW.value
        cap, name = ((ctx.settings.flow_max_tokens, "ASSISTANT_FLOW_MAX_TOKENS") if flow else
                     (ctx.settings.rollout_max_tokens, "ASSISTANT_ROLLOUT_MAX_TOKENS"))
        return rollout.attention_rollout(ctx.model(), texts, method=p.method, progress=ctx.progress,
                                         max_tokens=cap, limit_name=name, token=p.token)

    def reply(self, facts: Any) -> Result:
        return replies_maps.rollout(facts)

    def differ(self, a: Any, b: Any, names: tuple[str, str]) -> str:
        return replies_maps.rollout_difference(a, b, names)


@register
class Lens(Command[Any, Any]):
    name, aliases = "lens", ("logit-lens",)
    every_layer = "it reads the [MASK] at every layer at once, a row per layer in its table"
    terms = ("logit lens", "logit-lens", "nostalgebraist",
             r"layer-?wise\s+(?:top\s+\w+\s+)?(?:guess|prediction)(?:es|s)?",
             r"(?:guess|prediction)(?:es|s)?\s+(?:at|per|for|of)\s+(?:each|every)\s+layer")
    meanings = (
        Meaning("logit lens", "the model's own masked-LM head applied to the [MASK] position's hidden state at every "
                "layer, not only the last (nostalgebraist 2020): what the model would predict if it stopped "
                "there; at the last layer it is the model's fill-mask answer."),
    )
    summary = ("the logit lens: the masked-LM head applied to the [MASK] position at every layer, with the top "
               "predictions and the final answer's rank per layer")
    texts = Texts(1, 1, "one text with one `[MASK]`", "text with [MASK]")
    examples = ("lens The cat sat on the [MASK].", "lens Paris is the [MASK] of France. --top 10")
    phrasings = (
        "what does each layer predict for the blank in \"A\"?",
        "logit lens on \"A\"",
        "at which layer does the model know the answer to \"A\"?",
        "apply the masked-LM head at every layer of \"A\"",
        "how does the prediction for [MASK] evolve across layers?",
        "layer by layer predictions of the masked word in \"A\"",
    )

    @dataclass(frozen=True)
    class Params:
        top: int = param("how many predictions to show per layer", 5, minimum=1, maximum=lens.MAX_TOP, metavar="K")

    def fit(self, slots: Slots) -> float:
        """A blank asks for the lens as much as for `mask`: the words say which ("layerwise guesses")."""
        return BLANK_BONUS if slots.has_mask else 0.0

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        return slots.masked

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        return lens.logit_lens(ctx.model(), texts, top=p.top)

    def offered(self, ctx: Context) -> bool:
        """Not on a model whose masked-LM head is known to be missing (it reads the model's own head only)."""
        return not head_known_missing(ctx.model())

    def reply(self, facts: Any) -> Result:
        return replies_maps.lens(facts)

    def differ(self, a: Any, b: Any, names: tuple[str, str]) -> str:
        return replies_maps.lens_difference(a, b, names)

    def handed_on(self, question: str, before: Invocation) -> str | None:
        """"Just the final predictions", "the final top 10": the last layer's answer alone, `mask`."""
        return "mask" if FINAL_ONLY.search(question) else None
