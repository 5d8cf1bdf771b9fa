/* Staff console: one-click rating without leaving the page, and keyboard shortcuts.
 *   g / b   rate good / bad (with the note)      n   next unrated conversation
 *   j / k   older / newer conversation           e   open or fold every reasoning trace
 *   Esc     leave the note field
 * Without JavaScript the rating form posts and the page reloads: same result. */
(function () {
  "use strict";

  function typing(target) {
    if (!target) return false;
    var tag = target.tagName;
    return target.isContentEditable || tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
  }

  function go(url) { if (url) window.location.assign(url); }

  function setupReview(root) {
    var form = root.querySelector("[data-role=rate-form]");
    var status = root.querySelector("[data-role=status]");
    var current = root.querySelector("[data-role=current]");

    function say(text, isError) {
      if (!status) return;
      status.textContent = text;
      status.classList.toggle("error", Boolean(isError));
    }

    function rate(value) {
      if (!form) return;
      var data = new FormData(form);
      data.set("rating", value);
      say("Saving…");
      fetch(form.action, {
        method: "POST",
        body: data,
        credentials: "same-origin",
        headers: {"Accept": "application/json", "X-CSRFToken": data.get("csrfmiddlewaretoken")},
      }).then(function (response) {
        return response.json().then(function (body) { return {ok: response.ok, body: body}; });
      }).then(function (result) {
        if (!result.ok) { say(result.body.error || "Could not save the rating.", true); return; }
        var body = result.body;
        if (current) current.innerHTML = body.badge;  // built by the server with format_html
        form.querySelectorAll("button[name=rating]").forEach(function (button) {
          button.setAttribute("aria-pressed", String(button.value !== "" && button.value === body.rating));
        });
        say(body.rating ? "Saved: " + body.rating_display + " by " + body.rated_by + "." : "Rating cleared.");
        var then = form.querySelector("[data-role=then-next]");
        if (then && then.checked && body.rating) go(root.dataset.nextUnratedUrl);
      }).catch(function () {
        say("Network error: the rating was not saved.", true);
      });
    }

    if (form) {
      form.addEventListener("submit", function (event) {
        var button = event.submitter;
        if (!button || button.name !== "rating" || !window.fetch) return;  // plain POST fallback
        event.preventDefault();
        rate(button.value);
      });
    }

    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && typing(event.target)) { event.target.blur(); return; }
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      switch (event.key) {
        case "g": if (form) { event.preventDefault(); rate("good"); } break;
        case "b": if (form) { event.preventDefault(); rate("bad"); } break;
        case "n": go(root.dataset.nextUnratedUrl); break;
        case "j": go(root.dataset.olderUrl); break;
        case "k": go(root.dataset.newerUrl); break;
        case "e": {
          var traces = root.querySelectorAll("[data-role=trace]");
          var open = Array.prototype.some.call(traces, function (t) { return !t.open; });
          traces.forEach(function (t) { t.open = open; });
          break;
        }
        default: return;
      }
    });
  }

  function setupList() {
    var next = document.querySelector(".cr-next-unrated");
    if (!next) return;
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      if (event.key === "n") go(next.href);
    });
  }

  function start() {
    var review = document.querySelector(".cr[data-page=review]");
    if (review) setupReview(review); else setupList();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
