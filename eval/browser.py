"""Headless Chromium driven by selenium through the system's chromedriver (Debian's
`chromium` and `chromium-driver`): the browser tests and `python -m eval.screenshots` use it.
Nothing is downloaded: no chromium, no driver found means None (tests skip).

    with chromium(tmp_path, width=1400, height=1000) as driver:   # None when missing
        driver.get("http://127.0.0.1:8780/...")
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

# The flags of a browser that stays off the network (this machine and CI have none) and
# leaves nothing behind: a fresh profile per run.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def found() -> Optional[tuple[str, str]]:
    """(chromium, chromedriver) paths, or None when either is missing."""
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser")
                    if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@contextmanager
def chromium(profile: Path, width: int = 1400, height: int = 1000) -> Iterator[object]:
    """A selenium WebDriver of headless Chromium with a fresh profile in `profile`; the
    browser quits when the block ends. Raises RuntimeError when there is no chromium or
    chromedriver (check `found()` first)."""
    paths = found()
    if paths is None:
        raise RuntimeError("no chromium and chromedriver on PATH (Debian: apt-get install "
                           "chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for flag in [*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=paths[1]), options=options)
    try:
        yield driver
    finally:
        driver.quit()
