"""The benchmark command: STS evaluation against gold scores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command, Context, Meaning, Texts
from assistant.commands.options import param
from assistant.commands.registry import register
from tools.benchmark import replies, run
from tools.benchmark.facts import BenchmarkRun
from tools.core.errors import UserError
from tools.core.results import Result
from tools.encoding.pooling import Pooling

ORDER = 60


@register
class Benchmark(Command[Any, BenchmarkRun]):
    name, aliases = "benchmark", ("bench", "sts")
    terms = ("spearman", "sts-?b", "pearson", "paraphrase accuracy", "benchmark(?:s|ing)?")
    meanings = (
        Meaning("Spearman", "the rank correlation between the model's cosines and people's similarity scores "
                "(STS-B: 0 to 5), times 100: 100 when the model orders the pairs exactly as people did."),
    )
    summary = ("STS evaluation: Spearman / Pearson x 100 against gold scores per model x pooling, "
               "paraphrase accuracy / F1 at the best threshold, GloVe / input-embedding / shuffled baselines, "
               "worst pairs, a chart, CSV and JSON")
    texts = Texts(0, 0, "no text: the data comes from --data")
    examples = ("benchmark --sample 300 --pool mean,sbert",
                "benchmark --data stsb-test",
                "benchmark --data stsb-dev --sample 600 --seed 7 --pool cls,mean,max --threshold 3.5")
    phrasings = (
        'how good is the model on STS-B?',
        'evaluate the model on a sentence similarity benchmark',
        'what is the Spearman correlation on STS?',
        'benchmark the poolings against human ratings',
        'which pooling scores best on STS-B?',
        'measure paraphrase accuracy on the test split',
        'run the evaluation on the dev set',
        'how well do the cosines correlate with gold similarity scores?',
    )

    @dataclass(frozen=True)
    class Params:
        data: str = param("stsb-dev, stsb-test, or a .tsv (STS-B layout) / .csv / .jsonl file (sentence1, "
                          "sentence2, score) in a data folder", "stsb-dev", metavar="stsb-dev|stsb-test|FILE")
        sample: int | None = param("how many pairs to use, stratified by gold-score bins (default: all)",
                                   minimum=3, maximum=1_000_000)
        seed: int = param("seed of the sample and of the shuffled pairs", 42, minimum=0, maximum=2**32 - 1,
                          metavar="S")
        models: str | None = param("comma-separated models to compare (default: this conversation's)",
                                   metavar="a,b")
        pool: list[str] | None = param("poolings to score (default: every one the model has)", choices=Pooling,
                                       several=True)
        threshold: float = param("gold score from which a pair is a paraphrase (STS-B runs 0 to 5)", 4.0,
                                 metavar="T")

    def compute(self, ctx: Context, texts: list[str], p: Params) -> BenchmarkRun:
        names = list(dict.fromkeys(n.strip() for n in (p.models or "").split(",") if n.strip()))
        if len(names) > run.MAX_MODELS:
            raise UserError(f"--models names {len(names)} models; compare at most {run.MAX_MODELS} at a time.")
        models = [ctx.model(n) for n in names] or [ctx.model()]
        return run.evaluation(models[0], texts, data=p.data, sample=p.sample, seed=p.seed, models=models,
                              pool=p.pool, threshold=p.threshold, settings=ctx.settings, progress=ctx.progress,
                              uploads=getattr(ctx.session, "uploads", ()), access=ctx.access)

    def reply(self, facts: BenchmarkRun) -> Result:
        return replies.benchmark(facts)
