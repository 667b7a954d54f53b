/* The feedback widget (docs/widget.md). One script tag on a team's own pages:
 *   <script src="{platform}/widget/v1.js" data-workspace="{slug}" async></script>
 * Everything lives in an open shadow root (the page's styles do not reach in, ours do not leak
 * out), styled by a constructed stylesheet (a strict CSP's style-src does not govern it), built
 * with DOM calls (no markup parsed from strings, no code either); the only global is
 * FeedbackWidget. Requests go to the platform with the person's token in a header, never a
 * cookie (credentials: 'omit'). */
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
  const TABS = [['submit', 'Submit'], ['mine', 'My requests'], ['posts', 'Posts'], ['changelog', 'Changelog']];
  let token = null; // the person's SSO token, from identify(); null: anonymous
  let refusedToken = null; // the token a 401 was reported for (tokenExpired fires once for each)
  let config = null;
  let isOpen = false;
  let tab = 'submit';
  let sort = 'top';
  let entries = null; // the changelog, once read
  let typing = 0;

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

  async function call(method, path, body) {
    const headers = token ? { 'X-Feedback-User': token } : { 'X-Feedback-Anonymous-Id': anonymousId };
    if (body) headers['Content-Type'] = 'application/json';
    let answer;
    try {
      answer = await fetch(`${base}/widget/v1/${encodeURIComponent(slug)}${path}`, {
        method, headers, body: body ? JSON.stringify(body) : undefined, credentials: 'omit', mode: 'cors', cache: 'no-store',
      });
    } catch (e) {
      throw Object.assign(new Error('The feedback service cannot be reached from this page.'), { status: 0 });
    }
    let json = null;
    try { json = await answer.json(); } catch (e) { /* no body */ }
    if (!answer.ok) {
      const message = (json && json.error) || `The feedback service answered ${answer.status}.`;
      if (answer.status === 401 && token && refusedToken !== token) {
        refusedToken = token;
        emit('tokenExpired', { message });
      }
      // A 401 says who the caller is not: a person's token refused, or an anonymous visitor where
      // the workspace takes requests (anonSubmit) or votes (anonVote) from signed-in users only.
      const said = answer.status !== 401 ? message
        : token ? 'Your session has ended: reload the page or sign in again.' : 'Sign in first: only signed-in users can do this here.';
      throw Object.assign(new Error(said), { status: answer.status });
    }
    return json;
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
[role="tablist"] { display: flex; gap: 2px; padding: 0 8px; border-bottom: 1px solid var(--fw-line); overflow-x: auto; }
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

  function build() {
    host = inline ? document.querySelector(data.mount) : h('div', { 'data-feedback-widget': '' });
    if (!host) throw new Error(`FeedbackWidget: no element matches data-mount="${data.mount}"`);
    root = host.shadowRoot || host.attachShadow({ mode: 'open' });
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    theme = new CSSStyleSheet();
    root.adoptedStyleSheets = [sheet, theme];
    if (inline) host.setAttribute('data-inline', '');
    else host.setAttribute('data-position', (data.position || config.position) === 'bottom-left' ? 'bottom-left' : 'bottom-right');
    const color = /^#[0-9a-f]{6}$/i.test(config.primaryColor) ? config.primaryColor : '#4f46e5';
    const on = config.onPrimary === '#000000' ? '#000000' : '#ffffff';
    theme.replaceSync(`:host { --fw-primary: ${color}; --fw-on-primary: ${on}; }`);
    const label = (data.label || config.label || 'Feedback').slice(0, 40);

    const tablist = h('div', { role: 'tablist', 'aria-label': 'Sections', onkeydown: tabKeys });
    for (const [name, title] of TABS) {
      tabButtons[name] = h('button', { type: 'button', role: 'tab', id: `fw-tab-${name}`, 'aria-controls': 'fw-tabpanel',
        'aria-selected': 'false', tabindex: '-1', onclick: () => show(name) }, title);
      tablist.append(tabButtons[name]);
    }
    tabPanel = h('div', { role: 'tabpanel', id: 'fw-tabpanel', tabindex: '0' });
    message = h('p', { class: 'msg', role: 'status' });
    panel = h('div', inline
      ? { class: 'panel', role: 'region', 'aria-labelledby': 'fw-heading' }
      : { class: 'panel', id: 'fw-panel', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'fw-heading', hidden: true, onkeydown: trapKeys },
    h('header', {},
      h('h2', { id: 'fw-heading', text: config.workspace.name || label }),
      inline ? null : h('button', { type: 'button', class: 'close', 'aria-label': 'Close', onclick: () => close() }, '×')),
    tablist, tabPanel);
    if (!inline) {
      badge = h('span', { class: 'badge', 'aria-hidden': 'true', hidden: true });
      badgeText = h('span', { class: 'sr' });
      launcher = h('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'fw-panel',
        onclick: () => (isOpen ? close() : open()) }, h('span', { text: label }), badge, badgeText);
      root.append(panel, launcher);
      document.body.append(host);
    } else {
      root.append(panel);
      show(tab);
    }
  }

  function tabKeys(event) {
    const names = TABS.map(([name]) => name);
    const at = names.indexOf(tab);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: names.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    show(names[(to + names.length) % names.length]);
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
    tab = TABS.some(([n]) => n === name) ? name : 'submit';
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
    // Its name is its content, the count it shows read with what it does: "Vote for <title>, 3 votes"
    // (the arrow is the stylesheet's, with no text for screen readers).
    const button = h('button', { type: 'button', class: 'vote', 'aria-pressed': String(post.voted) },
      h('span', { class: 'sr', text: `Vote for ${post.title}, ` }), String(post.voteCount),
      h('span', { class: 'sr', text: post.voteCount === 1 ? ' vote' : ' votes' }));
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
    into.replaceChildren(h('p', { class: 'empty', text: 'Loading…' }));
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
      const words = title.value.trim();
      typing = setTimeout(() => {
        if (words.length < 3) { similar.replaceChildren(); return; }
        call('GET', `/similar?q=${encodeURIComponent(words)}`).then(({ items }) => {
          similar.replaceChildren(...(items.length ? [h('h3', { text: 'Similar requests: vote instead?' }), list(items, '')] : []));
        }).catch(() => similar.replaceChildren());
      }, 300);
    });
    const form = h('form', {},
      h('label', { for: 'fw-title', text: 'Title' }), title,
      similar,
      h('label', { for: 'fw-details', text: 'Details' }), details,
      config.boards.length > 1 ? [h('label', { for: 'fw-board', text: 'Board' }), board] : null,
      h('button', { type: 'submit', class: 'primary', text: 'Send' }),
      message);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (!config.boards.length) { say('This workspace has no board to send to yet.', true); return; }
      const send = form.querySelector('button[type="submit"]');
      send.disabled = true;
      try {
        const post = await call('POST', '/posts', { title: title.value, details: details.value, boardId: board.value || config.boards[0].id });
        form.reset();
        similar.replaceChildren();
        say('Thank you: your request is on the board.');
        message.append(' ', h('a', { href: post.url, target: '_blank', rel: 'noopener', text: 'See it' }));
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
      ? 'Nothing yet: the requests you send show here with their status.'
      : 'The requests you send from this browser show here with their status.'));
  }

  function renderPosts() {
    const body = h('div');
    const choice = (name, text) => h('button', { type: 'button', class: 'ghost', 'aria-pressed': String(sort === name), text,
      onclick: () => { sort = name; show('posts'); } });
    const board = h('p', { class: 'meta' }, h('a', { href: config.boardUrl, target: '_blank', rel: 'noopener', text: 'Every request, on the board' }));
    tabPanel.append(h('div', { class: 'row', role: 'group', 'aria-label': 'Order' }, choice('top', 'Top'), choice('newest', 'New')), body, board, message);
    load(body, async () => list((await call('GET', `/posts?sort=${sort}`)).items, 'No requests yet: be the first.'));
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
      if (!items.length) return h('p', { class: 'empty', text: 'Nothing announced yet.' });
      return h('div', {}, items.map((e) => h('article', {},
        h('h3', { text: e.title }),
        h('p', { class: 'meta' }, h('time', { datetime: e.publishedAt, text: new Date(e.publishedAt).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }) })),
        h('p', { text: e.content }))));
    });
  }

  function updateBadge() {
    if (!badge || !entries) return;
    const seen = stored(seenKey()) || '';
    const unread = entries.filter((e) => e.publishedAt > seen).length;
    badge.hidden = unread === 0;
    badge.textContent = unread > 9 ? '9+' : String(unread);
    badgeText.textContent = unread ? ` (${unread} unread ${unread === 1 ? 'update' : 'updates'})` : '';
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

  // Nothing is added to the page until the workspace answers: a page whose origin it does not
  // allow gets no launcher at all.
  call('GET', '/config').then((answer) => {
    config = answer;
    build();
    if (!inline) readChangelog().then(updateBadge, () => {}); // the launcher's unread count
    if (pending) { const which = pending; pending = null; open(which); }
  }, (e) => {
    if (typeof console !== 'undefined') console.warn(`FeedbackWidget: ${e.message}`);
  });
})();
