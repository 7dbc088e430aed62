// Listgate dashboard: confirmation before destructive actions and the copy
// button of a new secret. Plain JS, no build; the pages work without it.
"use strict";
document.addEventListener("submit", function (ev) {
  var msg = ev.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) { ev.preventDefault(); }
});
document.addEventListener("click", function (ev) {
  var id = ev.target.getAttribute && ev.target.getAttribute("data-copy");
  if (!id) { return; }
  var input = document.getElementById(id);
  input.select();
  var done = function () { ev.target.textContent = "Copied"; };
  if (navigator.clipboard) {
    navigator.clipboard.writeText(input.value).then(done, function () { document.execCommand("copy"); done(); });
  } else { document.execCommand("copy"); done(); }
});
// The vendor report's print button.
document.addEventListener("click", function (ev) {
  if (ev.target.hasAttribute && ev.target.hasAttribute("data-print")) { window.print(); }
});
