"""The empty conversation: a line of welcome and the questions a first-time visitor can click."""

from __future__ import annotations

import html

INTRO = ("Ask the model about text. Type a command (texts separated by |, options after --), ask in plain "
         "English with your texts in quotes, or pick a question below; help lists every command.")

#: What a first-time visitor can click: the questions the source notebooks ask, each as the command
#: that answers it.
STARTERS: tuple[tuple[str, str], ...] = (
    ("Are these two sentences paraphrases?",
     "compare In 1995, the last survey, those numbers were equal. | The last time the survey was conducted, "
     "in 1995, those numbers matched. --pool all"),
    ("Is 'bank' the same vector in 'river bank' and 'bank loan'?",
     "word bank | We sat on the river bank. | The bank approved my loan."),
    ("Which heads look at the previous word?", "attend The cat sat on the mat because it was tired."),
    ("Where do tokens land in 2-D?",
     "project The bank of the river. | The bank raised its rates."),
    ("How good is CLS pooling on STS-B?", "benchmark --sample 300 --pool cls,mean"),
    ("What does the model put in place of [MASK]?", "mask The [MASK] sat on the mat."),
)


def starters_html(can_mask: bool = True) -> str:
    """The empty log: a line of welcome and the starter questions, each one click from its answer (`mask`'s only
    where a masked-LM model can answer)."""
    buttons = "".join(
        f"<button type='button' class='starter' data-run='{html.escape(line, quote=True)}' "
        f"title='{html.escape(line, quote=True)}'>{html.escape(question)}</button>"
        for question, line in STARTERS if can_mask or not line.startswith("mask "))
    return (f"<div class='log' role='log' aria-live='polite'><div class='starters'>"
            f"<p>{html.escape(INTRO)}</p><div class='starter-list'>{buttons}</div></div></div>")
