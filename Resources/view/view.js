// roomtap view: draws the lanes of a recording from the data roomtap embedded in this page, and
// plays the room's own files next to it with Web Audio, every lane on one clock.
// Lanes of 16-bit WAV are read in 10 s stretches (byte ranges when the server gives them);
// FLAC and Opus lanes are decoded whole by the browser (decodeAudioData) on first play.
'use strict';
(() => {
  const started = performance.now();
  const room = JSON.parse(document.getElementById('roomtap-data').textContent);
  const parsed = performance.now();
  const CHUNK = 10; // seconds of audio per read of a WAV lane
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#e15759', '#76b7b2', '#edc948', '#9c755f'];
  const duration = Math.max(room.duration, 0.01);
  const $ = (id) => document.getElementById(id);
  const state = { rendered: false, firstRenderMs: null, errors: [] };
  const view = { start: 0, end: duration };
  const player = {
    ctx: null, master: null, playing: false, origin: 0, ctxStart: 0, pausedAt: 0, gen: 0,
    startedAt: null, pump: null,
    /// 'graph' (Web Audio: buffers through a gain per lane) or 'media' (an <audio> per lane, for a
    /// page opened from disk that may not read the files: the browser plays them, volume at most 1).
    mode: null, clock: null,
  };

  // ---- Data ----------------------------------------------------------------------------------

  function decodePeaks(text) {
    const raw = atob(text);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }

  const lanes = room.lanes.map((lane, i) => ({
    ...lane,
    index: i,
    color: lane.kind === 'mix' ? '#7f7f7f' : lane.kind === 'agent' ? '#17becf' : PALETTE[i % PALETTE.length],
    levels: decodePeaks(lane.peaks),
    muted: lane.kind === 'mix', // the mix holds every speaker: heard twice if it played along
    solo: false,
    volume: 1,
    missing: (lane.note || '').startsWith('file missing'),
    gain: null, analyser: null, sources: [], next: 0, loading: false, whole: null, decoded: null,
  }));
  const byName = new Map(lanes.map((l) => [l.name, l]));
  const decoded = performance.now();
  const lines = room.transcript.map((line, i) => ({ ...line, index: i, match: true, row: 0 }));
  // Overlapping lines (people talking at once) get rows of their own in the transcript strip.
  const rowEnds = [];
  for (const line of [...lines].sort((a, b) => a.start - b.start)) {
    let row = rowEnds.findIndex((end) => end <= line.start);
    if (row < 0) { row = rowEnds.length; rowEnds.push(0); }
    rowEnds[row] = line.end;
    line.row = row;
  }
  const stripRows = Math.max(1, rowEnds.length);

  // ---- Words and numbers ---------------------------------------------------------------------

  function clock(t) {
    const cs = Math.round(Math.max(0, t) * 100);
    const h = Math.floor(cs / 360000), m = Math.floor(cs / 6000) % 60, s = Math.floor(cs / 100) % 60;
    const frac = String(cs % 100).padStart(2, '0');
    const ss = String(s).padStart(2, '0');
    return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}.${frac}` : `${m}:${ss}.${frac}`;
  }

  function tickStep(span, width) {
    const steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400];
    const most = Math.max(2, Math.floor(width / 90));
    return steps.find((s) => span / s <= most) || 28800;
  }

  function speakerColor(speaker) {
    const first = byName.get(String(speaker).split('+')[0]);
    return first ? first.color : '#888888';
  }

  // ---- Building the page ---------------------------------------------------------------------

  function element(tag, attributes, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function build() {
    const when = room.startTime ? new Date(room.startTime).toLocaleString() : '';
    const speakers = lanes.filter((l) => l.kind === 'speaker').length;
    $('meta').textContent = [when, clock(room.duration), `${speakers} speaker(s)`, room.state]
      .filter(Boolean).join(' · ');
    if (lanes.length > 16) $('timeline').classList.add('small');
    if (room.state === 'recording') {
      showBanner('room.json says this room is still recording: it is, or its recorder was stopped by force. '
        + 'The page shows what the files held when roomtap view ran; after roomtap repair DIR, run roomtap view '
        + 'DIR again.');
    }
    const container = $('lanes');
    for (const l of lanes) {
      const row = element('div', { class: 'row lane', 'data-lane': l.name });
      const head = element('div', { class: 'head' });
      const name = element('span', { class: 'name', title: l.name }, l.name);
      name.style.color = l.color;
      head.append(name, element('span', { class: 'kind' }, l.kind));
      l.muteButton = element('button', { class: 'mute', title: `Mute ${l.name} (in this page)` }, 'M');
      l.soloButton = element('button', { class: 'solo', title: `Solo ${l.name}` }, 'S');
      l.slider = element('input', {
        type: 'range', min: '0', max: '2', step: '0.01', value: '1', title: `${l.name}: volume 100%`,
      });
      l.muteButton.addEventListener('click', () => setMuted(l, !l.muted));
      l.soloButton.addEventListener('click', () => setSolo(l, !l.solo));
      l.slider.addEventListener('input', () => setVolume(l, Number(l.slider.value)));
      head.append(l.muteButton, l.soloButton, l.slider);
      const facts = [];
      if (l.note) facts.push(l.note);
      if (l.concealedMs > 0) facts.push(`${l.concealedMs} ms concealed`);
      if (l.holes > 0) facts.push(`${l.holes} hole(s) in the input`);
      if (facts.length) head.append(element('span', { class: 'note', title: facts.join('; ') }, facts.join('; ')));
      l.canvas = element('canvas', { 'aria-label': `${l.name}: level over time` });
      l.canvas.addEventListener('click', (e) => play(timeAt(e, l.canvas)));
      l.canvas.addEventListener('mousemove', (e) => { l.canvas.title = describeAt(l, timeAt(e, l.canvas)); });
      row.append(head, l.canvas);
      container.append(row);
      l.row = row;
    }
    $('strip').addEventListener('click', (e) => {
      const t = timeAt(e, $('strip'));
      const line = lines.find((x) => x.match && x.start <= t && t < x.end);
      play(line ? line.start : t);
    });
    $('strip').addEventListener('mousemove', (e) => {
      const t = timeAt(e, $('strip'));
      const line = lines.find((x) => x.start <= t && t < x.end);
      $('strip').title = line ? `${clock(line.start)} ${line.speaker}: ${line.text}` : clock(t);
    });
    if (!lines.length) $('strip-row').hidden = true;
    $('strip-row').style.height = `${Math.min(90, 12 + 10 * stripRows)}px`;
    buildTranscript();
    $('play').addEventListener('click', () => (player.playing ? pause() : play(currentTime())));
    $('zoom-in').addEventListener('click', () => zoom(0.5, currentTime()));
    $('zoom-out').addEventListener('click', () => zoom(2, currentTime()));
    $('zoom-all').addEventListener('click', () => { view.start = 0; view.end = duration; drawAll(); });
    $('timeline').addEventListener('wheel', onWheel, { passive: false });
    document.addEventListener('keydown', onKey);
    // Space is play/pause everywhere: it must not also press the button last clicked (on keyup).
    document.addEventListener('keyup', (e) => {
      if (e.key === ' ' && !(e.target instanceof HTMLInputElement && e.target.type !== 'range')) e.preventDefault();
    });
    window.addEventListener('resize', drawAll);
    for (const l of lanes) paintButtons(l);
  }

  function buildTranscript() {
    const list = $('lines');
    for (const line of lines) {
      const li = element('li', { 'data-index': String(line.index) });
      li.append(element('time', {}, clock(line.start)));
      const who = element('span', { class: 'speaker' }, line.speaker);
      who.style.color = speakerColor(line.speaker);
      line.textNode = element('span', { class: 'text' }, line.text);
      li.append(who, line.textNode);
      if (line.interrupted) li.append(element('span', { class: 'cut' }, ' (cut off)'));
      li.addEventListener('click', () => play(line.start));
      line.item = li;
      list.append(li);
    }
    $('search').addEventListener('input', () => search($('search').value));
    $('search').addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        const t = currentTime();
        const next = lines.find((x) => x.match && x.start > t + 0.01) || lines.find((x) => x.match);
        if (next) play(next.start);
      } else if (e.key === 'Escape') {
        $('search').blur();
      }
    });
    search('');
    if (room.transcriptNote) showBanner(`The transcript could not be read: ${room.transcriptNote}`);
  }

  /// Shows the lines holding `query` (any case; speaker or text), marks the matches, and returns
  /// how many lines match.
  function search(query) {
    const q = query.trim().toLowerCase();
    let hits = 0;
    for (const line of lines) {
      const text = line.text.toLowerCase();
      line.match = !q || text.includes(q) || line.speaker.toLowerCase().includes(q);
      line.item.hidden = !line.match;
      line.textNode.textContent = '';
      if (q && text.includes(q)) {
        let at = 0;
        for (;;) {
          const found = text.indexOf(q, at);
          if (found < 0) break;
          line.textNode.append(line.text.slice(at, found), element('mark', {}, line.text.slice(found, found + q.length)));
          at = found + q.length;
        }
        line.textNode.append(line.text.slice(at));
      } else {
        line.textNode.textContent = line.text;
      }
      if (line.match) hits++;
    }
    $('hits').textContent = lines.length
      ? (q ? `${hits} of ${lines.length} line(s)` : `${lines.length} line(s)`)
      : 'no transcript (transcript.jsonl: a room recorded with --agent)';
    drawStrip();
    return hits;
  }

  function showBanner(text) {
    const banner = $('banner');
    if (!banner.hidden && banner.textContent.includes(text)) return;
    banner.hidden = false;
    banner.append(element('div', {}, text));
  }

  // ---- Drawing -------------------------------------------------------------------------------

  function fit(canvas) {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(canvas.clientWidth * ratio));
    const h = Math.max(1, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    return { w, h, ratio, g: canvas.getContext('2d') };
  }

  function drawSpans(g, spans, x, y, h, color) {
    g.fillStyle = color;
    for (const [a, b] of spans) {
      if (b < view.start || a > view.end) continue;
      const x0 = x(a);
      g.fillRect(x0, y, Math.max(1, x(b) - x0), h);
    }
  }

  function drawLane(l) {
    const { w, h, ratio, g } = fit(l.canvas);
    const span = view.end - view.start;
    const x = (t) => ((t - view.start) / span) * w;
    g.clearRect(0, 0, w, h);
    g.fillStyle = l.index % 2 ? '#fafafb' : '#ffffff';
    g.fillRect(0, 0, w, h);
    drawSpans(g, room.gaps.map((gap) => [gap.from, gap.to]), x, 0, h, 'rgba(120,120,120,0.25)');
    drawSpans(g, l.silent, x, 0, h, 'rgba(0,0,0,0.045)');
    drawSpans(g, l.recordMuted, x, 0, h, 'rgba(214,39,40,0.13)');
    drawSpans(g, l.spans, x, 0, h, hexAlpha(l.color, 0.13));
    // The level: per device pixel, the loudest 10 ms stretch under it, mirrored around the middle.
    const levels = l.levels;
    const pps = room.peaksPerSecond;
    const mid = h / 2;
    const half = mid - 2 * ratio;
    g.fillStyle = l.color;
    g.beginPath();
    for (let px = 0; px < w; px++) {
      const b0 = Math.floor((view.start + (px / w) * span) * pps);
      const b1 = Math.max(b0 + 1, Math.floor((view.start + ((px + 1) / w) * span) * pps));
      if (b0 >= levels.length) break;
      let top = 0;
      for (let b = Math.max(0, b0); b < b1 && b < levels.length; b++) if (levels[b] > top) top = levels[b];
      if (top > 0) {
        const y = Math.max(0.5, ((top - 1) / 254) * half);
        g.rect(px, mid - y, 1, 2 * y);
      }
    }
    g.fill();
    drawSpans(g, l.heardMuted, x, h - 4 * ratio, 4 * ratio, 'rgba(214,39,40,0.7)');
    for (const c of room.controls) {
      const mine = c.track === l.name && c.change !== 'solo' && c.change !== 'unsolo';
      const wide = c.change === 'solo' || c.change === 'unsolo' || !c.track || !byName.has(c.track);
      if (!mine && !wide) continue;
      if (c.time < view.start || c.time > view.end) continue;
      g.fillStyle = controlColor(c.change);
      g.fillRect(Math.round(x(c.time)) - ratio, 0, 2 * ratio, h);
    }
  }

  function controlColor(change) {
    return { mute: '#d62728', unmute: '#2ca02c', volume: '#ff7f0e', solo: '#9467bd', unsolo: '#9467bd' }[change]
      || '#7f7f7f';
  }

  function hexAlpha(hex, alpha) {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${alpha})`;
  }

  function drawAxis() {
    const canvas = $('axis');
    const { w, h, ratio, g } = fit(canvas);
    const span = view.end - view.start;
    g.clearRect(0, 0, w, h);
    g.fillStyle = '#555555';
    g.font = `${11 * ratio}px system-ui, sans-serif`;
    g.textBaseline = 'middle';
    const step = tickStep(span, w / ratio);
    for (let k = Math.ceil(view.start / step); k * step <= view.end + 1e-9; k++) {
      const t = k * step;
      const px = ((t - view.start) / span) * w;
      g.fillRect(Math.round(px), h - 6 * ratio, ratio, 6 * ratio);
      const label = step < 1 ? `${t.toFixed(1)} s` : duration < 60 ? `${Math.round(t)} s` : clock(t).slice(0, -3);
      g.fillText(label, px + 3 * ratio, h / 2 - 2 * ratio);
    }
  }

  function drawStrip() {
    const canvas = $('strip');
    if (!canvas || !lines.length) return;
    const { w, h, ratio, g } = fit(canvas);
    const span = view.end - view.start;
    const x = (t) => ((t - view.start) / span) * w;
    g.clearRect(0, 0, w, h);
    const rowHeight = (h - 4 * ratio) / stripRows;
    for (const line of lines) {
      if (line.end < view.start || line.start > view.end) continue;
      g.fillStyle = line.match ? speakerColor(line.speaker) : '#dddddd';
      const x0 = x(line.start);
      g.fillRect(x0, 2 * ratio + line.row * rowHeight, Math.max(2, x(line.end) - x0 - ratio), rowHeight - ratio);
    }
  }

  function drawAll() {
    drawAxis();
    for (const l of lanes) drawLane(l);
    drawStrip();
    drawHead();
  }

  function timeAt(event, canvas) {
    const r = canvas.getBoundingClientRect();
    return view.start + ((event.clientX - r.left) / r.width) * (view.end - view.start);
  }

  function describeAt(l, t) {
    const r = l.canvas.getBoundingClientRect();
    const tolerance = (4 / r.width) * (view.end - view.start);
    const near = room.controls.filter((c) => Math.abs(c.time - t) <= tolerance
      && (c.track === l.name || c.change === 'solo' || c.change === 'unsolo' || !c.track));
    if (near.length) return near.map((c) => `${clock(c.time)} ${c.text}`).join('\n');
    const inside = (list) => list.find(([a, b]) => a <= t && t < b);
    const parts = [`${l.name} ${clock(t)}`];
    const talk = inside(l.spans);
    if (talk) parts.push(`talking ${clock(talk[0])} – ${clock(talk[1])}`);
    if (inside(l.recordMuted)) parts.push('off the record');
    if (inside(l.heardMuted)) parts.push('muted for what is heard');
    const gap = room.gaps.find((gp) => gp.from <= t && t < gp.to);
    if (gap) parts.push(`gap: ${gap.reason}`);
    else if (inside(l.silent)) parts.push('no sound in the file');
    return parts.join(' · ');
  }

  function drawHead() {
    const head = $('playhead');
    const t = currentTime();
    $('clock').textContent = `${clock(t)} / ${clock(room.duration)}`;
    const canvas = lanes.length ? lanes[0].canvas : $('axis');
    const r = canvas.getBoundingClientRect();
    const box = $('timeline').getBoundingClientRect();
    if (t < view.start || t > view.end || r.width === 0) { head.style.display = 'none'; return; }
    head.style.display = 'block';
    head.style.left = `${r.left - box.left + ((t - view.start) / (view.end - view.start)) * r.width}px`;
    for (const line of lines) line.item.classList.toggle('current', line.start <= t && t < line.end);
  }

  function zoom(factor, center) {
    const span = Math.min(duration, Math.max(0.5, (view.end - view.start) * factor));
    const c = Math.min(Math.max(center, 0), duration);
    const ratio = (c - view.start) / (view.end - view.start);
    let start = c - ratio * span;
    start = Math.min(Math.max(0, start), duration - span);
    view.start = start;
    view.end = start + span;
    drawAll();
  }

  function pan(seconds) {
    const span = view.end - view.start;
    view.start = Math.min(Math.max(0, view.start + seconds), duration - span);
    view.end = view.start + span;
    drawAll();
  }

  function onWheel(e) {
    const canvas = lanes.length ? lanes[0].canvas : $('axis');
    if (e.ctrlKey) {
      e.preventDefault();
      zoom(e.deltaY > 0 ? 1.25 : 0.8, timeAt(e, canvas));
    } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      e.preventDefault();
      const r = canvas.getBoundingClientRect();
      pan((((e.shiftKey ? e.deltaY : 0) + e.deltaX) / r.width) * (view.end - view.start));
    }
  }

  function onKey(e) {
    if (e.target instanceof HTMLInputElement && e.target.type !== 'range') return;
    const t = currentTime();
    const jump = e.shiftKey ? 30 : 5;
    switch (e.key) {
      case ' ': player.playing ? pause() : play(t); break;
      case 'ArrowLeft': seek(t - jump); break;
      case 'ArrowRight': seek(t + jump); break;
      case 'Home': seek(0); break;
      case 'End': seek(duration); break;
      case '+': case '=': zoom(0.5, t); break;
      case '-': zoom(2, t); break;
      case '0': view.start = 0; view.end = duration; drawAll(); break;
      case '/': $('search').focus(); break;
      default: return;
    }
    e.preventDefault();
  }

  // ---- Gains ---------------------------------------------------------------------------------

  /// What a lane is heard at: 0 when missing, muted, or another lane is soloed; else its volume.
  function effectiveGain(l) {
    const anySolo = lanes.some((x) => x.solo);
    if (l.missing || l.muted || (anySolo && !l.solo)) return 0;
    return l.volume;
  }

  function applyGains() {
    for (const l of lanes) {
      paintButtons(l);
      if (l.gain) l.gain.gain.setValueAtTime(effectiveGain(l), player.ctx.currentTime);
      if (l.media) l.media.volume = Math.min(1, effectiveGain(l));
    }
  }

  function paintButtons(l) {
    l.muteButton.classList.toggle('on', l.muted);
    l.soloButton.classList.toggle('on', l.solo);
    l.row.style.opacity = effectiveGain(l) === 0 && lanes.some((x) => x.solo) ? '0.55' : '1';
  }

  function setMuted(l, muted) { l.muted = muted; applyGains(); }
  function setSolo(l, solo) { l.solo = solo; applyGains(); }
  function setVolume(l, volume) {
    l.volume = Math.min(2, Math.max(0, volume));
    l.slider.value = String(l.volume);
    l.slider.title = `${l.name}: volume ${Math.round(l.volume * 100)}%`;
    applyGains();
  }

  // ---- Audio ---------------------------------------------------------------------------------

  function audioContext() {
    if (player.ctx) return player.ctx;
    const ctx = new AudioContext();
    player.ctx = ctx;
    player.master = ctx.createGain();
    player.master.connect(ctx.destination);
    for (const l of lanes) {
      l.gain = ctx.createGain();
      l.analyser = ctx.createAnalyser();
      l.analyser.fftSize = 2048;
      l.gain.connect(l.analyser);
      l.gain.connect(player.master);
    }
    applyGains();
    return ctx;
  }

  /// The bytes of `url` (all, or `range` [first, last] when the server honours it): resolves to
  /// { bytes, partial }. XMLHttpRequest, not fetch: Chromium reads file: URLs with it (when
  /// started with --allow-file-access-from-files), fetch never.
  function read(url, range) {
    return new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      request.open('GET', url);
      request.responseType = 'arraybuffer';
      if (range) request.setRequestHeader('Range', `bytes=${range[0]}-${range[1]}`);
      request.onload = () => {
        const bytes = request.response;
        // Chromium answers a file: range with status 0 and just the range; a whole file is never
        // as long as a range (which starts past the header).
        const partial = request.status === 206
          || (range && bytes && bytes.byteLength === range[1] - range[0] + 1);
        if (request.status === 206 || ((request.status === 200 || request.status === 0) && bytes)) {
          resolve({ bytes, partial: Boolean(partial) });
        } else reject(new Error(`${url}: HTTP ${request.status}`));
      };
      request.onerror = () => reject(new Error(`${url} cannot be read from here`));
      request.send();
    });
  }

  /// Lane `l`'s audio for chunk `k` (room time k*CHUNK ... (k+1)*CHUNK) as { buffer, start }, or
  /// the whole file decoded ({ buffer, start: 0, whole: true }) for a lane that is not 16-bit WAV.
  async function chunk(l, k) {
    const url = encodeURI(l.file);
    const wav = l.wav;
    if (!wav || wav.bitsPerSample !== 16) {
      if (!l.decoded) {
        const { bytes } = await read(url);
        l.decoded = await player.ctx.decodeAudioData(bytes);
      }
      return { buffer: l.decoded, start: 0, whole: true };
    }
    const perSecond = l.sampleRate * wav.blockAlign;
    const first = k * CHUNK * perSecond;
    if (first >= wav.dataBytes) return null;
    const last = Math.min(wav.dataBytes, first + CHUNK * perSecond) - 1;
    let bytes;
    if (l.whole) {
      bytes = l.whole.slice(wav.dataOffset + first, wav.dataOffset + last + 1);
    } else {
      const got = await read(url, [wav.dataOffset + first, wav.dataOffset + last]);
      if (got.partial) bytes = got.bytes;
      else {
        l.whole = got.bytes; // no byte ranges here (file:, a plain server): keep the file
        bytes = l.whole.slice(wav.dataOffset + first, wav.dataOffset + last + 1);
      }
    }
    const samples = new Int16Array(bytes, 0, Math.floor(bytes.byteLength / 2));
    const channels = l.channels;
    const frames = Math.floor(samples.length / channels);
    const buffer = player.ctx.createBuffer(channels, Math.max(1, frames), l.sampleRate);
    for (let c = 0; c < channels; c++) {
      const out = buffer.getChannelData(c);
      for (let i = 0; i < frames; i++) out[i] = samples[i * channels + c] / 32768;
    }
    return { buffer, start: k * CHUNK };
  }

  /// Starts `piece` of lane `l` where it belongs on the context's clock (late pieces skip ahead,
  /// so every lane stays on the room's time).
  function schedule(l, piece) {
    if (!piece) return;
    const ctx = player.ctx;
    let offset = Math.max(0, player.origin - piece.start);
    let when = player.ctxStart + (piece.start + offset - player.origin);
    if (when < ctx.currentTime) { offset += ctx.currentTime - when; when = ctx.currentTime; }
    if (offset >= piece.buffer.duration) return;
    const source = ctx.createBufferSource();
    source.buffer = piece.buffer;
    source.connect(l.gain);
    source.start(when, offset);
    l.sources.push(source);
    source.onended = () => { l.sources = l.sources.filter((s) => s !== source); };
  }

  function stopSources() {
    for (const l of lanes) {
      if (l.media) l.media.pause();
      for (const s of l.sources) { try { s.stop(); } catch (e) { void e; } }
      l.sources = [];
      l.loading = false;
    }
    if (player.pump) { clearInterval(player.pump); player.pump = null; }
  }

  function failed(l, error) {
    const text = `${l.file}: ${error.message}`;
    if (!state.errors.includes(text)) state.errors.push(text);
    showBanner(location.protocol === 'file:'
      ? `Cannot play ${l.file}: this browser does not let a page opened from disk read the files next to it. `
        + 'Serve the directory (python3 -m http.server --directory DIR, then open localhost:8000) or start '
        + 'Chromium with --allow-file-access-from-files.'
      : `Cannot play ${text}`);
  }

  /// Plays the room from `t` seconds: every lane's first piece is read, then all start together.
  async function play(t) {
    t = Math.min(Math.max(0, t), duration);
    const gen = ++player.gen;
    stopSources();
    player.playing = false;
    player.pausedAt = t;
    player.startedAt = t;
    drawHead();
    $('status').textContent = 'loading…';
    await chooseMode();
    if (gen !== player.gen) return;
    if (player.mode === 'media') { await playMedia(t, gen); return; }
    const ctx = audioContext();
    if (ctx.state !== 'running') await ctx.resume();
    const k = Math.floor(t / CHUNK);
    const playable = lanes.filter((l) => !l.missing);
    const pieces = await Promise.all(playable.map((l) => chunk(l, k).catch((error) => { failed(l, error); return null; })));
    if (gen !== player.gen) return;
    $('status').textContent = '';
    player.origin = t;
    player.ctxStart = ctx.currentTime + 0.05;
    player.playing = true;
    playable.forEach((l, i) => {
      schedule(l, pieces[i]);
      l.next = !pieces[i] || pieces[i].whole ? Infinity : k + 1;
    });
    $('play').textContent = 'Pause';
    player.pump = setInterval(() => pump(gen), 250);
    requestAnimationFrame(frame);
  }

  /// Web Audio when the page may read its files (always over HTTP; from disk, when the browser
  /// lets it: one read of two bytes tells), else media elements.
  async function chooseMode() {
    if (player.mode) return;
    const first = lanes.find((l) => !l.missing);
    if (location.protocol !== 'file:' || !first) { player.mode = 'graph'; return; }
    try {
      await read(encodeURI(first.file), [0, 1]);
      player.mode = 'graph';
    } catch (error) {
      void error;
      player.mode = 'media';
      showBanner('This browser does not let a page opened from disk read the files beside it, so each lane '
        + 'plays through its own audio element: lanes are steered to within tens of ms of each other and volume '
        + 'stops at 100%. For sample-exact playback serve the directory (python3 -m http.server --directory '
        + 'DIR) or start Chromium with --allow-file-access-from-files.');
    }
  }

  function once(target, names) {
    return new Promise((resolve) => {
      const done = () => { for (const n of names) target.removeEventListener(n, done); resolve(); };
      for (const n of names) target.addEventListener(n, done);
    });
  }

  async function seekMedia(media, t) {
    if (media.readyState === 0) await once(media, ['loadedmetadata', 'error']);
    if (Math.abs(media.currentTime - t) < 0.0005) return;
    const seeked = once(media, ['seeked', 'error']);
    media.currentTime = t;
    await seeked;
  }

  /// Plays from `t` through one <audio> per lane: all seek, then all start; every 250 ms the
  /// others are steered towards the first lane's time (rate ±5%, a seek past 250 ms).
  async function playMedia(t, gen) {
    const playable = lanes.filter((l) => !l.missing);
    for (const l of playable) {
      if (!l.media) {
        l.media = new Audio(encodeURI(l.file));
        l.media.preload = 'auto';
      }
    }
    applyGains();
    await Promise.all(playable.map((l) => seekMedia(l.media, t)));
    if (gen !== player.gen) return;
    await Promise.all(playable.map((l) => l.media.play().catch((error) => failed(l, error))));
    if (gen !== player.gen) return;
    $('status').textContent = '';
    player.clock = playable[0].media;
    player.origin = t;
    player.playing = true;
    $('play').textContent = 'Pause';
    player.pump = setInterval(() => {
      const now = player.clock.currentTime;
      for (const l of playable) {
        if (l.media === player.clock) continue;
        const drift = l.media.currentTime - now;
        if (Math.abs(drift) > 0.25) l.media.currentTime = now;
        else l.media.playbackRate = Math.abs(drift) > 0.005 ? 1 - Math.max(-0.05, Math.min(0.05, drift)) : 1;
      }
    }, 250);
    requestAnimationFrame(frame);
  }

  /// Reads the next piece of each WAV lane before the play head needs it.
  function pump(gen) {
    const t = currentTime();
    for (const l of lanes) {
      if (l.missing || l.loading || l.next === Infinity || l.next * CHUNK >= duration) continue;
      if (l.next * CHUNK > t + CHUNK * 0.6) continue;
      l.loading = true;
      const k = l.next;
      chunk(l, k).then((piece) => {
        if (gen !== player.gen) return;
        l.loading = false;
        l.next = k + 1;
        schedule(l, piece);
      }, (error) => { l.loading = false; l.next = Infinity; failed(l, error); });
    }
  }

  function pause() {
    player.pausedAt = currentTime();
    player.gen++;
    stopSources();
    player.playing = false;
    $('play').textContent = 'Play';
    $('status').textContent = '';
    drawHead();
  }

  function seek(t) {
    t = Math.min(Math.max(0, t), duration);
    if (player.playing) play(t);
    else { player.pausedAt = t; keepInView(t); drawHead(); }
  }

  function currentTime() {
    if (!player.playing) return player.pausedAt;
    if (player.mode === 'media') return Math.min(duration, player.clock.currentTime);
    return Math.min(duration, player.origin + Math.max(0, player.ctx.currentTime - player.ctxStart));
  }

  function keepInView(t) {
    const span = view.end - view.start;
    if (t >= view.start && t <= view.end) return;
    view.start = Math.min(Math.max(0, t - span * 0.1), duration - span);
    view.end = view.start + span;
    drawAll();
  }

  function frame() {
    if (!player.playing) return;
    const t = currentTime();
    if (t >= duration) { pause(); player.pausedAt = duration; drawHead(); return; }
    if (t > view.end) keepInView(t);
    drawHead();
    requestAnimationFrame(frame);
  }

  // ---- The test hook (and a console API) -----------------------------------------------------

  function levels() {
    const out = {};
    const data = new Float32Array(2048);
    for (const l of lanes) {
      if (!l.analyser) { out[l.name] = null; continue; }
      l.analyser.getFloatTimeDomainData(data);
      let sum = 0;
      for (const v of data) sum += v * v;
      out[l.name] = Math.sqrt(sum / data.length);
    }
    return out;
  }

  window.roomtap = {
    ready: () => state.rendered,
    firstRenderMs: () => state.firstRenderMs,
    timings: () => state.timings,
    errors: () => state.errors.slice(),
    currentTime,
    playing: () => player.playing,
    startedAt: () => player.startedAt,
    audioState: () => (player.ctx ? player.ctx.state : 'none'),
    lanes: () => lanes.map((l) => ({
      name: l.name, kind: l.kind, muted: l.muted, solo: l.solo, volume: l.volume, note: l.note || null,
      spans: l.spans.length, peaks: l.levels.length,
    })),
    /// Each lane's effective gain, as set on its gain node.
    gains: () => Object.fromEntries(lanes.map((l) => [l.name, effectiveGain(l)])),
    /// The gain nodes' own values (null before the first play made the audio graph).
    graphGains: () => Object.fromEntries(lanes.map((l) => [
      l.name, l.gain ? l.gain.gain.value : l.media ? l.media.volume : null,
    ])),
    /// 'graph' (Web Audio), 'media' (<audio> elements) or null before the first play.
    mode: () => player.mode,
    /// Media elements: the largest distance of a lane's time from the first lane's, seconds.
    drift: () => (player.mode === 'media' && player.clock
      ? Math.max(...lanes.filter((l) => l.media).map((l) => Math.abs(l.media.currentTime - player.clock.currentTime)))
      : 0),
    /// RMS of what each lane sends to the output now (after its gain), 0...1.
    levels,
    /// Where, in the window's CSS pixels, time `t` is on lane `name` (its vertical middle).
    point: (name, t) => {
      const l = byName.get(name);
      const r = l.canvas.getBoundingClientRect();
      return { x: r.left + ((t - view.start) / (view.end - view.start)) * r.width, y: r.top + r.height / 2 };
    },
    transcript: () => lines.filter((x) => x.match).map((x) => ({ start: x.start, speaker: x.speaker, text: x.text })),
    /// `count` samples (first channel, as 16-bit values) of lane `name` from room time `t`, read
    /// as playback reads them (one piece: `count` must not cross a 10 s boundary of a WAV lane).
    samples: async (name, t, count) => {
      audioContext();
      const piece = await chunk(byName.get(name), Math.floor(t / CHUNK));
      const first = Math.round((t - piece.start) * piece.buffer.sampleRate);
      return Array.from(piece.buffer.getChannelData(0).slice(first, first + count), (v) => Math.round(v * 32768));
    },
    play, pause, seek, search,
    mute: (name, on = true) => setMuted(byName.get(name), on),
    solo: (name, on = true) => setSolo(byName.get(name), on),
    volume: (name, v) => setVolume(byName.get(name), v),
  };

  build();
  const built = performance.now();
  drawAll();
  state.rendered = true;
  state.firstRenderMs = performance.now();
  // Where the first render's time went, ms (the script's start is after the HTML was parsed).
  state.timings = {
    scriptStart: started, parse: parsed - started, peaks: decoded - parsed, build: built - decoded,
    draw: state.firstRenderMs - built,
  };
})();
