// Keeps the approvals queue live. The page works without it (reload to
// see new calls): this only reloads the list in place when the gateway
// says an approval was asked for or decided (an SSE stream of every
// replica's events), and every 15 seconds in case one was missed.
// Approvals already on the page stay as they are, so a reason being typed
// is kept; new ones appear in deadline order, decided ones go.
(function () {
  var queue = document.getElementById("queue");
  if (!queue || !window.fetch || !window.DOMParser) {
    return;
  }
  var busy = false, again = false;

  function merge(next) {
    var have = {}, keep = {}, anchor = null;
    queue.querySelectorAll("section.approval").forEach(function (s) { have[s.id] = s; });
    var wanted = next.querySelectorAll("section.approval");
    wanted.forEach(function (s) { keep[s.id] = true; });
    Object.keys(have).forEach(function (id) { if (!keep[id]) { have[id].remove(); } });
    wanted.forEach(function (s) {
      var node = have[s.id];
      if (node) {
        node.querySelector(".left").textContent = s.querySelector(".left").textContent;
      } else {
        node = document.importNode(s, true);
        if (anchor) { anchor.after(node); } else { queue.prepend(node); }
      }
      anchor = node;
    });
    queue.querySelector(".empty").hidden = wanted.length > 0;
  }

  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    fetch(location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        var next = html && new DOMParser().parseFromString(html, "text/html").getElementById("queue");
        if (next) { merge(next); }
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }

  if (window.EventSource && queue.dataset.live) {
    new EventSource(queue.dataset.live).addEventListener("approval", refresh);
  }
  setInterval(refresh, 15000);
  document.getElementById("live-note").textContent = "This list updates by itself.";
})();
