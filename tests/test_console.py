"""The live console in a real headless Chromium (selenium, the system's chromium and
chromedriver; skipped without them): `tomc http` runs as its own process, another process
writes an event and the page shows it, the replay steps back, and an agent's page shows no
other mind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from conftest import REPO
from tomc.api import Session
from tomc.runtime import tokens

pytest.importorskip("fastapi")
pytest.importorskip("selenium")
from eval.browser import chromium, found  # noqa: E402
from eval.serving import free_port  # noqa: E402

if found() is None:
    pytest.skip("no chromium and chromedriver on PATH (Debian: apt-get install chromium "
                "chromium-driver; .ci/run installs them)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as shown  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

MEMORY = "console_refund"
STORY = ("agents Maya, Billing, Finance\nrooms chat, ops\nMaya, Billing enter chat\n"
         "Billing says refund.status = approved\nFinance enters ops\n"
         "Finance sets refund.status = rejected")


@pytest.fixture(scope="module")
def server(db, tmp_path_factory):
    """`tomc http` serving the memory, in its own process: (base URL, supervisor token,
    Maya's token)."""
    with Session.attach(MEMORY, db=db) as session:
        if session.step == 0:
            session.apply(STORY)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "tomc", "http", "--memory", MEMORY,
                                "--port", str(port), "--db", db.url], env=env,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert "serving" in process.stderr.readline()
        yield (f"http://127.0.0.1:{port}", tokens.issue(db, MEMORY, None),
               tokens.issue(db, MEMORY, "Maya"))
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def wait(driver, condition, seconds: float = 60):
    return WebDriverWait(driver, seconds).until(condition)


def test_the_console_follows_a_write_by_another_process_and_replays(db, server, browser):
    base, supervisor, _ = server
    browser.get(f"{base}/memories/{MEMORY}/console?access_token={supervisor}")
    assert wait(browser, shown.text_to_be_present_in_element((By.ID, "where"), "live: step 4"))
    stale = browser.find_element(By.CSS_SELECTOR, "ul.stale").text
    assert "Maya" in stale and "refund.status" in stale  # out of date, listed first
    minds = [m.get_attribute("data-agent") for m in browser.find_elements(By.CSS_SELECTOR,
                                                                          ".mind")]
    assert minds[0] == "Maya" and set(minds) == {"Maya", "Billing", "Finance"}
    time.sleep(0.5)  # the event stream is open
    wrote = subprocess.run([sys.executable, "-m", "tomc", "memory", "apply", MEMORY,
                            "Finance tells Maya refund.status = rejected", "--db", db.url],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert wrote.returncode == 0, wrote.stderr
    assert wait(browser, shown.text_to_be_present_in_element((By.ID, "where"), "live: step 5"))
    newest = browser.find_element(By.CSS_SELECTOR, "#events li")
    assert newest.get_attribute("id") == "e5" and "Finance tells Maya" in newest.text
    assert "Finance, Maya" in newest.text or "Maya, Finance" in newest.text  # witnesses
    assert browser.find_elements(By.CSS_SELECTOR, "ul.stale") == []  # Maya is up to date

    browser.find_element(By.ID, "back").click()
    assert wait(browser, shown.text_to_be_present_in_element((By.ID, "where"),
                                                             "replay: step 4 of 5"))
    assert "Maya" in browser.find_element(By.CSS_SELECTOR, "ul.stale").text
    assert browser.find_element(By.CSS_SELECTOR, "#events li").get_attribute("id") == "e4"
    browser.find_element(By.ID, "live").click()
    assert wait(browser, shown.text_to_be_present_in_element((By.ID, "where"), "live: step 5"))


def test_an_agent_console_shows_no_other_mind(db, server, browser):
    port = free_port()  # `tomc console` issues Maya a token for its session alone
    process = subprocess.Popen([sys.executable, "-m", "tomc", "console", "--memory", MEMORY,
                                "--agent", "Maya", "--port", str(port), "--db", db.url],
                               env={**os.environ, "PYTHONPATH": str(REPO)},
                               stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://\S+", process.stderr.readline()).group(0)
        browser.get(url)
        assert wait(browser, shown.text_to_be_present_in_element((By.TAG_NAME, "h1"),
                                                                 "as Maya"))
        minds = [m.get_attribute("data-agent")
                 for m in browser.find_elements(By.CSS_SELECTOR, ".mind")]
        assert minds and all(m == "Maya" or m.startswith("Maya > ") for m in minds), minds
        assert browser.find_elements(By.CSS_SELECTOR, "ul.stale") == []
        steps = [e.get_attribute("id")
                 for e in browser.find_elements(By.CSS_SELECTOR, "#events li")]
        assert "e4" not in steps and "e3" not in steps  # Finance's room, unseen by Maya
        browser.find_element(By.CSS_SELECTOR, "#e2 a.step").click()  # replay, as Maya
        assert wait(browser, shown.text_to_be_present_in_element((By.ID, "where"),
                                                                 "replay: step 2"))
        minds = [m.get_attribute("data-agent")
                 for m in browser.find_elements(By.CSS_SELECTOR, ".mind")]
        assert minds and all(m == "Maya" or m.startswith("Maya > ") for m in minds), minds
    finally:
        process.terminate()
        process.wait(30)
    token_id = url.split("access_token=tomc_")[1].split("_")[0]
    assert token_id not in {t["token_id"] for t in tokens.list_tokens(db, memory=MEMORY)}
