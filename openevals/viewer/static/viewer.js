// openevals view: small progressive enhancements; every page works without this file.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // A click anywhere on a row of the row table opens that row.
  document.querySelectorAll("tr.row[data-href]").forEach(function (tr) {
    tr.addEventListener("click", function (event) {
      if (event.target.closest("a")) return;
      window.location.assign(tr.getAttribute("data-href"));
    });
  });
  // Changing a select in a filter form applies it at once.
  document.querySelectorAll("form[data-autosubmit] select").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  // Arrow keys page through the row table and step through rows.
  document.addEventListener("keydown", function (event) {
    if (event.target.closest("input, textarea, select")) return;
    var next = document.getElementById("next") || document.getElementById("next-row");
    var prev = document.getElementById("prev") || document.getElementById("prev-row");
    if (event.key === "ArrowRight" && next) window.location.assign(next.href);
    if (event.key === "ArrowLeft" && prev) window.location.assign(prev.href);
  });
});
