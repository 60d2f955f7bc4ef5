// lsnn's site scripts, in place of the CDN scripts of pkgdown's template:
// the "On this page" table of contents, tooltips, and a search over the
// index that tools/build-site.R writes to search-index.js (a script, not
// JSON, so that it loads from file:// where fetch() is refused).
(function () {
  "use strict";
  var script = document.currentScript;
  var root = script ? script.src.replace(/extra\.js(\?.*)?$/, "") : "";

  function headingId(h) {
    if (h.id) return h.id;
    var section = h.parentElement;
    return section && section.classList.contains("section") ? section.id : "";
  }

  function buildToc() {
    var nav = document.getElementById("toc");
    if (!nav) return;
    var headings = document.querySelectorAll("main h2, main h3");
    var list = document.createElement("ul");
    list.className = "nav nav-pills flex-column";
    var parent = null;
    headings.forEach(function (h) {
      var id = headingId(h);
      if (!id || h.closest("#toc")) return;
      var item = document.createElement("li");
      item.className = "nav-item";
      var link = document.createElement("a");
      link.className = "nav-link";
      link.href = "#" + id;
      link.textContent = h.textContent.trim();
      item.appendChild(link);
      if (h.tagName === "H3" && parent) {
        var sub = parent.querySelector("ul");
        if (!sub) {
          sub = document.createElement("ul");
          sub.className = "nav nav-pills flex-column ms-3";
          parent.appendChild(sub);
        }
        sub.appendChild(item);
      } else {
        list.appendChild(item);
        if (h.tagName === "H2") parent = item;
      }
    });
    if (list.children.length === 0) {
      var aside = nav.closest("aside");
      if (aside && !aside.querySelector("a")) nav.style.display = "none";
      return;
    }
    nav.appendChild(list);
    if (window.bootstrap && bootstrap.ScrollSpy) {
      new bootstrap.ScrollSpy(document.body, { target: "#toc", offset: 80 });
    }
  }

  function activateTooltips() {
    if (!(window.bootstrap && bootstrap.Tooltip)) return;
    document.querySelectorAll('[data-bs-toggle="tooltip"]').forEach(function (el) {
      if (el.getAttribute("title")) new bootstrap.Tooltip(el);
    });
  }

  // Search: every word typed must occur in an entry's title, heading or text.
  var index = null;
  function loadIndex(done) {
    if (index) return done(index);
    if (window.lsnnSearchIndex) { index = window.lsnnSearchIndex; return done(index); }
    var s = document.createElement("script");
    s.src = root + "search-index.js";
    s.onload = function () { index = window.lsnnSearchIndex || []; done(index); };
    s.onerror = function () { index = []; done(index); };
    document.head.appendChild(s);
  }

  function matches(entry, words) {
    var hay = [entry.title, entry.what, entry.previous_headings, entry.text]
      .join(" ").toLowerCase();
    return words.every(function (w) { return hay.indexOf(w) >= 0; });
  }

  function setUpSearch() {
    var input = document.getElementById("search-input");
    if (!input) return;
    var form = input.closest("form");
    var box = document.createElement("div");
    box.className = "list-group lsnn-search-results";
    box.hidden = true;
    form.style.position = "relative";
    form.appendChild(box);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var first = box.querySelector("a");
      if (first) window.location.href = first.href;
    });

    function show(query) {
      var words = query.toLowerCase().split(/\s+/).filter(Boolean);
      box.innerHTML = "";
      if (words.join("").length < 2) { box.hidden = true; return; }
      loadIndex(function (entries) {
        var perPage = {};
        // Pages whose title holds the words first, then sections whose
        // heading does, then the rest, each in the index's order.
        var hits = entries.filter(function (e) { return matches(e, words); })
          .map(function (e, i) {
            var rank = matches({ title: e.title }, words) ? 0 : matches({ what: e.what }, words) ? 1 : 2;
            return { entry: e, rank: rank, order: i };
          })
          .sort(function (a, b) { return a.rank - b.rank || a.order - b.order; })
          .filter(function (h) {  // at most two entries of one page
            perPage[h.entry.path] = (perPage[h.entry.path] || 0) + 1;
            return perPage[h.entry.path] <= 2;
          })
          .slice(0, 12)
          .map(function (h) { return h.entry; });
        box.innerHTML = "";
        hits.forEach(function (e) {
          var a = document.createElement("a");
          a.className = "list-group-item list-group-item-action";
          a.href = root + e.path.replace(/^\//, "") + (e.id ? "#" + e.id : "");
          var title = document.createElement("div");
          title.className = "fw-semibold";
          title.textContent = e.title || e.what;
          var where = document.createElement("small");
          where.className = "text-muted";
          where.textContent = [e.what, e.previous_headings].filter(Boolean).join(" › ");
          a.appendChild(title);
          if (where.textContent && where.textContent !== title.textContent) a.appendChild(where);
          box.appendChild(a);
        });
        if (hits.length === 0) {
          var none = document.createElement("div");
          none.className = "list-group-item text-muted";
          none.textContent = "No match";
          box.appendChild(none);
        }
        box.hidden = false;
      });
    }
    input.addEventListener("input", function () { show(input.value); });
    input.addEventListener("focus", function () { loadIndex(function () {}); });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { box.hidden = true; input.blur(); }
    });
    document.addEventListener("click", function (e) {
      if (!form.contains(e.target)) box.hidden = true;
    });
    // A link may carry a search: page.html?q=words opens with its results.
    var query = new URLSearchParams(window.location.search).get("q");
    if (query) { input.value = query; show(query); }
  }

  document.addEventListener("DOMContentLoaded", function () {
    buildToc();
    activateTooltips();
    setUpSearch();
  });
})();
