// The console's address names the step it shows (`?step=N`; none: live), so a replayed
// step can be shared by copying the address (without the token), and the back button returns to the step
// shown before (docs/console.md). htmx loads the panels; this keeps the address and the
// page's mode (body's data-mode: whether a `step` event reloads the panel) in step.
(function () {
  "use strict";
  const body = document.body;
  // The token stays out of the address bar, its history and every link: an address is
  // shared, a token never (its holder may write). The page keeps it for its own requests
  // (data-panel, the stream); whoever opens a shared address adds their own.
  const opened = new URL(location.href);
  if (opened.searchParams.has("access_token")) {
    opened.searchParams.delete("access_token");
    history.replaceState(history.state, "", opened.href);
  }
  // A panel loaded for the back or forward button: its address is already in the history.
  let restoring = false;

  // The step the panel shows: null when live.
  function shown() {
    const nav = document.querySelector("#panel nav.replay");
    return nav.dataset.live === "true" ? null : nav.dataset.step;
  }

  // This page's address, showing `step` (null: live).
  function address(step) {
    const url = new URL(location.href);
    if (step === null) url.searchParams.delete("step");
    else url.searchParams.set("step", step);
    return url.href;
  }

  document.addEventListener("htmx:afterSettle", (event) => {
    if (event.target.id !== "panel") return;
    const step = shown();
    body.dataset.mode = step === null ? "live" : "replay";
    if (!restoring && address(step) !== location.href) history.pushState({step}, "", address(step));
    restoring = false;
  });
  document.addEventListener("htmx:responseError", () => { restoring = false; });

  window.addEventListener("popstate", () => {
    const step = new URL(location.href).searchParams.get("step");
    if (step === shown()) return;  // a link within the page (#e4): the same step
    restoring = true;
    body.dataset.mode = step === null ? "live" : "replay";
    htmx.ajax("GET", body.dataset.panel + (step === null ? "" : "&at_step=" +
              encodeURIComponent(step)), {target: "#panel", swap: "innerHTML"});
  });

  // "live" only while the stream is open: the header says when it is lost (it reconnects).
  document.addEventListener("htmx:sseError", () => { body.dataset.stream = "lost"; });
  document.addEventListener("htmx:sseOpen", () => { delete body.dataset.stream; });
})();
