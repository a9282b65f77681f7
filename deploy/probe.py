"""The HTTP health checks of deploy/compose.yaml, installed in the image as `tomc-probe`
(the slim image has no curl): GET URL, exit 0 if it answers STATUS, else 1 with one line.

    tomc-probe http://127.0.0.1:8780/healthz 200     # tomc http: 503 when FalkorDB is down
    tomc-probe http://127.0.0.1:8765/mcp 401 --bearer

`tomc mcp --http` has no public route: every request goes through its bearer-token check,
which looks the token up in FalkorDB. `--bearer` sends a well-formed token that no memory
has, so 401 (unknown token) says the MCP server and its FalkorDB both answer; a FalkorDB
down is 503 (tomc/mcp/bearer.py)."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

# Well-formed (tomc_<12 hex>_<secret>, tomc/runtime/tokens.py) and never valid: an issued
# token's secret is random, so even a token with this id would not match this secret.
UNKNOWN_TOKEN = "tomc_000000000000_health-probe-never-issued"
TIMEOUT_S = 4  # below the HEALTHCHECK's timeout


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or not argv[1].isdigit() or argv[2:] not in ([], ["--bearer"]):
        print("usage: tomc-probe URL STATUS [--bearer]", file=sys.stderr)
        return 2
    url, expected = argv[0], int(argv[1])
    request = urllib.request.Request(url)
    if argv[2:]:
        request.add_header("Authorization", f"Bearer {UNKNOWN_TOKEN}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            status = answer.status
    except urllib.error.HTTPError as err:
        status = err.code
    except (urllib.error.URLError, OSError) as err:
        print(f"tomc-probe: {url} does not answer: {getattr(err, 'reason', err)}",
              file=sys.stderr)
        return 1
    if status != expected:
        print(f"tomc-probe: {url} answered {status}, not {expected}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
