"""How people say options, choices, names, flags and numbers: the word tables :mod:`spoken` reads with.

Nothing here names a command: these are the words for an option's *name* ("pooling" for ``--pool``), a
choice's spoken forms ("t-SNE" for ``tsne``), and numbers said in words.
"""

from __future__ import annotations

import re

from assistant.commands.slots import DATA_FILE

#: How people name an option (the row's option names are always accepted too).
OPTION_WORDS: dict[str, tuple[str, ...]] = {
    "layer": ("layer", "hidden state"),
    "head": ("head",),
    "heads": ("heads",),
    "top": ("top", "candidates", "guesses", "predictions", "fill(?:er)?s", "suggestions", "words", "answers",
            "options"),
    "k": ("top", "into", "neighbours", "neighbors", "nearest", "closest", "words", "similar words", "results",
          "matches",
          "hits"),
    "n": ("first", "words", "rows", "tokens", "points", "entries"),
    "sample": ("sample of", "samples?", "pairs", "examples"),
    "seed": ("seed",),
    "threshold": ("threshold", "cutoff", "cut-off", "above", "over", "at least", "more than", "gold score", "cosine",
                  "starts at", "from a score of", "(?:scored|rated) (?:at )?",
                  "(?:loosen|lower|raise|tighten|set|move) (?:it|that|the threshold|the cutoff) to"),
    "max-length": ("max[ _]length", "maximum length", "max-length", "pad (?:it |them |those |that )?(?:both |all )?to",
                   "padded to",
                   "padding to", "cut (?:it |them |that |this )?(?:at|to|after)", "truncat\\w* (?:it |them )?(?:at|to)",
                   "tokens"),
    "dims": ("d", "dims", "dimensions", "dimensional"),
    "pool": ("pool", "pooling", "poolings", "pooled", "token"),
    "method": ("method", "projection", "with", "using", "via", "by"),
    "color": ("colour", "color", "coloured", "colored", "colouring", "coloring", "by", "highlight(?:ed|ing)?"),
    "strategy": ("strategy", "strategies"),
    "space": ("space", "in", "with", "using", "from"),
    "level": ("level", "per", "each", "by", "one point per"),
    "data": ("split", "set", "data", "on"),
    "padding": ("padding", "pad", "padded", "pad to"),
    "format": ("format", "as"),
    "basis": ("basis", "from", "space", "against", "fit(?:ted)? on"),
}
#: Values said by a name of their own (pattern, value): "the embedding layer" is layer 0 (the input embeddings).
VALUE_WORDS: dict[str, tuple[tuple[str, str], ...]] = {
    "layer": ((r"\b(?:the\s+)?(?:input\s+|token\s+)?embeddings?\s+(?:layer|output)\b|\binput\s+layer\b|"
               r"\bat\s+the\s+(?:input\s+)?embeddings\b(?!\s+(?:of|for|matrix|space|basis))", "0"),),
    "in": ((r"\b(?:(?:among|in|within|from)\s+)?(?:the\s+)?(?:ones|points|rows|texts)\s+(?:that\s+)?(?:i|we)\s+"
            r"(?:just\s+)?(?:lassoed|selected)\b|\b(?:in|within|among)\s+(?:my|the)\s+(?:lasso\s+)?selection\b"
            r"|\b(?:(?:in|within|among|from)\s+)?(?:my|the)\s+lasso\b(?!\s+tool)",
            "selection"),),
    "pool": ((r"\b(?:which|what)\s+(?:kind\s+of\s+)?(?:pooling|pool)\s+"
              r"(?:gives|is|scores|works|does|would|makes|wins)\b|"
              r"\b(?:one\s+\w+\s+)?(?:per|for\s+each|for\s+every)\s+pooling(?:\s+strateg(?:y|ies))?\b", "all"),),
    "mode": ((r"\b(?:as|like)\s+(?:two|three|four|five|six|\d+)\s+(?:separate\s+|whole\s+)?sentences\b", "sentences"),),
    "address": ((r"\b(?:already[- ]running|existing|running)(?=\s+(?:ray\s+)?cluster\b)|"
                 r"\bcluster\s+(?:that(?:'s|\s+is)\s+)?(?:already\s+)?(?:up\s+and\s+)?running\b|"
                 r"\b(?:at|address(?:\s+of)?|with\s+address)\s+auto\b", "auto"),),  # ("on the ray cluster at auto")
}
#: Spoken forms of choice values (a value is always accepted as itself).
CHOICE_WORDS: dict[str, tuple[str, ...]] = {
    "tsne": ("t-sne", "t sne", "tsne"),
    "cls": (r"\[?cls\]?(?:[- ]token)?(?:'s)?\s+(?:sentence\s+)?(?:vectors?|embeddings?|representations?)",
            r"(?:with|using) (?:the )?\[?cls\]?(?![\w-])"),
    "pca": ("pca", "principal components"),
    "sbert": ("sbert", "sentence-transformers", "sentence transformers"),
    "stsb-test": ("test split", "test set", "test pairs", "stsb-test", "stsb test", "sts-?b test"),
    "stsb-dev": ("dev split", "dev set", "development set", "stsb-dev", "validation split"),
    "max_length": ("max length", "max_length", "maximum length"),
    "concat-last4": ("concat-last4", "concat\\w* (?:of )?(?:the )?last (?:4|four)(?: layers)?",
                     "(?:the )?last (?:4|four) layers,? concatenated", "concat\\w* last4"),
    "sum-last4": ("sum-last4", "sum(?:med|ming)? (?:of |up )?(?:the )?last (?:4|four)(?: layers)?",
                  "(?:the )?last (?:4|four) layers,? summed"),
    "mean-last4": ("mean-last4", "(?:mean|averag(?:e|ed|ing)) (?:of |over )?(?:the )?last (?:4|four)(?: layers)?",
                   "(?:the )?last (?:4|four) layers,? averaged"),
    "first": ("first", "first[- ]layer"),
    "rollout": ("plain rollout", "(?:attention )?rollout method", "matrix[- ]products?"),
    "flow": ("flow", "max[- ]flow", "maximum flow", "attention flow"),
    "last": ("last", "(?:the )?last[- ]layer(?: only)?", "(?:the )?(?:top|final)[- ]layer(?: only)?"),
    "sum-all": ("sum-all", "sum of all(?: the)? layers", "summ?(?:ed|ing)? (?:up |over )?all(?: the)? layers"),
    "all": ("all", "every", "each", "both"),
    "both": ("both", "all", "every", "each"),
    "auto": ("auto", "automatic", "automatically"),
    "number": ("number", "numbers", "digits"),
    "subword": ("subwords?(?: pieces?)?", "sub-words?(?: pieces?)?", "word pieces?", "wordpieces?"),
    "vowels": ("(?:number|count) of vowels", "vowels", "vowel"),
    "biased": ("biased", "biassed"),
    "pos": ("pos", "parts?[- ]of[- ]spee?a?ch(?: tags?)?", "pos tags?", "word classes"),
    "dep": ("dep", "deps", "depende?ncy[- ](?:labels?|relations?|tags?|arcs?)", "depende?nc(?:y|ies)",
            "syntactic roles?"),
    "length": ("word length", "length"),
    "sentences": ("(?:one )?(?:points?|dots?) (?:per|for each|for every) (?:sentence|text|of (?:them|those|these))",
                  "(?:one|a|single) (?:point|dot) (?:each|apiece)",
                  "sentences as (?:single )?points",
                  "(?:(?:project|plot|visuali[sz]e|draw)(?:\\s+of)?\\s+|(?<=sne of )|(?<=pca of )|(?<=map of ))"
                  "(?:these\\s+|the\\s+|my\\s+)?(?:\\d+\\s+|two\\s+|three\\s+|four\\s+)?"
                  "sentences",
                  "sentence points?",
                  "as (?:single )?points",
                  "sentence vectors",
                  "(?:treat\\w* (?:them |these |those )?)?as sentences", "sentences", "sentence", "texts"),
    "selection": ("selection", "(?:the )?(?:points|rows|texts|ones) (?:I|we) (?:lassoed|selected|picked|circled)",
                  "what (?:I|we) (?:just )?(?:lassoed|selected|picked|circled)",
                  "(?:the )?(?:area|region|part) (?:I|we) (?:just )?(?:lassoed|selected|circled)",
                  "(?:the )?selected (?:points|rows|texts|ones)",
                  "(?:my|the) lasso(?:ed)?(?: selection| points)?"),
    "tokens": ("tokens", "token"),
    "special": ("special tokens?",),
    "vocab": ("vocab", "vocabulary", "(?:its|their) static (?:input )?(?:rows?|embeddings?|vectors?)",
              "input[- ]embeddings?(?=\\s+(?:basis|space|matrix|rows?))",
              "(?:from )?static(?:[- ]positions?)?[- ](?:to|and|vs\\.?|versus)[- ]"
              "(?:its |their )?contextual"),  # ("the drift from
    # static to contextual", "the static-to-contextual movement")
    "html": ("html", "(?:a\\s+)?web\\s*page"),
    "markdown": ("markdown", "md"),
}
#: Choice words too common to stand alone: they count only beside a word naming their option.
COMMON = frozenset({"mean", "max", "first", "last", "length", "number", "all", "every", "each", "model", "word",
                    "tokens", "token", "sentences", "sentence", "texts", "both", "auto", "special", "longest",
                    "vocab", "vocabulary", "automatic", "automatically"})
#: Between row ids in words ("rows 1, 5 and 20-40", "rows 1 to 500"): read as ``,`` and ``-``.
IDS_JOIN = r"\s*(?:-|,\s*and\b|,|\band\b|&|\bto\b)\s*"
#: After a list of row ids, a number that counts results is no id ("rows 10,20,30-50, 5 results").
_NOT_A_COUNT = r"(?!\s+(?:results?|hits|matches|texts|neighbou?rs|nearest|closest|best|groups|clusters|topics)\b)"
#: A corpus said by its name: "the corpus named faq", "the one called support" (group ``v``).
CALLED = r"\b(?:one|corpus|dataset)\s+(?:called|named)\s+['\"]?(?P<v>[\w-]+)"
#: How a name is said ("the reviews corpus", "a corpus called reviews", "call it reviews"): patterns whose group
#: ``v`` is the value.
NAME_WORDS: dict[str, tuple[str, ...]] = {
    "corpus": (r"(?:\b(?:the|my|our|in|from|of|on|using|with|for|to)\s+|,\s*)(?:whole\s+|entire\s+|full\s+)?"
               r"(?P<v>[\w-]+)\s+(?:corpus|dataset|data\s+set)\b",  # (", reviews corpus")
               r"\b(?:make|set)\s+(?P<v>[\w-]+)\s+(?:the\s+)?(?:active|current)\b",
               r"\b(?:switch|change|go|move|swap)\s+(?:over\s+|back\s+)?to\s+the\s+(?P<v>[\w-]+)\s+one\b",
               r"\b(?:in|on|from|within|across)\s+(?:the\s+)?(?:corpus|dataset)\s+(?!called\b|named\b|map\b)"
               r"(?P<v>[\w-]+)\b(?!\.\w)",  # "in corpus hotels"
               r"\b(?:of|for)\s+(?:corpus|dataset)\s+(?!called\b|named\b|map\b)(?P<v>[\w-]+)\b(?!\.\w)",
               # ("atlas of corpus tickets")
               r"(?:^\s*|\bsearch\s+)(?:in\s+|through\s+)?(?:the|my|our)\s+(?!(?:corpus|data|dataset|texts|file|rows|ones|"
               r"documents|selection|points|map)\b)(?P<v>[\w-]+)(?=\s+for\b)",  # "search the reviews for X"
               r"\bsearch\s+(?:in\s+|through\s+)?(?!(?:corpus|data|dataset|texts|file|rows|documents|everything|"
               r"anything|all|them|these|those|each|every|again)\b)(?P<v>[\w-]+)(?=\s+for\b)",  # "search reviews for X"
               r"\(\s*(?:the\s+)?(?P<v>[\w-]+)\s+(?:corpus|dataset)\s*\)",
               CALLED,
               r"\b(?:encoding|loading|progress)\s+(?:of|for)\s+(?:the\s+)?(?P<v>[\w-]+)",
               r"\b(?:stop|cancel|abort|halt|pause)\s+(?:encoding|loading|indexing)\s+(?:the\s+)?(?!it\b|that\b|this\b)"
               r"(?P<v>[\w-]+)",
               r"\b(?:my|the|our)\s+(?:corpus|dataset)\s+(?P<v>[\w-]+)\W*$",
               r"^\W*(?:please\s+)?(?:drop|delete|remove)\s+(?:corpus\s+)?(?!(?:duplicates|dupes|outliers|everything|"
               r"all|them|those|these|that|this|it)\b)(?P<v>[\w-]+)\W*$"),  # "drop reviews_old": a name alone
    "data": (r"\b(?:file|data|pairs|benchmark|on|against|score|evaluate|in|from|with|using)\s+(?:my\s+|the\s+|our\s+)?"
             rf"(?P<v>{DATA_FILE})",
             rf"(?<![\w/.~-])(?P<v>{DATA_FILE})"),  # a file said alone ("pairs with scores, data/pairs.jsonl")
    "in": (rf"\b(?:among|in|within|from|only|on|of)\s+(?:rows?|hits?|ids?)\s+"
           rf"(?P<v>#?\d+(?:{IDS_JOIN}#?\d+{_NOT_A_COUNT})*)\b",
           rf"\b(?:rows?|ids?)\s+\(?(?P<v>\d+(?:{IDS_JOIN}\d+{_NOT_A_COUNT})+)\b"),  # ("rows (3,8,10-20)")
    "group": (r"\b(?:cluster|topic|group)\s+(?:#|no\.?\s*|number\s+)?(?P<v>\d+)\b"
              r"(?!\s*(?:[-,]\s*\d|clusters|groups|topics))",  # ("what's in cluster 3?"; not "cluster 3-5")
              r"\b(?P<v>largest|biggest|smallest)\s+(?:cluster|topic|group|one)\b"),  # ("and the smallest one?")
    "color": (r"\b(?:colou?r(?:ed)?|by)\s+(?:by\s+)?(?:the\s+|its\s+)?(?P<v>[\w-]+)\s+column\b",
              r"\bcolou?r(?:ed|s)?\s+(?:it\s+|them\s+|the\s+(?:points|dots|map)\s+)?(?:by|with)\s+"
              r"(?:the\s+|its\s+|their\s+|these\s+|those\s+)?(?P<v>[\w-]+)\b(?!\s+(?:of|length|count)\b)"),
    "column": (r"\b(?:the|its|a)\s+(?P<v>[\w-]+)\s+(?:column|field)\b(?!\s+is\b)",
               r"\b(?:column|field)\s+is\s+(?:called\s+|named\s+)?(?P<v>[\w-]+)",
               r"\b(?:in|from|under)\s+(?:the\s+)?(?:column|field)\s+(?!called\b|named\b)(?P<v>[\w-]+)",
               r"\b(?:column|field)\s+(?P<v>[\w-]+)\s+as\s+(?:the\s+)?text",
               r"\b(?:column|field)\s+(?:called|named)\s+(?P<v>[\w-]+)",
               r"\btext\s+(?:column|field)\s+(?!is\b|was\b|called\b|named\b)(?P<v>[\w-]+)"),
    "address": (r"(?P<v>ray://[\w.:-]+)",),
    "name": (r"\b(?:call|name)\s+it\s+['\"]?(?P<v>[\w-]+)",
             r"(?<!column )(?<!field )\b(?:called|named)\s+['\"]?(?P<v>[\w-]+)\b(?!\.\w)",
             r"\b(?:under|with|using)\s+the\s+name\s+['\"]?(?P<v>[\w-]+)",
             r"\bload\s+(?:(?:my|the|our|this)\s+)?(?:file\s+)?(?:\S+\.\w+|it)\s+(?:again\s+)?as\s+['\"‘“]?"
             r"(?!a\b|an\b|the\b|my\b|corpus\b|dataset\b)(?P<v>[\w-]+)"),
}
#: A name said last, after "in" / "on" ("any duplicate texts in faq?", "the map in tickets using umap"), for a command
#: that reads no texts of its own (so "in tickets" cannot belong to a query): patterns whose group ``v`` is the name.
NAME_AT_END: dict[str, tuple[str, ...]] = {
    "corpus": (r"\b(?:in|on|across|within|(?<=\brows\s)of|(?<=\brow\s)of)\s+(?:the\s+)?(?P<v>[a-z][\w-]*)"
               r"(?:\s+(?:colou?red\s+)?(?:using|with|via|by|against)\b(?:[^?.!]|\.(?=\d))*"
               r"|(?:\s*,|\s+(?:at|above|over|top))\s*[^,?!]*\d[^,?!]*)?\s*[?.!,;]*\s*$",),
}
#: Words that end a question where a name would, but are not names ("duplicates in my data", "outliers in there").
NOT_NAMES_AT_END = frozenset({"corpus", "data", "dataset", "texts", "file", "rows", "documents", "map", "space",
                              "glove", "there", "them", "total", "general", "detail", "order", "everything", "all",
                              "2d", "3d", "mind", "it", "here", "those", "these", "use", "set", "layers", "layer",
                              "layout", "report", "dupes", "duplicates", "clusters", "topics", "outliers",
                              "parallel", "background", "progress", "memory", "disk", "full", "pairs", "groups"})
#: Words after which a known name (a corpus of the conversation) is that name, not a noun: "duplicates in reviews",
#: "stop encoding reviews" (but "find reviews about late delivery").
NAME_LEAD = r"(?:on|in|of|from|for|to|within|across|over|encoding|loading|drop|delete|remove|use|using|corpus)"
#: Words that stand where a name would but describe instead ("the whole corpus", "my own dataset").
NOT_NAMES = frozenset({"own", "whole", "current", "entire", "loaded", "same", "other", "new", "this", "that", "full",
                       "active", "selected", "my", "the", "a", "an", "your", "our", "text", "first", "last",
                       "uploaded", "previous", "it", "one", "for", "like", "about", "with", "in", "on", "of", "to",
                       "and", "or", "is", "was", "instead", "too", "again", "please", "now", "only", "here", "there",
                       "then", "also", "i", "you", "we", "corpus", "dataset", "encoding", "loading", "overall",
                       "altogether", "itself", "generally", "are", "were", "be", "has", "have", "does", "do", "did",
                       "can", "will", "would", "should", "which", "what", "who", "where", "when", "how"})
#: Flags said in words.
FLAG_WORDS: dict[str, tuple[str, ...]] = {
    "causal": ("causal(?: mask(?:ing)?)?", "decoder", "masked attention", "future tokens",
               r"mask(?=\s+off\b)", r"(?<=without the )mask\b", r"(?<=no )mask\b",  # ("turn the mask off")
               r"(?:like|as)\s+(?:a\s+)?gpt(?:\s+(?:would|does))?(?:\s+with\s+masking)?", r"gpt[- ]style"),
    "truncation": ("truncat\\w*", "cut (?:it |them |\\S+ )?off", "chop(?:ped)? (?:it |\\S+ )?off",
                   "cut (?:it |them |that |this )?(?:at|to|after)(?= \\S+ tokens?\\b)"),
    "why": ("explanation", r"(?:and|then)\s+explain\s+(?:it|that|them|the\s+choice|why(?=\W*$))\b",
            r"why\s+(?:part|bit|flag|option)",
            "explain (?:the |its |that |this )?(?:top |best |first )?(?:fill|prediction|guess|answer)s?",
            "(?:which (?:input )?(?:words|tokens|inputs)|(?:input )?(?:words|tokens)|inputs)"
            "(?: in (?:the|that|this) (?:sentence|text)| in it)? "  # ("which words in the sentence pushed it")
            "(?:drove|drive|drives|made|caused|decided|pushed|push|pushes|led to|mattered|matter|matters|counted|"
            "contributed)"
            "(?: (?:that|the|this|those|these|its|each|every) (?:predictions?|fills?|guess(?:es)?))?", "attributions?",
            "(?:drove|reasons? (?:behind|for)) (?:the|that|this) (?:(?:top|best|first) )?(?:prediction|fills?|guess)",
            "what (?:drove|drives) (?:it|that|this)\\b",
            "what explains (?:the|that|this|its) (?:top |best |first )?(?:fill|prediction|guess|answer)s?",
            "why (?:did|does|would) (?:it|the model|you) (?:pick|choose|predict|guess|fill in|say|go for)"
            "(?: (?:that|this|the) (?:word|answer|fill|one))?",
            "why (?:the|that|this|its) (?:top|first|best) (?:one|word|answer|fill|prediction|guess) "
            "(?:won|wins|came first)", "why (?:that|this) (?:answer|prediction|word|fill|guess)\\b",
            "and why(?=\\W*$)", "integrated gradients",
            "what (?:did|does) (?:it|the mask|the model|the prediction|the fill) (?:rely|depend|lean) on"),
}
UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}
NUMBER_WORD = (r"(?:(?:a|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:hundred|thousand)|(?:"
               + "|".join(TENS) + r")(?:[- ](?:" + "|".join(UNITS[1:10]) + r"))?|"
               + "|".join(sorted(UNITS, key=len, reverse=True)) + ")")
NUMBER = (r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|(?:" + NUMBER_WORD + "|" + "|".join(ORDINALS) + r")(?![a-z]))"
          r"(?:st|nd|rd|th)?")
#: What may stand between an option's name and its number ("seed, say 7", "sentences: 150", "layer #3").
BETWEEN = r"(?:(?:#|no\.?|number|of|=|:|,|\(|say|like|please|pls|to|at)\s*){0,3}"
LEAD = r"(?:\b(?:at|in|on|with|using|use|by|for|from|via|and|of|to|show|give|the|me|only|into|as)\s+)*"
#: Choices said together ("cls, mean and max"): a list names its option without the option's own word.
JOIN = r"\s*-?(?:,\s*(?:and\s+|or\s+)?|\band\b|\bor\b|\bvs\b\.?|\bversus\b|&|/|\+|\bplus\b)-?\s*"
#: Words a line may open with before its first real word ("ok, now compare ...", "and then search ...").
OPENING = re.compile(r"^\s*(?:(?:ok(?:ay)?|now|so|then|and|also|alright|well|please|pls|hey)\b[\s,]*)+", re.I)
#: Choices that mean every other choice of their option ("all" strategies, "both" formats).
EVERY = ("all", "both")
#: A model said alone, without the others a line compared it with ("just this model on its own").
ALONE = (r"\b(?:drop|remove|without)\s+the\s+(?:second|other|extra)\s+model\b|"
         r"\b(?:just|only)\s+(?:this|the\s+current|my|our|the\s+one)\s+model\b(?:\s+(?:on\s+its\s+own|alone|by\s+"
         r"itself))?|\b(?:this|the)\s+model\s+(?:on\s+its\s+own|alone|by\s+itself)\b")
#: Words before what is set aside, not asked for ("bert-base rather than bert-small", "max instead of cls", "the probe
#: instead of STS-B"); ``RATHER``: those words right before a match.
ASIDE = r"\b(?:rather\s+than|instead\s+of|in\s+place\s+of|replac(?:e|ing)|swap(?:ping)?(?:\s+out)?|not)\s+(?:the\s+)?"
RATHER = ASIDE + "$"
#: Words after what is set aside ("mean pooling replaced by max", "cls swapped for mean"), read from its end.
REPLACED = r"(?:\s+[\w-]+)?\s+(?:replaced|swapped|switched|exchanged)\s+(?:out\s+)?(?:by|with|for)\b"
#: A command asked to run on what follows ("run static on Rain | ...", "try compare with A | B"): group 1 is its name.
RUN_ON = (r"(?:please\s+)?(?:run|do|try|apply)\s+(?:the\s+)?`?([\w-]+)`?(?:\s+command)?\s+"
          r"(?:(?:on|for|with|to)\s+)?(?=\S)")
#: Words that turn a flag off ("without the causal mask", "no attributions"): the flag's value is then ``off``.
NOT = r"\b(?:without|no|not|drop|remove|turn off|switch off|disable|hide)\s+(?:the\s+|any\s+|its\s+)?"
#: How an option whose default is every one of them is set back ("all the layers again"); ``{}``: its names.
EVERY_ONE = (r"|(?:^\W*(?:(?:and|now|so|ok|okay|then)\W+)*(?:(?:what|how)\s+about\s+)?|"
             r"\b(?:show|see|draw|plot|display|give)\s+(?:me\s+)?)(?:all|every)\s+(?:the\s+)?(?:{0})s?\b"
             r"|(?:,|\b(?:for|across|over|in|at|on))\s*(?:all|every)\s+(?:the\s+)?(?:{0})s\b")  # (", all layers")
#: How every head of a layer is asked for ("what about the whole layer" after `--head 1`).
WHOLE_LAYER = r"|\b(?:the\s+)?(?:whole|entire|full)\s+layer\b(?!\s*\d)"
#: How a command's count is left to it ("let it pick the number itself", "let it choose how many").
ITS_OWN_COUNT = (r"|\blet\s+(?:it|the\s+model|the\s+tool)\s+(?:pick|choose|decide|find|work\s+out)\s+(?:the\s+number|"
                 r"the\s+count|how\s+many)\b")
#: How an option whose default is the last layer is set back ("use the final layer instead"); ``{}``: its names.
LAST_ONE = r"|\b(?:the\s+)?(?:final|last|top)\s+(?:{})\b(?!\s*\d)"
#: How an option is set back to its default ("back to the last layer", "the layer option back to its default");
#: ``{0}``: the option's names.
RESET = (r"\b(?:back (?:to|on)|reset|drop|remove|clear|undo|without)\s+(?:showing\s+)?(?:the\s+|any\s+)?"
         r"(?:default\s+|last\s+|final\s+|top\s+|usual\s+|original\s+|all\s+|every\s+)?(?:{0})s?(?:\s+option)?\b"
         r"|\b(?:the\s+)?(?:{0})s?(?:\s+option|\s+setting)?\s+(?:back\s+)?to\s+(?:its\s+|the\s+)?default\b"
         r"|\b(?:with|at|on|use|using)\s+the\s+(?:default|usual)\s+(?:{0})s?\b"
         r"|\b(?:not\s+a|no)\s+(?:{0})s?\b(?!\s*(?:of\s+)?\d)")
