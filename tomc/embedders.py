"""Embedding models for search by meaning: texts in, one vector of floats per text out.

    embedder = configured()            # from TOMC_EMBED_PROVIDER / _MODEL / _BASE_URL
    embedder.embed(["refund status approved"])  -> [[0.013, -0.2, ...]]
    embedder.label                     -> 'local:wordllama-l2-supercat-256'

Two providers (docs/language.md, "Search by meaning"):

- `openai`: any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, llama.cpp,
  LiteLLM): `TOMC_EMBED_MODEL` names the model, `TOMC_EMBED_BASE_URL` the server (default
  OpenAI's), the key is `OPENAI_API_KEY` (a server at a base URL may take none). Sent with
  the standard library (one POST per batch of BATCH texts), so it needs no SDK.
- `local`: WordLlama's `l2_supercat` 256-dimension static token embeddings, whose weights
  ship inside the `wordllama` package (the `embed` extra): nothing is downloaded at run
  time. It averages token vectors, so it knows that `refund` is near `money back` but not
  word order or negation; a sentence-embedding model behind `openai` ranks better
  (eval/results/recall.md).

The label names provider and model: a vector stored under another label is re-embedded
(tomc/runtime/meaning_index.py). Without `TOMC_EMBED_PROVIDER` there is no embedder
(`configured` returns None) and search matches words only.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.request
from functools import lru_cache
from pathlib import Path
from typing import Optional, Protocol, Sequence

PROVIDERS = ("local", "openai")
LOCAL_MODEL = "wordllama-l2-supercat-256"
OPENAI_URL = "https://api.openai.com/v1"
BATCH = 256
TIMEOUT_S = 60.0
DOCS = 'docs/language.md, "Search by meaning"'


class EmbedError(Exception):
    """No usable embedder (unknown provider, missing package or model), or the server could
    not be reached or answered badly: the message says what to set or fix."""


class Embedder(Protocol):
    """A model that turns texts into vectors of one dimension. `label` names provider and
    model (`openai:nomic-embed-text at http://127.0.0.1:11434/v1`)."""

    label: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (EmbedError when they cannot be had)."""
        ...


def configured() -> Optional[Embedder]:
    """The embedder the environment names (TOMC_EMBED_PROVIDER, TOMC_EMBED_MODEL,
    TOMC_EMBED_BASE_URL), made once per process and settings; None when no provider is
    set. Raises EmbedError for settings that name no usable one."""
    provider = os.environ.get("TOMC_EMBED_PROVIDER", "").strip().lower() or None
    if provider is None:
        return None
    return _made(provider, os.environ.get("TOMC_EMBED_MODEL", "").strip() or None,
                 os.environ.get("TOMC_EMBED_BASE_URL", "").strip() or None)


@lru_cache(maxsize=8)
def _made(provider: str, model: Optional[str], base_url: Optional[str]) -> Embedder:
    if provider == "local":
        return LocalEmbedder()
    if provider == "openai":
        if model is None:
            raise EmbedError("TOMC_EMBED_PROVIDER=openai needs TOMC_EMBED_MODEL (the "
                             f"embedding model's name) (see {DOCS})")
        return OpenAIEmbedder(model, base_url)
    raise EmbedError(f"unknown embedding provider {provider!r}: use one of "
                     f"{', '.join(PROVIDERS)} (see {DOCS})")


class LocalEmbedder:
    """WordLlama's bundled 256-dimension model, loaded from the package's own files (its
    `WordLlama.load()` looks for the tokenizer under a folder name the wheel does not use,
    and would then download it)."""

    label = f"local:{LOCAL_MODEL}"

    def __init__(self):
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        try:
            import wordllama
            from safetensors import safe_open
            from tokenizers import Tokenizer
            from wordllama.inference import WordLlamaInference
        except ModuleNotFoundError:
            raise EmbedError("the local embedding provider needs its model: pip install "
                             f"'tomc[embed]' (or pip install wordllama) (see {DOCS})") from None
        finally:  # wordllama configures the root logger at INFO when imported: undone
            for handler in root.handlers[:]:
                if handler not in handlers:
                    root.removeHandler(handler)
            root.setLevel(level)
        root = Path(wordllama.__file__).parent
        try:
            tokenizer = Tokenizer.from_file(
                str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
            with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"),
                           framework="np", device="cpu") as weights:
                matrix = weights.get_tensor("embedding.weight")
        except Exception as err:  # a wordllama release that moved its files
            raise EmbedError(f"the local embedding model could not be loaded from {root}: "
                             f"{err}") from None
        self._model = WordLlamaInference(matrix, tokenizer, binary=False)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return [[float(x) for x in row] for row in self._model.embed(list(texts), norm=True)]


class OpenAIEmbedder:
    """POST {base_url}/embeddings {"model", "input": [...]} -> data[i].embedding."""

    def __init__(self, model: str, base_url: Optional[str]):
        self.model, self.url = model, (base_url or OPENAI_URL).rstrip("/")
        self.label = f"openai:{model}" + (f" at {base_url}" if base_url else "")
        self.key = os.environ.get("OPENAI_API_KEY", "").strip()
        if not self.key and not base_url:
            raise EmbedError("the openai embedding provider needs OPENAI_API_KEY, or "
                             "TOMC_EMBED_BASE_URL for a local server that needs none "
                             f"(see {DOCS})")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            out += self._batch(list(texts[start:start + BATCH]))
        return out

    def _batch(self, texts: list[str]) -> list[list[float]]:
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(
            f"{self.url}/embeddings", method="POST", headers=headers,
            data=json.dumps({"model": self.model, "input": texts}).encode())
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as reply:
                body = json.loads(reply.read())
            rows = sorted(body["data"], key=lambda d: d.get("index", 0))
            vectors = [[float(x) for x in row["embedding"]] for row in rows]
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError) as err:
            raise EmbedError(f"{self.label}: {err}") from None
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) > 1:
            raise EmbedError(f"{self.label}: {len(vectors)} vectors of unequal or wrong "
                             f"count for {len(texts)} texts")
        return vectors


def fact_text(key: str, value: str) -> str:
    """What is embedded of a fact: its key and value in words (`refund_4411.status`,
    `approved` -> `refund 4411 status: approved`)."""
    return f"{_spaced(key)}: {_spaced(value)}"


def _spaced(text: str) -> str:
    return " ".join(text.replace("_", " ").replace(".", " ").split())
