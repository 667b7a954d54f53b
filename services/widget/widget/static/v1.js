/* The feedback widget (docs/widget.md). One script tag on a team's own pages:
 *   <script src="{platform}/widget/v1.js" data-workspace="{slug}" async></script>
 * Everything lives in an open shadow root (the page's styles do not reach in, ours do not leak
 * out), styled by a constructed stylesheet (a strict CSP's style-src does not govern it), built
 * with DOM calls (no markup parsed from strings, no code either); the only global is
 * FeedbackWidget. Requests go to the platform with the person's token in a header, never a
 * cookie (credentials: 'omit'). Every word it shows is said through _() and ngettext(), in the
 * language the platform chose for the panel (its config answers the words: docs/widget.md,
 * "Languages"). */
(() => {
  'use strict';
  const previous = window.FeedbackWidget;
  if (previous && previous.version) return; // included twice: the first one stays
  const script = document.currentScript;
  if (!script || !script.dataset.workspace) return;
  const data = script.dataset;
  const slug = data.workspace;
  const base = new URL(script.src, location.href).origin;
  const handlers = {};
  const TABS = ['submit', 'mine', 'posts', 'changelog'];
  let token = null; // the person's SSO token, from identify(); null: anonymous
  let refusedToken = null; // the token a 401 was reported for (tokenExpired fires once for each)
  let config = null;
  let isOpen = false;
  let tab = 'submit';
  let sort = 'top';
  let entries = null; // the changelog, once read
  let typing = 0;

  // ---- words ---------------------------------------------------------------------------------
  // The panel's language and its words (config's locale, dir and messages); until the platform
  // answers, a message is its own English.
  let locale = 'en';
  let dir = 'ltr';
  let words = {};
  const fill = (text, values) => text.replace(/%\((\w+)\)s|%%/g, (all, name) => {
    if (all === '%%') return '%';
    return values && Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : all;
  });
  const _ = (message, values) => fill(typeof words[message] === 'string' ? words[message] : message, values);
  const number = (n) => { try { return new Intl.NumberFormat(locale).format(n); } catch (e) { return String(n); } };
  // A plural message's forms come by CLDR category (one, few, many, other...): the browser's
  // plural rules of the panel's language pick one; %(num)s is the count as the language writes it.
  function ngettext(singular, plural, n, values) {
    const forms = words[singular];
    let text = n === 1 ? singular : plural;
    if (forms && typeof forms === 'object') {
      let category = 'other';
      try { category = new Intl.PluralRules(locale).select(n); } catch (e) { /* no such rules here: the general form */ }
      text = forms[category] || forms.other || text;
    }
    return fill(text, Object.assign({ num: number(n) }, values));
  }
  const tabTitle = (name) => ({ submit: _('Submit'), mine: _('My requests'), posts: _('Posts'), changelog: _('Changelog') })[name];

  const storage = (() => { try { return window.localStorage; } catch (e) { return null; } })();
  const stored = (key, value) => {
    try {
      if (value === undefined) return storage && storage.getItem(key);
      if (storage) storage.setItem(key, value);
    } catch (e) { /* storage refused (private mode, full): the widget works without it */ }
    return null;
  };
  // An anonymous visitor's votes are theirs by a random id this browser keeps (the API's
  // X-Feedback-Anonymous-Id), not by their address.
  const anonymousId = (() => {
    const key = 'feedback-widget:anonymous-id';
    let id = stored(key);
    if (!id || !/^[A-Za-z0-9._-]{16,128}$/.test(id)) {
      const bytes = new Uint8Array(18);
      crypto.getRandomValues(bytes);
      id = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
      stored(key, id);
    }
    return id;
  })();

  // Who the changelog's "last look" belongs to: the token's user (read, not trusted: it only
  // names a key of this browser's storage), else the anonymous visitor.
  const viewer = () => {
    if (!token) return 'anonymous';
    try {
      const claims = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
      return 'user:' + String(claims.id || claims.email || 'unknown'); // the user as the API names them
    } catch (e) { return 'unknown'; }
  };
  const seenKey = () => `feedback-widget:${slug}:changelog-seen:${viewer()}`;

  const emit = (event, detail) => {
    for (const handler of handlers[event] || []) {
      try { handler(detail); } catch (e) { setTimeout(() => { throw e; }); }
    }
  };

  // ``query``: the call's own parameters; every call but the first names the panel's language
  // (the statuses' names come in it).
  async function call(method, path, body, query) {
    const headers = token ? { 'X-Feedback-User': token } : { 'X-Feedback-Anonymous-Id': anonymousId };
    if (body) headers['Content-Type'] = 'application/json';
    const url = new URL(`${base}/widget/v1/${encodeURIComponent(slug)}${path}`);
    for (const [name, value] of Object.entries(query || (config ? { lang: locale } : {}))) if (value) url.searchParams.set(name, value);
    let answer;
    try {
      answer = await fetch(url, {
        method, headers, body: body ? JSON.stringify(body) : undefined, credentials: 'omit', mode: 'cors', cache: 'no-store',
      });
    } catch (e) {
      throw Object.assign(new Error(_('The feedback service cannot be reached from this page.')), { status: 0 });
    }
    let json = null;
    try { json = await answer.json(); } catch (e) { /* no body */ }
    if (!answer.ok) {
      if (answer.status === 401 && token && refusedToken !== token) {
        refusedToken = token;
        // For the page's code: the platform's own words (English, with a stable code).
        emit('tokenExpired', { message: (json && json.error) || `${answer.status}` });
      }
      throw Object.assign(new Error(refusal(answer.status, json)), { status: answer.status });
    }
    return json;
  }

  // What the panel says of a refusal, in its language, by the refusal's code (the platform's
  // message is English, for developers: docs/languages.md).
  function refusal(status, json) {
    const code = (json && json.code) || '';
    // A 401 says who the caller is not: a person's token refused, or an anonymous visitor where
    // the workspace takes requests (anonSubmit) or votes (anonVote) from signed-in users only.
    if (status === 401) {
      return token ? _('Your session has ended: reload the page or sign in again.') : _('Sign in first: only signed-in users can do this here.');
    }
    const fields = ((json && json.errors) || []).map((e) => e.field);
    if (code === 'invalid_request' && fields.includes('title')) return _('Give your request a title of at most 200 characters.');
    if (code === 'rate_limited') return _('That was a lot at once: wait a minute, then try again.');
    if (code === 'not_found') return _('This is no longer on the board: reload the page to see what is.');
    if (code === 'forbidden') return _('This workspace does not allow that here.');
    return _('The feedback service could not do that (%(code)s): try again in a moment.', { code: code || status });
  }

  // ---- the DOM ------------------------------------------------------------------------------
  function h(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
      else if (name === 'text') element.textContent = value;
      else if (value === true) element.setAttribute(name, '');
      else if (value !== false && value != null) element.setAttribute(name, value);
    }
    for (const child of children.flat()) if (child != null && child !== false) element.append(child);
    return element;
  }

  const CSS = `
:host { all: initial; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fw-text);
  --fw-primary: #4f46e5; --fw-on-primary: #fff; --fw-text: #1f2328; --fw-muted: #57606a; --fw-bg: #fff; --fw-soft: #f3f4f6;
  --fw-line: #d0d7de; --fw-bad: #b42318; }
@media (prefers-color-scheme: dark) { :host { --fw-text: #e6edf3; --fw-muted: #a8b3bf; --fw-bg: #1c1f24; --fw-soft: #2a2f36;
  --fw-line: #444c56; --fw-bad: #ff9b8f; } }
:host(:not([data-inline])) { position: fixed; z-index: 2147483000; bottom: 20px; right: 20px; }
:host([data-position="bottom-left"]:not([data-inline])) { right: auto; left: 20px; }
:host([data-inline]) { display: block; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
button, input, select, textarea { font: inherit; color: inherit; }
:focus-visible { outline: 2px solid var(--fw-primary); outline-offset: 2px; }
.launcher { display: inline-flex; align-items: center; gap: 8px; border: 0; border-radius: 999px; padding: 10px 18px;
  background: var(--fw-primary); color: var(--fw-on-primary); font-weight: 600; cursor: pointer; box-shadow: 0 4px 14px rgb(0 0 0 / .25); }
.badge { min-width: 20px; padding: 0 6px; border-radius: 999px; background: #b42318; color: #fff; font-size: 12px; line-height: 20px; text-align: center; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.panel { display: flex; flex-direction: column; background: var(--fw-bg); color: var(--fw-text); border: 1px solid var(--fw-line);
  border-radius: 14px; overflow: hidden; }
:host(:not([data-inline])) .panel { position: absolute; bottom: 56px; right: 0; width: min(380px, calc(100vw - 24px));
  height: min(600px, calc(100vh - 100px)); box-shadow: 0 12px 40px rgb(0 0 0 / .3); }
:host([data-position="bottom-left"]:not([data-inline])) .panel { right: auto; left: 0; }
:host([data-inline]) .panel { min-height: 420px; }
header { display: flex; align-items: center; justify-content: space-between; gap: 8px; padding: 12px 14px 6px; }
h2 { margin: 0; font-size: 17px; }
h3 { margin: 0 0 4px; font-size: 15px; }
form h3 { margin: 12px 0 0; font-size: 14px; }
.close { border: 0; background: none; cursor: pointer; font-size: 22px; line-height: 1; padding: 4px 8px; border-radius: 6px; }
.close:hover, .ghost:hover { background: var(--fw-soft); }
[role="tablist"] { display: flex; flex-wrap: wrap; column-gap: 2px; padding: 0 8px; border-bottom: 1px solid var(--fw-line); }
[role="tab"] { border: 0; background: none; padding: 8px 5px; font-size: 14px; cursor: pointer; border-bottom: 3px solid transparent; color: var(--fw-muted); white-space: nowrap; }
[role="tab"][aria-selected="true"] { color: var(--fw-text); border-bottom-color: var(--fw-primary); font-weight: 600; }
[role="tabpanel"] { flex: 1; overflow-y: auto; padding: 12px 14px 16px; }
label { display: block; font-weight: 600; margin: 10px 0 4px; }
input, select, textarea { width: 100%; padding: 8px 10px; border: 1px solid var(--fw-line); border-radius: 8px; background: var(--fw-bg); }
textarea { resize: vertical; min-height: 80px; }
.primary { margin-top: 12px; border: 0; border-radius: 8px; padding: 9px 16px; background: var(--fw-primary); color: var(--fw-on-primary); font-weight: 600; cursor: pointer; }
.ghost { border: 1px solid var(--fw-line); border-radius: 8px; background: none; padding: 5px 12px; cursor: pointer; }
.ghost[aria-pressed="true"] { background: var(--fw-soft); font-weight: 600; }
ul { list-style: none; margin: 8px 0 0; padding: 0; }
li { display: flex; gap: 10px; align-items: flex-start; padding: 8px 0; border-top: 1px solid var(--fw-line); }
li:first-child { border-top: 0; }
.vote { flex: none; min-width: 46px; border: 1px solid var(--fw-line); border-radius: 8px; background: var(--fw-bg); padding: 4px 6px; cursor: pointer; font-weight: 600; }
.vote::before { content: "▲ "; content: "▲ " / ""; }
.vote[aria-pressed="true"] { background: var(--fw-primary); border-color: var(--fw-primary); color: var(--fw-on-primary); }
a { color: var(--fw-text); text-decoration: underline; text-underline-offset: 2px; }
.meta, .empty { color: var(--fw-muted); font-size: 13px; margin: 2px 0 0; }
.msg { margin: 8px 0 0; min-height: 1em; }
.msg.bad { color: var(--fw-bad); }
.row { display: flex; gap: 6px; }
article { padding: 10px 0; border-top: 1px solid var(--fw-line); }
article:first-child { border-top: 0; padding-top: 0; }
article p { margin: 4px 0 0; white-space: pre-line; }
`;

  let host = null;
  let root = null;
  let theme = null;
  let launcher = null;
  let badge = null;
  let badgeText = null;
  let panel = null;
  let tabPanel = null;
  let message = null;
  const tabButtons = {};
  const inline = Boolean(data.mount);

  // Built, or built again in another language (a person identified who chose one).
  function build() {
    host = host || (inline ? document.querySelector(data.mount) : h('div', { 'data-feedback-widget': '' }));
    if (!host) throw new Error(`FeedbackWidget: no element matches data-mount="${data.mount}"`);
    root = host.shadowRoot || host.attachShadow({ mode: 'open' });
    root.replaceChildren();
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    theme = new CSSStyleSheet();
    root.adoptedStyleSheets = [sheet, theme];
    if (inline) host.setAttribute('data-inline', '');
    else host.setAttribute('data-position', (data.position || config.position) === 'bottom-left' ? 'bottom-left' : 'bottom-right');
    const color = /^#[0-9a-f]{6}$/i.test(config.primaryColor) ? config.primaryColor : '#4f46e5';
    const on = config.onPrimary === '#000000' ? '#000000' : '#ffffff';
    theme.replaceSync(`:host { --fw-primary: ${color}; --fw-on-primary: ${on}; }`);
    const label = (data.label || config.label || _('Feedback')).slice(0, 40);

    const tablist = h('div', { role: 'tablist', 'aria-label': _('Sections'), onkeydown: tabKeys });
    for (const name of TABS) {
      tabButtons[name] = h('button', { type: 'button', role: 'tab', id: `fw-tab-${name}`, 'aria-controls': 'fw-tabpanel',
        'aria-selected': 'false', tabindex: '-1', onclick: () => show(name) }, tabTitle(name));
      tablist.append(tabButtons[name]);
    }
    tabPanel = h('div', { role: 'tabpanel', id: 'fw-tabpanel', tabindex: '0' });
    message = h('p', { class: 'msg', role: 'status' });
    const language = { lang: locale, dir };
    panel = h('div', inline
      ? { class: 'panel', role: 'region', 'aria-labelledby': 'fw-heading', ...language }
      : { class: 'panel', id: 'fw-panel', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'fw-heading', hidden: true,
        onkeydown: trapKeys, ...language },
    h('header', {},
      h('h2', { id: 'fw-heading', text: config.workspace.name || label }),
      inline ? null : h('button', { type: 'button', class: 'close', 'aria-label': _('Close'), onclick: () => close() }, '×')),
    tablist, tabPanel);
    if (!inline) {
      badge = h('span', { class: 'badge', 'aria-hidden': 'true', hidden: true });
      badgeText = h('span', { class: 'sr' });
      launcher = h('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'fw-panel',
        onclick: () => (isOpen ? close() : open()), ...language }, h('span', { text: label }), badge, badgeText);
      root.append(panel, launcher);
      if (!host.isConnected) document.body.append(host);
      updateBadge();
    } else {
      root.append(panel);
      show(tab);
    }
  }

  function tabKeys(event) {
    const at = TABS.indexOf(tab);
    // The tabs run from the right in a language written right to left: the arrows follow them.
    const next = dir === 'rtl' ? 'ArrowLeft' : 'ArrowRight';
    const previous = dir === 'rtl' ? 'ArrowRight' : 'ArrowLeft';
    const to = { [next]: at + 1, [previous]: at - 1, Home: 0, End: TABS.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    show(TABS[(to + TABS.length) % TABS.length]);
    tabButtons[tab].focus();
  }

  // The dialog keeps the focus while open (Tab and Shift+Tab cycle inside it); Escape closes it.
  function trapKeys(event) {
    if (event.key === 'Escape') { event.preventDefault(); close(); return; }
    if (event.key !== 'Tab') return;
    const focusable = [...panel.querySelectorAll('a[href], button:not([disabled]), input, select, textarea, [tabindex="0"]')]
      .filter((el) => el.getClientRects().length);
    if (!focusable.length) return;
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    const active = root.activeElement;
    if (event.shiftKey && (active === first || !panel.contains(active))) { event.preventDefault(); last.focus(); }
    else if (!event.shiftKey && (active === last || !panel.contains(active))) { event.preventDefault(); first.focus(); }
  }

  function say(text, bad) {
    message.textContent = text || '';
    message.className = bad ? 'msg bad' : 'msg';
  }

  function show(name) {
    tab = TABS.includes(name) ? name : 'submit';
    for (const [n, button] of Object.entries(tabButtons)) {
      button.setAttribute('aria-selected', String(n === tab));
      button.setAttribute('tabindex', n === tab ? '0' : '-1');
    }
    tabPanel.setAttribute('aria-labelledby', `fw-tab-${tab}`);
    tabPanel.replaceChildren();
    say('');
    ({ submit: renderSubmit, mine: renderMine, posts: renderPosts, changelog: renderChangelog })[tab]();
  }

  // ---- posts --------------------------------------------------------------------------------
  function postRow(post) {
    // Its name is the count it shows read with what it does, one sentence for the translators:
    // "Vote for <title>, 3 votes" (the arrow is the stylesheet's, with no text for screen readers).
    const name = ngettext('Vote for %(title)s, %(num)s vote', 'Vote for %(title)s, %(num)s votes', post.voteCount, { title: post.title });
    const button = h('button', { type: 'button', class: 'vote', 'aria-pressed': String(post.voted), 'aria-label': name },
      number(post.voteCount));
    const row = h('li', {}, button, h('div', {},
      h('a', { href: post.url, target: '_blank', rel: 'noopener', text: post.title }),
      post.status ? h('p', { class: 'meta', text: post.status.name }) : null));
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const voted = button.getAttribute('aria-pressed') !== 'true';
        const updated = await call(voted ? 'POST' : 'DELETE', `/posts/${encodeURIComponent(post.id)}/vote`);
        row.replaceWith(postRow(updated));
        emit('voted', { post: updated, voted: updated.voted });
      } catch (e) {
        button.disabled = false;
        say(e.message, true);
      }
    });
    return row;
  }

  function list(items, empty) {
    return items.length ? h('ul', {}, items.map(postRow)) : h('p', { class: 'empty', text: empty });
  }

  async function load(into, work) {
    into.replaceChildren(h('p', { class: 'empty', text: _('Loading…') }));
    try { into.replaceChildren(await work()); } catch (e) { into.replaceChildren(); say(e.message, true); }
  }

  function renderSubmit() {
    const similar = h('div', { 'aria-live': 'polite' });
    const title = h('input', { id: 'fw-title', name: 'title', required: true, maxlength: '200', autocomplete: 'off' });
    const details = h('textarea', { id: 'fw-details', name: 'details', rows: '4' });
    const board = h('select', { id: 'fw-board', name: 'board' },
      config.boards.map((b) => h('option', { value: b.id, text: b.name })));
    title.addEventListener('input', () => {
      clearTimeout(typing);
      const typed = title.value.trim();
      typing = setTimeout(() => {
        if (typed.length < 3) { similar.replaceChildren(); return; }
        call('GET', '/similar', null, { q: typed, lang: locale }).then(({ items }) => {
          similar.replaceChildren(...(items.length ? [h('h3', { text: _('Similar requests: vote instead?') }), list(items, '')] : []));
        }).catch(() => similar.replaceChildren());
      }, 300);
    });
    const form = h('form', {},
      h('label', { for: 'fw-title', text: _('Title') }), title,
      similar,
      h('label', { for: 'fw-details', text: _('Details') }), details,
      config.boards.length > 1 ? [h('label', { for: 'fw-board', text: _('Board') }), board] : null,
      h('button', { type: 'submit', class: 'primary', text: _('Send') }),
      message);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (!config.boards.length) { say(_('This workspace has no board to send to yet.'), true); return; }
      const send = form.querySelector('button[type="submit"]');
      send.disabled = true;
      try {
        const post = await call('POST', '/posts', { title: title.value, details: details.value, boardId: board.value || config.boards[0].id });
        form.reset();
        similar.replaceChildren();
        say(_('Thank you: your request is on the board.'));
        message.append(' ', h('a', { href: post.url, target: '_blank', rel: 'noopener', text: _('See it') }));
        emit('submitted', { post });
      } catch (e) {
        say(e.message, true);
      } finally {
        send.disabled = false;
      }
    });
    tabPanel.append(form);
  }

  function renderMine() {
    const body = h('div');
    tabPanel.append(body, message);
    load(body, async () => list((await call('GET', '/mine')).items, token
      ? _('Nothing yet: the requests you send show here with their status.')
      : _('The requests you send from this browser show here with their status.')));
  }

  function renderPosts() {
    const body = h('div');
    const choice = (name, text) => h('button', { type: 'button', class: 'ghost', 'aria-pressed': String(sort === name), text,
      onclick: () => { sort = name; show('posts'); } });
    const board = h('p', { class: 'meta' }, h('a', { href: config.boardUrl, target: '_blank', rel: 'noopener', text: _('Every request, on the board') }));
    tabPanel.append(h('div', { class: 'row', role: 'group', 'aria-label': _('Order') }, choice('top', _('Top')), choice('newest', _('New'))),
      body, board, message);
    load(body, async () => list((await call('GET', '/posts', null, { sort, lang: locale })).items, _('No requests yet: be the first.')));
  }

  async function readChangelog() {
    const answer = await call('GET', '/changelog');
    entries = answer.items;
    // An identified person's last look as the platform keeps it (their other devices' too).
    if (answer.seenAt && answer.seenAt > (stored(seenKey()) || '')) stored(seenKey(), answer.seenAt);
    return entries;
  }

  function renderChangelog() {
    const body = h('div');
    tabPanel.append(body, message);
    load(body, async () => {
      const items = await readChangelog();
      if (items.length) {
        stored(seenKey(), items[0].publishedAt); // read now: nothing is unread
        if (token) call('POST', '/changelog/seen').catch(() => {}); // ... on their other devices too
      }
      updateBadge();
      if (!items.length) return h('p', { class: 'empty', text: _('Nothing announced yet.') });
      return h('div', {}, items.map((e) => h('article', {},
        h('h3', { text: e.title }),
        h('p', { class: 'meta' }, h('time', { datetime: e.publishedAt, text: day(e.publishedAt) })),
        h('p', { text: e.content }))));
    });
  }

  const day = (iso) => {
    const options = { year: 'numeric', month: 'short', day: 'numeric' };
    try { return new Date(iso).toLocaleDateString(locale, options); } catch (e) { return new Date(iso).toLocaleDateString(undefined, options); }
  };

  function updateBadge() {
    if (!badge || !entries) return;
    const seen = stored(seenKey()) || '';
    const unread = entries.filter((e) => e.publishedAt > seen).length;
    badge.hidden = unread === 0;
    badge.textContent = unread > 9 ? `${number(9)}+` : number(unread);
    badgeText.textContent = unread ? ' ' + ngettext('(%(num)s unread update)', '(%(num)s unread updates)', unread) : '';
  }

  // ---- opening and closing ----------------------------------------------------------------
  function open(which) {
    if (!config) { pending = which || 'submit'; return; }
    if (!inline) {
      isOpen = true;
      panel.hidden = false;
      launcher.setAttribute('aria-expanded', 'true');
    }
    show(which || tab);
    tabButtons[tab].focus();
  }

  function close() {
    pending = null;
    if (inline || !isOpen) return;
    isOpen = false;
    panel.hidden = true;
    launcher.setAttribute('aria-expanded', 'false');
    launcher.focus();
  }

  let pending = null; // open() asked for before the configuration arrived
  const api = {
    version: 1,
    identify(newToken) {
      token = typeof newToken === 'string' && newToken ? newToken : null;
      if (!config) return;
      entries = null;
      if (!inline) readChangelog().then(updateBadge, () => {});
      if (inline || isOpen) show(tab);
      // The person may have chosen a language of their own (unless the page names one).
      if (!data.lang) configure().then(() => {}, () => {});
    },
    open: (which) => open(which),
    close: () => close(),
    on(event, handler) {
      if (typeof handler !== 'function') return () => {};
      (handlers[event] = handlers[event] || []).push(handler);
      return () => { handlers[event] = handlers[event].filter((h2) => h2 !== handler); };
    },
  };
  window.FeedbackWidget = api;
  // Calls a page queued before the script arrived (FeedbackWidget = {q: [['identify', token]]}).
  if (previous && Array.isArray(previous.q)) {
    for (const [method, ...args] of previous.q) if (typeof api[method] === 'function' && method !== 'version') api[method](...args);
  }

  // The panel's settings and its language: the page's data-lang, else the identified person's
  // own choice, else the browser's languages, among the workspace's (the platform chooses). The
  // panel is built again when its language changed since.
  async function configure() {
    const languages = (navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || '']).join(',');
    const answer = await call('GET', '/config', null, { lang: data.lang, languages });
    const changed = !config || answer.locale !== locale;
    config = answer;
    locale = answer.locale || 'en';
    dir = answer.dir === 'rtl' ? 'rtl' : 'ltr';
    words = answer.messages || {};
    if (!changed) return;
    const wasOpen = isOpen;
    build();
    if (wasOpen) { isOpen = false; open(tab); }
  }

  // Nothing is added to the page until the workspace answers: a page whose origin it does not
  // allow gets no launcher at all.
  configure().then(() => {
    if (!inline) readChangelog().then(updateBadge, () => {}); // the launcher's unread count
    if (pending) { const which = pending; pending = null; open(which); }
  }, (e) => {
    if (typeof console !== 'undefined') console.warn(`FeedbackWidget: ${e.message}`);
  });
})();
