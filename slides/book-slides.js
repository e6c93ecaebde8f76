/* Every slide fits the deck's frame (1280 x 720, or the smaller frame of a phone:
   scripts/make_slides.py; checked by tests/book/test_html.py::test_slides). Runs
   once reveal.js is ready and MathJax has typeset the deck (so heights are the real ones):

   0. a display equation wider than its box is set smaller to fit (down to
      MIN_MATH_SCALE; on a phone's narrow frame);
   1. a statement or lab taller than the frame is split over continuation slides, at the
      boundaries of its blocks (paragraphs, display equations, lists; a long list is split
      between its items, an ordered list keeps its numbering), each continuation titled
      like the statement with "(continued)";
   2. a slide still too tall (one block alone taller than the frame) is set in smaller
      type, down to MIN_SCALE of the normal size;
   3. only if that is not enough does the slide scroll (class "scrolls"), which the
      test reports as a failure.

   window.bookSlidesFit is false until this is done, then true. The slides are found as
   children of .reveal .slides, so reveal.js must stay in its slide view: the decks turn
   its scroll view (which would wrap each slide in a .scroll-page on a phone) off. */
(function () {
  "use strict";
  const MIN_SCALE = 0.8, MIN_MATH_SCALE = 0.6;
  window.bookSlidesFit = false;

  function shown(slide, fn) {
    const old = slide.style.display;
    slide.style.display = "block";
    try { return fn(); } finally { slide.style.display = old; }
  }
  function overflows(slide) {
    return shown(slide, () => slide.scrollHeight > slide.clientHeight + 1 ||
                              slide.scrollWidth > slide.clientWidth + 1);
  }
  function body(slide) { return slide.querySelector("[data-split]"); }
  function blocks(slide) {
    const b = body(slide);
    return b ? [...b.children] : [];
  }

  /* Move the trailing blocks of `slide` that do not fit into a new slide after it. */
  function split(slide) {
    const kept = blocks(slide);
    if (!kept.length) return null;
    const moved = [];
    while (kept.length > 1 && overflows(slide)) {
      const last = kept.pop();
      moved.unshift(last);
      last.remove();
    }
    // a short lead-in ("Assume", "Then:") goes with the list it introduces
    if (moved.length && /^(OL|UL)$/.test(moved[0].tagName) && kept.length > 1 &&
        kept[kept.length - 1].tagName === "P" && kept[kept.length - 1].textContent.trim().length < 80) {
      const lead = kept.pop();
      moved.unshift(lead);
      lead.remove();
    }
    let list = null;  // a lone list that is still too tall: split between its items
    if (overflows(slide) && kept.length === 1 && /^(OL|UL)$/.test(kept[0].tagName) &&
        kept[0].children.length > 1) {
      const items = [...kept[0].children];
      list = kept[0].cloneNode(false);
      while (items.length > 1 && overflows(slide)) {
        const li = items.pop();
        list.insertBefore(li, list.firstChild);
      }
      if (kept[0].tagName === "OL") {
        list.setAttribute("start", String((parseInt(kept[0].getAttribute("start") || "1", 10)) + items.length));
      }
    }
    if (!moved.length && !list) return null;
    const next = slide.cloneNode(true);
    next.removeAttribute("id");
    next.querySelectorAll("[id]").forEach(el => el.removeAttribute("id"));
    next.classList.add("continued");
    const nb = body(next);
    nb.replaceChildren(...(list ? [list] : []), ...moved);
    slide.after(next);
    return next;
  }

  function shrink(slide) {
    for (let s = 0.95; s >= MIN_SCALE - 1e-9 && overflows(slide); s -= 0.05) {
      slide.style.fontSize = `${Math.round(s * 100)}%`;
    }
    if (overflows(slide)) slide.classList.add("scrolls");
  }

  /* A display equation wider than its box (the narrow frame of a phone)
     is set smaller until it fits, down to MIN_MATH_SCALE of its size; its number stays
     beside it. The size stays relative to the text (MathJax's own factor, e.g. 113.1 %,
     times the shrink), so that shrink() below still scales it with the slide. */
  function fitMath(slide) {
    shown(slide, () => {
      for (const eq of slide.querySelectorAll('mjx-container[display="true"]')) {
        const own = parseFloat(getComputedStyle(eq).fontSize) /
          parseFloat(getComputedStyle(eq.parentElement).fontSize);
        let s = 1;
        for (let i = 0; i < 8 && eq.clientWidth && eq.scrollWidth > eq.clientWidth + 1 &&
             s > MIN_MATH_SCALE + 1e-9; i++) {
          s = Math.max(MIN_MATH_SCALE, s * Math.min(0.98, eq.clientWidth / eq.scrollWidth));
          eq.style.fontSize = `${(own * s * 100).toFixed(1)}%`;
        }
      }
    });
  }

  function fit() {
    let slide = document.querySelector(".reveal .slides > section");
    while (slide) {
      fitMath(slide);
      if (overflows(slide) && body(slide)) {
        split(slide);
      }
      if (overflows(slide)) shrink(slide);
      slide = slide.nextElementSibling;
    }
  }

  async function whenTypeset() {
    for (let i = 0; i < 400 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
      await new Promise(r => setTimeout(r, 25));
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
    if (document.fonts) await document.fonts.ready;
    await Promise.all([...document.images].map(i => i.complete ? null :
      new Promise(r => { i.addEventListener("load", r); i.addEventListener("error", r); })));
  }

  function start() {
    whenTypeset().then(() => {
      fit();
      Reveal.sync();
      // a deck opened at #/n shows slide n of the fitted deck, not of the one read first
      const at = /^#\/(\d+)(?:\/(\d+))?/.exec(location.hash);
      if (at) Reveal.slide(parseInt(at[1], 10), parseInt(at[2] || "0", 10));
      window.bookSlidesFit = true;
    }).catch(e => { console.warn("book-slides: fitting failed", e); window.bookSlidesFit = true; });
  }
  if (window.Reveal && Reveal.isReady()) start(); else Reveal.on("ready", start);
})();
