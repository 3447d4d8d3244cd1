"""The one LIKE rule of entityworks' filters, in Python: pattern validation and matching.

% and _ are wildcards and a backslash escapes %, _ and itself, on every backend. Kept apart
from the filters because the SQLite dialect builds on it: its connection set-up registers
:func:`like_matches` as a function, and it compiles :class:`~._likesql.LikeMatch` to call it
for text holding NUL (see :mod:`.backends.sqlite`), as :mod:`.backends.sqlitefile` does without
SQLAlchemy. Standard library only.
"""

from __future__ import annotations

import functools

# One rule on every backend: % and _ are wildcards and a backslash escapes %, _ and itself.
# The pattern is validated here and sent with ESCAPE '\' (SQLite has no default escape,
# PostgreSQL and MariaDB treat other escaped characters and a trailing backslash each their
# own way, hence their refusal). Case counts everywhere: the Store sets SQLite's
# case_sensitive_like and MariaDB's binary collation, PostgreSQL's LIKE is case-sensitive.
# SQLite's LIKE stops reading text at a NUL character: there, text holding NUL is matched by
# LIKE_FUNCTION, a Python function of the same rule registered on each connection.

#: The SQLite function (pattern, text) -> 0/1 that matches text holding NUL.
LIKE_FUNCTION = "entityworks_like"

_ANY = 0  # a token of like_tokens: %
_ONE = 1  # _


@functools.lru_cache(maxsize=256)
def like_tokens(pattern: str) -> tuple[str | int, ...]:
    """``pattern`` as literal characters and the wildcard tokens ``_ANY`` (``%``) and
    ``_ONE`` (``_``); ValueError saying why for a pattern outside the rule."""
    tokens: list[str | int] = []
    escaped = False
    for i, char in enumerate(pattern):
        if char == "\x00":
            raise ValueError(
                "a pattern cannot hold NUL (some databases' text cannot, and others' "
                "LIKE would stop at it)"
            )
        if escaped:
            if char not in "%_\\":
                raise ValueError(
                    f"the backslash at position {i - 1} escapes {char!r}; a "
                    "backslash may only escape %, _ or a backslash (two "
                    "backslashes stand for one)"
                )
            tokens.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            tokens.append(_ANY if char == "%" else _ONE if char == "_" else char)
    if escaped:
        raise ValueError(
            "the pattern ends with a lone backslash, which escapes nothing "
            "(two backslashes stand for one)"
        )
    return tuple(tokens)


def like_matches(pattern: str | None, text: str | None) -> bool | None:
    """Whether ``text`` matches the LIKE ``pattern`` (None when either is NULL), in time
    proportional to len(pattern) * len(text) at worst and constant memory."""
    if pattern is None or text is None:
        return None
    tokens = like_tokens(pattern)
    p = t = 0
    star = -1  # the token after the last % seen (-1: none yet)
    mark = 0  # where the text that % has taken so far ends
    while t < len(text):
        if (
            p < len(tokens)
            and tokens[p] is not _ANY
            and (tokens[p] is _ONE or tokens[p] == text[t])
        ):
            p += 1
            t += 1
        elif p < len(tokens) and tokens[p] is _ANY:
            p += 1
            star, mark = p, t
        elif star >= 0:  # let the last % take one more character
            mark += 1
            p, t = star, mark
        else:
            return False
    return all(token is _ANY for token in tokens[p:])


__all__ = ["LIKE_FUNCTION", "like_matches", "like_tokens"]
