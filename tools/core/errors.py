"""The one exception a person is meant to read."""


class UserError(ValueError):
    """A predictable bad input, carrying one sentence that says what to do.

    Tools raise it for anything a user can fix (a bad option value, a missing
    text, an unknown model). The assistant shows its message as a normal reply;
    any other exception is a bug and is logged with its traceback.
    """

    def __init__(self, message: str, fixes: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        #: Spellings that would have worked, as (what was typed, what was meant) pairs: a reply turns each into
        #: the whole corrected line, one click from running.
        self.fixes = fixes
