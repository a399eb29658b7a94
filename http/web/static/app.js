// Memento's web page: the chat with the recommendation agent and the memory
// inspector. Plain JavaScript, no build step. The server renders the page
// and its parts (threads, a conversation) with html/template; this script
// sends messages and events to the JSON API, renders the answers with the
// <template> elements the server put in the page, and reads and edits the
// memories in the inspector. It polls /ui/activity so that what background
// jobs learn shows up without a reload.

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

const state = {
  user: document.body.dataset.user || 'me',
  thread: document.body.dataset.thread,
  // context is the active context of the latest answer, as the API
  // returned it; null until an answer arrives or it is fetched.
  context: null,
  sending: false,
  tab: 'profile',
  inspectorOpener: null,
  // sources caches what source ids (messages, events) stand for; titles
  // caches catalog titles by id. Both are per user and cleared on switch.
  sources: null,
  titles: new Map(),
};

const USER_KEY = 'memento.user';

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, code, message, missing) {
    super(message);
    this.status = status;
    this.code = code;
    // missing is true when the server has no such route: a part of
    // Memento that this build does not serve.
    this.missing = missing;
  }
}

// path builds an API path, escaping each interpolated value.
function path(strings, ...values) {
  return strings.reduce((out, s, i) => out + s + (i < values.length ? encodeURIComponent(values[i]) : ''), '');
}

// The API key of this browser tab, when the server needs one: the key
// prompt (/auth/key.js) or keyFetch below asks for it and keeps it in
// sessionStorage, which ends with the tab.
const API_KEY = 'memento.key';

// keyFetch is fetch with the tab's API key; a 401 asks for a key once and
// tries again with it.
async function keyFetch(url, init = {}) {
  let key = null;
  try { key = sessionStorage.getItem(API_KEY); } catch { /* storage off */ }
  const withKey = (k) => ({ ...init, headers: { ...(init.headers || {}), ...(k ? { Authorization: `Bearer ${k}` } : {}) } });
  const res = await fetch(url, withKey(key));
  if (res.status !== 401) return res;
  const asked = window.prompt('This Memento needs an API key (memento keys create). It is kept in this tab until you close it.');
  if (!asked || !asked.trim()) return res;
  try { sessionStorage.setItem(API_KEY, asked.trim()); } catch { /* storage off */ }
  return fetch(url, withKey(asked.trim()));
}

async function api(method, url, { body, headers = {} } = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers } };
  if (body instanceof FormData) {
    init.body = body; // the browser sets the multipart boundary
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  let res;
  try {
    res = await keyFetch(url, init);
  } catch {
    throw new ApiError(0, 'ENETWORK', 'Memento could not be reached. Is the server still running?', false);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!res.ok) {
    const e = (data && data.error) || {};
    const missing = (res.status === 404 || res.status === 405) && (!e.message || /^no route for/i.test(e.message) || res.status === 405);
    throw new ApiError(res.status, e.code || `HTTP ${res.status}`, e.message || res.statusText || 'Request failed.', missing);
  }
  return { data, res };
}

// listOf finds the list in a response that is either a bare array or an
// object holding one under key.
function listOf(data, key) {
  if (Array.isArray(data)) return data;
  if (data && Array.isArray(data[key])) return data[key];
  if (data && typeof data === 'object') {
    const arr = Object.values(data).find(Array.isArray);
    if (arr) return arr;
  }
  return [];
}

// ---------------------------------------------------------------- helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('class', 'icon');
  svg.setAttribute('aria-hidden', 'true');
  const use = document.createElementNS('http://www.w3.org/2000/svg', 'use');
  use.setAttribute('href', `#i-${name}`);
  svg.append(use);
  return svg;
}

function clone(id) {
  return $(`#${id}`).content.firstElementChild.cloneNode(true);
}

function slot(root, name) {
  return root.querySelector(`[data-slot="${name}"]`);
}

function randomHex(n) {
  const b = new Uint8Array(n);
  crypto.getRandomValues(b);
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

function newThreadID() {
  return `t-${randomHex(6)}`;
}

const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const rel = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime()) || d.getFullYear() < 1971) return '';
  const s = (d.getTime() - Date.now()) / 1000;
  if (Math.abs(s) < 45) return 'just now';
  if (Math.abs(s) < 3600) return rel.format(Math.round(s / 60), 'minute');
  if (Math.abs(s) < 86400) return rel.format(Math.round(s / 3600), 'hour');
  return dateFmt.format(d);
}

function timeEl(iso, prefix = '') {
  const t = when(iso);
  if (!t) return null;
  return el('time', { datetime: iso, title: dateFmt.format(new Date(iso)) }, prefix + t);
}

// humanize turns attribute and key names into words:
// "WANTS_TO_WATCH" → "Wants to watch", "preferredGenres" → "Preferred genres".
function humanize(name) {
  const words = String(name)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function typeLabel(t) {
  return { movie: 'Movie', tvSeries: 'TV series', tvMiniSeries: 'TV mini-series', tvMovie: 'TV movie', short: 'Short', '': 'Title' }[t ?? ''] ?? t;
}

function typePlural(t) {
  const l = typeLabel(t);
  return l.endsWith('series') ? l : `${l}s`;
}

let toastTimer;
function toast(message, { error = false } = {}) {
  const t = $('#toast');
  t.textContent = message;
  t.classList.toggle('error', error);
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, error ? 7000 : 4000);
}

// announce tells screen reader users about something that happened out of
// their focus (a chip removed, a memory deleted).
function announce(message) {
  const a = $('#announcer');
  a.textContent = '';
  setTimeout(() => { a.textContent = message; }, 30);
}

function setURL(push) {
  const url = `/?user=${encodeURIComponent(state.user)}&thread=${encodeURIComponent(state.thread)}`;
  if (url === location.pathname + location.search) return;
  if (push) history.pushState({ user: state.user, thread: state.thread }, '', url);
  else history.replaceState({ user: state.user, thread: state.thread }, '', url);
}

// ---------------------------------------------------------------- chips

// chipsFor lists the constraints of an active context as chips, in the
// order and wording the server's Chips function uses.
function chipsFor(ac) {
  if (!ac) return [];
  const out = [];
  for (const g of ac.genres || []) out.push({ field: 'genres', value: g, label: g, removable: true });
  for (const g of ac.excludedGenres || []) out.push({ field: 'excludedGenres', value: g, label: `no ${g}`, removable: true });
  if (ac.titleType) out.push({ field: 'titleType', label: `${typePlural(ac.titleType)} only`, removable: true });
  if (ac.minYear != null) out.push({ field: 'minYear', label: `from ${ac.minYear}`, removable: true });
  if (ac.maxYear != null) out.push({ field: 'maxYear', label: `until ${ac.maxYear}`, removable: true });
  for (const p of ac.people || []) out.push({ field: 'people', value: p, label: `with ${p}`, removable: true });
  if (ac.freeText) out.push({ field: 'freeText', label: `about “${ac.freeText}”`, removable: true });
  if (ac.isAdult) out.push({ field: 'isAdult', label: 'adult titles', removable: true });
  const n = (ac.excludedTitleIds || []).length;
  if (n > 0) out.push({ field: 'excludedTitleIds', label: n === 1 ? '1 title excluded' : `${n} titles excluded`, removable: true });
  if (ac.count > 0) out.push({ field: 'count', label: `${ac.count} at a time`, removable: false });
  return out;
}

function renderChips(turn, ac) {
  const box = slot(turn, 'context');
  const list = slot(turn, 'chips');
  list.replaceChildren();
  for (const c of chipsFor(ac)) {
    const chip = clone('tpl-chip');
    chip.dataset.field = c.field;
    chip.dataset.value = c.value ?? '';
    slot(chip, 'label').textContent = c.label;
    const x = $('.chip-x', chip);
    if (c.removable) x.setAttribute('aria-label', `Remove ${c.label}`);
    else { x.remove(); chip.classList.add('fixed'); }
    list.append(chip);
  }
  box.hidden = list.children.length === 0;
}

// without returns the context with one chip's constraint removed.
function without(ac, field, value) {
  const next = structuredClone(ac);
  switch (field) {
    case 'genres': next.genres = (next.genres || []).filter((g) => g !== value); break;
    case 'excludedGenres': next.excludedGenres = (next.excludedGenres || []).filter((g) => g !== value); break;
    case 'people': next.people = (next.people || []).filter((p) => p !== value); break;
    case 'titleType': next.titleType = ''; break;
    case 'minYear': next.minYear = null; break;
    case 'maxYear': next.maxYear = null; break;
    case 'freeText': next.freeText = ''; break;
    case 'isAdult': next.isAdult = false; break;
    case 'excludedTitleIds': next.excludedTitleIds = []; break;
    default: return null;
  }
  return next;
}

async function currentContext() {
  if (state.context) return state.context;
  const { data } = await api('GET', path`/v1/users/${state.user}/threads/${state.thread}`);
  state.context = data.activeContext;
  return state.context;
}

async function removeChip(chip) {
  const field = chip.dataset.field;
  const label = slot(chip, 'label').textContent;
  const turn = chip.closest('.turn');
  chip.classList.add('removing');
  try {
    const next = without(await currentContext(), field, chip.dataset.value);
    if (!next) return;
    const { data } = await api('PUT', path`/v1/users/${state.user}/threads/${state.thread}/context`, { body: next });
    state.context = data;
    const chips = $$('.chip', turn);
    const index = chips.indexOf(chip);
    renderChips(turn, data);
    const rest = $$('.chip-x', turn);
    (rest[Math.min(index, rest.length - 1)] || $('#composer-input')).focus();
    announce(`Removed “${label}”. The next answer searches without it.`);
  } catch (e) {
    chip.classList.remove('removing');
    toast(e.missing ? 'This server cannot edit the search context.' : `Could not remove “${label}”: ${e.message}`, { error: true });
  }
}

// ---------------------------------------------------------------- chat

function stripTitleList(reply, titles) {
  if (!titles.length) return reply;
  return reply
    .split('\n')
    .filter((line) => !(/^\s*\d+[.)]\s/.test(line) && titles.some((t) => t && line.includes(t))))
    .join('\n')
    .trim();
}

function renderCard(t) {
  const card = clone('tpl-card');
  card.dataset.titleId = t.id;
  slot(card, 'title').textContent = t.title;
  slot(card, 'year').textContent = t.year ? String(t.year) : '';
  slot(card, 'type').textContent = typeLabel(t.type);
  slot(card, 'genres').replaceChildren(...(t.genres || []).map((g) => el('li', { text: g })));
  slot(card, 'overview').textContent = t.overview || '';
  const why = slot(card, 'why');
  why.replaceChildren(...(t.why || []).map((w) => el('li', { text: w })));
  why.hidden = why.children.length === 0;
  slot(card, 'actions').setAttribute('aria-label', `Tell Memento about ${t.title}`);
  return card;
}

// renderMemoryUsed fills "What Memento drew on" as the server's
// MemoryItems does for stored answers: the summary, then each memory used
// (a used item repeating the summary is shown once).
function renderMemoryUsed(turn, memory) {
  const box = slot(turn, 'memory');
  const items = [];
  if (memory && memory.summary) items.push(el('li', {}, el('span', { class: 'kind', text: 'Summary' }), memory.summary));
  for (const m of (memory && memory.used) || []) {
    if (m.kind === 'summary' && m.text === memory.summary) continue;
    items.push(el('li', {}, el('span', { class: 'kind', text: humanize(m.kind || 'memory') }), m.text || m.id));
  }
  if (!items.length) { box.hidden = true; return; }
  slot(turn, 'memory-body').replaceChildren(el('ul', {}, items));
  $('summary', box).textContent = `What Memento drew on (${items.length})`;
  box.hidden = false;
}

function fillAnswer(turn, resp) {
  const titles = resp.titles || [];
  slot(turn, 'text').textContent = stripTitleList(resp.reply || '', titles.map((t) => t.title));
  const cards = slot(turn, 'cards');
  cards.replaceChildren(...titles.map(renderCard));
  cards.dataset.count = String(titles.length);
  cards.hidden = titles.length === 0;
  renderChips(turn, resp.activeContext);
  const notes = slot(turn, 'notes');
  notes.replaceChildren(...(resp.notes || []).map((n) => el('li', { text: n })));
  notes.hidden = notes.children.length === 0;
  renderMemoryUsed(turn, resp.memory);
}

// markLatest makes turn the answer whose chips can be removed; older
// answers keep their chips as a record of what they searched.
function markLatest(turn) {
  for (const t of $$('.turn-agent.latest')) {
    if (t === turn) continue;
    t.classList.remove('latest');
    for (const x of $$('.chip-x', t)) x.remove();
  }
  turn.classList.add('latest');
}

function turnsRoot() {
  return $('#conversation .turns');
}

function scrollToEnd() {
  const c = $('#conversation');
  c.scrollTop = c.scrollHeight;
  state.atEnd = true;
}

// keepAtEnd remembers whether the conversation is scrolled to its end, so
// that a resize (a phone turned, the inspector opened) keeps it there.
function keepAtEnd() {
  const c = $('#conversation');
  c.addEventListener('scroll', () => {
    state.atEnd = c.scrollHeight - c.scrollTop - c.clientHeight < 60;
  }, { passive: true });
  new ResizeObserver(() => { if (state.atEnd) c.scrollTop = c.scrollHeight; }).observe(c);
}

// showEmotion fills a user turn's emotion tag from the stored message or
// the answer.
function showEmotion(turn, emotion) {
  const tag = slot(turn, 'emotion');
  if (!tag) return;
  if (!emotion) { tag.hidden = true; return; }
  tag.textContent = `${emotion.label} ${Number(emotion.confidence).toFixed(2)}`;
  tag.dataset.emotion = emotion.label;
  tag.title = `Memento read this message as ${emotion.label} (confidence ${Number(emotion.confidence).toFixed(2)})`;
  tag.hidden = false;
}

async function send(text, audio) {
  text = (text || '').trim();
  if ((!text && !audio) || state.sending) return;
  state.sending = true;
  const input = $('#composer-input');
  const button = $('#send');
  button.disabled = true;
  $('#welcome')?.remove();

  const mine = clone('tpl-user-turn');
  slot(mine, 'text').textContent = audio ? 'Listening to your recording…' : text;
  turnsRoot().append(mine);
  const answer = clone('tpl-agent-turn');
  answer.classList.add('pending');
  answer.setAttribute('aria-busy', 'true');
  slot(answer, 'text').replaceChildren('Looking through the catalog', el('span', { class: 'typing', 'aria-hidden': 'true' }, el('i'), el('i'), el('i')));
  turnsRoot().append(answer);
  input.value = '';
  autosize(input);
  scrollToEnd();

  try {
    let data;
    if (audio) {
      const form = new FormData();
      form.append('user', state.user);
      form.append('thread', state.thread);
      form.append('audio', audio, audio.type.includes('ogg') ? 'speech.ogg' : audio.type.includes('wav') ? 'speech.wav' : 'speech.webm');
      ({ data } = await api('POST', '/v1/chat/audio', { body: form }));
      slot(mine, 'text').textContent = data.transcript;
    } else {
      ({ data } = await api('POST', '/v1/chat', { body: { user: state.user, thread: state.thread, message: text } }));
    }
    showEmotion(mine, data.emotion);
    state.context = data.activeContext;
    fillAnswer(answer, data);
    markLatest(answer);
    setURL(false);
    refreshThreads();
    expectActivity();
  } catch (e) {
    answer.classList.add('failed');
    slot(answer, 'text').textContent = `That did not go through: ${e.message}`;
    if (audio) slot(mine, 'text').textContent = 'Recording';
    else if (!input.value) { input.value = text; autosize(input); }
  } finally {
    answer.classList.remove('pending');
    answer.removeAttribute('aria-busy');
    state.sending = false;
    button.disabled = false;
    scrollToEnd();
    input.focus();
  }
}

function autosize(t) {
  t.style.height = 'auto';
  t.style.height = `${Math.min(t.scrollHeight, 180)}px`;
}

// ---------------------------------------------------------------- events

const EVENT_TEXT = {
  watched: 'Marked as seen. Memento will not suggest it again.',
  liked: 'Liked. Memento will look for more like it.',
  disliked: 'Noted. Memento will steer away from titles like this.',
};

async function sendEvent(button) {
  const card = button.closest('.card');
  const type = button.dataset.event;
  if (button.getAttribute('aria-pressed') === 'true' || button.disabled) return;
  const title = slot(card, 'title').textContent;
  const event = { id: `ui-${randomHex(8)}`, type, title: card.dataset.titleId, at: new Date().toISOString() };
  button.disabled = true;
  const status = slot(card, 'status');
  try {
    await api('POST', path`/v1/users/${state.user}/events`, { body: event });
    button.setAttribute('aria-pressed', 'true');
    // Liking and turning down are opposites; the newest one counts.
    const opposite = { liked: 'disliked', disliked: 'liked' }[type];
    if (opposite) $(`[data-event="${opposite}"]`, card).setAttribute('aria-pressed', 'false');
    card.dataset[`${type}Event`] = event.id;
    card.dataset.lastEvent = event.id;
    if (type === 'disliked') card.classList.add('dismissed');
    if (type === 'liked') card.classList.remove('dismissed');
    status.textContent = EVENT_TEXT[type];
    announce(`${title}: ${EVENT_TEXT[type]}`);
    expectActivity();
  } catch (e) {
    status.textContent = e.missing
      ? 'This server does not take events yet, so this was not remembered.'
      : `Not saved: ${e.message}`;
    announce(status.textContent);
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- threads and users

async function fetchPart(url) {
  const res = await keyFetch(url, { headers: { Accept: 'text/html' } });
  if (!res.ok) {
    let message = res.statusText;
    try { message = (await res.json()).error.message; } catch { /* not JSON */ }
    throw new ApiError(res.status, `HTTP ${res.status}`, message, false);
  }
  return res.text();
}

async function refreshThreads() {
  try {
    const html = await fetchPart(`/ui/threads?user=${encodeURIComponent(state.user)}&thread=${encodeURIComponent(state.thread)}`);
    $('#thread-list').innerHTML = html;
    localizeTimes($('#thread-list'));
  } catch (e) {
    $('#thread-list').replaceChildren(el('p', { class: 'inline-error', role: 'alert', text: `Conversations could not be loaded: ${e.message}` }));
  }
}

async function selectThread(thread, { push = true, focus = true } = {}) {
  state.thread = thread;
  state.context = null;
  for (const a of $$('#thread-list .thread')) {
    const current = a.dataset.thread === thread;
    a.classList.toggle('current', current);
    if (current) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  setURL(push);
  closeNav();
  try {
    const html = await fetchPart(`/ui/conversation?user=${encodeURIComponent(state.user)}&thread=${encodeURIComponent(thread)}`);
    $('#conversation').innerHTML = html;
    localizeTimes($('#conversation'));
    scrollToEnd();
  } catch (e) {
    $('#conversation').replaceChildren(el('p', { class: 'inline-error', role: 'alert', text: `This conversation could not be loaded: ${e.message}` }));
  }
  if (state.tab === 'summaries' && inspectorOpen()) loadTab('summaries');
  if (focus) $('#composer-input').focus();
}

async function switchUser(user, { push = true } = {}) {
  user = user.trim();
  if (!user) return;
  state.user = user;
  state.sources = null;
  document.body.dataset.user = user;
  try { localStorage.setItem(USER_KEY, user); } catch { /* private mode */ }
  $('#user-id').value = user;
  $('#inspector-user').textContent = user;
  $('#forget-dialog [data-slot="user"]').textContent = user;
  $('#export-link').href = path`/v1/users/${user}/export`;
  $('#export-link').download = `memento-${user}.json`;
  state.thread = '';
  await refreshThreads();
  const first = $('#thread-list .thread');
  await selectThread(first ? first.dataset.thread : newThreadID(), { push, focus: false });
  if (inspectorOpen()) loadTab(state.tab);
}

function localizeTimes(root) {
  for (const t of $$('time[datetime]', root)) {
    const s = when(t.getAttribute('datetime'));
    if (s) t.textContent = s;
  }
}

// ---------------------------------------------------------------- navigation (phones)

function closeNav() {
  $('#threads').classList.remove('open');
  $('#nav-toggle').setAttribute('aria-expanded', 'false');
}

function toggleNav() {
  const open = !$('#threads').classList.contains('open');
  $('#threads').classList.toggle('open', open);
  $('#nav-toggle').setAttribute('aria-expanded', String(open));
  if (open) $('#new-thread').focus();
}

// ---------------------------------------------------------------- inspector

function inspectorOpen() {
  return !$('#inspector').hidden;
}

// markNews puts a dot on the inspector's button while it is closed and
// background work may have changed what Memento remembers.
function markNews(on) {
  const b = $('#open-inspector');
  b.classList.toggle('has-news', on);
  $('#news-note').textContent = on ? ' (updated)' : '';
}

function openInspector(tab) {
  markNews(false);
  state.inspectorOpener = document.activeElement;
  $('#inspector').hidden = false;
  $('#scrim').hidden = false;
  $('#app').classList.add('inspecting');
  $('#open-inspector').setAttribute('aria-expanded', 'true');
  selectTab(tab || state.tab, { focus: true });
}

function closeInspector() {
  $('#inspector').hidden = true;
  $('#scrim').hidden = true;
  $('#app').classList.remove('inspecting');
  $('#open-inspector').setAttribute('aria-expanded', 'false');
  (state.inspectorOpener && document.contains(state.inspectorOpener) ? state.inspectorOpener : $('#open-inspector')).focus();
}

function selectTab(name, { focus = false } = {}) {
  state.tab = name;
  for (const tab of $$('[role="tab"]')) {
    const on = tab.dataset.tab === name;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`#${tab.getAttribute('aria-controls')}`).hidden = !on;
    if (on && focus) tab.focus();
    if (on) tab.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }
  loadTab(name);
}

function tabKeys(e) {
  const tabs = $$('[role="tab"]');
  const i = tabs.indexOf(document.activeElement);
  if (i < 0) return;
  let next = null;
  if (e.key === 'ArrowRight') next = tabs[(i + 1) % tabs.length];
  else if (e.key === 'ArrowLeft') next = tabs[(i - 1 + tabs.length) % tabs.length];
  else if (e.key === 'Home') next = tabs[0];
  else if (e.key === 'End') next = tabs[tabs.length - 1];
  if (next) {
    e.preventDefault();
    selectTab(next.dataset.tab, { focus: true });
  }
}

const loaders = {
  profile: loadProfile,
  attributes: loadAttributes,
  preferences: loadPreferences,
  summaries: loadSummaries,
  rejected: loadRejected,
  emotions: loadEmotions,
};

// ------------------------------------------------ emotions

// loadEmotions lists the emotion Memento read in each of your messages in
// this conversation, newest first.
async function loadEmotions() {
  const { data } = await api('GET', path`/v1/users/${state.user}/threads/${state.thread}`);
  const msgs = listOf(data, 'messages').filter((m) => m.role === 'user').reverse();
  if (!msgs.length) return [empty('No messages in this conversation yet. Each message you send is read for the emotion it expresses.')];
  return msgs.map((m) => el('div', { class: 'mem emotion-item', 'data-id': `emotion:${m.id}`, 'data-kind': 'emotion' },
    el('div', { class: 'mem-head' },
      el('span', { class: 'mem-key', text: m.emotion ? m.emotion.label : 'not tagged' }),
      m.emotion ? el('span', { class: 'badge', text: `confidence ${Number(m.emotion.confidence).toFixed(2)}` }) : null),
    el('div', { class: 'mem-value', text: m.text }),
    el('div', { class: 'mem-meta' }, timeEl(m.at, 'said '))));
}

// ------------------------------------------------ microphone

// setupMic records a message with MediaRecorder while the microphone
// button is pressed in, and sends it as a speech turn when pressed again.
// The button is only on the page when the server has a transcription
// server.
function setupMic() {
  const mic = $('#mic');
  if (!mic) return;
  if (!navigator.mediaDevices || !window.MediaRecorder) {
    mic.disabled = true;
    mic.title = 'This browser cannot record audio.';
    return;
  }
  let rec = null;
  let chunks = [];
  mic.addEventListener('click', async () => {
    if (rec && rec.state === 'recording') { rec.stop(); return; }
    if (state.sending) return;
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (e) {
      toast(`The microphone is not available: ${e.message}`, { error: true });
      return;
    }
    chunks = [];
    rec = new MediaRecorder(stream);
    rec.addEventListener('dataavailable', (e) => { if (e.data.size) chunks.push(e.data); });
    rec.addEventListener('stop', () => {
      stream.getTracks().forEach((t) => t.stop());
      mic.setAttribute('aria-pressed', 'false');
      mic.classList.remove('recording');
      $('#mic-label').textContent = 'Speak';
      const blob = new Blob(chunks, { type: rec.mimeType || 'audio/webm' });
      if (blob.size) send('', blob);
    });
    rec.start();
    mic.setAttribute('aria-pressed', 'true');
    mic.classList.add('recording');
    $('#mic-label').textContent = 'Stop and send';
  });
}

// loadSeqs numbers the loads of each tab, so a slow answer to an older
// load never overwrites a newer one.
const loadSeqs = {};

// loadTab renders one tab. background loads (after a job finished) keep
// the panel as it is while fetching, highlight what is new, and leave a
// panel alone while the user is editing in it.
async function loadTab(name, { background = false, force = false } = {}) {
  const body = $(`[data-panel="${name}"]`);
  // Someone reading sources or a history, or working in the panel, is not
  // interrupted: a button offers what is new instead.
  if (background && !force && busy(body)) {
    offerRefresh(body, name);
    return;
  }
  const seq = (loadSeqs[name] = (loadSeqs[name] || 0) + 1);
  const before = new Set($$('[data-id]', body).map((n) => n.dataset.key || n.dataset.id));
  if (!background) body.replaceChildren(el('p', { class: 'panel-state', text: 'Loading…' }));
  let nodes;
  try {
    nodes = await loaders[name]();
  } catch (e) {
    nodes = [stateMessage(e)];
  }
  if (seq !== loadSeqs[name]) return;
  // The user may have started something while the answer was on its way.
  if (background && !force && busy(body)) {
    offerRefresh(body, name);
    return;
  }
  body.replaceChildren(...[nodes].flat());
  if (background) {
    for (const n of $$('[data-id]', body)) {
      if (!before.has(n.dataset.key || n.dataset.id)) n.classList.add('fresh');
    }
  }
}

// busy reports whether the user is working in a panel: editing, reading
// sources or a history, or with focus in it.
function busy(body) {
  return !!body.querySelector('.edit-form, details[open], [aria-expanded="true"]') || body.contains(document.activeElement);
}

function offerRefresh(body, name) {
  if (body.querySelector('.refresh-note')) return;
  body.prepend(el('button', { type: 'button', class: 'refresh-note', onclick: () => loadTab(name, { background: true, force: true }) },
    'Memento learned something new. Show it'));
}

function stateMessage(e) {
  if (e instanceof ApiError && e.missing) {
    return el('p', { class: 'panel-state unavailable', role: 'note' },
      'This kind of memory is not served by this Memento server yet, so there is nothing to show. ',
      el('span', { class: 'muted', text: `(${e.message})` }));
  }
  return el('p', { class: 'inline-error', role: 'alert', text: `Could not load this: ${e.message}` });
}

function empty(text) {
  return el('p', { class: 'panel-state', text });
}

// confirmButton is a delete button that asks once more before it acts: the
// first press arms it, the second deletes. It disarms itself after a while.
function confirmButton(label, onConfirm) {
  let armed = false;
  let timer;
  const b = el('button', { type: 'button', class: 'button small danger-subtle', 'data-action': 'delete' }, icon('trash'), el('span', { text: label }));
  b.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      $('span', b).textContent = 'Really delete?';
      b.classList.replace('danger-subtle', 'danger');
      announce('Press again to delete.');
      timer = setTimeout(() => { armed = false; $('span', b).textContent = label; b.classList.replace('danger', 'danger-subtle'); }, 5000);
      return;
    }
    clearTimeout(timer);
    b.disabled = true;
    try {
      await onConfirm();
    } catch (e) {
      b.disabled = false;
      toast(`Not deleted: ${e.message}`, { error: true });
    }
  });
  return b;
}

function editButton(onClick) {
  return el('button', { type: 'button', class: 'button small subtle', 'data-action': 'edit', onclick: onClick }, icon('pencil'), el('span', { text: 'Edit' }));
}

// editForm replaces a memory's view with a form; save resolves when the
// change is stored, and the tab reloads.
function editForm(host, fields, save) {
  const form = el('form', { class: 'edit-form' });
  const inputs = {};
  const row = el('div', { class: 'edit-row' });
  for (const f of fields) {
    const id = `edit-${randomHex(4)}`;
    const input = f.multiline
      ? el('textarea', { id, name: f.name, rows: '3' })
      : el('input', { id, name: f.name, type: f.type || 'text', step: f.step, required: f.required });
    input.value = f.value ?? '';
    inputs[f.name] = input;
    row.append(el('div', {}, el('label', { for: id, text: f.label }), input));
  }
  const error = el('p', { class: 'form-error', role: 'alert' });
  const cancel = el('button', { type: 'button', class: 'button small subtle', text: 'Cancel' });
  form.append(row, error, el('div', { class: 'mem-actions' }, el('button', { type: 'submit', class: 'button small primary', text: 'Save' }), cancel));
  const original = [...host.childNodes];
  host.replaceChildren(form);
  Object.values(inputs)[0].focus();
  cancel.addEventListener('click', () => { host.replaceChildren(...original); $('[data-action="edit"]', host)?.focus(); });
  form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.stopPropagation(); cancel.click(); } });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    const values = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v.value]));
    try {
      await save(values);
      toast('Saved.');
      loadTab(state.tab);
    } catch (err) {
      error.textContent = err.message;
    }
  });
}

// ------------------------------------------------ sources

// loadSources reads the user's export once per inspector refresh, to say
// what each source id stands for: a message (its text, thread and time)
// or an event (what was done to which title).
async function loadSources() {
  if (state.sources) return state.sources;
  const map = new Map();
  const [thread, events, exported] = await Promise.allSettled([
    api('GET', path`/v1/users/${state.user}/threads/${state.thread}`),
    api('GET', path`/v1/users/${state.user}/events`),
    api('GET', path`/v1/users/${state.user}/export`),
  ]);
  if (thread.status === 'fulfilled') {
    for (const m of thread.value.data.messages || []) map.set(m.id, { kind: 'message', text: m.text, role: m.role, thread: state.thread, at: m.at });
  }
  if (events.status === 'fulfilled') {
    for (const ev of listOf(events.value.data, 'events')) addEvent(map, ev);
  }
  try {
    if (exported.status === 'rejected') throw exported.reason;
    const { data } = exported.value;
    for (const t of data.threads || []) {
      for (const m of t.messages || []) map.set(m.id, { kind: 'message', text: m.text, role: m.role, thread: t.thread?.id, at: m.at });
    }
    for (const ev of data.events || []) addEvent(map, ev);
  } catch {
    // Without the export the ids are shown as they are.
  }
  state.sources = map;
  return map;
}

// addEvent records what an event id stands for, under the id and under
// "event:" and the id, as preference memories name their event sources.
function addEvent(map, ev) {
  const s = { kind: 'event', type: ev.type, title: ev.title, at: ev.at, value: ev.value };
  map.set(ev.id, s);
  map.set(`event:${ev.id}`, s);
}

async function titleName(id) {
  if (state.titles.has(id)) return state.titles.get(id);
  let name = id;
  try {
    const { data } = await api('GET', path`/v1/catalog/titles/${id}`);
    name = data.year ? `${data.title} (${data.year})` : data.title;
  } catch { /* unknown title: keep the id */ }
  state.titles.set(id, name);
  return name;
}

const EVENT_WORDS = {
  watched: 'watched', rated: 'rated', liked: 'liked', disliked: 'turned down', watchlisted: 'added to the watchlist',
  skipped: 'skipped', abandoned: 'stopped watching', finished: 'finished',
};

async function describeSource(id) {
  const s = (await loadSources()).get(id);
  if (!s) return el('li', {}, el('span', { class: 'src-kind', text: 'Source' }), el('code', { text: id }));
  if (s.kind === 'message') {
    return el('li', {}, el('span', { class: 'src-kind', text: s.role === 'assistant' ? 'Memento said' : 'You said' }),
      `“${s.text}”`, ' ', el('span', { class: 'muted' }, timeEl(s.at, '· ')));
  }
  const title = await titleName(s.title);
  const value = s.type === 'rated' && s.value != null ? ` ${s.value}/5` : '';
  return el('li', {}, el('span', { class: 'src-kind', text: 'You' }), `${EVENT_WORDS[s.type] || s.type} ${title}${value}`, ' ',
    el('span', { class: 'muted' }, timeEl(s.at, '· ')));
}

// sourcesView is a disclosure that says where a memory came from; the ids
// are resolved when it is opened.
function sourcesView(ids, label = 'Sources') {
  ids = ids || [];
  if (!ids.length) return el('p', { class: 'sources muted', text: 'No recorded source: set by you.' });
  const list = el('ul');
  const d = el('details', { class: 'sources' }, el('summary', { text: `${label} (${ids.length})` }), list);
  d.addEventListener('toggle', async () => {
    if (!d.open || list.childElementCount) return;
    list.append(el('li', { text: 'Loading…' }));
    const items = await Promise.all(ids.map(describeSource));
    list.replaceChildren(...items);
  });
  return d;
}

// ------------------------------------------------ profile

let profileETag = null;

// renderValue shows a profile value for people: lists as lists, weighted
// lists as "Comedy (0.8)", catalog title ids by their titles (resolved
// after rendering), anything else as JSON.
function renderValue(v) {
  if (v === null || v === undefined) return el('span', { class: 'muted', text: 'empty' });
  if (typeof v !== 'object') return textWithTitle(String(v));
  if (Array.isArray(v)) {
    if (v.length === 0) return el('span', { class: 'muted', text: 'none' });
    if (v.every((x) => typeof x !== 'object' || x === null)) return joined(v.map((x) => textWithTitle(String(x))));
    // A list of weighted things: [{"genre":"Comedy","weight":0.8}, ...].
    const parts = v.map((x) => {
      if (!x || typeof x !== 'object') return null;
      const entries = Object.entries(x);
      const label = entries.find(([, val]) => typeof val === 'string');
      const num = entries.find(([, val]) => typeof val === 'number');
      if (!label || entries.length > 4) return null;
      return num
        ? el('span', { title: `${num[0]} ${fmtNum(num[1])}` }, textWithTitle(label[1]), ' ', el('span', { class: 'muted', text: fmtNum(num[1]) }))
        : textWithTitle(label[1]);
    });
    if (parts.every(Boolean)) return joined(parts);
  } else {
    const entries = Object.entries(v);
    if ('from' in v && 'to' in v && entries.length <= 3) {
      return el('span', { text: `${v.from}–${v.to}${v.median ? ` (mostly around ${v.median})` : ''}` });
    }
    if (entries.length && entries.every(([, val]) => typeof val === 'number')) {
      return el('span', { text: entries.sort((a, b) => b[1] - a[1]).map(([k, val]) => `${k} (${fmtNum(val)})`).join(', ') });
    }
    if (entries.length && entries.every(([, val]) => typeof val !== 'object' || val === null)) {
      return el('span', { text: entries.map(([k, val]) => `${humanize(k)}: ${val}`).join(' · ') });
    }
  }
  return el('pre', { text: JSON.stringify(v, null, 2) });
}

function joined(nodes) {
  const out = el('span');
  nodes.forEach((n, i) => { if (i) out.append(', '); out.append(n); });
  return out;
}

const TITLE_ID = /^(wiki|imdb|ml|tt|jsonl?):\S+$/;

// textWithTitle shows a catalog title id by its title once it is known.
function textWithTitle(text) {
  const span = el('span', { text });
  if (TITLE_ID.test(text)) {
    span.dataset.titleRef = text;
    titleName(text).then((name) => { span.textContent = name; span.title = text; });
  }
  return span;
}

function fmtNum(n) {
  return Math.abs(n) >= 10 || Number.isInteger(n) ? String(Math.round(n * 10) / 10) : n.toFixed(2);
}

async function patchProfile(body) {
  const headers = profileETag ? { 'If-Match': profileETag } : {};
  try {
    const { res } = await api('PATCH', path`/v1/users/${state.user}/profile`, { body, headers });
    profileETag = res.headers.get('ETag') || profileETag;
  } catch (e) {
    if (e.status === 409 || e.status === 412) {
      // Take the new version, so that saving again overrides knowingly.
      try {
        const { res } = await api('GET', path`/v1/users/${state.user}/profile`);
        profileETag = res.headers.get('ETag') || profileETag;
      } catch { /* keep the old tag; the next save reports again */ }
      throw new ApiError(e.status, e.code, 'Memento learned something new while you were editing. Save again to keep your value.', false);
    }
    throw e;
  }
}

function parseJSONValue(text) {
  const t = text.trim();
  if (!t) throw new Error('The value must not be empty.');
  try { return JSON.parse(t); } catch { return t; }
}

async function loadProfile() {
  const { data, res } = await api('GET', path`/v1/users/${state.user}/profile`);
  profileETag = res.headers.get('ETag') || (data.version != null ? `"${data.version}"` : null);
  const keys = Object.entries(data.keys || {});
  const mine = keys.filter(([, e]) => e.source === 'user').sort(([a], [b]) => a.localeCompare(b));
  const learned = keys.filter(([, e]) => e.source !== 'user').sort(([a], [b]) => a.localeCompare(b));
  const out = [];
  const item = ([key, entry]) => {
    const host = el('div', { class: 'mem', 'data-id': `profile:${key}`, 'data-kind': 'profile', 'data-key': key, 'data-sources': (entry.evidence || []).join(' ') });
    const user = entry.source === 'user';
    const actions = el('div', { class: 'mem-actions' },
      editButton(() => editForm(host, [{ name: 'value', label: user ? `Value of ${key} (JSON or text)` : `Your own value for ${key} (JSON or text); learners will leave it alone`, value: JSON.stringify(entry.value, null, 1), multiline: true }],
        async (v) => patchProfile({ keys: { [key]: parseJSONValue(v.value) } }))),
      confirmButton(user ? 'Delete' : 'Forget', async () => {
        await patchProfile({ keys: { [key]: null } });
        announce(`Deleted ${humanize(key)} from your profile.`);
        loadTab('profile');
      }));
    host.append(
      el('div', { class: 'mem-head' }, el('span', { class: 'mem-key', text: humanize(key) }),
        el('span', { class: `badge${user ? ' user' : ''}`, text: user ? 'set by you' : 'learned' }), actions),
      el('div', { class: 'mem-value' }, renderValue(entry.value)),
      el('div', { class: 'mem-meta' }, timeEl(entry.updatedAt, 'updated ')),
      user ? el('p', { class: 'sources muted', text: 'Set by you; learners never overwrite it.' }) : sourcesView(entry.evidence, 'Supporting events'));
    return host;
  };
  if (!keys.length) out.push(empty('Nothing learned yet. Mark titles as seen, liked or not for you, and your profile appears here.'));
  if (mine.length) out.push(el('h3', { class: 'group-title', text: 'Set by you' }), ...mine.map(item));
  if (learned.length) out.push(el('h3', { class: 'group-title', text: 'Learned from what you did' }), ...learned.map(item));
  const add = el('details', { class: 'add-key' }, el('summary', { text: 'Add a key of your own' }));
  const addHost = el('div');
  add.append(addHost);
  add.addEventListener('toggle', () => {
    if (!add.open) return;
    editForm(addHost, [{ name: 'key', label: 'Key', required: true }, { name: 'value', label: 'Value (JSON or text)', multiline: true }],
      async (v) => {
        const key = v.key.trim();
        if (!key) throw new Error('The key must not be empty.');
        await patchProfile({ keys: { [key]: parseJSONValue(v.value) } });
      });
  });
  out.push(add);
  return out;
}

// ------------------------------------------------ attribute memories

async function loadAttributes() {
  const { data } = await api('GET', path`/v1/users/${state.user}/memories` + '?all=true');
  const all = listOf(data, 'memories');
  const current = all.filter((m) => !m.validTo);
  const supersededBy = new Map();
  for (const m of all.filter((x) => x.validTo)) {
    const k = m.attribute;
    supersededBy.set(k, (supersededBy.get(k) || 0) + 1);
  }
  const semantic = current.filter((m) => m.mode !== 'episodic').sort((a, b) => a.attribute.localeCompare(b.attribute));
  const episodes = current.filter((m) => m.mode === 'episodic').sort((a, b) => String(b.validFrom).localeCompare(String(a.validFrom)));
  const out = [];
  if (!current.length) {
    out.push(empty('No facts yet. Tell Memento about yourself ("I watch everything on Netflix") and what it learns appears here.'));
    return out;
  }
  const item = (m) => {
    const host = el('div', { class: 'mem', 'data-id': m.id, 'data-kind': 'memory', 'data-attribute': m.attribute, 'data-sources': (m.sources || []).join(' ') });
    const older = supersededBy.get(m.attribute) || 0;
    const historyBox = el('div');
    const extra = el('div');
    const actions = el('div', { class: 'mem-actions' },
      editButton(() => editForm(host, [{ name: 'value', label: humanize(m.attribute), value: m.value, multiline: true }],
        (v) => api('PATCH', path`/v1/users/${state.user}/memories/${m.id}`, { body: { value: v.value.trim() } }))),
      confirmButton('Delete', async () => {
        await api('DELETE', path`/v1/users/${state.user}/memories/${m.id}`);
        announce(`Deleted ${humanize(m.attribute)}.`);
        loadTab('attributes');
      }));
    if (m.mode !== 'episodic' && older > 0) {
      const b = el('button', { type: 'button', class: 'link-button', 'aria-expanded': 'false' }, `Show history (${older + 1} values)`);
      b.addEventListener('click', async () => {
        const open = b.getAttribute('aria-expanded') === 'true';
        b.setAttribute('aria-expanded', String(!open));
        if (open) { historyBox.replaceChildren(); return; }
        try {
          const { data: h } = await api('GET', path`/v1/users/${state.user}/memories/${m.id}/history`);
          historyBox.replaceChildren(el('ol', { class: 'history', 'aria-label': `Earlier values of ${humanize(m.attribute)}` },
            listOf(h, 'history').map((v) => el('li', { class: v.validTo ? 'closed' : '' },
              el('span', { class: 'h-value', text: v.value }), ' ',
              el('span', { class: 'muted', text: v.validTo ? `· ${when(v.validFrom)} until ${when(v.validTo)}` : `· since ${when(v.validFrom)}` })))));
        } catch (e) {
          historyBox.replaceChildren(stateMessage(e));
        }
      });
      extra.append(b);
    }
    host.append(
      el('div', { class: 'mem-head' }, el('span', { class: 'mem-key', text: humanize(m.attribute) }),
        el('span', { class: 'badge', text: m.mode === 'episodic' ? 'dated' : 'current' }), actions),
      el('div', { class: 'mem-value', text: m.value }),
      el('div', { class: 'mem-meta' }, timeEl(m.validFrom, m.mode === 'episodic' ? '' : 'since ')),
      sourcesView(m.sources), extra, historyBox);
    return host;
  };
  if (semantic.length) out.push(el('h3', { class: 'group-title', text: 'What is true now' }), ...semantic.map(item));
  if (episodes.length) out.push(el('h3', { class: 'group-title', text: 'What you said, when' }), ...episodes.map(item));
  return out;
}

// ------------------------------------------------ preferences

// weightView draws a signed weight as a bar from the middle: green to the
// right for likes, red to the left for dislikes, scaled to the strongest.
function weightView(p, scale = 1) {
  const w = p.effectiveWeight ?? p.weight ?? 0;
  const bar = el('span', { class: 'weight-bar', role: 'img', 'aria-label': `weight ${fmtNum(w)}` });
  const fill = el('i', { class: w >= 0 ? 'pos' : 'neg' });
  const width = Math.min(Math.abs(w) / scale, 1) * 50;
  fill.style.width = `${width}%`;
  if (w < 0) fill.style.left = `${50 - width}%`;
  bar.append(fill);
  const now = p.effectiveWeight != null && p.weight != null && Math.abs(p.effectiveWeight - p.weight) > 0.005
    ? ` (was ${fmtNum(p.weight)})` : '';
  return el('span', { class: 'weight' }, bar, `${fmtNum(w)}${now}`);
}

function preferenceItem(p, stance, scale = 1) {
  const w = p.effectiveWeight ?? p.weight ?? 0;
  const sign = w < 0 ? 'dislike' : 'like';
  const host = el('div', {
    class: `mem${p.faded ? ' faded' : ''}`, 'data-id': p.id, 'data-kind': 'preference', 'data-sign': sign,
    'data-concept': p.concept, 'data-sources': (p.sources || []).join(' '),
  });
  const actions = el('div', { class: 'mem-actions' },
      editButton(() => editForm(host, [
        { name: 'concept', label: 'Concept', value: p.concept, required: true },
        { name: 'weight', label: 'Weight (negative: dislike)', value: String(p.weight ?? w), type: 'number', step: 'any' },
      ], (v) => {
        const body = {};
        if (v.concept.trim() !== p.concept) body.concept = v.concept.trim();
        const nw = Number(v.weight);
        if (v.weight !== '' && !Number.isNaN(nw) && nw !== p.weight) body.weight = nw;
        if (!Object.keys(body).length) return Promise.resolve();
        return api('PATCH', path`/v1/users/${state.user}/preferences/${p.id}`, { body });
      })),
      confirmButton('Delete', async () => {
        await api('DELETE', path`/v1/users/${state.user}/preferences/${p.id}`);
        announce(`Deleted the preference “${p.concept}”.`);
        loadTab('preferences');
      }));
  host.append(
    el('div', { class: 'mem-head' },
      el('span', { class: 'mem-key', text: p.concept }),
      el('span', { class: `badge ${sign}`, text: w < 0 ? 'dislikes' : 'likes' }),
      stance ? el('span', { class: 'badge', text: stance, title: `This memory ${stance === 'oppose' ? 'opposes' : 'supports'} the theme's direction` }) : null,
      p.faded ? el('span', { class: 'badge faded', text: 'faded' }) : null,
      actions),
    el('div', { class: 'mem-meta' }, weightView(p, scale),
      el('span', { text: `${p.evidence || 0} ${p.evidence === 1 ? 'piece' : 'pieces'} of evidence` }),
      p.kind ? el('span', { text: p.kind }) : null,
      timeEl(p.lastSeen, 'last confirmed ')),
    sourcesView(p.sources));
  return host;
}

async function loadPreferences() {
  const [prefsRes, clustersRes] = await Promise.allSettled([
    api('GET', path`/v1/users/${state.user}/preferences`),
    api('GET', path`/v1/users/${state.user}/preference-clusters`),
  ]);
  if (prefsRes.status === 'rejected') throw prefsRes.reason;
  const prefs = listOf(prefsRes.value.data, 'preferences');
  const clusters = clustersRes.status === 'fulfilled' ? listOf(clustersRes.value.data, 'clusters') : [];
  if (!prefs.length) return [empty('No likes or dislikes yet. Say what you enjoy or can\'t stand, or use the buttons on a title.')];
  const byID = new Map(prefs.map((p) => [p.id, p]));
  const scale = Math.max(1, ...prefs.map((p) => Math.abs(p.effectiveWeight ?? p.weight ?? 0)));
  const placed = new Set();
  const out = [];
  for (const c of clusters) {
    const members = (c.members || []).filter((m) => byID.has(m.preference));
    if (!members.length) continue;
    const box = el('section', { class: 'cluster', 'data-cluster': c.id, 'aria-label': `Theme: ${c.description}` },
      el('div', { class: 'mem-head' }, el('span', { class: 'cluster-desc', text: c.description || 'A theme' }),
        c.strength ? el('span', { class: 'badge', text: c.strength }) : null,
        c.confidence != null ? el('span', { class: 'muted', text: `${Math.round(c.confidence * 100)}% confident` }) : null));
    for (const m of members) {
      placed.add(m.preference);
      box.append(preferenceItem(byID.get(m.preference), m.stance, scale));
    }
    out.push(box);
  }
  const loose = prefs.filter((p) => !placed.has(p.id))
    .sort((a, b) => Math.abs(b.effectiveWeight ?? b.weight) - Math.abs(a.effectiveWeight ?? a.weight));
  if (out.length) out.unshift(el('h3', { class: 'group-title', text: 'Themes' }));
  if (loose.length) out.push(el('h3', { class: 'group-title', text: out.length ? 'Not in a theme yet' : 'Likes and dislikes' }), ...loose.map((p) => preferenceItem(p, null, scale)));
  if (clustersRes.status === 'rejected' && !clustersRes.reason.missing) out.unshift(stateMessage(clustersRes.reason));
  return out;
}

// ------------------------------------------------ summaries

// longText shows a long text clamped to a few lines, with a button that
// shows all of it.
function longText(text) {
  const value = el('div', { class: 'mem-value', text });
  if (text.length < 360) return value;
  value.classList.add('clamp');
  const more = el('button', { type: 'button', class: 'link-button', 'aria-expanded': 'false', text: 'Show all' });
  more.addEventListener('click', () => {
    const open = value.classList.toggle('clamp');
    more.textContent = open ? 'Show all' : 'Show less';
    more.setAttribute('aria-expanded', String(!open));
  });
  return el('div', {}, value, more);
}

// loadSummaries shows the latest summary in full, as the one the next
// turn reads, and the earlier ones folded away under it: each replaced the
// one before, so they are history, not a list to read.
async function loadSummaries() {
  const { data } = await api('GET', path`/v1/threads/${state.thread}/summaries` + `?user=${encodeURIComponent(state.user)}`);
  const sums = listOf(data, 'summaries');
  if (!sums.length) return [empty('No summary of this conversation yet. One is written in the background after each answer.')];
  const [latest, ...earlier] = [...sums].reverse();
  const out = [summaryItem(latest, 'Latest summary', true)];
  if (earlier.length) {
    const older = el('details', { class: 'summary-history' },
      el('summary', { text: earlier.length === 1 ? '1 earlier summary' : `${earlier.length} earlier summaries` }),
      ...earlier.map((s) => summaryItem(s, 'Earlier summary', false)));
    out.push(older);
  }
  return out;
}

function summaryItem(s, label, latest) {
  return el('div', { class: latest ? 'mem summary-latest' : 'mem summary-earlier', 'data-id': `summary:${s.id}`, 'data-kind': 'summary' },
    el('div', { class: 'mem-head' }, el('span', { class: 'mem-key', text: label }),
      el('span', { class: 'badge', text: `messages ${s.fromSeq}–${s.toSeq}` })),
    latest ? el('div', { class: 'mem-value', text: s.text }) : longText(s.text),
    el('div', { class: 'mem-meta' }, timeEl(s.createdAt, 'written ')),
    sourcesView(s.sources, 'Messages summarised'));
}

// ------------------------------------------------ rejected

async function loadRejected() {
  const { data } = await api('GET', path`/v1/users/${state.user}/runs` + '?limit=500');
  const runs = listOf(data, 'runs').filter((r) => r.outcome === 'rejected' || (r.rejected || []).length);
  if (!runs.length) return [empty('Nothing rejected. Messages that try to instruct the system ("ignore previous instructions…") are refused and listed here.')];
  const sources = await loadSources();
  return runs.map((r) => {
    const said = sources.get(r.message);
    const reasons = r.rejected || [];
    return el('div', { class: 'mem', 'data-id': `run:${r.message}`, 'data-kind': 'run' },
      el('div', { class: 'mem-head' },
        el('span', { class: 'mem-key', text: r.outcome === 'rejected' ? 'Refused a message' : 'Refused some facts' }),
        el('span', { class: 'badge dislike', text: 'hygiene' }),
        el('span', { class: 'mem-meta' }, timeEl(r.startedAt))),
      said ? el('blockquote', { class: 'quote', text: said.text }) : el('p', { class: 'mem-meta' }, 'Message ', el('code', { text: r.message })),
      el('ul', { class: 'reasons', 'aria-label': 'Why it was refused' }, reasons.map((x) => el('li', { text: x }))),
      r.reason && !reasons.some((x) => r.reason.includes(x)) ? el('div', { class: 'mem-meta', text: r.reason }) : null);
  });
}

// ---------------------------------------------------------------- export and forget

async function exportJSON(e) {
  e.preventDefault();
  try {
    const { data } = await api('GET', path`/v1/users/${state.user}/export`);
    const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
    const url = URL.createObjectURL(blob);
    const a = el('a', { href: url, download: `memento-${state.user}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    toast('Export downloaded.');
  } catch (err) {
    toast(err.missing ? 'This server cannot export yet.' : `Export failed: ${err.message}`, { error: true });
  }
}

function forgetMe() {
  const d = $('#forget-dialog');
  d.returnValue = '';
  d.showModal();
}

async function forgetConfirmed() {
  const user = state.user;
  try {
    await api('DELETE', path`/v1/users/${user}`);
  } catch (e) {
    if (e.status !== 404 || e.missing) {
      toast(e.missing ? 'This server cannot forget users yet.' : `Could not forget ${user}: ${e.message}`, { error: true });
      return;
    }
  }
  state.sources = null;
  toast(`Memento forgot everything about ${user}.`);
  announce(`Memento forgot everything about ${user}.`);
  await switchUser(user);
  if (inspectorOpen()) loadTab(state.tab);
}

// ---------------------------------------------------------------- live updates

// Background jobs (summaries, the memory pipeline, preferences, the
// profile) finish after an answer. The page polls /ui/activity: quickly
// while jobs run or an action just happened, slowly otherwise, never while
// hidden; when the job picture changes it reloads what the inspector shows.
const activity = { sig: null, fastUntil: 0, timer: null, unfinished: 0 };

function expectActivity() {
  activity.fastUntil = Date.now() + 20000;
  state.sources = null;
  schedulePoll(300);
}

function schedulePoll(ms) {
  clearTimeout(activity.timer);
  activity.timer = setTimeout(pollActivity, ms);
}

async function pollActivity() {
  if (document.hidden) { schedulePoll(5000); return; }
  try {
    const { data } = await api('GET', '/ui/activity');
    activity.unfinished = data.unfinished;
    const sig = `${data.latest}:${data.unfinished}`;
    const indicator = $('#activity');
    indicator.hidden = data.unfinished === 0;
    $('#activity-text').textContent = data.unfinished === 1 ? 'Updating memory…' : `Updating memory (${data.unfinished} jobs)…`;
    if (activity.sig !== null && sig !== activity.sig) backgroundChanged();
    activity.sig = sig;
  } catch { /* the next poll tries again */ }
  schedulePoll(activity.unfinished > 0 || Date.now() < activity.fastUntil ? 1000 : 5000);
}

let changeTimer;
function backgroundChanged() {
  clearTimeout(changeTimer);
  changeTimer = setTimeout(() => {
    state.sources = null;
    if (inspectorOpen()) loadTab(state.tab, { background: true });
    else markNews(true);
  }, 150);
}

// ---------------------------------------------------------------- wiring

function wire() {
  const input = $('#composer-input');
  $('#composer').addEventListener('submit', (e) => { e.preventDefault(); send(input.value); });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(input.value); }
  });
  input.addEventListener('input', () => autosize(input));

  $('#conversation').addEventListener('click', (e) => {
    const s = e.target.closest('.suggestion');
    if (s) { send(s.textContent); return; }
    const act = e.target.closest('.act');
    if (act) { sendEvent(act); return; }
    const x = e.target.closest('.chip-x');
    if (x) removeChip(x.closest('.chip'));
  });

  $('#thread-list').addEventListener('click', (e) => {
    const a = e.target.closest('a.thread');
    if (!a || e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    selectThread(a.dataset.thread);
  });
  $('#new-thread').addEventListener('click', () => {
    selectThread(newThreadID());
  });
  $('#nav-toggle').addEventListener('click', toggleNav);

  $('#user-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = $('#user-id').value.trim();
    if (!v) { $('#user-id').focus(); return; }
    if (v !== state.user) switchUser(v);
  });

  $('#open-inspector').addEventListener('click', () => (inspectorOpen() ? closeInspector() : openInspector()));
  $('#close-inspector').addEventListener('click', closeInspector);
  $('#scrim').addEventListener('click', () => { closeInspector(); closeNav(); });
  $('#tabs').addEventListener('click', (e) => {
    const t = e.target.closest('[role="tab"]');
    if (t) selectTab(t.dataset.tab);
  });
  $('#tabs').addEventListener('keydown', tabKeys);
  $('#export-link').addEventListener('click', exportJSON);
  $('#forget-me').addEventListener('click', forgetMe);
  $('#forget-dialog').addEventListener('close', () => {
    if ($('#forget-dialog').returnValue === 'forget') forgetConfirmed();
    else $('#forget-me').focus();
  });

  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || $('#forget-dialog').open) return;
    if ($('#threads').classList.contains('open')) { closeNav(); $('#nav-toggle').focus(); return; }
    if (inspectorOpen() && !e.target.closest('.edit-form')) closeInspector();
  });
  window.addEventListener('popstate', () => {
    const q = new URLSearchParams(location.search);
    const user = q.get('user') || state.user;
    const thread = q.get('thread');
    if (user !== state.user) switchUser(user, { push: false });
    else if (thread && thread !== state.thread) selectThread(thread, { push: false });
  });
  document.addEventListener('visibilitychange', () => { if (!document.hidden) schedulePoll(100); });
}

function start() {
  wire();
  setupMic();
  keepAtEnd();
  localizeTimes(document);
  autosize($('#composer-input'));
  const q = new URLSearchParams(location.search);
  let stored = null;
  try { stored = localStorage.getItem(USER_KEY); } catch { /* private mode */ }
  if (q.get('user')) {
    try { localStorage.setItem(USER_KEY, state.user); } catch { /* private mode */ }
  } else if (stored && stored !== state.user) {
    switchUser(stored, { push: false });
  }
  setURL(false);
  scrollToEnd();
  pollActivity();
  document.body.dataset.ready = 'true';
}

start();
