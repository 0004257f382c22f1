// roomtap record --http: the live page of a recording room. Plain script, no library, no network
// beyond the recorder that served it: server-sent events from /events (the tracks as it opens,
// levels five times a second, control changes, joins, leaves, the end), and every change
// as one control request posted to /api (docs/CONTROL-PROTOCOL.md), as `roomtap volume/mute/solo`
// send it. window.roomtap is what the browser test reads.
'use strict';
(() => {
  const MIN_DB = -60, MAX_DB = 20;
  const state = { tracks: new Map(), solo: [], connected: false, ready: false, stopped: false, levels: 0,
    roomTime: 0, errors: [], lastError: '' };
  const $ = (id) => document.getElementById(id);
  const list = $('tracks');

  // A page opened as /?token=...: the recorder has set its cookie; keep the token out of the
  // address bar, the history and any copy of the link.
  if (location.search) history.replaceState(null, '', location.pathname);

  const dbOf = (gain) => gain <= 0 ? MIN_DB : Math.max(MIN_DB, Math.min(MAX_DB, 20 * Math.log10(gain)));
  // The volume as the CLI takes it: "-6dB", "+3.5dB", "-inf dB" (docs/CONTROL-PROTOCOL.md, Volume values).
  const levelText = (db) => db <= MIN_DB ? '-inf dB' : `${db > 0 ? '+' : ''}${Number(db).toFixed(1)}dB`;
  const gainText = (gain) => gain <= 0 ? '−∞ dB' : `${gain.toFixed(2)}×`;
  const clock = (t) => `${Math.floor(t / 60)}:${(t % 60).toFixed(1).padStart(4, '0')}`;

  function status(text, problem) {
    $('status').textContent = text;
    $('status').classList.toggle('problem', !!problem);
  }

  async function send(request) {
    try {
      const response = await fetch('/api', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(request), cache: 'no-store' });
      const reply = await response.json();
      if (!reply.ok) throw new Error(reply.error.message);
      return reply.result;
    } catch (e) {
      state.lastError = String(e.message || e);
      status(`${request.cmd} ${request.track || ''}: ${state.lastError}`, true);
      return null;
    }
  }

  function gainControl(row, cls, label, scope) {
    const box = document.createElement('label');
    box.className = 'gain';
    const input = document.createElement('input');
    Object.assign(input, { type: 'range', min: MIN_DB, max: MAX_DB, step: 0.5, className: cls, title: label });
    input.setAttribute('aria-label', `${label} of ${row.dataset.track}`);
    const out = document.createElement('output');
    input.addEventListener('input', () => { out.textContent = levelText(Number(input.value)); });
    input.addEventListener('change', () => {
      send({ cmd: 'volume', track: row.dataset.track, volume: levelText(Number(input.value)), scope });
    });
    box.append(input, out);
    return box;
  }

  function button(cls, text, title, action) {
    const b = document.createElement('button');
    Object.assign(b, { className: cls, textContent: text, title });
    b.setAttribute('aria-pressed', 'false');
    b.addEventListener('click', action);
    return b;
  }

  function makeRow(name) {
    const row = document.createElement('section');
    row.className = 'track';
    row.dataset.track = name;
    const who = document.createElement('div');
    who.className = 'who';
    who.innerHTML = '<span class="talk" title="talking"></span><span><span class="name"></span><br>'
      + '<span class="source"></span></span>';
    who.querySelector('.name').textContent = name;
    const meter = document.createElement('div');
    meter.className = 'meter';
    meter.innerHTML = '<div class="bar"></div><span class="db"></span>';
    const buttons = document.createElement('div');
    buttons.className = 'buttons';
    buttons.append(
      button('mute', 'Mute', 'Mute what is heard (the file keeps the speaker)', () => {
        const t = state.tracks.get(name);
        send({ cmd: t.muted ? 'unmute' : 'mute', track: name, scope: 'heard' });
      }),
      button('record', 'Off record', 'Take the speaker off the record (silence in their file)', () => {
        const t = state.tracks.get(name);
        send({ cmd: t.record_muted ? 'unmute' : 'mute', track: name, scope: 'record' });
      }),
      button('solo', 'Solo', 'Hear only the soloed tracks', () => {
        const others = state.solo.filter((n) => n !== name);
        const next = state.solo.includes(name) ? others : others.concat([name]);
        send(next.length ? { cmd: 'solo', tracks: next } : { cmd: 'unsolo' });
      }));
    row.append(who, meter, gainControl(row, 'volume', 'Heard volume', 'heard'),
      gainControl(row, 'record-volume', 'Record volume', 'record'), buttons);
    return row;
  }

  function row(name) {
    return list.querySelector(`section.track[data-track="${CSS.escape(name)}"]`);
  }

  function render(name) {
    const t = state.tracks.get(name);
    let r = row(name);
    if (!r) {
      r = makeRow(name);
      list.append(r);
    }
    r.querySelector('.source').textContent = t.source || '';
    r.classList.toggle('left', t.state === 'left');
    r.classList.toggle('muted', !!t.muted);
    r.querySelector('button.mute').setAttribute('aria-pressed', String(!!t.muted));
    r.querySelector('button.mute').textContent = t.muted ? 'Muted' : 'Mute';
    r.querySelector('button.record').setAttribute('aria-pressed', String(!!t.record_muted));
    r.querySelector('button.record').textContent = t.record_muted ? 'Off record' : 'On record';
    r.querySelector('button.solo').setAttribute('aria-pressed', String(state.solo.includes(name)));
    for (const [cls, gain] of [['volume', t.volume], ['record-volume', t.record_volume]]) {
      const input = r.querySelector(`input.${cls}`);
      if (document.activeElement !== input || !input.matches(':active')) input.value = dbOf(gain);
      input.nextElementSibling.textContent = gainText(gain);
    }
    meter(name);
    $('empty').hidden = state.tracks.size > 0;
  }

  function meter(name) {
    const t = state.tracks.get(name);
    const r = row(name);
    if (!t || !r) return;
    const level = t.level_dbfs;
    const width = level == null ? 0 : Math.max(0, Math.min(100, (level - MIN_DB) / -MIN_DB * 100));
    r.querySelector('.meter .bar').style.width = `${width}%`;
    r.querySelector('.meter .db').textContent = level == null ? '' : `${level.toFixed(1)} dBFS`;
    r.classList.toggle('talking', !!t.talking);
  }

  function renderSolo() {
    $('solo-state').textContent = state.solo.length ? `solo: ${state.solo.join(', ')}` : '';
    $('unsolo').hidden = !state.solo.length;
    for (const name of state.tracks.keys()) {
      const r = row(name);
      if (r) r.querySelector('button.solo').setAttribute('aria-pressed', String(state.solo.includes(name)));
    }
  }

  function setTracks(tracks) {
    const names = new Set(tracks.map((t) => t.name));
    for (const name of [...state.tracks.keys()]) {
      if (!names.has(name)) { state.tracks.delete(name); row(name)?.remove(); }
    }
    for (const t of tracks) { state.tracks.set(t.name, t); }
    state.solo = tracks.filter((t) => t.solo).map((t) => t.name);
    for (const t of tracks) render(t.name);
    renderSolo();
    $('empty').hidden = state.tracks.size > 0;
  }

  const handlers = {
    tracks(e) { setTracks(e.tracks); state.ready = true; },
    levels(e) {
      state.levels += 1;
      state.roomTime = e.room_time;
      $('clock').textContent = clock(e.room_time);
      for (const l of e.tracks) {
        const t = state.tracks.get(l.name);
        if (t) { t.level_dbfs = l.level_dbfs; t.talking = l.talking; meter(l.name); }
      }
    },
    control_changed(e) {
      if (e.change === 'solo' || e.change === 'unsolo') {
        state.solo = e.solo;
        renderSolo();
        return;
      }
      const t = state.tracks.get(e.track);
      if (!t) return;
      Object.assign(t, { muted: e.muted, volume: e.volume, record_muted: e.record_muted,
        record_volume: e.record_volume });
      render(e.track);
    },
    track_added(e) { state.tracks.set(e.track.name, e.track); render(e.track.name); },
    track_removed(e) { state.tracks.delete(e.track); row(e.track)?.remove(); renderSolo(); },
    stopped() {
      state.stopped = true;
      document.body.classList.add('stopped');
      status('recording finished: room.json written');
      for (const c of document.querySelectorAll('main button, main input, #unsolo')) c.disabled = true;
      events.close();
    },
  };

  $('unsolo').addEventListener('click', () => send({ cmd: 'unsolo' }));

  const events = new EventSource('/events');
  events.onopen = () => { state.connected = true; if (!state.stopped) status('live'); };
  events.onerror = () => {
    state.connected = false;
    if (!state.stopped) status('connection lost; reconnecting…', true);
  };
  events.onmessage = (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch (e) { return; }
    const handler = handlers[event.event];
    if (handler) handler(event);
  };

  window.addEventListener('error', (e) => state.errors.push(String(e.message)));
  window.addEventListener('unhandledrejection', (e) => state.errors.push(String(e.reason)));

  window.roomtap = {
    ready: () => state.ready && state.connected,
    connected: () => state.connected,
    stopped: () => state.stopped,
    levelsSeen: () => state.levels,
    roomTime: () => state.roomTime,
    solo: () => state.solo.slice(),
    lastError: () => state.lastError,
    errors: () => state.errors.slice(),
    tracks: () => [...state.tracks.values()].map((t) => ({ name: t.name, source: t.source, state: t.state,
      level: t.level_dbfs, talking: t.talking, volume: t.volume, muted: t.muted, recordVolume: t.record_volume,
      recordMuted: t.record_muted, solo: state.solo.includes(t.name) })),
  };
})();
