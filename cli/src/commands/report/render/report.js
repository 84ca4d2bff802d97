// Sorts the findings by a clicked column and filters them by the text in
// #filter (or in the address's #q=...), keeping #shown up to date.
(function () {
  "use strict";
  var table = document.getElementById("findings");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var filter = document.getElementById("filter");
  var shown = document.getElementById("shown");
  document.getElementById("rows").textContent = String(rows.length);

  function apply() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row) {
      var text = row.textContent.toLowerCase();
      var match = words.every(function (w) { return text.indexOf(w) !== -1; });
      row.hidden = !match;
      if (match) { count += 1; }
    });
    shown.textContent = String(count);
  }

  function sortBy(header) {
    var column = Number(header.getAttribute("data-column"));
    var ascending = !header.classList.contains("asc");
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.classList.remove("asc", "desc");
    });
    header.classList.add(ascending ? "asc" : "desc");
    rows.sort(function (a, b) {
      var x = a.cells[column].textContent;
      var y = b.cells[column].textContent;
      var order = x.localeCompare(y, undefined, { numeric: true });
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  table.tHead.addEventListener("click", function (event) {
    var header = event.target.closest("th");
    if (header) { sortBy(header); }
  });
  filter.addEventListener("input", apply);
  var query = /[#&]q=([^&]*)/.exec(window.location.hash);
  if (query) { filter.value = decodeURIComponent(query[1].replace(/\+/g, " ")); }
  apply();
  document.body.setAttribute("data-ready", "true");
})();
