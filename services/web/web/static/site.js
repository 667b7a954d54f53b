// Enhancements only: every page works without this file, but for passkeys (a browser API).
// Its words come from the page, in the reader's language: data attributes and <template>s the
// server wrote, "{name}" standing for a value filled in here (the English below is a fallback).
(function () {
  "use strict";
  // The page's language (<html lang>): numbers, plurals and dates written here follow it.
  var lang = document.documentElement.lang || undefined;
  var fill = function (words, values) {
    return words.replace(/\{(\w+)\}/g, function (all, name) { return name in values ? values[name] : all; });
  };
  var number = function (n, digits) {
    try {
      return new Intl.NumberFormat(lang, digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n);
    } catch (ex) { return digits === undefined ? String(n) : n.toFixed(digits); }
  };
  // Submit page: debounce the title and show similar posts, so people vote instead of duplicating.
  var form = document.querySelector("form[data-search-url]");
  if (form) {
    var title = form.querySelector("input[name=title]");
    var box = document.getElementById("similar");
    var list = box.querySelector("ul");
    var timer = null;
    var latest = 0;
    // "{count} votes" in each plural form of the page's language, by CLDR category (new.html).
    var voteWords = {};
    var wordsTemplate = document.getElementById("similar-votes");
    if (wordsTemplate) {
      wordsTemplate.content.querySelectorAll("[data-plural]").forEach(function (span) { voteWords[span.dataset.plural] = span.textContent; });
    }
    var votesOf = function (n) {
      var category = "other";
      try { category = new Intl.PluralRules(lang).select(n); } catch (ex) { category = n === 1 ? "one" : "other"; }
      var words = voteWords[category] || voteWords.other || (n === 1 ? "{count} vote" : "{count} votes");
      return fill(words, { count: number(n) });
    };
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
        votes.textContent = " (" + votesOf(post.voteCount) + ")";
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
  // A slug field (data-slug-of="<the name field's id>") follows the name, as the site makes a
  // slug from the name when it is left empty, until the slug is typed in.
  document.querySelectorAll("input[data-slug-of]").forEach(function (slugField) {
    var nameField = document.getElementById(slugField.dataset.slugOf);
    if (!nameField) return;
    var typed = slugField.value !== "";
    var slugOf = function (name) {
      return name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
        .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 48).replace(/-+$/, "");
    };
    slugField.addEventListener("input", function () { typed = slugField.value !== ""; });
    nameField.addEventListener("input", function () { if (!typed) slugField.value = slugOf(nameField.value); });
  });
  // A secret shown once (a new API key, a webhook's signing secret): a Copy button beside it.
  // Without JavaScript the button stays hidden and the secret is selectable text.
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var secret = document.getElementById(button.dataset.copy);
    var said = button.parentNode.querySelector("[data-copied]");
    if (!secret || !navigator.clipboard) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(secret.textContent.trim()).then(
        function () { if (said) said.textContent = said.dataset.saidCopied || "Copied."; },
        function () { if (said) said.textContent = said.dataset.saidFailed || "Could not copy: select the text and copy it."; });
    });
  });
  // Filters: apply on change.
  document.querySelectorAll("form.filters select").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  // Passkeys (WebAuthn): the site's routes proxy the people service's options and checks; the
  // browser's authenticator does the rest. The API speaks JSON with base64url for bytes.
  var fromB64 = function (text) {
    var s = text.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes.buffer;
  };
  var toB64 = function (buffer) {
    var bytes = new Uint8Array(buffer);
    var s = "";
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  var credentialJSON = function (cred) {
    var r = cred.response;
    var response = { clientDataJSON: toB64(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = toB64(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = toB64(r.authenticatorData);
      response.signature = toB64(r.signature);
      response.userHandle = r.userHandle ? toB64(r.userHandle) : null;
    }
    return {
      id: cred.id, rawId: toB64(cred.rawId), type: cred.type, response: response,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      authenticatorAttachment: cred.authenticatorAttachment || undefined
    };
  };
  var postForm = function (url, fields, said) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams(fields)
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (body) {
        if (!r.ok) throw new Error(body.error || fill((said && said.refused) || "the server refused ({status}); reload the page and try again", { status: r.status }));
        return body;
      });
    });
  };
  // A passkey form's words are on its error element: data-unsupported, data-failed ({reason}),
  // data-refused ({status}).
  var ceremony = function (form, run) {
    var error = form.querySelector("[data-passkey-error]");
    var said = error.dataset;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      error.hidden = true;
      if (!window.PublicKeyCredential) {
        error.textContent = said.unsupported || "This browser does not support passkeys.";
        error.hidden = false;
        return;
      }
      var fields = { csrf: form.elements.csrf.value };
      postForm(form.dataset.optionsUrl, fields, said)
        .then(function (options) { return run(options.publicKey).then(function (cred) { return [options, cred]; }); })
        .then(function (done) {
          fields.challengeId = done[0].challengeId;
          fields.credential = JSON.stringify(credentialJSON(done[1]));
          if (form.elements.next) fields.next = form.elements.next.value;
          if (form.elements["name"]) fields.name = form.elements["name"].value;
          return postForm(form.action, fields, said);
        })
        .then(function (body) { window.location.assign(body.location); })
        .catch(function (ex) {
          error.textContent = fill(said.failed || "The passkey did not work: {reason}", { reason: ex && ex.message ? ex.message : ex });
          error.hidden = false;
        });
    });
  };
  document.querySelectorAll("form[data-passkey-sign-in]").forEach(function (form) {
    ceremony(form, function (publicKey) {
      publicKey.challenge = fromB64(publicKey.challenge);
      (publicKey.allowCredentials || []).forEach(function (c) { c.id = fromB64(c.id); });
      return navigator.credentials.get({ publicKey: publicKey });
    });
  });
  document.querySelectorAll("form[data-passkey-register]").forEach(function (form) {
    ceremony(form, function (publicKey) {
      publicKey.challenge = fromB64(publicKey.challenge);
      publicKey.user.id = fromB64(publicKey.user.id);
      (publicKey.excludeCredentials || []).forEach(function (c) { c.id = fromB64(c.id); });
      return navigator.credentials.create({ publicKey: publicKey });
    });
  });
  // Settings: the primary colour previewed as it is chosen, with its contrast note (the page
  // says the same when it is saved): white text on it below WCAG's 4.5:1 is hard to read. The
  // note's words are its data-warning and data-readable ({color}, {ratio}, {minimum}).
  document.querySelectorAll("input[data-color-preview]").forEach(function (input) {
    var preview = document.getElementById(input.dataset.colorPreview);
    var note = document.querySelector("[data-contrast-note]");
    var min = parseFloat(input.dataset.minContrast) || 4.5;
    var ratio = function (hex) {
      var c = [1, 3, 5].map(function (i) {
        var v = parseInt(hex.substr(i, 2), 16) / 255;
        return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
      });
      return 1.05 / (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] + 0.05);
    };
    var update = function () {
      if (!/^#[0-9a-fA-F]{6}$/.test(input.value)) return;
      if (preview) preview.style.setProperty("--primary", input.value);
      if (!note) return;
      var r = ratio(input.value);
      note.className = r < min ? "contrast-warning" : "hint";
      var values = { color: input.value, ratio: number(r, 1), minimum: number(min) };
      note.textContent = r < min
        ? fill(note.dataset.warning || "White text on {color} has a contrast of {ratio}:1, below the {minimum}:1 that WCAG " +
          "asks for text: buttons in this colour will be hard to read. Choose a darker colour.", values)
        : fill(note.dataset.readable || "White text on this colour is easy to read ({ratio}:1).", values);
    };
    input.addEventListener("input", update);
    update();  // the colour saved, whatever theme.css a browser still holds
  });
  // A file past what the platform takes is refused before it is sent (the gateway would answer
  // its own 413 instead of the page); the words are the input's data-too-large ({size}, {max}).
  document.querySelectorAll("input[type=file][data-max-bytes]").forEach(function (input) {
    input.addEventListener("change", function () {
      var max = parseInt(input.dataset.maxBytes, 10), file = input.files && input.files[0];
      input.setCustomValidity(file && file.size > max
        ? fill(input.dataset.tooLarge || "This file is {size} KiB: the largest logo is {max} KiB.",
               { size: number(Math.ceil(file.size / 1024)), max: number(Math.floor(max / 1024)) })
        : "");
      input.reportValidity();
    });
  });
  // Admin, triage: the add-field form shows the inputs of the chosen type only (without this
  // file it shows them all, each labelled with the types it is for).
  var fieldType = document.getElementById("field-type");
  if (fieldType) {
    var showTypeInputs = function () {
      document.querySelectorAll("[data-for-types]").forEach(function (el) {
        el.hidden = el.dataset.forTypes.split(" ").indexOf(fieldType.value) < 0;
      });
    };
    fieldType.addEventListener("change", showTypeInputs);
    showTypeInputs();
  }
  // Admin: a form that undoes something (data-confirm) asks first; without this file it sends at once.
  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (event) {
      if (!window.confirm(f.dataset.confirm)) event.preventDefault();
    });
  });
  // The visitor's theme (the footer's form, web.preferences): switched in place, the same cookie
  // the form's answer would set, so the next page is drawn in it by the server from the start.
  document.querySelectorAll("form[data-theme-choice]").forEach(function (themeForm) {
    var buttons = themeForm.querySelectorAll("button[name=theme]");
    buttons.forEach(function (button) {
      button.addEventListener("click", function (event) {
        event.preventDefault();
        var value = button.value;
        document.cookie = "fb_theme=" + value + "; Path=/; Max-Age=31536000; SameSite=Lax" +
          (location.protocol === "https:" ? "; Secure" : "");
        document.documentElement.setAttribute("data-theme", value);
        buttons.forEach(function (b) { b.setAttribute("aria-pressed", b === button ? "true" : "false"); });
      });
    });
  });
  // Dates in the visitor's time zone: the server writes UTC in the page's language (a <time>'s
  // title "Nov 27, 2026, 2:25 PM UTC", a day, a clock time "14:25 UTC"); here they become the
  // browser's zone, still in the page's language. A <time> says what it shows (data-local="day"
  // or "clock"; else the older forms: the ISO day, or "14:25" followed by " UTC"). A bare day
  // (datetime without a time) is the same everywhere and stays.
  if (window.Intl && Intl.DateTimeFormat) {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    var formatter = function (options) {
      try { return new Intl.DateTimeFormat(lang, options); } catch (ex) { return new Intl.DateTimeFormat(undefined, options); }
    };
    var exactLocal = formatter({ dateStyle: "medium", timeStyle: "short" });
    var dayLocal = formatter({ dateStyle: "medium" });
    var clockLocal = formatter({ hour: "2-digit", minute: "2-digit" });
    document.querySelectorAll("time[datetime]").forEach(function (time) {
      var iso = time.getAttribute("datetime");
      if (iso.length <= 10 || iso.indexOf("T") < 0) return;
      var at = new Date(iso.indexOf("Z") < 0 && !/[+-]\d\d:?\d\d$/.test(iso) ? iso + "Z" : iso);
      if (isNaN(at.getTime())) return;
      time.title = exactLocal.format(at) + (zone ? " (" + zone + ")" : "");
      var text = time.textContent.trim();
      if (time.dataset.local === "day" || text === iso.slice(0, 10)) {
        time.textContent = dayLocal.format(at);
      } else if (time.dataset.local === "clock") {
        time.textContent = clockLocal.format(at);
      } else if (text === iso.slice(11, 16)) {
        time.textContent = clockLocal.format(at);
        var after = time.nextSibling;
        if (after && after.nodeType === 3 && after.nodeValue.indexOf(" UTC") === 0) after.nodeValue = after.nodeValue.slice(4);
      }
    });
  }
})();
