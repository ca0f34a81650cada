"""The texts of a question: quoted ones, the part after a colon, or pieces joined by "and" / "vs".

A question is split into what it *says* (the frame, which the router compares with the
phrasings, with every quoted text replaced by ``"X"``) and what it *carries* (the texts).
Quotes of every style count: ``'…'``, ``"…"``, ``“…”``, ``‘…’``, ``«…»`` and backticks; an
apostrophe inside a word (``what's``) is not a quote. Blanks (``___``, a lone ``_``, ``[mask]``) become ``[MASK]``;
``<mask>``, which the commands take too, stays as typed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from assistant.commands.splitting import MASKED, TRAILING_ASKED, split_payload
from tools.corpus.read import FORMATS
from tools.models.names import ALIASES, EMBEDDED, FAST_SUFFIX

#: A quoted text: the opening mark not glued to a word before it, the closing one not to a word after.
_QUOTED = re.compile(
    r"(?<!\w)(?:\"(?P<d>[^\"]+?)\"|“(?P<c>[^”]+?)”|«(?P<g>[^»]+?)»|`(?P<b>[^`]+?)`"
    r"|'(?P<s>\S(?:.*?\S)??)'(?!\w)|‘(?P<cs>\S(?:.*?\S)??)’(?!\w)|(?P<id>#\d+)(?!\w))"
)
#: A model a question may name: the embedded ones and the aliases (``:int8`` or "int8" after one, or "the int8
#: version of" before one), or a hub id ``org/name``.
_KNOWN_MODELS = sorted([*EMBEDDED, *ALIASES], key=len, reverse=True)
#: A data file's path: a corpus format's suffix, or a benchmark's ``.json``.
DATA_FILE = r"[\w./~-]+(?:" + "|".join(re.escape(s) for s in (*FORMATS, ".json")) + r")\b"
MODEL = re.compile(r"(?<![\w/-])(?P<before>(?:int8|quanti[sz]ed)\s+(?:(?:fast\s+|faster\s+)?"
                   r"(?:version|copy|model|variant)\s+of\s+(?:the\s+)?)?)?(?P<name>"
                   + "|".join(re.escape(m).replace("\\-", "[- ]?") for m in _KNOWN_MODELS)
                   + rf"|(?!{DATA_FILE})"  # a data file's path is no model's id
                   r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?P<fast>:int8|\s+int8)?(?![\w/-])", re.I)
#: "the int8 model": the conversation's model on the int8 path (said without its name).
INT8 = re.compile(r"\b(?:the\s+)?int8(?:\s+(?:model|version|path|copy))?\b", re.I)
#: A quoted name beside the word for what it names ("the 'body' column", "the column "abstract"", "the corpus
#: 'support'", "the 'first' strategy", "with 'max' pooling"): a name or an option's value, not a text; its quotes
#: are dropped.
_NAMED = r"(?:column|field|corpus|dataset|pooling|strategy|method|basis)"
_NAMED_QUOTE = re.compile(rf"(\b{_NAMED}\s+(?:is\s+)?|\bload\s+\S+\.\w+\s+as\s+)"
                          r"[\"'“‘]([\w-]+)[\"'”’]"
                          rf"|()[\"'“‘]([\w-]+)[\"'”’](?=\s+{_NAMED}\b)", re.I)
#: "quick q:" before a question: no text follows that colon, the question does (read without it); "ok forget that."
#: before a new request: it sets the last reply aside and points at nothing.
ASIDE = re.compile(r"^\W*(?:(?:a|one|another)\s+)?(?:(?:quick|small|short|simple|silly|dumb|random)\s+)?"
                   r"(?:q|qn|question)\s*:\s*|"
                   r"^\W*(?:(?:ok|okay|so|well|right)\W+)?(?:forget|never\s*mind|scratch|ignore)\s+(?:that|this|it)"
                   r"(?:\s+(?:one|last\s+one))?\s*[.,;!:-]+\s*(?=\S)", re.I)
#: Two rows of the corpus said in words ("rows 12 and 40", "row 3 vs row 7"): the texts ``#12`` and ``#40``. Not a
#: range nor a longer list ("rows 1 to 500", "rows 1, 5 and 20-40" are which rows to look in).
_ROW_PAIR = re.compile(r"\brows?\s+#?(\d+)\s*(?:and|vs\.?|versus|with|&)\s*(?:rows?\s+)?#?(\d+)\b"
                       r"(?!\s*(?:-|,|to\b|and\b))", re.I)
#: One row said in words ("row 15", "row #7"): the text ``#15``; not the start of a range or list.
_ROW_ONE = re.compile(r"\brow\s+#?(\d+)\b(?!\s*(?:-|,|to\b|and\b|\d))", re.I)
#: Row ids after "within hits" / "among rows" ("only within hits #4, #9 and #15", "in rows #1-#50"): rows to look
#: in, not texts ("the word pieces of hit #4" keeps its text).
_IDS_IN = re.compile(r"\b(?:(?:among|within|only)\s+(?:rows?|hits?)\s+#\d+(?:\s*(?:,\s*and|,|and|&|-|to)\s*#?\d+)*|"
                     r"(?:in|of|from)\s+(?:rows?|hits?)\s+#\d+(?:\s*(?:,\s*and|,|and|&|-|to)\s*#?\d+)+)", re.I)
#: What the router sees in place of a quoted text.
PLACEHOLDER = '"X"'
#: A row of the corpus by its id ("#17").
ROW_ID = re.compile(r"#\d+")
_BLANK = re.compile(r"(?:(?<!\w)_{1,}(?!\w)|<mask>|\[mask\])", re.I)
_TRAILING = re.compile(r"[\s?!.,:;]+$")
#: A question asked before a text with a blank and no other question after it: the text is what follows, as typed.
_ASKED_THEN_BLANK = re.compile(r"^[^?\[_<]*\?\s+(?=[^?]*(?:\[mask\]|<mask>|(?<!\w)_+(?!\w)))", re.I)
TARGET_WORD = re.compile(r"\b(?:word|token|term)\s+[\"'“‘`]?(?!(?:in|of|is|that|the|a|an|and|to|for|which|with|at|on|"
                         r"from|by|it|this|vectors?|embeddings?|averages?|averaging|level|mode)\b)([A-Za-z][\w'-]*)",
                         re.I)
_WORD = re.compile(r"[\w'-]+")
_ARTICLES = frozenset({"a", "an", "the"})
#: Words that ask only before another asking word, at a question's start: the articles, "every layer", "vs attention".
_BEFORE_ASKING = _ARTICLES | {"every", "each", "vs", "versus"}
#: Words after which "I" starts a text rather than asks ("the syntax tree for I shot an elephant").
#: Words after which a capital starts a text, even a word that usually asks ("the sentences It is raining.").
_LEADS_A_TEXT = frozenset({"for", "of", "on", "in", "about", "sentence", "sentences", "text", "texts"})
#: A question asked after a sentence typed with its full stop ("The woman worked as a [MASK]. what are the top fills").
_ASKED_AFTER = re.compile(r"(?<=[.!,])\s+(?=(?:what|which|how|why|who|where|when|can|could|would|show|give|list)\b"
                          r"[^.!]*$)", re.I)
#: A question asked after a text and a dash ("the nurse said [MASK] was tired -- who does the model think it is?").
_ASKED_AFTER_DASH = re.compile(r"\s+--\s+(?=(?:what|which|who|how|why|where|when|does|do|is|can|could)\b[^-]*$)",
                               re.I)
#: Words that ask rather than carry: stripped from the ends of an unquoted question before its texts
#: are read. Phrasing words are added by :func:`frame_words`.
ASKING = frozenset("""please can could would you me i we to know tell show give let's lets want wanna
what what's whats which how is are was were do does did the of in for on about between this these that those
sentence sentences text texts phrase phrases word words two both and or hey hi ok so now then also
them it they something stuff sim who but pls plz thanks across per maps charts graphs plots heatmaps""".split())


@dataclass(frozen=True)
class Slots:
    """What a question carries.

    Attributes:
        question: as typed (outer spaces trimmed).
        texts: the quoted texts in order; without quotes, the pieces read from the unquoted part.
        quoted: whether the texts came from quotes.
        frame: the question with each quoted text replaced by ``"X"`` (what the router compares).
        rest: the question outside its quotes (where options said in words are read).
        word: the target word (a quoted single word, or the word after "the word").
        payload: without quotes, the unquoted text before it was split at "and" / "vs" / commas.
        lead: without quotes, the words before a colon that the texts follow ("what does glove say about bank in
            these: A | B"); empty when there is none.
    """

    question: str
    texts: list[str] = field(default_factory=list)
    quoted: bool = False
    frame: str = ""
    rest: str = ""
    word: str | None = None
    payload: str = ""
    lead: str = ""

    @property
    def given(self) -> bool:
        """Whether the texts were written as texts: quoted, or after a colon ("probe these for POS: A | B")."""
        return self.quoted or bool(self.lead)

    @property
    def sentences(self) -> list[str]:
        """The texts other than the target word."""
        if self.word is not None and self.texts and self.texts[0] == self.word:
            return self.texts[1:]
        return list(self.texts)

    @property
    def word_first(self) -> bool:
        """A quoted word, then two or more quoted sentences that each contain it (``word`` / ``static``)."""
        return bool(self.quoted and self.word is not None and len(self.sentences) >= 2
                    and all(self.word.lower() in s.lower() for s in self.sentences))

    def word_said_outside(self, asking: frozenset[str], also: str = "") -> str | None:
        """The word said outside two or more quoted sentences that each hold it ("is bat the same in 'A' and 'B'?"),
        or ``also``'s when none is: `word`'s and `static`'s shape with the word unquoted."""
        if not self.quoted or self.word is not None or len(self.sentences) < 2:
            return None
        return shared_word(f"{self.rest} {also}", self.sentences, asking)

    @property
    def has_mask(self) -> bool:
        return any(MASKED.search(t) for t in self.texts)

    @property
    def masked(self) -> list[str]:
        """The one text with a blank that a command on a blank takes: quoted, or the unquoted words; none when no
        text holds one ("show how the prediction forms layer by layer" points back at the previous blank)."""
        masked = [t for t in self.texts if MASKED.search(t)]
        return masked[:1] or ([self.payload] if MASKED.search(self.payload) else [])

    @property
    def quotes_a_phrase(self) -> bool:
        """A quoted text of several words: a sentence or a query, never one word or a model's name."""
        return self.quoted and any(len(t.split()) > 1 for t in self.texts)


def model_name(m: re.Match[str]) -> str:
    """The model a :data:`MODEL` match names, as a command takes it (``minilm int8``, ``int8 minilm`` and ``int8
    version of minilm`` -> ``minilm:int8``)."""
    said = m.group("name")
    known = {re.sub(r"[- ]", "", k): k for k in _KNOWN_MODELS}
    name = said if "/" in said else known.get(re.sub(r"[- ]", "", said.lower()), said.lower())
    return name + (FAST_SUFFIX if m.group("fast") or m.group("before") else "")


def blanks_to_mask(text: str) -> str:
    """``___``, a lone ``_`` and ``[mask]`` -> ``[MASK]`` (``<mask>`` stays as typed)."""
    return _BLANK.sub(lambda m: m.group(0) if m.group(0) == "<mask>" else "[MASK]", text)


def quoted_spans(question: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of every quoted text, in order."""
    return [(m.start(), m.end(), next(g for g in m.groups() if g is not None)) for m in _QUOTED.finditer(question)]


def read(question: str, unquoted: str | None = None, asking: frozenset[str] = ASKING) -> Slots:
    """The texts of ``question``.

    Args:
        question: the line as typed.
        unquoted: the part outside quotes with the options said in words already cut out
            (``spoken.read`` does that); default: the part outside quotes.
        asking: words that ask rather than carry (stripped from the ends of unquoted texts).
    """
    question = _NAMED_QUOTE.sub(lambda m: "".join(g or "" for g in m.groups()), question.strip())
    question = _IDS_IN.sub(lambda m: m.group(0).replace("#", ""), question)
    outside, pos = [], 0  # rows said in words, outside quotes ("does 'bank' mean the same in rows 4 and 19?")
    for start, end, _ in [*quoted_spans(question), (len(question), len(question), None)]:
        outside += [_ROW_ONE.sub(r"#\1", _ROW_PAIR.sub(r"#\1 and #\2", question[pos:start])), question[start:end]]
        pos = end
    question = "".join(outside)
    spans = quoted_spans(question)
    frame, rest, pos = [], [], 0
    for start, end, _ in spans:
        frame += [question[pos:start], PLACEHOLDER]
        rest += [question[pos:start], " "]
        pos = end
    frame.append(question[pos:])
    rest.append(question[pos:])
    rest_text = re.sub(r"\s+", " ", "".join(rest)).strip()
    texts = [blanks_to_mask(t.strip()) for _, _, t in spans if t.strip()]
    quoted = bool(texts)
    colon, part = question.find(": "), rest_text if unquoted is None else unquoted
    if len(texts) == 1 and " " not in texts[0] and 0 < spans[0][1] <= colon and ":" in part:  # "for 'crane': A | B"
        after = part.split(":", 1)[1].strip()
        texts += ([t.strip() for t in after.split("|")] if "|" in after
                  else split_payload(TRAILING_ASKED.sub("", after)))
    payload = lead = ""
    if not quoted:
        payload = unquoted_payload(rest_text if unquoted is None else unquoted, asking)
        texts = split_payload(payload)
        head = re.match(r"([^|:?]*\w[^|:?]*)(?::|\?(?=[^|]*\|))\s", rest_text)  # (a "?" only before texts in |)
        after = rest_text[head.end():].split(None, 1) if head else []
        opens = bool(after) and (after[0].lower() not in asking or after[0].istitle())  # ("for bark: The dog's bark
        lead = head.group(1).strip() if head and after and (opens or "|" in payload) else ""  # was loud.", not "POS")
    word = _target(rest_text, texts, named_first=not quoted)  # "the word cell in 'A' and 'B'"
    return Slots(question, texts, quoted, "".join(frame).strip(), rest_text, word, payload, lead)


def quoted_free(text: str) -> str:
    """``text`` without its quoted texts."""
    out, pos = [], 0
    for start, end, _ in quoted_spans(text):
        out += [text[pos:start], " "]
        pos = end
    return "".join(out) + text[pos:]


#: "... between A and B": the texts follow it, whatever words asked before it.
#: (Not "the correlation between attention and tree distance for Old ships...": the text comes after "for".)
_BETWEEN = re.compile(r"^.*?\bbetween\s+(?=\S.*\s(?:and|vs\.?|versus)\s+\S)(?!.*\b(?:for|of|in|on)\s+[A-Z])", re.I)


#: A number alone, where a text would be: a setting said after a colon ("stricter: 0.97"), not a text.
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?%?")


#: Lower-case words that end in one leading into a text typed as a sentence, capital first ("mlm prediction for Water
#: boils at 100 [MASK]."): the text is that sentence.
_LED_SENTENCE = re.compile(r"^(?:[^A-Z|:?\[\]\d'\"]|\bI\b){0,60}?\b(?:for|of|on|about|in)\s+"
                           r"(?=[A-Z][a-z]*\s+\S+)")  # ("token ids do I get for Hello world")


def unquoted_payload(part: str, asking: frozenset[str] = ASKING) -> str:
    """The text a question without quotes carries: after a colon, or without its asking words."""
    part = re.sub(r"\s*\(\s*\)", "", part.strip())  # "(concat last 4)" once its option was cut out
    if "|" in part:
        head, _, tail = part.partition("|")
        return _after_colon_or_frame(head, asking).strip() + " | " + tail.strip()
    if ":" in part:  # "tokens of: The fox ran." - the text after the colon, as typed
        after = TRAILING_ASKED.sub("", part.split(":", 1)[1].strip())
        return "" if _NUMBER.fullmatch(after) else blanks_to_mask(after)  # ("stricter: 0.97": a setting, no text)
    if (asked := _ASKED_THEN_BLANK.search(part)) is not None:  # "what goes in the masks here? [MASK] is ..."
        return blanks_to_mask(TRAILING_ASKED.sub("", part[asked.end():].strip()))
    if (asked := _ASKED_AFTER.search(part)) is not None and (_BLANK.search(part[:asked.start()]) or re.match(
            r"[A-Z\[]", part.strip()) and not part[:asked.start()].endswith(",")):
        part = part[:asked.start()]  # the sentence, then a question about it (after a comma: a sentence with a blank)
    elif (asked := _ASKED_AFTER_DASH.search(part)) is not None:  # "the nurse said that [MASK] was tired -- who ..."
        part = part[:asked.start()]
    if (between := _BETWEEN.search(part)) is not None:  # "what words drive the similarity between A and B"
        return blanks_to_mask(_TRAILING.sub("", part[between.end():].strip()))
    if (led := _LED_SENTENCE.match(part)) is not None:  # "mlm prediction for Water boils at 100 [MASK]."
        return blanks_to_mask(_unended(part[led.end():].strip()))
    return blanks_to_mask(_unended(strip_asking(part, asking).strip()))


def _unended(text: str) -> str:
    """``text`` without the question's closing marks, except the full stop of sentences typed as they are, capital
    and all ("attention flow for Bees make honey.", "It is raining. and The streets are wet.")."""
    if re.match(r"[A-Z\[]", text) and re.search(r"[\w\]][.!]$", text) and not re.search(
            r"[.!?]\s+(?!(?:(?:and|vs\.?|versus|with|/|;)\s+)?[A-Z])", text):  # ("It is raining. and The streets")
        return text
    return _TRAILING.sub("", text)


def _after_colon_or_frame(head: str, asking: frozenset[str]) -> str:
    if ":" in head:
        return head.split(":", 1)[1]
    if (asked := re.search(r"\?\s+(?=\S)", head)) is not None:  # "are these paraphrases? A | B"
        return head[asked.end():]
    cut = _asked_before(head, asking | {"comapre", "compre"})  # "3d plot of A | B": "plot of" asks
    return head if cut is None else head[cut:]


def _asked_before(part: str, asking: frozenset[str]) -> int | None:
    """Where the asking words at the start of ``part`` end (articles, "every" and "vs" count only before another
    asking word: "in every layer for the cat sat"); None when ``part`` holds nothing else."""
    cut, previous = 0, ""
    for m in _WORD.finditer(part):
        word = m.group(0).lower()
        if _in_mask(part, m) or (m.group(0)[0].isupper() and previous in _LEADS_A_TEXT):  # "for I shot an elephant"
            return cut
        previous = word
        if word in _BEFORE_ASKING:
            continue
        if word in asking:
            cut = m.end()
            continue
        return cut
    return None


def _in_mask(text: str, word: re.Match[str]) -> bool:
    """Whether the word ``word`` found in ``text`` is the inside of a mask (``[MASK]``, ``<mask>``): a text's."""
    return text[word.start() - 1:word.start()] in ("[", "<") and word.group(0).lower() == "mask"


def strip_asking(part: str, asking: frozenset[str] = ASKING) -> str:
    """``part`` without the asking words at its start and end ("how similar are X and Y" -> "X and Y").

    Articles go with the asking words only when an asking word follows them, so
    "what are the neighbours of bank" keeps "bank" and "how similar are the cat sat and ..."
    keeps "the cat sat".
    """
    cut = _asked_before(part, asking)
    if cut is None:
        return ""
    tail = part[cut:]
    ends = list(_WORD.finditer(tail))
    stop = len(tail)
    for m in reversed(ends):
        word = m.group(0).lower()
        if not _in_mask(tail, m) and word in asking and word not in _ARTICLES and word not in (
                "and", "the", "of", "this", "that", "is", "are", "a", "it"):
            stop = m.start()
            continue
        break
    return tail[:stop].lstrip(" ,:;-?!").rstrip(" ,:;-")  # ("are these paraphrases? A / B")


def _target(outside: str, texts: list[str], named_first: bool = False) -> str | None:
    """The target word: a single-word text (the first), or the word after "the word" outside quotes (first, when
    nothing is quoted: "is the word bark the same in those two?")."""
    match = TARGET_WORD.search(outside)
    singles = [t for t in texts if re.fullmatch(r"[\w'-]+", t)]
    if match and (named_first or not singles):
        return match.group(1)
    return singles[0] if singles else None


_PHRASING_WORD = re.compile(r"[A-Za-z][\w'-]*")


@functools.lru_cache(maxsize=128)
def asking_words(phrasings: tuple[str, ...]) -> frozenset[str]:
    """Words that ask rather than carry: the general ones and the given phrasings' own words."""
    own = {w.lower() for p in phrasings for w in _PHRASING_WORD.findall(quoted_free(p))}
    both = {re.sub(r"i([sz])(?=(?:e|es|ed|ing|ation)$)", lambda m: "iz" if m.group(1) == "s" else "is", w)
            for w in own}  # "visualise" asks as "visualize" does
    return ASKING | frozenset(own) | frozenset(both)


def shared_word(outside: str, sentences: list[str], asking: frozenset[str]) -> str | None:
    """The first unquoted word that every quoted sentence contains as a word: the target the question
    named without quotes. Asking words ("is", "the", "same") never count."""
    for word in _PHRASING_WORD.findall(outside):
        if word.lower() in asking or len(word) < 2:
            continue
        pattern = re.compile(rf"(?<![\w'-]){re.escape(word)}(?![\w'-])", re.IGNORECASE)
        if all(pattern.search(sentence) for sentence in sentences):
            return word
    return None


def word_then_sentences(slots: Slots, phrasings: tuple[str, ...], always: bool) -> list[str] | None:
    """The texts of ``word`` / ``static`` (whose ``phrasings`` are given): the word first, then the sentences that
    contain it (None: the usual texts); ``always``: also with fewer than two sentences."""
    if slots.word is not None:
        sentences = [t for t in slots.sentences if t != slots.word]
        if always or len(sentences) >= 2:
            return [slots.word, *sentences]
    if slots.given and len(slots.sentences) >= 2:  # (the words outside the texts: around quotes, before a colon)
        shared = shared_word(slots.rest if slots.quoted else slots.lead, slots.sentences, asking_words(phrasings))
        if shared is not None:  # "is bank in 'the river bank' the same vector as in 'a bank loan'?"
            return [shared, *slots.sentences]
    return None
