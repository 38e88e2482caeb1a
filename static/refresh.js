// Live pages refresh in place (htmx). A refresh must not undo what the reader did: an open or
// closed <details>, the focused link or button, the scroll position (of the page and of tables
// that scroll inside themselves) are kept across every swap.
// A periodic refresh that fails (the server or its database not answering) leaves the last
// good content on screen; say so, and how old it is, instead of letting it pass as current.
// A server that hangs fails too: htmx gives up after its timeout (base.html), and a watchdog
// says so when no refresh has landed for three refresh periods, whatever the reason.
(function () {
  var lastGood = new Date();
  var kept = null;
  var why = null;
  var STALE_AFTER_MS = 15000;

  function banner() {
    return document.getElementById("refresh-failed");
  }

  function clock(date) {
    return date.toISOString().slice(11, 19) + " UTC";
  }

  function show() {
    var element = banner();
    if (!element || !why) return;
    var seconds = Math.round((new Date() - lastGood) / 1000);
    element.textContent = "Refresh failed (" + why + "): what you see is from " +
      clock(lastGood) + ", " + seconds + " s ago";
    element.hidden = false;
  }

  function failed(event) {
    var xhr = event.detail && event.detail.xhr;
    if (event.type === "htmx:timeout") why = "no answer within 10 s";
    else why = xhr && xhr.status ? "the server answered " + xhr.status : "the server is not answering";
    show();
  }

  // Only pages that refresh themselves can go stale.
  function live() {
    return document.querySelector("[hx-trigger*='every']") !== null;
  }

  setInterval(function () {
    if (!live()) return;
    if (new Date() - lastGood > STALE_AFTER_MS) {
      why = why || "no refresh has arrived";
      show();
    }
  }, 1000);

  // A <details> is known by its data-key, else by its summary's text and its place among
  // details with the same text.
  function detailsKeys() {
    var seen = {};
    return Array.prototype.map.call(document.querySelectorAll("details"), function (d) {
      var summary = d.querySelector("summary");
      var base = d.dataset.key || (summary ? summary.textContent.trim() : "");
      seen[base] = (seen[base] || 0) + 1;
      return { element: d, key: base + "#" + seen[base] };
    });
  }

  // The focused element as something findable again: its id, or its tag, href or form
  // action and text, and its place among elements that match those.
  function describe(element) {
    if (!element || element === document.body) return null;
    if (element.id) return { id: element.id };
    var tag = element.tagName;
    var href = element.getAttribute("href");
    var form = element.form ? element.form.getAttribute("action") : null;
    var text = element.textContent.trim();
    var matches = candidates(tag, href, form, text);
    return { tag: tag, href: href, form: form, text: text, index: matches.indexOf(element) };
  }

  function candidates(tag, href, form, text) {
    return Array.prototype.filter.call(document.getElementsByTagName(tag), function (e) {
      return e.getAttribute("href") === href &&
        (e.form ? e.form.getAttribute("action") : null) === form &&
        e.textContent.trim() === text;
    });
  }

  function find(described) {
    if (!described) return null;
    if (described.id) return document.getElementById(described.id);
    var matches = candidates(described.tag, described.href, described.form, described.text);
    return matches[described.index] || matches[0] || null;
  }

  function scrollers() {
    return Array.prototype.map.call(document.querySelectorAll(".scroll"), function (e) {
      return e.scrollLeft;
    });
  }

  function keep() {
    var open = {};
    detailsKeys().forEach(function (d) { open[d.key] = d.element.open; });
    kept = {
      open: open,
      focus: describe(document.activeElement),
      x: window.scrollX,
      y: window.scrollY,
      scrollers: scrollers()
    };
  }

  function restore() {
    if (!kept) return;
    detailsKeys().forEach(function (d) {
      if (Object.prototype.hasOwnProperty.call(kept.open, d.key)) d.element.open = kept.open[d.key];
    });
    document.querySelectorAll(".scroll").forEach(function (e, i) {
      if (i < kept.scrollers.length) e.scrollLeft = kept.scrollers[i];
    });
    var focused = find(kept.focus);
    if (focused && document.activeElement !== focused) focused.focus({ preventScroll: true });
    window.scrollTo(kept.x, kept.y);
    kept = null;
  }

  function refreshed() {
    lastGood = new Date();
    why = null;
    var element = banner();
    if (element) element.hidden = true;
    restore();
  }

  document.addEventListener("htmx:responseError", failed);
  document.addEventListener("htmx:sendError", failed);
  document.addEventListener("htmx:timeout", failed);
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.shouldSwap) keep();
  });
  document.addEventListener("htmx:afterSwap", refreshed);
})();
