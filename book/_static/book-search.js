// Search snippets without fetching pages (added to every page by book/_ext/book_search.py;
// it acts on the search page only).
//
// Sphinx's search page fetches every page it lists to cut a snippet from its text. From
// disk (file://) the fetch fails (a console error per result, titles only), and over HTTP
// the text still has its formulas as raw TeX. book_search.py writes the text of every page,
// formulas as readable Unicode, to _static/book-search-text.js; this script loads that file
// (a <script>, which works from disk), answers the search page's requests for book pages
// from it, and hands Sphinx the stored text instead of parsing a page. A hit on an object
// of the API reference (a function, a class) gets Sphinx's "(Python function, in ...)"
// and no snippet: this script adds one, cut from the object's signature and docstring.
(function () {
  "use strict";
  if (typeof Search === "undefined" || !window.fetch) return;  // not the search page
  var MARK = "\u0000book-search:";
  var root = document.documentElement.dataset.content_root || "";
  var base = new URL(root, location.href).href;
  var suffix = (window.DOCUMENTATION_OPTIONS || {}).FILE_SUFFIX || ".html";

  var loaded = new Promise(function (resolve) {
    var s = document.createElement("script");
    s.src = base + "_static/book-search-text.js";
    s.onload = function () { resolve(window.BOOK_SEARCH_TEXT || {}); };
    s.onerror = function () { resolve({}); };
    document.head.appendChild(s);
  });

  // the docname of a URL of this book's pages, or null
  function docname(url) {
    var href;
    try { href = new URL(String(url), location.href).href; } catch (e) { return null; }
    href = href.split("#")[0].split("?")[0];
    if (href.indexOf(base) !== 0 || href.slice(-suffix.length) !== suffix) return null;
    return decodeURIComponent(href.slice(base.length, -suffix.length));
  }

  var fetchPage = window.fetch.bind(window);
  window.fetch = function (resource, options) {
    var name = typeof resource === "string" || resource instanceof URL ?
      docname(resource) : null;
    if (name === null) return fetchPage(resource, options);
    return loaded.then(function (texts) {
      if (!texts[name]) return fetchPage(resource, options);
      return new Response(MARK + name, { headers: { "Content-Type": "text/plain" } });
    });
  };

  var htmlToText = Search.htmlToText;
  Search.htmlToText = function (html, anchor) {
    if (typeof html !== "string" || html.indexOf(MARK) !== 0) {
      return htmlToText.apply(this, arguments);
    }
    var page = (window.BOOK_SEARCH_TEXT || {})[html.slice(MARK.length)];
    if (!page) return "";
    if (anchor) {
      var id = anchor.replace(/^#/, "");
      for (var i = 0; i < page.sections.length; i++) {
        var sec = page.sections[i];
        if (sec[0] === id) return page.text.slice(sec[1], sec[2]);
      }
    }
    return page.text;
  };

  // Sphinx cuts a snippet at 120 characters before the last keyword it finds, 240 long,
  // wherever that falls: the glossary's started mid-word ("...rm of the ..."). For the
  // stored texts the snippet is cut the same way, then moved to word boundaries: its
  // start to just after a space (forward, so that the keyword stays in it; backward to
  // the space before if the keyword is in the first word), its end to just before one.
  var makeSummary = Search.makeSearchSummary;
  function wordStart(text, start, hit) {
    if (start <= 0 || /\s/.test(text.charAt(start - 1))) return start;
    var forward = text.slice(start, hit).search(/\s/);
    if (forward >= 0) return start + forward + 1;
    var back = text.slice(0, start).search(/\s\S*$/);
    return back >= 0 ? back + 1 : 0;
  }
  function wordEnd(text, end, after) {
    if (end >= text.length || /\s/.test(text.charAt(end))) return end;
    var back = text.slice(after, end).search(/\s\S*$/);
    if (back >= 0) return after + back;
    var forward = text.slice(end).search(/\s/);
    return forward >= 0 ? end + forward : text.length;
  }
  Search.makeSearchSummary = function (html, keywords, anchor) {
    if (typeof html !== "string" || html.indexOf(MARK) !== 0) {
      return makeSummary.apply(this, arguments);
    }
    var text = Search.htmlToText(html, anchor);
    if (text === "") return null;
    var lower = text.toLowerCase();
    var hit = -1, word = "";
    Array.prototype.forEach.call(keywords, function (k) {
      var i = lower.indexOf(String(k).toLowerCase());
      if (i > -1) { hit = i; word = String(k); }
    });
    if (hit < 0) hit = 0;
    var start = wordStart(text, Math.max(hit - 120, 0), hit);
    var end = wordEnd(text, Math.min(start + 240, text.length), hit + word.length);
    var summary = document.createElement("p");
    summary.classList.add("context");
    summary.textContent = (start > 0 ? "..." : "") + text.slice(start, end).trim() +
      (end < text.length ? "..." : "");
    return summary;
  };

  // snippets for the API reference's objects (Sphinx shows only their description)
  function objectSnippet(li) {
    if (li.querySelector("p.context") || !li.querySelector(":scope > span")) return;
    var link = li.querySelector("a[href]");
    if (!link) return;
    var url = new URL(link.getAttribute("href"), location.href);
    var name = docname(url.href);
    if (name === null || !url.hash) return;
    var query = new URLSearchParams(location.search).get("q") || "";
    var terms = query.toLowerCase().split(/\s+/).filter(Boolean);
    var summary = Search.makeSearchSummary(MARK + name, terms, decodeURIComponent(url.hash));
    if (summary) li.appendChild(summary);
  }
  loaded.then(function () {
    var out = document.getElementById("search-results");
    if (!out) return;
    var each = function () { out.querySelectorAll("ul.search > li").forEach(objectSnippet); };
    new MutationObserver(each).observe(out, { childList: true, subtree: true });
    each();
  });
})();
