"""Models behind one small interface: a Prompt in, the model's text out.

    provider = configured(ProviderSettings.load(provider="openai", model="llama3.1",
                                                base_url="http://127.0.0.1:8080/v1"))
    provider.complete(prompt)  -> '{"statements": [...]}'

Two providers, each on its vendor's own SDK (the `extract` extra installs both):

- `anthropic`: the Messages API (`anthropic` SDK), structured output through
  `output_config.format` (a JSON schema);
- `openai`: any OpenAI-compatible chat completions endpoint (`openai` SDK): OpenAI itself, or a
  local server (llama.cpp, vLLM, Ollama) at `base_url`; structured output through
  `response_format` `json_schema`.

Settings come from, in order: the command's options, environment variables
(`TOMC_EXTRACT_PROVIDER`, `TOMC_EXTRACT_MODEL`, `TOMC_EXTRACT_BASE_URL`,
`TOMC_EXTRACT_STRUCTURED`), then the config file (`$TOMC_CONFIG`, else
`~/.config/tomc/config.toml`, table `[extract]`). API keys are the SDKs' own variables
(`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`), or the variable the config's `api_key_env` names.
Without a provider and a model, without the provider's SDK, or without a key (an empty
variable is none; only an OpenAI-compatible server at `base_url` goes without one) nothing is
sent: NotConfigured says what to set or install.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Protocol

from tomc.dsl.diagnostics import Diagnostic
from tomc.extract.prompt import Prompt
from tomc.runtime.errors import TomError

PROVIDERS = ("anthropic", "openai")
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
MAX_TOKENS = 4096
TIMEOUT_S = 120.0
DOCS = "docs/extract.md, \"Choosing a model\""


class NotConfigured(TomError):
    """No usable model settings (E206): no provider or model, no API key, the provider's
    SDK not installed, an unreadable config file. Bad input like any other (a TomError; the
    CLI exits 2): its diagnostic says what is missing and where the docs are."""

    def __init__(self, message: str):
        super().__init__([Diagnostic("E206", message, None, "<extract>")])


class ProviderError(Exception):
    """The model could not be reached or refused the request (CLI exit 3): nothing was
    extracted, nothing written."""


class Provider(Protocol):
    """A model that answers a Prompt with text. `label` names it in reports
    (`openai:llama3.1 at http://127.0.0.1:8080/v1`)."""

    label: str

    def complete(self, prompt: Prompt) -> str:
        """The model's answer to `prompt` (ProviderError when it cannot be had)."""
        ...


@dataclass(frozen=True)
class ProviderSettings:
    """Which model to ask and how: `provider` (anthropic or openai), `model`, `base_url` (an
    OpenAI-compatible server, or an Anthropic proxy), `api_key_env` (the variable holding
    the key, else the SDK's own), `structured` (ask for the JSON schema; some local servers
    do not support it)."""

    provider: Optional[str] = None
    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    structured: bool = True

    @classmethod
    def load(cls, **given: Optional[str]) -> "ProviderSettings":
        """Settings from `given` (options; None: not given), else the environment, else the
        config file. Raises NotConfigured for an unreadable config file."""
        settings = cls(**_config_file())
        environment = {"provider": os.environ.get("TOMC_EXTRACT_PROVIDER"),
                       "model": os.environ.get("TOMC_EXTRACT_MODEL"),
                       "base_url": os.environ.get("TOMC_EXTRACT_BASE_URL")}
        for layer in (environment, given):
            settings = replace(settings, **{k: v for k, v in layer.items() if v is not None})
        structured = os.environ.get("TOMC_EXTRACT_STRUCTURED")
        if structured is not None:
            settings = replace(settings, structured=structured.lower() not in ("0", "no",
                                                                                "false"))
        return settings


def configured(settings: ProviderSettings) -> Provider:
    """The provider `settings` describe. Raises NotConfigured (nothing or something wrong
    configured, or the provider's SDK not installed)."""
    if settings.provider is None or settings.model is None:
        missing = " and ".join(n for n, v in (("a provider", settings.provider),
                                              ("a model", settings.model)) if v is None)
        raise NotConfigured(
            f"no model configured for extraction ({missing} missing): set "
            "TOMC_EXTRACT_PROVIDER (anthropic or openai) and TOMC_EXTRACT_MODEL, or pass "
            f"--provider and --model (see {DOCS})")
    if settings.provider not in PROVIDERS:
        raise NotConfigured(f"unknown provider {settings.provider!r}: use one of "
                            f"{', '.join(PROVIDERS)} (see {DOCS})")
    key = api_key(settings)
    if settings.provider == "anthropic":
        return AnthropicProvider(settings, key)
    return OpenAIProvider(settings, key)


def api_key(settings: ProviderSettings) -> str:
    """The API key for `settings`: from the variable the config's `api_key_env` names, else
    the SDK's own (ANTHROPIC_API_KEY, OPENAI_API_KEY). Raises NotConfigured when it is unset
    or empty, here and not at the first request: the Anthropic SDK then fails with a
    TypeError of its own. An OpenAI-compatible server at `base_url` (a local one) may take
    none."""
    variable = settings.api_key_env or KEY_VARIABLES[settings.provider]
    key = os.environ.get(variable, "").strip()
    if key:
        return key
    if settings.provider == "openai" and settings.base_url:
        return "none"  # a local server asks for no key, but the SDK wants one
    if settings.api_key_env:
        raise NotConfigured(f"the config names {variable} for the {settings.provider} API "
                            "key, but it is not set (or empty)")
    local = (", or pass --base-url (TOMC_EXTRACT_BASE_URL) for a local OpenAI-compatible "
             "server that needs none" if settings.provider == "openai" else "")
    raise NotConfigured(f"the {settings.provider} provider needs an API key: set {variable} "
                        f"(or name another variable with api_key_env in the config){local} "
                        f"(see {DOCS})")


class AnthropicProvider:
    """The Messages API, through the `anthropic` SDK."""

    def __init__(self, settings: ProviderSettings, key: str):
        self.settings = settings
        self.label, self.client, self._errors = _client("anthropic", "Anthropic",
                                                        "AnthropicError", settings, key)

    def complete(self, prompt: Prompt) -> str:
        extra = ({"output_config": {"format": {"type": "json_schema", "schema": prompt.schema}}}
                 if self.settings.structured else {})
        try:
            reply = self.client.messages.create(
                model=self.settings.model, max_tokens=MAX_TOKENS, system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}], **extra)
        except self._errors as err:
            raise ProviderError(f"{self.label}: {err}") from None
        return "".join(block.text for block in reply.content
                       if getattr(block, "type", None) == "text")


class OpenAIProvider:
    """Chat completions on any OpenAI-compatible server, through the `openai` SDK."""

    def __init__(self, settings: ProviderSettings, key: str):
        self.settings = settings
        self.label, self.client, self._errors = _client("openai", "OpenAI", "OpenAIError",
                                                        settings, key)

    def complete(self, prompt: Prompt) -> str:
        extra = ({"response_format": {"type": "json_schema", "json_schema": {
            "name": "tomc_statements", "schema": prompt.schema, "strict": True}}}
            if self.settings.structured else {})
        try:
            reply = self.client.chat.completions.create(
                model=self.settings.model, max_tokens=MAX_TOKENS,
                messages=[{"role": "system", "content": prompt.system},
                          {"role": "user", "content": prompt.user}], **extra)
        except self._errors as err:
            raise ProviderError(f"{self.label}: {err}") from None
        if not reply.choices:
            raise ProviderError(f"{self.label}: the answer has no choices")
        return reply.choices[0].message.content or ""


def _client(package: str, client: str, error: str, settings: ProviderSettings, key: str):
    """(label, the SDK's client, the SDK's base error class) for `package`. Raises
    NotConfigured when the SDK is missing or refuses the settings."""
    sdk = sdk_module(package)
    label = f"{package}:{settings.model}" + (f" at {settings.base_url}"
                                             if settings.base_url else "")
    try:
        made = getattr(sdk, client)(api_key=key, base_url=settings.base_url,
                                    timeout=TIMEOUT_S, max_retries=1)
    except getattr(sdk, error) as err:
        raise NotConfigured(f"{package}: {err} (see {DOCS})") from None
    return label, made, getattr(sdk, error)


def sdk_module(name: str):
    """The vendor SDK `name` (a provider's package), imported. Raises NotConfigured naming
    what to install when it is not installed."""
    try:
        return __import__(name)
    except ModuleNotFoundError:
        raise NotConfigured(f"the {name} provider needs its SDK: pip install 'tomc[extract]' "
                            f"(or pip install {name})") from None


def _config_file() -> dict:
    """The `[extract]` table of the config file, or {} when there is no file."""
    path = Path(os.environ.get("TOMC_CONFIG") or Path.home() / ".config" / "tomc" / "config.toml")
    if not path.is_file():
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        raise NotConfigured(f"{path}: reading the config file needs Python 3.11; use the "
                            "TOMC_EXTRACT_* variables instead") from None
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("extract", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise NotConfigured(f"{path}: cannot read the config file: {err}") from None
    known = set(ProviderSettings.__dataclass_fields__)
    unknown = sorted(set(table) - known)
    if unknown:
        raise NotConfigured(f"{path}: unknown settings in [extract]: {', '.join(unknown)} "
                            f"(known: {', '.join(sorted(known))})")
    if not isinstance(table.get("structured", True), bool):
        raise NotConfigured(f"{path}: [extract] structured must be true or false")
    return table
