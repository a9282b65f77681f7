"""The live console in a real headless Chromium (selenium, the system's chromium and
chromedriver; skipped without them): `tomc http` runs as its own process, another process
writes an event and the page shows it, the replay steps back, and an agent's page shows no
other mind. A replayed step has an address to share, the header says live only when it is,
a button goes to the last step someone was out of date, and no cell is cut."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from conftest import REPO, SCENARIOS
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
# Maya is out of date after step 4 only; steps 7 and 8 are long claims, the second
# contested (release_policy.tom: the chat ranks below the bulletin).
SHARED = "console_share"
LONG = "the_freeze_starts_when_the_release_train_leaves_" * 2
RUMOUR = f"{LONG}according_to_a_chat_rumour nobody has confirmed yet"
SHARED_STORY = (f"{STORY}\nFinance tells Maya refund.status = rejected\n"
                "Finance tells Billing refund.status = rejected\n"
                f'claim freeze.date = "{LONG}bulletin" from bulletin_r4 at 2026-10-14 to all\n'
                f'claim freeze.date = "{RUMOUR}" from chat at 2026-10-15 to all')
CALM = "console_calm"  # no one is ever out of date


@pytest.fixture(scope="module")
def server(db, tmp_path_factory):
    """`tomc http` serving the memory, in its own process: (base URL, supervisor token,
    Maya's token)."""
    for name, story, policy in [(MEMORY, STORY, None),
                                (SHARED, SHARED_STORY, SCENARIOS / "release_policy.tom"),
                                (CALM, "agents A\nrooms r\nA enters r\nA sets x.y = 1", None)]:
        with Session.attach(name, db=db, policy=policy and str(policy)) as session:
            if session.step == 0:
                session.apply(story)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "tomc", "http", "--memory", MEMORY,
                                "--memory", SHARED, "--memory", CALM,
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


def console(server, db, memory: str, agent: str | None = None, step: int | None = None) -> str:
    """The address of memory's console, with a token of `agent` (None: the supervisor),
    replaying `step` (None: live)."""
    return (f"{server[0]}/memories/{memory}/console?access_token="
            f"{tokens.issue(db, memory, agent)}" + ("" if step is None else f"&step={step}"))


def says(driver, element_id: str, text: str) -> bool:
    return wait(driver, shown.text_to_be_present_in_element((By.ID, element_id), text))


def text(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


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


def test_a_replayed_step_has_an_address_and_the_header_says_live_only_when_it_is(
        db, server, browser):
    """Issue 40: `&step=N` opens the console replaying step N; each step shown is in the
    address bar (to share), the back button returns to the one before, and the header
    says "replaying" until live is pressed."""
    browser.get(console(server, db, SHARED, step=3))
    assert says(browser, "where", "replay: step 3 of 8")
    assert text(browser, "showing") == "replaying step 3 of 8: not following new events"
    assert "live" not in text(browser, "showing")
    assert browser.find_element(By.CSS_SELECTOR, "#events li").get_attribute("id") == "e3"
    browser.find_element(By.ID, "forward").click()
    assert says(browser, "showing", "replaying step 4 of 8")
    assert wait(browser, shown.url_contains("step=4"))
    shared_url = browser.current_url
    browser.back()
    assert says(browser, "where", "replay: step 3 of 8")
    assert wait(browser, shown.url_contains("step=3"))
    browser.find_element(By.ID, "live").click()
    assert says(browser, "showing", "live: step 8, following new events")
    assert wait(browser, lambda d: "step=" not in d.current_url)
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-mode") == "live"
    browser.back()
    assert says(browser, "showing", "replaying step 3 of 8")
    # The address copied carries no token (its holder may write): whoever opens it adds
    # their own, and sees the same step in a fresh page.
    assert "access_token" not in shared_url and "tomc_" not in shared_url
    browser.get(f"{shared_url}&access_token={tokens.issue(db, SHARED, None)}")
    assert says(browser, "where", "replay: step 4 of 8")
    assert "access_token" not in browser.current_url
    link = browser.find_element(By.CSS_SELECTOR, "#e2 a.step").get_attribute("href")
    assert link.endswith("/console?step=2")  # a timeline step's link is its address too


def test_the_false_belief_button_goes_to_the_last_step_someone_was_out_of_date(
        db, server, browser):
    """Issue 40: Maya was out of date after step 4 alone (Finance told her at step 5): the
    button replays step 4 from live or any step; with none, it is disabled, and says why."""
    for step in (None, 2, 7):
        browser.get(console(server, db, SHARED, step=step))
        button = wait(browser, shown.element_to_be_clickable((By.ID, "last-false")))
        assert button.text == "last false belief: step 4"
        button.click()
        assert says(browser, "where", "replay: step 4 of 8")
        assert "Maya" in browser.find_element(By.CSS_SELECTOR, "ul.stale").text
        assert wait(browser, shown.url_contains("step=4"))
    for memory, agent, why in [(CALM, None, "no agent has held a false belief"),
                               (SHARED, "Maya", "an agent's console shows no false beliefs")]:
        browser.get(console(server, db, memory, agent))
        button = wait(browser, shown.presence_of_element_located((By.ID, "last-false")))
        assert not button.is_enabled() and why in button.get_attribute("title")


@pytest.mark.parametrize("width", [1280, 800])
def test_no_cell_is_cut_at_common_widths(db, server, browser, width):
    """Issue 40: a long value and its contesting rival wrap within their cells, which stay
    within their column and the window: nothing to scroll sideways, nothing cut."""
    browser.set_window_size(width, 900)
    try:
        browser.get(console(server, db, SHARED))
        assert says(browser, "showing", "live: step 8")
        cut = browser.execute_script("""
            const out = [];
            for (const cell of document.querySelectorAll("td")) {
              const box = cell.getBoundingClientRect();
              const column = cell.closest("section").getBoundingClientRect();
              if (cell.scrollWidth > cell.clientWidth + 1 || box.right > column.right + 1
                  || box.right > window.innerWidth)
                out.push(cell.textContent.slice(0, 40));
            }
            return out;""")
        assert cut == []
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth")
        contested = browser.find_elements(By.CSS_SELECTOR, "table.versions td:last-child")
        assert any(f"{RUMOUR} (chat, step 8)" in c.text for c in contested)
        rivals = browser.find_element(By.CSS_SELECTOR, ".mind[data-agent=Maya] .contest")
        assert RUMOUR in rivals.text and rivals.is_displayed()
    finally:
        browser.set_window_size(1400, 1000)


def test_the_last_false_belief_is_looked_for_only_so_far_back(db, fresh, monkeypatch):
    """The first page of a long memory searches the last LOOKBACK steps, not every step
    (each is a view read and an analysis, and the panel waits for them)."""
    from tomc.api import Session
    from tomc.web import console as page

    name = fresh("console_lookback")
    with Session.attach(name, db=db, policy=str(SCENARIOS / "release_policy.tom")) as session:
        session.apply(SHARED_STORY)  # Maya out of date after step 4, told at step 5
        session.apply("\n".join(["Billing waits"] * 12))
        latest = session.step
        assert page.OutOfDate().last(name, session, latest) == 4
        monkeypatch.setattr(page, "LOOKBACK", 10)
        assert page.OutOfDate().last(name, session, latest) is None
