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
//
// The snippet (bookSnippet below) is a short excerpt of prose around the FIRST place where
// a word of the query starts a word of the text (Sphinx's own cut, 120 characters before
// the LAST keyword it finds, and its stemmed keywords, a Set that an array loop skipped,
// gave the page's start). A match in prose wins over one in a heading, a code output or
// an API signature (book_search.py records where those are); the excerpt starts at the
// match's sentence when that is close, else at a word boundary before it.
// The snippet's choice, without the page: also loaded by the tests (node).
var bookSnippet = (function () {
  "use strict";
  var LETTER = /[\p{L}\p{N}]/u;
  // the query's words, lower case: as typed, split at non-letters, and ``stems``
  function words(query, stems) {
    var out = [];
    var add = function (w) {
      w = String(w).toLowerCase();
      if (w.length >= 2 && out.indexOf(w) < 0) out.push(w);
    };
    String(query || "").split(/\s+/).forEach(function (w) {
      add(w.replace(/^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu, ""));
      w.split(/[^\p{L}\p{N}]+/u).forEach(add);
    });
    Array.from(stems || []).forEach(add);
    return out;
  }
  function inside(at, skip) {
    for (var i = 0; i < skip.length; i++) {
      if (at >= skip[i][0] && at < skip[i][1]) return true;
    }
    return false;
  }
  // the first place where one of the words starts a word of the text, outside the
  // ranges ``skip`` if there is one there: {at, length}, or null
  // the text without accents, one character for one ("Raventós" -> "Raventos"), so a
  // word typed without them finds the place, at the same index
  function fold(text) {
    return Array.from(text).map(function (c) {
      var f = c.normalize("NFD").replace(/\p{M}/gu, "");
      return f.length === c.length ? f : c;
    }).join("");
  }
  function firstMatch(text, list, skip) {
    var lower = fold(text.toLowerCase());
    var best = null, bestOut = null;
    list.forEach(function (w) {
      w = fold(w);
      var at = lower.indexOf(w);
      while (at > -1) {
        if (at === 0 || !LETTER.test(lower.charAt(at - 1))) {
          var hit = { at: at, length: w.length };
          if (!best || at < best.at) best = hit;
          if (!inside(at, skip)) {
            if (!bestOut || at < bestOut.at) bestOut = hit;
            break;
          }
        }
        at = lower.indexOf(w, at + 1);
      }
    });
    return bestOut || best;
  }
  // a short excerpt of ``text`` around the first match of ``list`` (or, where none of
  // its words is in the text, of ``fallback``: Sphinx's stems): from its sentence's start
  // when that is at most ``before`` characters back, else from a word boundary about 60
  // characters back; about ``width`` characters, ending at a word boundary
  function cut(text, list, skip, fallback, width, before) {
    width = width || 220;
    before = before || 110;
    skip = skip || [];
    var hit = firstMatch(text, list, skip) || firstMatch(text, fallback || [], skip) ||
      { at: 0, length: 0 };
    var start = 0;
    if (hit.at > 0) {
      var back = text.slice(Math.max(0, hit.at - before), hit.at);
      // a sentence ends at [.!?:] and a space before a capital; a skipped range ends one
      var sentence = -1, m, re = /[.!?:]\s+(?=[\p{Lu}\p{N}(])/gu;
      while ((m = re.exec(back)) !== null) sentence = m.index + m[0].length;
      var from = hit.at - back.length;
      skip.forEach(function (r) {
        if (r[1] <= hit.at && r[1] > from + sentence) sentence = r[1] - from;
      });
      if (sentence >= 0) {
        start = from + sentence;
      } else if (hit.at - from < before || from === 0) {
        start = from;
      } else {
        start = Math.max(0, hit.at - 60);
        if (start > 0 && !/\s/.test(text.charAt(start - 1))) {
          var space = text.slice(start, hit.at).search(/\s/);
          start = space >= 0 ? start + space + 1 : hit.at;
        }
      }
    }
    // the excerpt stops where the next part that is not prose (a heading, a literal
    // block, an API signature) begins; if that leaves it short, it starts earlier
    var stop = text.length;
    if (!inside(hit.at, skip)) {
      skip.forEach(function (r) { if (r[0] >= hit.at + hit.length && r[0] < stop) stop = r[0]; });
    }
    if (stop - start < width / 2 && start > 0) {
      var floor = 0;
      skip.forEach(function (r) { if (r[1] <= start && r[1] > floor) floor = r[1]; });
      var early = Math.max(floor, stop - width);
      var head = text.slice(early, start).search(/[.!?:]\s+(?=[\p{Lu}\p{N}(])/u);
      if (head >= 0 && early > floor) {
        early += head + text.slice(early + head).search(/\s/) + 1;
      } else if (early > floor && !/\s/.test(text.charAt(early - 1))) {
        var sp = text.slice(early, start).search(/\s/);
        early = sp >= 0 ? early + sp + 1 : start;
      }
      start = Math.min(start, early);
    }
    while (start < hit.at && /\s/.test(text.charAt(start))) start++;
    var end = Math.min(stop, Math.max(start + width, hit.at + hit.length));
    while (end > hit.at + hit.length && /\s/.test(text.charAt(end - 1))) end--;
    if (end < stop && !/\s/.test(text.charAt(end))) {
      var last = text.slice(hit.at + hit.length, end).search(/\s\S*$/);
      if (last >= 0) end = hit.at + hit.length + last;
      else {
        var next = text.slice(end).search(/\s/);
        end = next >= 0 ? end + next : text.length;
      }
    }
    return { start: start, end: end, at: hit.at, found: hit.length > 0 };
  }
  // the snippet's text: the excerpt, "..." where it leaves text out
  function summary(text, list, skip, fallback, width, before) {
    var c = cut(text, list, skip, fallback, width, before);
    return (c.start > 0 ? "..." : "") + text.slice(c.start, c.end).trim() +
      (c.end < text.length ? "..." : "");
  }
  return { words: words, firstMatch: firstMatch, cut: cut, summary: summary };
})();
if (typeof module !== "undefined" && module.exports) module.exports = bookSnippet;

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

  // the stored text of a page (or of the section ``anchor``) and its ranges that are
  // not prose, relative to that text
  function pageText(name, anchor) {
    var page = (window.BOOK_SEARCH_TEXT || {})[name];
    if (!page) return null;
    var from = 0, to = page.text.length;
    if (anchor) {
      var id = anchor.replace(/^#/, "");
      for (var i = 0; i < page.sections.length; i++) {
        var sec = page.sections[i];
        if (sec[0] === id && sec[2] > sec[1]) { from = sec[1]; to = sec[2]; break; }
      }
    }
    var skip = (page.skip || []).filter(function (r) { return r[1] > from && r[0] < to; })
      .map(function (r) { return [Math.max(r[0], from) - from, Math.min(r[1], to) - from]; });
    return { text: page.text.slice(from, to), skip: skip };
  }
  function query() {
    return new URLSearchParams(location.search).get("q") || "";
  }
  var makeSummary = Search.makeSearchSummary;
  Search.makeSearchSummary = function (html, keywords, anchor) {
    if (typeof html !== "string" || html.indexOf(MARK) !== 0) {
      return makeSummary.apply(this, arguments);
    }
    var name = html.slice(MARK.length);
    var part = pageText(name, anchor);
    // a section without text of its own (an anchor on an empty target): the page's
    if (part && !part.text.trim()) part = pageText(name, "");
    var summary = document.createElement("p");
    summary.classList.add("context");
    if (!part || !part.text.trim()) return summary;  // Sphinx appends what it gets
    // the words as typed first; Sphinx's stems where none of them is in the text
    summary.textContent = bookSnippet.summary(part.text, bookSnippet.words(query()),
      part.skip, bookSnippet.words("", keywords));
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
    var summary = Search.makeSearchSummary(MARK + name, [], decodeURIComponent(url.hash));
    if (summary && summary.textContent) li.appendChild(summary);
  }
  loaded.then(function () {
    var out = document.getElementById("search-results");
    if (!out) return;
    var each = function () { out.querySelectorAll("ul.search > li").forEach(objectSnippet); };
    new MutationObserver(each).observe(out, { childList: true, subtree: true });
    each();
  });
})();
