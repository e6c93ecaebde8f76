// On a narrow screen (a phone), a display equation wider than the column is set in a
// smaller size, down to 70 %, so that it fits or nearly fits; on wider screens nothing
// changes (equations wider than the column there are to be broken in the source).
(function () {
  "use strict";
  function fit() {
    if (window.innerWidth >= 700) return;
    document.querySelectorAll('mjx-container[display="true"]').forEach(function (box) {
      box.style.fontSize = "";
      var math = box.querySelector("mjx-math");
      if (!math) return;
      var ratio = box.clientWidth / math.getBoundingClientRect().width;
      if (ratio < 1) box.style.fontSize = Math.max(0.7, ratio * 0.98) * 100 + "%";
    });
  }
  function start() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(fit);
    }
  }
  window.addEventListener("load", start);
  window.addEventListener("resize", fit);
})();
