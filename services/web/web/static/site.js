// Enhancements only: every page works without this file.
(function () {
  "use strict";
  // Submit page: debounce the title and show similar posts, so people vote instead of duplicating.
  var form = document.querySelector("form[data-search-url]");
  if (form) {
    var title = form.querySelector("input[name=title]");
    var box = document.getElementById("similar");
    var list = box.querySelector("ul");
    var timer = null;
    var latest = 0;
    var show = function (items) {
      list.textContent = "";
      items.forEach(function (post) {
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.href = form.dataset.base + "/p/" + encodeURIComponent(post.id);
        a.textContent = post.title;
        li.appendChild(a);
        var votes = document.createElement("span");
        votes.className = "votes";
        votes.textContent = " (" + post.voteCount + " votes)";
        li.appendChild(votes);
        list.appendChild(li);
      });
      box.hidden = items.length === 0;
    };
    var search = function () {
      var q = title.value.trim();
      var mine = ++latest;
      if (q.length < 3) { show([]); return; }
      var board = form.querySelector("select[name=board]");
      var url = form.dataset.searchUrl + "?limit=5&q=" + encodeURIComponent(q) + (board && board.value ? "&board=" + encodeURIComponent(board.value) : "");
      fetch(url, { headers: { Accept: "application/json" }, credentials: "omit" })
        .then(function (r) { return r.ok ? r.json() : { items: [] }; })
        .then(function (body) { if (mine === latest) show(body.items || []); })
        .catch(function () {});
    };
    title.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(search, 300);
    });
  }
  // Filters: apply on change.
  document.querySelectorAll("form.filters select").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
})();
