"""What search matches: the words of a version or event, and the terms of a query.

One definition for both engines (as the grammar is one definition): a text's words are its
runs of letters and digits, lowercased (`refund_4411.status` -> `refund 4411 status`); a
query's terms are its words less a few question words (`what did we discuss about the
payments outage?` -> `discuss payments outage`), at most MAX_TERMS of at most MAX_TERM
characters each. A term matches a word it is a prefix of (`pay` matches `payments`).

On FalkorDB the words are stored on each version (`V.words`) and event (`Event.words`),
indexed by the full-text index (tomc/runtime/search_index.py), and the terms become a
RediSearch query of prefixes joined by `|`: since a term holds only letters and digits, no
query syntax (`@field:`, `*`, `%`, `-`, quotes, parentheses) can come from user text, which
travels as a parameter anyway (docs/falkordb.md check 3.1).
"""

from __future__ import annotations

import re
from typing import Optional

MAX_TERMS = 16
MAX_TERM = 64
# Words of a question that name nothing a memory holds: dropped from queries (a prefix of
# `we` would match every word starting with "we").
QUESTION_WORDS = frozenset(
    "a about an and any are at did do does for from how in is it of on or our tell that the "
    "this to us was we were what when where which who whom why with".split())
_WORD = re.compile(r"[^\W_]+")


def words(*parts: Optional[str]) -> str:
    """The words of `parts` (None left out), lowercased, joined by single spaces."""
    return " ".join(w.lower() for part in parts if part for w in _WORD.findall(part))


def terms(query: str) -> tuple[str, ...]:
    """The distinct terms of a query, in order: its words less QUESTION_WORDS (all of its
    words when it has no other), at most MAX_TERMS, each cut to MAX_TERM characters."""
    found = [w[:MAX_TERM] for w in words(query).split()]
    kept = [w for w in found if w not in QUESTION_WORDS] or found
    return tuple(dict.fromkeys(kept))[:MAX_TERMS]


def matched(found_terms: tuple[str, ...], text_words: str) -> set[str]:
    """The terms that are a prefix of some word of `text_words` (as `words` gives them)."""
    split = text_words.split()
    return {t for t in found_terms if any(w.startswith(t) for w in split)}


def index_query(found_terms: tuple[str, ...]) -> str:
    """The RediSearch query of `found_terms`: prefix terms joined by `|` (any may match)."""
    return "|".join(f"{t}*" for t in found_terms)
