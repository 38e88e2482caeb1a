// A periodic refresh that fails (the server or its database not answering) leaves the last
// good content on screen; say so, and how old it is, instead of letting it pass as current.
(function () {
  var lastGood = new Date();

  function banner() {
    return document.getElementById("refresh-failed");
  }

  function clock(date) {
    return date.toISOString().slice(11, 19) + " UTC";
  }

  function failed(event) {
    var xhr = event.detail && event.detail.xhr;
    var why = xhr && xhr.status ? "the server answered " + xhr.status : "the server is not answering";
    var seconds = Math.round((new Date() - lastGood) / 1000);
    var element = banner();
    if (!element) return;
    element.textContent = "⚠ refresh failed (" + why + "): what you see is from " +
      clock(lastGood) + ", " + seconds + " s ago";
    element.hidden = false;
  }

  function refreshed() {
    lastGood = new Date();
    var element = banner();
    if (element) element.hidden = true;
  }

  document.addEventListener("htmx:responseError", failed);
  document.addEventListener("htmx:sendError", failed);
  document.addEventListener("htmx:afterSwap", refreshed);
})();
