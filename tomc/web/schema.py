"""`python -m tomc.web.schema > docs/openapi.json`: the HTTP API's OpenAPI schema, as the
app generates it (tests/test_http.py checks the committed one is current)."""

from __future__ import annotations

import json

from tomc.web.app import create_app


def schema() -> dict:
    """The schema of the app (no database is needed to describe it)."""
    return create_app(None).openapi()


if __name__ == "__main__":
    print(json.dumps(schema(), indent=1, ensure_ascii=False))
