// The book's own script (added to every page by book/_ext/html_offline.py). It makes
// the page fit a narrow screen (a phone) without hiding anything:
//
// - code blocks: every line goes into a span.code-line that carries its indentation,
//   so that a line too long for the box wraps with a hanging indent (book.css);
// - display equations wider than the column: the equation number moves below the
//   equation, then the equation is set smaller, down to FLOOR (70 %) of its size, and
//   only if it still does not fit it scrolls sideways, with a visible cue;
// - inline formulas wider than their line: set smaller, down to INLINE_FLOOR (75 %),
//   and only then scroll inside their own span, with the same cue;
// - code names in tables get break opportunities after "." and "_" (<wbr>), so that
//   a narrow column wraps them; a table wider than the column gets narrower cell
//   padding, and if it is still too wide it scrolls inside its own box with the same cue.
//
// - inline formulas: kept on one line with the punctuation that follows them (no line
//   starts with the "," after a formula), and "x ± se" breaks nowhere (in a table
//   cell only before "±"), see below;
//
// - print: closed dropdowns (hidden code, solutions) print open (with book.css);
//
// - figures: on a phone, shown at 80 % of their natural size (not ~52 %) in a box that
//   scrolls sideways with the same cue, see "figures on a narrow screen" below;
//
// - figure zoom: a click or tap on a figure opens it in a full-window view at least at
//   its natural size (larger where the window has room), which pans in both directions;
//   a tap on it doubles its size (and back), Escape, the close button or a tap beside it
//   closes the view, see "figure zoom" below;
//
// - the sidebar buttons: every "site navigation" (.primary-toggle) and "on this page"
//   (.secondary-toggle) button works, see "sidebar buttons" below.
//
// A box that scrolls gets the classes scroll-frame (with more-left / more-right while
// there is more to see on that side) and a "scroll sideways" line under it. Everything
// is measured again when the window is resized and when a dropdown opens. What was
// changed is marked (data-fit-scale on a scaled formula, scroll-frame on a scroller),
// and tests/test_html.py checks at 1280 px that nothing needed it.
(function () {
  "use strict";
  // the page has this script: book.css's fallback for pages without it (an inline
  // formula set inline, so that the punctuation after it stays on its line) is off
  document.documentElement.classList.add("book-js");
  var FLOOR = 0.7;
  var INLINE_FLOOR = 0.75;
  var HINT = "scroll sideways \u21c6";

  // ---- code blocks: one span per line, with its indentation -------------------------
  function splitNode(node) {
    // the pieces of node between its newlines, each a list of nodes
    if (node.nodeType === Node.TEXT_NODE) {
      return node.data.split("\n").map(function (t) {
        return t ? [document.createTextNode(t)] : [];
      });
    }
    if (node.nodeType !== Node.ELEMENT_NODE || node.textContent.indexOf("\n") < 0) {
      return [[node]];
    }
    var parts = [[]];
    Array.prototype.slice.call(node.childNodes).forEach(function (child) {
      var sub = splitNode(child);
      parts[parts.length - 1] = parts[parts.length - 1].concat(sub[0]);
      for (var i = 1; i < sub.length; i++) parts.push(sub[i]);
    });
    return parts.map(function (nodes) {
      var shell = node.cloneNode(false);
      nodes.forEach(function (n) { shell.appendChild(n); });
      return nodes.length ? [shell] : [];
    });
  }

  function wrapCodeLines(pre) {
    if (pre.getAttribute("data-lines")) return;
    var lines = splitNode(pre).map(function (nodes) {
      // splitNode(pre) returns shells of pre: unwrap them
      return nodes.length ? Array.prototype.slice.call(nodes[0].childNodes) : [];
    });
    var last = lines.length - 1;
    if (last > 0 && lines[last].length === 0) lines.pop();
    var frag = document.createDocumentFragment();
    lines.forEach(function (nodes, i) {
      var span = document.createElement("span");
      span.className = "code-line";
      nodes.forEach(function (n) { span.appendChild(n); });
      var indent = /^[ ]*/.exec(span.textContent)[0].length;
      if (indent) span.style.setProperty("--indent", String(indent));
      frag.appendChild(span);
      frag.appendChild(document.createTextNode("\n"));
    });
    pre.textContent = "";
    pre.appendChild(frag);
    pre.setAttribute("data-lines", String(lines.length));
  }

  // ---- code names in tables: may break after "." and "_" ---------------------------
  function addBreaks(code) {
    var walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    var texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode);
    texts.forEach(function (text) {
      var parts = text.data.split(/(?<=[._])(?=[^._])/);
      if (parts.length < 2) return;
      var frag = document.createDocumentFragment();
      parts.forEach(function (part, i) {
        if (i) frag.appendChild(document.createElement("wbr"));
        frag.appendChild(document.createTextNode(part));
      });
      text.parentNode.replaceChild(frag, text);
    });
  }

  // ---- boxes that scroll sideways: the cue ------------------------------------------
  function cueState(frame, scroller) {
    var more = scroller.scrollWidth - scroller.clientWidth;
    frame.classList.toggle("more-left", scroller.scrollLeft > 1);
    frame.classList.toggle("more-right", scroller.scrollLeft < more - 1);
  }

  function setScrollCue(frame, scroller, on) {
    var hint = frame.querySelector(":scope > .scroll-hint");
    if (!on) {
      frame.classList.remove("scroll-frame", "more-left", "more-right");
      if (hint) hint.remove();
      return;
    }
    frame.classList.add("scroll-frame");
    if (!hint) {
      hint = document.createElement("span");
      hint.className = "scroll-hint";
      hint.setAttribute("aria-hidden", "true");
      hint.textContent = HINT;
      frame.appendChild(hint);
    }
    if (!scroller.getAttribute("data-scroll-cue")) {
      scroller.setAttribute("data-scroll-cue", "1");
      scroller.addEventListener("scroll", function () { cueState(frame, scroller); },
        { passive: true });
    }
    cueState(frame, scroller);
  }

  function overflows(el) {
    return el.scrollWidth > el.clientWidth + 1;
  }

  // Each fit runs in three passes, so that the page is laid out a few times, not once
  // per formula: undo what an earlier fit changed, measure everything, then change
  // only what does not fit.
  function widthOf(el) {
    return el.getBoundingClientRect().width;
  }

  // The parent of `el` with class `cls`, wrapping `el` in a new <tag> of that class the
  // first time (a scroll box's frame holds its shades and cue).
  function frameOf(el, tag, cls) {
    var frame = el.parentElement;
    if (!frame.classList.contains(cls)) {
      frame = document.createElement(tag);
      frame.className = cls;
      el.parentNode.insertBefore(frame, el);
      frame.appendChild(el);
    }
    return frame;
  }

  // ---- tables -----------------------------------------------------------------------
  function tableBoxes(root) {
    // [frame, scroller]: the frame wraps the scroller, so that the shades stay in place
    return Array.prototype.map.call(
      root.querySelectorAll(".pst-scrollable-table-container"), function (box) {
        return [frameOf(box, "div", "table-frame"), box];
      });
  }

  function compactTable(box, on) {
    var table = box.querySelector("table");
    if (table) table.classList.toggle("table-compact", on);
  }

  // ---- figures on a narrow screen ---------------------------------------------------
  // A figure is drawn at the width of the text column at 1280 px (its natural size).
  // Shrunk to a phone's column it shows at ~52 % of that, tick labels ~6 CSS px. On a
  // narrow screen (up to PHONE_MAX px) a figure is shown at FIGURE_SCALE of its natural
  // size instead (a 9 pt label is then 9.6 CSS px), or at the column's width if that is
  // larger, and scrolls sideways inside its own box with the cue; a tap opens it at
  // full size (the link of book/_ext/html_offline.py).
  var PHONE_MAX = 640;
  var FIGURE_SCALE = 0.8;
  function figureBoxes(root) {
    // [frame, scroller, img]
    return Array.prototype.map.call(
      root.querySelectorAll("a.figure-zoom > img"), function (img) {
        var link = img.parentElement;
        var scroller = frameOf(link, "div", "figure-scroller");
        return [frameOf(scroller, "div", "figure-frame"), scroller, img];
      });
  }
  function fitFigure(f) {
    var img = f[2];
    img.style.width = "";
    img.style.maxWidth = "";
    if (f[0].classList.contains("scroll-frame")) setScrollCue(f[0], f[1], false);
    if (window.innerWidth > PHONE_MAX || !img.naturalWidth) return;
    var want = Math.round(img.naturalWidth * FIGURE_SCALE);
    if (want <= f[1].clientWidth + 1) return;
    img.style.width = want + "px";
    img.style.maxWidth = "none";
    setScrollCue(f[0], f[1], true);
  }

  // ---- formulas ---------------------------------------------------------------------
  // MathJax sets its own font size on each formula (to match the text's x-height):
  // a scale multiplies that size.
  function setScale(box, scale) {
    if (!box.hasAttribute("data-base-size")) {
      box.setAttribute("data-base-size", box.style.fontSize || "");
    }
    var base = box.getAttribute("data-base-size");
    if (scale >= 1) {
      box.style.fontSize = base;
      box.removeAttribute("data-fit-scale");
    } else {
      box.style.fontSize = ((parseFloat(base) || 100) * scale).toFixed(1) + "%";
      box.setAttribute("data-fit-scale", scale.toFixed(2));
    }
  }

  // set box smaller until width() <= room(), not below floor; true if it then fits
  function shrink(box, floor, width, room) {
    var scale = 1;
    for (var i = 0; i < 4 && width() > room() + 1 && scale > floor; i++) {
      scale = Math.max(floor, Math.floor(scale * (room() / width()) * 100) / 100);
      setScale(box, scale);
    }
    return width() <= room() + 1;
  }

  function mathDiv(box) {
    return box.closest("div.math") || box.parentElement;
  }

  function resetDisplay(box) {
    var div = mathDiv(box);
    if (box.hasAttribute("data-fit-scale")) setScale(box, 1);
    if (div.classList.contains("eqno-below")) div.classList.remove("eqno-below");
    if (div.classList.contains("scroll-frame")) setScrollCue(div, box, false);
  }

  function displayTooWide(box) {
    var math = box.querySelector("mjx-math");
    return !!math && box.clientWidth > 0 && widthOf(math) > box.clientWidth + 1;
  }

  // first the number goes below the equation, then the equation is set smaller, and
  // what still does not fit at FLOOR scrolls
  function fitDisplay(box) {
    var div = mathDiv(box);
    var math = box.querySelector("mjx-math");
    if (div.querySelector(":scope > span.eqno")) div.classList.add("eqno-below");
    var fits = shrink(box, FLOOR, function () { return widthOf(math); },
      function () { return box.clientWidth; });
    if (!fits) setScrollCue(div, box, true);
  }

  function lineRoom(box) {
    var host = box.parentElement.closest("p, li, dd, dt, td, th, figcaption, div");
    if (!host || !host.clientWidth) return 0;
    var cs = getComputedStyle(host);
    return host.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  }

  function resetInline(box) {
    if (box.hasAttribute("data-fit-scale")) setScale(box, 1);
    var span = box.parentElement;
    if (span.classList.contains("scrolls")) {
      span.classList.remove("scrolls");
      setScrollCue(span.parentElement, span, false);
    }
  }

  // a formula with the punctuation glued to it (span.math-nowrap, below) needs room
  // for both on one line
  function inlineWidth(box) {
    return widthOf(box.closest("span.math-nowrap") || box);
  }

  function inlineTooWide(box) {
    var room = lineRoom(box);
    return room > 0 && inlineWidth(box) > room + 1;
  }

  // set smaller, down to INLINE_FLOOR; what still does not fit scrolls inside its own
  // span (wrapped in a span.inline-frame that carries the cue)
  function fitInline(box) {
    var fits = shrink(box, INLINE_FLOOR, function () { return inlineWidth(box); },
      function () { return lineRoom(box); });
    var span = box.parentElement;
    if (fits || !span.classList.contains("math")) return;
    var frame = frameOf(span, "span", "inline-frame");
    span.classList.add("scrolls");
    setScrollCue(frame, span, true);
  }

  function fitPage(root) {
    var tables = tableBoxes(root);
    var displays = Array.prototype.slice.call(
      root.querySelectorAll('mjx-container[display="true"]'));
    var inlines = Array.prototype.filter.call(
      root.querySelectorAll('mjx-container:not([display="true"])'),
      function (box) { return !box.closest("table"); }); // a table scrolls as a whole
    // 1. undo
    tables.forEach(function (t) {
      if (t[0].classList.contains("scroll-frame")) setScrollCue(t[0], t[1], false);
      compactTable(t[1], false);
    });
    displays.forEach(resetDisplay);
    inlines.forEach(resetInline);
    // 2. measure
    var wideTables = tables.filter(function (t) { return overflows(t[1]); });
    // a table too wide first gets narrower cell padding (its columns of "x ± se" cells
    // then fit the 1280-px column), and only scrolls if it still does not fit
    wideTables.forEach(function (t) { compactTable(t[1], true); });
    wideTables = wideTables.filter(function (t) { return overflows(t[1]); });
    var wideDisplays = displays.filter(displayTooWide);
    var wideInlines = inlines.filter(inlineTooWide);
    // 3. fit
    wideDisplays.forEach(fitDisplay);
    wideInlines.forEach(fitInline);
    wideTables.forEach(function (t) { setScrollCue(t[0], t[1], true); });
    figureBoxes(root).forEach(fitFigure);
  }

  // ---- formulas and the text that sticks to them -----------------------------------
  // MathJax sets an inline formula as an inline-block, and the browser may break a line
  // on either side of one: a line could start with the "," or ")." that follows a
  // formula, or end with the "(" before it. After typesetting, each inline formula and
  // the text glued to it (no space between) go into one span.math-nowrap (book.css:
  // white-space: nowrap), so that they stay on one line. Only the text up to the next
  // space is taken after it, and only opening brackets and quotes before it.
  var AFTER = /^[^\s\u00a0]+/;
  var BEFORE = /[(\[{\u2018\u201c"']+$/;
  function glueFormula(box) {
    var math = box.parentElement;
    var el = math && math.classList.contains("math") && math.childElementCount === 1 ?
      math : box;
    if (!el.parentElement || el.parentElement.classList.contains("math-nowrap")) return;
    var next = el.nextSibling, prev = el.previousSibling;
    var after = next && next.nodeType === Node.TEXT_NODE ? AFTER.exec(next.data) : null;
    var before = prev && prev.nodeType === Node.TEXT_NODE ? BEFORE.exec(prev.data) : null;
    if (!after && !before) return;
    var span = document.createElement("span");
    span.className = "math-nowrap";
    el.parentNode.insertBefore(span, el);
    if (before) span.appendChild(prev.splitText(before.index));
    span.appendChild(el);
    if (after) {
      next.splitText(after[0].length);
      span.appendChild(next);
    }
  }

  // ---- "x ± se" and "2.2 %": one line -----------------------------------------------
  // An estimate and its standard error ("0.12 ± 0.05", "+1.2 ± 0.3 %", as
  // lib.teaching.tables.plus_minus writes them) are not broken at any of their spaces:
  // the spaces become non-breaking ("±" and the error always; "x" and "±" too, except
  // in a table cell, where a table too wide for the column at 1280 px may set "± se"
  // under "x", and nowhere else). So does the space between a number and "%", also
  // where the number is an {eval} value and " %" the text after it. The text comes with
  // plain spaces: an {eval} value shows a non-breaking space escaped ("\xa0").
  var PM = /(\S) \u00b1 (\S+)/g;
  var PERCENT = /(\d) %/g;
  function gluePlusMinus(root) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    var texts = [];
    while (walker.nextNode()) {
      var t = walker.currentNode;
      if (t.data && !t.parentElement.closest("pre, code, script, .math, mjx-container")) {
        texts.push(t);
      }
    }
    texts.forEach(function (t, i) {
      if (t.data.indexOf("\u00b1") < 0 && t.data.indexOf("%") < 0) return;
      var gap = t.parentElement.closest("td, th") ? " " : "\u00a0";
      var data = t.data.replace(PM, function (m, a, b) {
        return a + gap + "\u00b1\u00a0" + b;
      }).replace(PERCENT, "$1\u00a0%");
      if (i && /^ %/.test(data) && /\d$/.test(texts[i - 1].data)) {
        data = "\u00a0" + data.slice(1);
      }
      if (data !== t.data) t.data = data;
    });
  }

  // ---- driver -----------------------------------------------------------------------
  var article = function () {
    return document.querySelector("article.bd-article") || document.body;
  };
  var pending = 0;
  function fitAll() {
    pending = 0;
    fitPage(article());
    document.documentElement.setAttribute("data-book-fit", "done");
  }
  function later() {
    if (!pending) pending = window.requestAnimationFrame(fitAll);
  }
  window.bookFit = fitAll; // for tests/test_html.py

  // ---- figure zoom ------------------------------------------------------------------
  // A figure is a link to its image file (book/_ext/html_offline.py). Followed, the link
  // opened the bare SVG, which a phone browser lays out in its 980-px default viewport:
  // the figure showed at ~260 CSS px, smaller than in the page. Instead a click opens a
  // <dialog> over the page: the image at ZOOM_FIT of the window's width, but never
  // below its natural size (on a phone it is then wider than the screen and pans inside
  // the view, in both directions); a tap on the image switches to twice that and back.
  // Without this script the link still opens the file.
  var ZOOM_FIT = 0.96;
  var ZOOM_MAX = 2;
  var zoomView = null;
  function zoomWidths(img) {
    var natural = img.naturalWidth || img.width || 600;
    var fit = Math.min(natural * ZOOM_MAX, window.innerWidth * ZOOM_FIT);
    var base = Math.max(natural, Math.round(fit));
    return [base, Math.round(base * 2)];
  }
  function closeZoom() {
    if (zoomView && zoomView.open) zoomView.close();
  }
  function openZoom(link) {
    var src = link.getAttribute("href");
    var inPage = link.querySelector("img");
    if (!zoomView) {
      zoomView = document.createElement("dialog");
      zoomView.className = "figure-zoom-view";
      zoomView.setAttribute("aria-label", "Figure at full size");
      zoomView.innerHTML = '<button type="button" class="figure-zoom-close" ' +
        'aria-label="Close the figure">\u00d7</button>' +
        '<div class="figure-zoom-pane"><img alt=""></div>';
      document.body.appendChild(zoomView);
      zoomView.querySelector(".figure-zoom-close").addEventListener("click", closeZoom);
      zoomView.addEventListener("click", function (event) {
        // a tap beside the image (on the pane or the backdrop) closes the view
        if (event.target === zoomView ||
            event.target.classList.contains("figure-zoom-pane")) closeZoom();
      });
      zoomView.querySelector("img").addEventListener("click", function (event) {
        var img = event.currentTarget;
        var w = zoomWidths(img);
        var big = img.getAttribute("data-zoom") !== "2";
        img.setAttribute("data-zoom", big ? "2" : "1");
        img.style.width = (big ? w[1] : w[0]) + "px";
      });
    }
    var img = zoomView.querySelector("img");
    img.alt = inPage ? inPage.alt : "";
    img.setAttribute("data-zoom", "1");
    var show = function () {
      img.style.width = zoomWidths(img)[0] + "px";
      var pane = zoomView.querySelector(".figure-zoom-pane");
      // start at the top left corner, where the title of a panel and its legend sit
      pane.scrollLeft = 0;
      pane.scrollTop = 0;
    };
    img.onload = show;
    img.src = src;
    if (!zoomView.open) zoomView.showModal();
    if (img.complete && img.naturalWidth) show();
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.figure-zoom");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button) return;
    event.preventDefault();
    openZoom(link);
  });
  window.bookZoom = openZoom; // for tests/book/test_html_figures.py

  // ---- sidebar buttons ----------------------------------------------------------------
  // sphinx-book-theme 1.3 puts a second .primary-toggle (and .secondary-toggle) into the
  // article header, the one that is visible, but pydata-sphinx-theme 0.17 and the book
  // theme attach their click handlers to the first of each only (the hidden one of the
  // navbar; pydata-sphinx-theme #2451, sphinx-book-theme #988): the visible buttons
  // showed a tooltip and did nothing. One handler here serves every such button, as the
  // themes intend: on a narrow screen the sidebar's content moves into its <dialog>,
  // shown as a modal drawer (and moves back when it closes: Escape, the backdrop, a
  // link); from 992 px on (Bootstrap's lg, where the primary sidebar is in the page)
  // the primary button hides and shows the sidebar in place (class pst-sidebar-hidden
  // of sphinx-book-theme). It runs in the capture phase on the document and stops the
  // event, so that the themes' own handlers never run as well (no double toggle).
  var WIDE_SIDEBAR = "(min-width: 992px)";

  function moveContent(from, to) {
    Array.prototype.slice.call(from.childNodes).forEach(function (n) { to.appendChild(n); });
    Array.prototype.slice.call(from.classList).forEach(function (cls) {
      from.classList.remove(cls);
      to.classList.add(cls);
    });
  }

  function sidebarPair(button) {
    var side = button.classList.contains("primary-toggle") ? "primary" : "secondary";
    return {
      side: side,
      sidebar: document.getElementById("pst-" + side + "-sidebar"),
      dialog: document.getElementById("pst-" + side + "-sidebar-modal"),
    };
  }

  function setUpDialog(dialog, sidebar) {
    if (dialog.getAttribute("data-book-drawer")) return;
    dialog.setAttribute("data-book-drawer", "1");
    // put the content back when the dialog closes, however it closes (the theme's
    // own close handler may have done so already: then there is nothing to move)
    dialog.addEventListener("close", function () {
      moveContent(dialog, sidebar);
      later();
    });
    // a click on the backdrop (outside the drawer's box) closes it
    dialog.addEventListener("click", function (event) {
      if (event.target !== dialog) return;
      var box = dialog.getBoundingClientRect();
      if (event.clientX < box.left || event.clientX > box.right ||
          event.clientY < box.top || event.clientY > box.bottom) dialog.close();
    });
    // a link followed inside the drawer (an anchor on this page) closes it
    dialog.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest("a[href]");
      if (link && dialog.open) dialog.close();
    });
  }

  function openDrawer(button, pair) {
    setUpDialog(pair.dialog, pair.sidebar);
    if (pair.dialog.open) return;
    var before = document.activeElement;
    moveContent(pair.sidebar, pair.dialog);
    pair.dialog.showModal();
    pair.dialog.addEventListener("close", function () {
      if (before && before.focus) before.focus();
    }, { once: true });
  }

  function onSidebarToggle(event) {
    var button = event.target.closest &&
      event.target.closest(".primary-toggle, .secondary-toggle");
    if (!button) return;
    var pair = sidebarPair(button);
    if (!pair.sidebar || !pair.dialog) return; // a page without that sidebar
    event.preventDefault();
    event.stopPropagation();
    button.blur(); // no tooltip left standing over the drawer
    if (pair.side === "primary" && window.matchMedia(WIDE_SIDEBAR).matches) {
      var hidden = pair.sidebar.classList.toggle("pst-sidebar-hidden");
      document.querySelectorAll(".primary-toggle").forEach(function (b) {
        b.setAttribute("aria-expanded", hidden ? "false" : "true");
      });
      // the column gets wider or narrower: fit again once the sidebar has moved
      window.setTimeout(later, 350);
    } else {
      openDrawer(button, pair);
    }
  }
  document.addEventListener("click", onSidebarToggle, true);

  // ---- print: closed dropdowns open ------------------------------------------------
  // Printed, a closed <details> (a hidden code cell, a {dropdown}) showed its title only.
  // book.css opens them in print; here they are also opened for the print (so that the
  // page is laid out with them open) and closed again afterwards.
  var openedForPrint = [];
  window.addEventListener("beforeprint", function () {
    openedForPrint = Array.prototype.slice.call(
      article().querySelectorAll("details:not([open])"));
    openedForPrint.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () {
    openedForPrint.forEach(function (d) { d.open = false; });
    openedForPrint = [];
  });

  function start() {
    article().querySelectorAll("div.highlight pre").forEach(wrapCodeLines);
    article().querySelectorAll("table code").forEach(addBreaks);
    // measure once MathJax has typeset the page and the fonts (its own included) are
    // loaded, and again whenever more fonts arrive
    var mj = window.MathJax;
    var typeset = mj && mj.startup && mj.startup.promise ? mj.startup.promise : null;
    var fonts = document.fonts ? document.fonts.ready : null;
    gluePlusMinus(article());
    var glue = function () {
      article().querySelectorAll('mjx-container:not([display="true"])')
        .forEach(glueFormula);
    };
    Promise.all([typeset, fonts]).then(function () { glue(); fitAll(); }, fitAll);
    if (document.fonts) document.fonts.addEventListener("loadingdone", later);
    window.addEventListener("resize", later);
    // a dropdown opened (details, or a sphinx-togglebutton solution): measure again
    document.addEventListener("toggle", later, true);
    document.addEventListener("click", function () { window.setTimeout(later, 350); });
  }
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
