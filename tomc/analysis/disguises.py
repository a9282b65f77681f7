"""Undoing the disguises of injected text before it is matched (tomc/analysis/quoting.py):
what a model reads past but a pattern would not.

- `folded(text)`, `plain(text)`: NFKC (full-width and compatibility letters become plain ones), invisible
  characters removed (zero-width spaces and joiners, soft hyphens, word joiners, BOMs, and
  the bidirectional controls that make text display in another order), letters of Cyrillic
  and Greek that look like Latin ones turned into those (`іgnоrе` with Cyrillic і, о, е),
  then case-folded.
- `hidden(text)`: the invisible characters it holds (a value has no use for them).
- `mixed_script(text)`: a word spelled with Latin and Cyrillic or Greek letters at once.
- `decoded(text)`: the text of each base64 run in it that decodes to readable UTF-8.

    plain("I\u200bgnore p\u0440evious")  -> "ignore previous"
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata

# Zero-width and formatting characters, and every bidirectional control (LRE..RLO,
# LRI..PDI, LRM/RLM/ALM): Unicode category Cf holds them all, and nothing a value needs.
_INVISIBLE = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                        r"\u2066-\u2069\ufeff]")
# Cyrillic and Greek letters drawn like Latin ones (Unicode's confusables, the common part).
_LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j",
    "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "т": "t",
    "у": "y", "х": "x", "ԝ": "w", "ү": "y", "ӏ": "l",
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K",
    "М": "M", "О": "O", "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "У": "Y",
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "Α": "A", "Β": "B", "Ε": "E", "Η": "H", "Ι": "I", "Κ": "K",
    "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Χ": "X", "Υ": "Y", "Ζ": "Z",
})
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_WORD = re.compile(r"\w+")


def folded(text: str) -> str:
    """`text` in NFKC, without invisible characters, case-folded (Cyrillic and Greek kept:
    what patterns in those languages match)."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).casefold()


def plain(text: str) -> str:
    """`folded(text)` with Cyrillic and Greek look-alikes read as the Latin letters they
    imitate: what patterns in Latin-script languages match."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(
        _LOOKALIKES).casefold()


def hidden(text: str) -> list[str]:
    """The invisible or text-direction characters in `text`, as U+XXXX."""
    return sorted({f"U+{ord(c):04X}" for c in _INVISIBLE.findall(text)})


def mixed_script(text: str) -> bool:
    """Whether a word of `text` mixes Latin letters with Cyrillic or Greek ones."""
    for word in _WORD.findall(unicodedata.normalize("NFKC", text)):
        scripts = {_script(c) for c in word if c.isalpha()}
        if "latin" in scripts and scripts & {"cyrillic", "greek"}:
            return True
    return False


def decoded(text: str) -> list[str]:
    """The readable UTF-8 text of each base64 run of 16 or more characters in `text`."""
    out = []
    for run in _BASE64.findall(text):
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
            words = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if words and sum(c.isprintable() or c.isspace() for c in words) == len(words):
            out.append(words)
    return out


def _script(letter: str) -> str:
    name = unicodedata.name(letter, "")
    return next((s.lower() for s in ("LATIN", "CYRILLIC", "GREEK") if name.startswith(s)),
                "other")
