"""What search matches: the words of a version or event, and the terms of a query.

One definition for both engines (as the grammar is one definition): a text's words are its
runs of letters and digits, lowercased (`refund_4411.status` -> `refund 4411 status`); a
query's terms are its words less a few question words (`what did we discuss about the
payments outage?` -> `discuss payments outage`), at most MAX_TERMS. A term matches a word
it is a prefix of (`pay` matches `payments`).

Words are stored in an alphabet both engines read alike: ASCII letters and digits as they
are, any other character as `_` and six hex digits (`é` -> `_0000e9`), each word cut to
MAX_TERM characters. RediSearch's own Unicode case folding and tokenising differ from
Python's on rare scripts (found by tests/test_properties.py), and its prefix queries failed
on words of thousands of characters; the encoding keeps prefixes prefixes. `shown` decodes a
term for people.

A term that matches no word of what the reader may search is **forgiven**: it is replaced
by the names the memory holds (the words of its keys, values, sources and agents) within a
few edits of it (`near`): `refnd` and `refunds` become `refund`. Edits are counted by
rapidfuzz's optimal string alignment distance (an insertion, deletion, substitution or
swap of two neighbours is one edit), allowed as Elasticsearch's `AUTO` fuzziness allows
them: none for a term of 1-2 characters, one for 3-5, two for more. Matching is already
blind to case (`Asha` and `asha` are the word `asha`).

On FalkorDB the words are stored on each version (`V.words`) and event (`Event.words`),
indexed by the full-text index (tomc/runtime/search_index.py), and the terms become a
RediSearch query of prefixes joined by `|`: since a term holds only letters and digits, no
query syntax (`@field:`, `*`, `%`, `-`, quotes, parentheses) can come from user text, which
travels as a parameter anyway (docs/falkordb.md check 3.1).
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Optional

MAX_TERMS = 16
MAX_TERM = 64
MAX_NEAR = 5  # the names a forgiven term is replaced by, at most (the nearest)
# Words of a question that name nothing a memory holds: dropped from queries (a prefix of
# `we` would match every word starting with "we").
QUESTION_WORDS = frozenset(
    "a about an and any are at did do does for from how in is it of on or our tell that the "
    "this to us was we were what when where which who whom why with".split())
_WORD = re.compile(r"[^\W_]+")
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_CODE = re.compile(r"_([0-9a-f]{6})")


def _encoded(word: str) -> str:
    """`word` lowercased, in the index's alphabet, cut to MAX_TERM characters."""
    return "".join(c if c in _PLAIN else f"_{ord(c):06x}" for c in word.lower())[:MAX_TERM]


def words(*parts: Optional[str]) -> str:
    """The words of `parts` (None left out), encoded, joined by single spaces."""
    return " ".join(_encoded(w) for part in parts if part for w in _WORD.findall(part))


def shown(term: str) -> str:
    """A term as a person reads it (`s_0000e9cret` -> `sécret`)."""
    return _CODE.sub(lambda m: chr(int(m.group(1), 16)), term)


def terms(query: str, aliases: Optional[Mapping[str, str]] = None) -> tuple[str, ...]:
    """The distinct terms of a query, in order: its words less QUESTION_WORDS (all of its
    words when it has no other), at most MAX_TERMS. Where the words of an alias (`aliases`:
    another name of a subject -> the subject) come in a row, the subject's words follow
    them (`A. Rao` -> `a rao asha`)."""
    found = words(query).split()
    for alias, subject in sorted((aliases or {}).items(), key=lambda a: -len(a[0])):
        found = _also(found, words(alias).split(), words(subject).split())
    kept = [w for w in found if w not in QUESTION_WORDS] or found
    return tuple(dict.fromkeys(kept))[:MAX_TERMS]


def _also(found: list[str], alias: list[str], subject: list[str]) -> list[str]:
    """`found` with `subject` put after each run of `alias` (unless `alias` is `subject`)."""
    if not alias or alias == subject:
        return found
    out, i = [], 0
    while i < len(found):
        if found[i:i + len(alias)] == alias:
            out += alias + subject
            i += len(alias)
        else:
            out.append(found[i])
            i += 1
    return out


def matched(found_terms: tuple[str, ...], text_words: str) -> set[str]:
    """The terms that are a prefix of some word of `text_words` (as `words` gives them)."""
    split = text_words.split()
    return {t for t in found_terms if any(w.startswith(t) for w in split)}


def index_query(found_terms: tuple[str, ...]) -> str:
    """The RediSearch query of `found_terms`: prefix terms joined by `|` (any may match)."""
    return "|".join(f"{t}*" for t in found_terms)


def edits_allowed(term: str) -> int:
    """How many edits `near` forgives in `term` (as shown): 0 up to 2 characters, 1 up to
    5, else 2 (Elasticsearch's `AUTO` fuzziness)."""
    length = len(shown(term))
    return 0 if length <= 2 else 1 if length <= 5 else 2


def near(term: str, names: Iterable[str]) -> tuple[str, ...]:
    """The words of `names` (encoded, as `words` gives them) within `edits_allowed(term)`
    edits of `term`, nearest first (then alphabetical), at most MAX_NEAR; none that `term`
    already starts (those it matches as it is)."""
    allowed = edits_allowed(term)
    if not allowed:
        return ()
    from rapidfuzz import process  # 20 ms to import: only when a term is forgiven
    from rapidfuzz.distance import OSA
    choices = {shown(w): w for w in names if not w.startswith(term)}
    found = process.extract(shown(term), list(choices), scorer=OSA.distance,
                            score_cutoff=allowed, limit=None)
    return tuple(choices[w] for w, _, _ in sorted(found, key=lambda f: (f[1], f[0])))[:MAX_NEAR]
