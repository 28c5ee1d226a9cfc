(function () {
  var q = document.getElementById('q'), st = document.getElementById('status');
  var ev = document.getElementById('evaluator'), count = document.getElementById('shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#rows tbody tr'));
  function apply() {
    var text = q.value.toLowerCase(), status = st.value, name = ev.value, shown = 0;
    rows.forEach(function (tr) {
      var ok = (!text || tr.getAttribute('data-text').indexOf(text) >= 0) &&
        (status === 'all' || tr.getAttribute('data-status') === status) &&
        (name === 'all' || (' ' + tr.getAttribute('data-failed') + ' ').indexOf(' ' + name + ' ') >= 0);
      tr.style.display = ok ? '' : 'none';
      if (ok) shown += 1;
    });
    count.textContent = shown;
  }
  q.addEventListener('input', apply); st.addEventListener('change', apply);
  ev.addEventListener('change', apply);
})();
