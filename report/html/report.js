// Sortable tables for the tracehouse HTML report: a click on a column's
// header sorts the rows (numbers: largest first, then smallest first; text:
// A-Z, then Z-A). No data goes into this script; it reads the table.
(function () {
  'use strict';
  var root = document.documentElement;
  window.addEventListener('error', function () {
    var n = parseInt(root.getAttribute('data-script-errors') || '0', 10);
    root.setAttribute('data-script-errors', String(n + 1));
  });
  var number = /[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/i;
  function key(td, num) {
    if (!td) return num ? NaN : '';
    var t = td.getAttribute('data-sort');
    if (t === null) t = td.textContent;
    if (!num) return t.toLowerCase();
    var m = t.replace(/,/g, '').match(number);
    return m ? parseFloat(m[0]) : NaN;
  }
  function sortBy(table, col, th) {
    var num = th.classList.contains('num');
    var cur = th.getAttribute('aria-sort');
    var asc = cur ? cur !== 'ascending' : !num;
    var body = table.tBodies[0];
    var rows = Array.prototype.map.call(body.rows, function (r, i) {
      return { r: r, k: key(r.cells[col], num), i: i };
    });
    rows.sort(function (a, b) {
      var c;
      if (num) {
        var na = isNaN(a.k), nb = isNaN(b.k);
        if (na || nb) return na === nb ? a.i - b.i : (na ? 1 : -1);
        c = a.k - b.k;
      } else {
        c = a.k < b.k ? -1 : a.k > b.k ? 1 : 0;
      }
      return (asc ? c : -c) || a.i - b.i;
    });
    rows.forEach(function (o) { body.appendChild(o.r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      var b = th.querySelector('button');
      if (b) b.addEventListener('click', function () { sortBy(table, col, th); });
    });
  });
  root.setAttribute('data-ready', '1');
})();
