"""`python -m eval.screenshots`: regenerate the pictures in docs/img/ from a real run: the
live console of a memory (supervisor, a replayed step, an agent's view) and the report of a
scenario file, each taken by headless Chromium (eval/browser.py) at 1400 px.

Two memories are loaded from scenarios/ into an embedded FalkorDB in a temporary folder:
`refund` (refund_handoff.tom: false beliefs, who told whom) and `release` (release_freeze.tom:
claims superseding and contesting one another, readiness, a handoff). Exit 2 without chromium.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval.browser import chromium, found
from eval.serving import served
from tomc.api import Session
from tomc.runtime import tokens
from tomc.runtime.connection import connect

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "img"


def main() -> int:
    if found() is None:
        print("eval.screenshots: no chromium and chromedriver on PATH (Debian: apt-get "
              "install chromium chromium-driver)", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, connect(None, Path(tmp) / "data") as db:
        for name, file in (("refund", "refund_handoff.tom"), ("release", "release_freeze.tom")):
            Session.load(name, REPO / "scenarios" / file, db=db).close()
        supervisor = {n: tokens.issue(db, n, None) for n in ("refund", "release")}
        maya = tokens.issue(db, "refund", "Maya")
        report = Path(tmp) / "refund.html"
        subprocess.run([sys.executable, "-m", "tomc", "report", "scenarios/refund_handoff.tom",
                        "-o", str(report), "--db", db.url], check=False, capture_output=True,
                       cwd=REPO)  # the page names the file as given: a path of the repository
        with served(db) as base, chromium(Path(tmp) / "profile", 1400, 1000) as driver:
            shots = [("console.png", f"{base}/memories/release/console?access_token="
                      f"{supervisor['release']}", None, 1000),
                     ("console-replay.png", f"{base}/memories/refund/console?access_token="
                      f"{supervisor['refund']}", "#e10 a.step", 1000),
                     ("console-agent.png", f"{base}/memories/refund/console?access_token="
                      f"{maya}", None, 800),
                     ("report.png", report.as_uri(), None, 2000)]
            for picture, url, click, height in shots:
                driver.set_window_size(1400, height)
                driver.get(url)
                time.sleep(0.5)
                if click:
                    driver.find_element("css selector", click).click()
                    time.sleep(0.8)
                driver.save_screenshot(str(OUT / picture))
                print(f"wrote {OUT / picture}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
