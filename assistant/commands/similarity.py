"""The similarity family: compare, why, word, embed, static, neighbors."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command, Context, Invocation, Meaning, Texts
from assistant.commands.options import param
from assistant.commands.registry import register
from assistant.commands.slots import ASKING, ROW_ID, TARGET_WORD, Slots, asking_words, word_then_sentences
from tools.benchmark.reference import references_for
from tools.core.results import Result
from tools.encoding.pooling import Pooling
from tools.similarity import compare, embed, neighbors, replies, replies_compare, replies_why, static, why, words
from tools.similarity.facts import Comparison, Embedding, Neighbours, Strategy, WordInContext
from tools.similarity.neighbors import Space
from tools.similarity.static import Mode, pick_mode

ORDER = 20

LAYER_HELP = "hidden state to use: 0 = embeddings, the last layer by default"
#: What the shape of a question's texts adds to a command's score: a quoted word, then sentences that
#: contain it, asks for `word` (or `static`).
WORD_FIRST_BONUS = 0.12
#: What a quoted phrase of several words costs `neighbors` (it finds the neighbours of one word).
PHRASE_PENALTY = 0.1
#: What a question that asks which pooling suits two or more quoted texts adds to `compare`, which shows them all
#: (`why` explains one pooling's similarity): "which pooling makes 'A' and 'B' most similar?".
WHICH_POOLING_BONUS = 0.25
_WHICH_POOLING = re.compile(r"\b(?:which|what)\s+(?:kind\s+of\s+)?pool(?:ing)?s?\b", re.I)
#: After `compare` of two texts, a question that asks what drives their similarity ("what's
#: driving it?", "break that cls score down token by token"): `why` on them.
_EXPLAINED = re.compile(r"\bwhat(?:'s|\s+is)?\s+(?:driving|drives|drove|makes|made|causes|caused|explains)\s+"
                        r"(?:it|that|this|them|the\s+(?:similarity|score|cosine))\b(?!\s+(?:so\s+)?(?:different|differ))|"
                        r"\bbreak\s+(?:\w+\s+){0,3}?down\s+(?:\w+\s+)?(?:tokens?|words?)\b|"
                        r"^\W*(?:(?:ok|okay|now|and|so|then|please|pls)\W+)*explain\s+(?:that|this|it|the)\s*"
                        r"(?:number|score|cosine|similarity|result)?\W*$", re.I)
#: After `why`, a question that asks for the two texts' cosine itself ("and what's their cosine with max pooling?"):
#: `compare` on them.
_SCORE_ASKED = re.compile(r"\bwhat(?:'s|\s+is|\s+are)\s+(?:their|the|its)\s+(?:cosines?|similarit(?:y|ies))\b"
                          r"(?!\s+(?:made|come|comes))|"
                          r"^\W*(?:(?:now|and|ok|okay|so|then)\W+)*compare\s+(?:them|those|these|both|the\s+two"
                          r"(?:\s+of\s+them)?)\b"  # ("now compare the two of them with cls pooling")
                          r"|\b(?:plain|raw|bare|just\s+the)\s+(?:cosine|similarity)\b|\b(?:no|without(?:\s+the)?)\s+"
                          r"attributions?\b", re.I)  # ("the plain cosine for that pair, no attribution")
#: What a text with a blank to fill costs `why` (a question that asks why a blank was filled so is `mask --why`).
BLANK_PENALTY = 0.15


@register
class Compare(Command[Any, Comparison]):
    name, aliases = "compare", ("similarity", "sim")
    summary = "cosine similarity of sentence vectors; a matrix and heatmap for 3+ texts"
    texts = Texts(2, None, "at least two texts separated by `|`", "a | b [| c ...]")
    meanings = (
        Meaning("cosine similarity", "the cosine of the angle between two sentence vectors, u·v / (|u| |v|): 1 for "
                "the same direction, 0 for none in common. One model's vectors share a narrow cone (anisotropy), so "
                "even unrelated texts score well above 0: `compare` reads a cosine against the model's own cosines "
                "for STS-B dev pairs, as a share of unrelated pairs below it and the human rating it is typical of."),
        Meaning("pooling", "how one vector for a text is made from its token vectors (padding never counts): mean, "
                "cls, max, or sbert (the model's own sentence-transformers recipe, where it has one); `--pool all` "
                "shows each side by side."),
        Meaning("mean pooling", "the text's vector is the average of its token vectors, [CLS] and [SEP] included, "
                "as sentence-transformers averages them; all-MiniLM-L6-v2 was trained to be read this way."),
        Meaning("CLS pooling", "the text's vector is the hidden state of its first token, [CLS], which BERT's "
                "next-sentence pre-training fed to a classifier; untuned, it tracks meaning less well than the mean "
                "(Reimers & Gurevych 2019): `benchmark --pool cls` measures it."),
        Meaning("max pooling", "each dimension of the text's vector is that dimension's largest value over its "
                "tokens."),
    )
    examples = (
        "compare In 1995, the last survey, those numbers were equal. | The last time the survey was "
        "conducted, in 1995, those numbers matched. --pool all",
        "compare A man plays guitar. | Someone is playing an instrument. | The stock market fell.",
    )
    phrasings = (
        'how similar are "A" and "B"?',
        'what is the cosine similarity between "A" and "B"?',
        'are "A" and "B" paraphrases?',
        'do "A" and "B" mean the same thing?',
        'compare the sentences "A" and "B"',
        'similarity of "A" vs "B"',
        'how close are these sentences in meaning: "A", "B"',
        'make a similarity matrix of "A", "B" and "C"',
        'a heatmap of the pairwise similarities of "A", "B" and "C"',
        'score the semantic similarity of "A" and "B"',
        'do "A" and "B" get similar vectors?',
        'how far apart are "A" and "B"?',
        'give me the similarity score of "A" and "B"',
        'how close in meaning are "A" and "B"?',
        'cosine of "A" and "B"',
        'is "A" similar to "B"?',
    )

    @dataclass(frozen=True)
    class Params:
        pool: str = param("how token vectors become a sentence vector", "mean", choices=Pooling, extra=("all",))
        layer: int | None = param(LAYER_HELP, minimum=0, maximum=1000)

    def fit(self, slots: Slots) -> float:
        asks = len(slots.texts) >= 2 and slots.quoted and _WHICH_POOLING.search(slots.frame) is not None
        return WHICH_POOLING_BONUS if asks else 0.0

    def handed_on(self, question: str, before: Invocation) -> str | None:
        return "why" if len(before.texts) == 2 and _EXPLAINED.search(question) is not None else None

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Comparison:
        lm = ctx.model()
        facts = compare.comparison(lm, texts, p.pool, p.layer)
        last = facts.layer == lm.num_layers or facts.poolings == (Pooling.SBERT,)
        judge = references_for(lm, ctx.settings, None if last else facts.layer, ctx.progress)
        return dataclasses.replace(facts, references=judge)

    def reply(self, facts: Comparison) -> Result:
        return replies_compare.compare(facts)

    def differ(self, a: Comparison, b: Comparison, names: tuple[str, str]) -> str:
        return replies_compare.compare_difference(a, b, names)


@register
class Why(Command[Any, Any]):
    name, aliases = "why", ("explain", "attribute")
    terms = ("integrated gradients", "attributions?", "responsible for", "token-pair contributions?",
             r"(?:which|what)\s+(?:input\s+)?(?:tokens|words)\s+(?:drive|drives|drove|make|made|cause|caused|carry|carries|carried)",
             r"(?:tokens|words)\s+(?:that\s+)?matter(?:s|ed)?\s+(?:most\s+)?(?:for|to)\s+(?:the\s+|their\s+|its\s+|"
             r"how\s+)?(?:similar|cosine|score|match)",
             r"(?:tokens?|words?)\s+(?:that\s+)?account(?:s|ed)?\s+for")  # ("which tokens account for that score")
    meanings = (
        Meaning("integrated gradients", "each input's embedding minus a baseline's, times the gradient averaged "
                "along the straight path between them (Sundararajan et al. 2017); they add up to the change in the "
                "output (completeness), which the reply checks."),
        Meaning("token-pair contributions", "for mean pooling, the cosine of two texts is exactly a sum over token "
                "pairs, (t_i . u_j) / (n m |mean t| |mean u|): each pair's term is its share."),
    )
    summary = ("which tokens make two texts similar: for mean pooling the exact token-pair contributions that "
               "add up to the cosine; for cls / max pooling integrated gradients with a completeness check")
    texts = Texts(2, 2, "two texts separated by `|`", "a | b")
    examples = (
        "why A man plays guitar. | Someone is playing an instrument.",
        "why In 1995, the last survey, those numbers were equal. | The last time the survey was conducted, "
        "in 1995, those numbers matched. --pool cls",
        "why A cat sat on the mat. | A kitten sat on the rug. --vs minilm:int8",
    )
    phrasings = (
        'why are "A" and "B" similar?',
        'what makes "A" and "B" close in meaning?',
        'which words make "A" similar to "B"?',
        'which token pairs carry the similarity of "A" and "B"?',
        'explain why "A" and "B" get a high cosine',
        'attribute the similarity between "A" and "B" to their tokens',
        'how much of the similarity of "A" and "B" comes from special tokens?',
        'integrated gradients for the similarity of "A" and "B"',
        'which tokens make "A" and "B" close?',
        'what makes these two sentences similar: "A", "B"',
        'explain the similarity of "A" and "B"',
        'which words contribute most to the cosine of "A" and "B"?',
        'token-pair contributions for "A" versus "B"',
        'why does the model think "A" is like "B"?',
        'explain that similarity score',
        'what made "A" come up for my query?',
        'why is result "A" a match for my search?',
        'which tokens account for them being close?',
    )

    @dataclass(frozen=True)
    class Params:
        pool: str = param("mean: exact pair contributions; cls, max: integrated gradients; sbert: the model's "
                          "recipe (exact when it is a mean)", "mean", choices=Pooling)
        layer: int | None = param(LAYER_HELP, minimum=0, maximum=1000)

    def fit(self, slots: Slots) -> float:
        return -BLANK_PENALTY if slots.has_mask else 0.0

    def handed_on(self, question: str, before: Invocation) -> str | None:
        return "compare" if _SCORE_ASKED.search(question) else None

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        return why.explanation(ctx.model(), texts, p.pool, p.layer)

    def reply(self, facts: Any) -> Result:
        return replies_why.why(facts)

    def differ(self, a: Any, b: Any, names: tuple[str, str]) -> str:
        return replies_why.why_difference(a, b, names)


@register
class Word(Command[Any, WordInContext]):
    name, aliases = "word", ("word-in-context", "wic")
    summary = ("one word's vector in each sentence (pieces averaged), cosine between every pair of occurrences "
               "per layer strategy, against baselines")
    texts = Texts(2, None, "a word, then sentences that contain it: `w | s1 | s2`", "w | s1 | s2 [| ...]",
                  word_first=True)
    examples = (
        "word bank | We sat on the river bank. | The boat drifted to the bank of the river. | "
        "I deposited money at the bank.",
        "word code | I write code and my code compiles. | Coding is fun, and code is art. --strategy concat-last4",
        "word embeddings | Embeddings are vectors. | BERT makes contextual embeddings. --strategy last",
    )
    phrasings = (
        'is "w" the same vector in "A" and "B"?',
        'does the word "w" mean the same in "A" and "B"?',
        'compare the contextual embedding of "w" in "A" and "B"',
        'how does the meaning of "w" change between "A" and "B"?',
        'the word "w" in different contexts: "A", "B"',
        'how similar is "w" in these two sentences "A" and "B"',
        'which layer strategy separates the senses of "w" in "A" and "B"?',
    )

    @dataclass(frozen=True)
    class Params:
        strategy: str = param("how layers make the word's vector (all: one row per strategy)", "all",
                              choices=Strategy, extra=("all",))
        seed: int = param("seed of the random-token baseline", 0, minimum=0, maximum=2**32 - 1)

    def compute(self, ctx: Context, texts: list[str], p: Params) -> WordInContext:
        return words.word_in_context(ctx.model(), texts, p.strategy, p.seed)

    def reply(self, facts: WordInContext) -> Result:
        return replies.word(facts)

    def differ(self, a: WordInContext, b: WordInContext, names: tuple[str, str]) -> str:
        return replies.word_difference(a, b, names)

    def fit(self, slots: Slots) -> float:
        """A word, then sentences that contain it; quoted sentences with no word they share are not for `word`
        ("contrast 'A man is playing a guitar.' with 'A woman is slicing an onion.'")."""
        if slots.word_first and not slots.has_mask:
            return WORD_FIRST_BONUS
        if slots.quoted and slots.word is None and len(slots.sentences) >= 2:
            shared = slots.word_said_outside(asking_words(self.phrasings))
            return -WORD_FIRST_BONUS if shared is None else WORD_FIRST_BONUS / 2  # ("does mouse differ in 'A' and
        return 0.0  # 'B'?": a word said outside the quotes that each of them holds)

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        return word_then_sentences(slots, self.phrasings, always=True)


@register
class Embed(Command[Any, Embedding]):
    name, aliases = "embed", ("embedding", "embeddings")
    summary = ("every hidden state's shape, each token's vector norm, the pooled sentence vector; "
               "downloads as .npy, .safetensors and CSV")
    texts = Texts(1, None, "a text (or several separated by `|`)", "text [| text2 ...]")
    examples = ("embed BERT provides contextual embeddings.", "embed A cat sat. | A kitten sat. --layer 3 --pool cls")
    phrasings = (
        'give me the embedding of "A"',
        'what does the vector of "A" look like?',
        'show the hidden states of "A"',
        'get the sentence vector for "A"',
        'download the embeddings of "A"',
        'what are the token vector norms of "A"?',
        'encode "A" into a vector',
        'what is the representation of "A"?',
        'the vectors of "A" and "B" as numpy arrays',
        'can I have the vectors of "A" and "B"?',
    )

    @dataclass(frozen=True)
    class Params:
        layer: int | None = param("hidden state of the token and sentence vectors: 0 = embeddings, last by default",
                                  minimum=0, maximum=1000)
        pool: str = param("how token vectors become the sentence vector", "mean", choices=Pooling)

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Embedding:
        return embed.embedding(ctx.model(), texts, p.layer, p.pool)

    def reply(self, facts: Embedding) -> Result:
        return replies.embed(facts)


#: A follow-up to `static` that asks for the model's side alone ("the contextual model itself", "the model's contextual
#: vectors", "the proper word-in-context analysis on the model").
MODEL_ALONE = re.compile(r"(?<!for the )(?<!of the )(?<!on the )\bcontextual\s+(?:model|vectors?|embeddings?|view|"
                         r"version|side|part)|"
                         r"\bmodel(?:'s)?\s+(?:itself|alone|own|"
                         r"contextual)\b|\b(?:does|do|would|will)\s+the\s+model\s+(?:give|see|make|treat|assign)\b|"
                         r"\bword-in-context\b|\b(?:instead\s+of|without|not|forget|drop|skip|no)\s+glove\b",
                         re.I)
#: "instead of GloVe", "forget glove": GloVe named only to leave it.
NOT_GLOVE = re.compile(r"\b(?:instead\s+of|without|not|rather\s+than|forget|drop|skip|no)\s+glove\b", re.I)


@register
class Static(Command[Any, Any]):
    name, aliases = "static", ("glove",)
    terms = ("(?:averag(?:e|ed)|mean)[- ]glove", "glove similarity", "static (?:word )?vectors?")
    summary = "GloVe 6B 50d (one vector per word, context-blind) beside the model's contextual vectors"
    texts = Texts(2, None, "a word and sentences (`w | s1 | s2`) or two sentences (`a | b`)",
                  "w | s1 | s2 [| ...]  or  static a | b [| ...]", word_first=True)
    examples = ("static bank | We sat on the river bank. | I deposited money at the bank.",
                "static A man plays guitar. | Someone is playing an instrument.")
    phrasings = (
        'compare GloVe with the model for "w" in "A" and "B"',
        'static versus contextual embeddings of "w" in "A" and "B"',
        'does a static word vector see the difference between "A" and "B"?',
        'how does GloVe score "A" against "B"?',
        'glove vs contextual for "A" and "B"',
        'show the context-blind glove vectors for "w" in "A" and "B"',
        'what does GloVe make of "w" in "A" and "B"?',
    )

    @dataclass(frozen=True)
    class Params:
        strategy: str = param("layer strategy of the word's contextual vector (word mode)", "last",
                              choices=Strategy, metavar="S")
        pool: str = param("the model's sentence pooling (sentence mode)", "mean", choices=Pooling, metavar="P")
        mode: str = param("auto: a single word then 2+ sentences is word mode", "auto", choices=Mode)

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        return static.static_view(ctx.model(), texts, p.strategy, p.pool, p.mode)

    def reply(self, facts: Any) -> Result:
        return replies.static(facts)

    def fit(self, slots: Slots) -> float:
        """A word, then sentences that contain it: `word`'s shape too, so half its bonus; more than `word`'s when the
        question names GloVe outside its quotes ("glove and contextual vectors of 'light' in 'A' and 'B'"). A word said
        outside quoted sentences that each hold is that shape at half the weight, as for `word`."""
        if slots.has_mask:
            return 0.0
        shaped = 1.0 if slots.word_first else 0.5 if (  # "in glove, is match the same in 'A' and 'B'?"
            slots.word_said_outside(asking_words(self.phrasings)) is not None) else 0.0
        glove = re.search(r"\bglove\b", NOT_GLOVE.sub(" ", slots.rest), re.I) is not None
        return shaped * WORD_FIRST_BONUS * (1.5 if glove else 0.5)

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        return word_then_sentences(slots, self.phrasings, always=False)

    def handed_on(self, question: str, before: Invocation) -> str | None:
        """"The contextual model itself", "instead of GloVe": the model's side alone, `word` for a word in
        sentences, `compare` for sentences."""
        if not MODEL_ALONE.search(question) or re.search(r"\bglove\b", NOT_GLOVE.sub(" ", question), re.I):
            return None
        mode = pick_mode(before.texts, str(before.options.get("mode", Mode.AUTO.value)))
        return "word" if mode is Mode.WORD else "compare"


#: The word a question without quotes asks the neighbours of: after "near", "of", "to", "like", "around".
NEAR_WORD = re.compile(r"\b(?:near|of|to|like|around|beside|for)\s+(?!(?:it|its|them|that|this|those|these|the|a|an)\b)"
                       r"([\w'-]+)", re.I)


@register
class Neighbors(Command[Any, Neighbours]):
    name, aliases = "neighbors", ("neighbours", "nearest")
    summary = "nearest words by cosine in the model's input embeddings or in GloVe"
    texts = Texts(1, 1, "one word", "w", word_first=True)
    examples = ("neighbors bank", "neighbors bank --space glove --k 20")
    phrasings = (
        'what words are closest to "w"?',
        'nearest neighbours of "w"',
        'which words are similar to "w"?',
        'find words near "w" in the embedding space',
        'list the words most like "w"',
        'what are the neighbors of "w" in GloVe?',
        'show me the synonyms the model finds for "w"',
        'which vocabulary tokens lie nearest to "w"?',
        'which tokens are closest to "w" in the input embedding matrix?',
    )

    @dataclass(frozen=True)
    class Params:
        space: str = param("model: the input-embedding matrix; glove: GloVe 6B 50d", "model", choices=Space)
        k: int = param("how many neighbours", 10, minimum=1, maximum=100, metavar="K")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Neighbours:
        return neighbors.nearest(ctx.model(), texts, p.space, p.k)

    def reply(self, facts: Neighbours) -> Result:
        return replies.neighbors(facts)

    def differ(self, a: Neighbours, b: Neighbours, names: tuple[str, str]) -> str:
        return replies.neighbors_difference(a, b, names)

    def fit(self, slots: Slots) -> float:
        """Neighbours are of one word: a quoted phrase of several words is a query for `search`, and a corpus row's
        neighbours (``#17``, never a word) are `search`'s alone."""
        if ROW_ID.search(slots.question):
            return -1.0
        return -PHRASE_PENALTY if slots.quotes_a_phrase else 0.0

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        word = slots.word or (slots.texts[0].split()[0] if slots.texts else None)  # "coffee in the input embeddings"
        if not slots.quoted and not TARGET_WORD.search(slots.rest):  # "what does glove think is near computer"
            near = NEAR_WORD.search(slots.payload.split(",")[0]) or (  # "nearest tokens to embedding": an asking word,
                # named last; not after a comma ("nearest to bank, regardless of context")
                None if slots.payload else re.search(NEAR_WORD.pattern + r"(?:\W+(?:please|pls|plz|thanks))?\W*$",
                                                     slots.rest, re.I))  # ("..., pls")
            said = [w for t in slots.texts for w in t.split() if w.lower().strip(".,?!") not in ASKING]
            word = near.group(1) if near else said[0] if said else word
        return [re.sub(r"['\u2019]s$", "", word.strip(".,?!"))] if word else []  # "bank's neighbours": bank

