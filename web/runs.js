// SPDX-License-Identifier: MIT
// The Runs page: one card per run kind (steps grouped by name) with count, mean, p50,
// p99 and a sparkline; a step-time chart that grows as `run` events arrive (traced
// steps marked); live controls (trace next step / next N / every k-th, global tracing
// with a confirm, save, stop) and the runtime's status (events, dropped, tracing,
// pending). Live data comes from /api/live (server-sent events) and /api/runs; a
// file server or a static export shows the recorded steps and no controls.
// A trace request's progress ("k of N landed") is the server's count (its `request`
// in the status and in each `trace` event). The job's end comes as an `end` event,
// after every step it recorded: the page then says so and asks nothing more of the
// server. A stream that breaks without one is retried a few times, further apart
// each time, then left as lost (with a Reconnect link).
import { getJSON, postJSON, eventSource, isStatic, big, parseExact } from './api.js';
import { fmtDur, fmtTime, fmtInt, fmtBytes, escapeHtml } from './format.js';

const MAX_POINTS = 1000;      // steps kept per run kind for the chart
const RUNS_EVERY_MS = 5000;   // exact statistics (p50, p99) re-read at most this often
const QUIET_MS = 5000;        // no event for this long: poll the status
const RETRY_MS = [1000, 2000, 4000, 8000, 16000, 30000]; // reconnection tries, then lost
const esc = escapeHtml;

/* Run kind of a step name: digits stand for the step number ("ProfilerStep#5" -> "ProfilerStep#N"). */
export function runKind(name) {
	const s = String(name ?? '');
	return s ? s.replace(/\d+/g, 'N') : '(unnamed)';
}

function quantile(sorted, p) {
	if (!sorted.length) return null;
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export class Runs {
	constructor(root, app) {
		this.root = root;
		this.app = app;
		this.kinds = new Map();   // name -> {name, count, traced, mean, min, max, p50, p99, last, steps: [...]}
		this.live = false;
		this.status = null;
		this.conn = 'none';       // none | connecting | open | retrying | lost | stopped
		this.ended = null;        // the server's `end` event ({reason, steps, session}) once stopped
		this.lastId = null;       // the last event id seen (a reconnection resumes after it)
		this.fails = 0;           // reconnection tries in a row that failed
		this.es = null;
		this.notes = [];          // landed traces, newest first
		this.req = null;          // the last trace request {steps, every, state, at, error}
		this.selected = null;     // run kind shown in the chart
		this.hover = -1;
		this.lastEvent = 0;
		this.lastRuns = 0;
		this.started = false;
	}

	/* Called once the session summary is loaded: live or recorded? */
	async start(session) {
		if (this.started) return;
		this.started = true;
		this.session = session;
		this.T0 = big(session.start_ns);
		let st = null;
		if (!isStatic()) {
			try { st = await getJSON('api/live/status', null, { quiet: true, exact: true }); } catch { st = null; }
		}
		this.live = !!(st && st.live === true);
		this.render();
		if (this.live) {
			this.onStatus(st);
			await this.loadRuns(true);
			this.connect();
			this.poll = setInterval(() => this.tick(), 1000);
		} else {
			this.fromSteps(session);
		}
		this.app.liveChanged && this.app.liveChanged(this.live);
	}

	/* ---- data ------------------------------------------------------------------ */

	/* Recorded steps (file server, static export): exact statistics per kind. */
	fromSteps(session) {
		const kinds = new Map();
		for (const st of session.step_list || []) {
			const name = runKind(st.name);
			let k = kinds.get(name);
			if (!k) { k = { name, steps: [] }; kinds.set(name, k); }
			k.steps.push({ index: st.index, start: big(st.start_ns), dur: Number(st.dur_ns) || 0, traced: st.traced !== false });
		}
		for (const k of kinds.values()) {
			k.steps.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
			const d = k.steps.map((x) => x.dur).sort((a, b) => a - b);
			k.count = d.length;
			k.traced = k.steps.filter((x) => x.traced).length;
			k.mean = d.reduce((a, b) => a + b, 0) / (d.length || 1);
			k.min = d[0]; k.max = d[d.length - 1];
			k.p50 = quantile(d, 0.5); k.p99 = quantile(d, 0.99);
			k.last = k.steps.length ? k.steps[k.steps.length - 1].dur : null;
			if (k.steps.length > MAX_POINTS) k.steps = k.steps.slice(-MAX_POINTS);
		}
		this.kinds = new Map([...kinds].sort((a, b) => b[1].count - a[1].count));
		if (!this.kinds.has(this.selected)) this.selected = this.kinds.size ? this.kinds.keys().next().value : null;
		this.renderKinds();
	}

	/* Live: the server's per-kind statistics and recent steps. */
	async loadRuns(force) {
		const now = performance.now();
		if (!force && now - this.lastRuns < RUNS_EVERY_MS) return;
		this.lastRuns = now;
		let j;
		try { j = await getJSON('api/runs', { recent: MAX_POINTS }, { quiet: true, exact: true }); } catch (e) { this.runsError = e.message; this.renderKinds(); return; }
		this.runsError = null;
		const kinds = new Map();
		for (const r of j.runs || []) {
			const old = this.kinds.get(r.name);
			const steps = (r.recent || []).map((x) => ({ index: Number(x.index), start: big(x.start_ns), dur: Number(x.dur_ns) || 0, traced: !!x.traced }));
			// keep steps announced by events after the server made this answer
			if (old && old.steps.length) {
				const lastIdx = steps.length ? steps[steps.length - 1].index : -Infinity;
				for (const s of old.steps) if (s.index > lastIdx) steps.push(s);
			}
			kinds.set(r.name, {
				name: r.name, count: Number(r.count) || 0, traced: Number(r.traced) || 0, mean: Number(r.mean_ns),
				min: Number(r.min_ns), max: Number(r.max_ns), p50: Number(r.p50_ns), p99: Number(r.p99_ns), last: Number(r.last_ns),
				steps: steps.slice(-MAX_POINTS), sum: Number(r.mean_ns) * (Number(r.count) || 0),
			});
		}
		this.kinds = kinds;
		this.evicted = Number(j.evicted_kinds) || 0;
		if (!this.kinds.has(this.selected)) this.selected = this.kinds.size ? this.kinds.keys().next().value : null;
		this.renderKinds();
	}

	/*
	 * The event stream. A reconnection resumes after the last event seen (?since=), so
	 * nothing is missed while the server still holds it. The browser's own retry is not
	 * used: it never stops, and each try is an error in the console.
	 */
	connect() {
		if (this.es) this.es.close();
		this.es = null;
		clearTimeout(this.retryTimer);
		if (this.conn === 'stopped') return;
		const es = eventSource(this.lastId !== null ? `api/live?since=${this.lastId}` : 'api/live');
		if (!es) return;
		this.es = es;
		if (this.conn !== 'retrying') this.conn = 'connecting';
		const parse = (ev) => {
			if (ev.lastEventId && /^\d+$/.test(ev.lastEventId)) this.lastId = ev.lastEventId;
			try { return parseExact(ev.data); } catch { return null; }
		};
		es.onopen = () => { if (this.es === es) { this.fails = 0; this.conn = 'open'; this.renderStatus(); } };
		es.onerror = () => { if (this.es === es) this.broken(); };
		es.addEventListener('status', (ev) => { this.seen(); const d = parse(ev); if (d) this.onStatus(d); });
		es.addEventListener('run', (ev) => { this.seen(); const d = parse(ev); if (d) this.onRun(d); });
		es.addEventListener('trace', (ev) => { this.seen(); const d = parse(ev); if (d) this.onTrace(d); });
		es.addEventListener('reset', (ev) => { this.seen(); parse(ev); this.loadRuns(true); this.app.liveData && this.app.liveData(null, null, true); });
		es.addEventListener('end', (ev) => { const d = parse(ev); this.onEnd(d || {}, true); });
	}

	/* The stream broke without an `end`: try again a few times, further apart each time. */
	broken() {
		if (this.es) { this.es.close(); this.es = null; }
		if (this.conn === 'stopped') return;
		if (this.stopping) { this.onEnd({ reason: 'api' }); return; } // (its `end` was lost with the stream)
		if (this.fails >= RETRY_MS.length) {
			this.conn = 'lost';
			this.lostAt = this.lostAt || Date.now();
		} else {
			const wait = RETRY_MS[this.fails++];
			this.conn = 'retrying';
			this.lostAt = this.lostAt || Date.now();
			this.retryTimer = setTimeout(() => this.connect(), wait);
		}
		this.renderStatus();
		this.renderControls();
	}

	/* Reconnect now (the Reconnect link once the connection is lost). */
	reconnect() {
		this.fails = 0;
		this.conn = 'retrying';
		this.connect();
		this.renderStatus();
	}

	/*
	 * The server's last event: every step it recorded came before it. The page stops
	 * asking the server for anything (it is gone, or serving another file). Read from
	 * the stream (fromStream), the page first says so: the server's stop waits for that
	 * (POST /api/live/ended), so what the page asked before reading `end` is answered.
	 */
	onEnd(d, fromStream) {
		if (this.conn === 'stopped') return;
		if (fromStream) postJSON('api/live/ended', {}).catch(() => {});
		this.ended = { reason: d.reason || 'stop', steps: d.steps, session: d.session || (this.status && this.status.session) || '', next: d.next || '' };
		this.conn = 'stopped';
		if (this.es) { this.es.close(); this.es = null; }
		clearTimeout(this.retryTimer);
		clearInterval(this.poll);
		this.dirtyRuns = false;
		const r = this.req;
		if (r && ['sending', 'armed', 'tracing', 'processing'].includes(r.state)) r.state = 'ended';
		// the server's exact P50/P99 cannot be asked for any more: where the page holds every
		// step of a kind, its own (nearest rank, as /api/runs of a file); else the last read
		for (const k of this.kinds.values()) {
			if (!k.count || k.steps.length < k.count) continue;
			const d = k.steps.map((x) => x.dur).sort((a, b) => a - b);
			k.p50 = quantile(d, 0.5);
			k.p99 = quantile(d, 0.99);
		}
		this.app.liveEnded && this.app.liveEnded(this.ended);
		this.renderStatus();
		this.renderControls();
		this.renderKinds();
	}

	seen() {
		this.lastEvent = performance.now();
		this.lostAt = 0;
		if (this.conn !== 'open' && this.conn !== 'stopped') { this.conn = 'open'; this.fails = 0; this.renderStatus(); }
	}

	/* Once a second: stale statistics, and a status poll when the open stream is quiet. */
	async tick() {
		if (this.conn !== 'open' || this.stopping) return;
		if (this.dirtyRuns) { this.dirtyRuns = false; this.loadRuns(); }
		if (performance.now() - this.lastEvent < QUIET_MS || this.polling) return;
		this.polling = true;
		try {
			const st = await getJSON('api/live/status', null, { quiet: true, exact: true });
			if (this.conn === 'open') this.onStatus(st);
		} catch {
			// the stream says it too (and is retried); nothing more here
		} finally {
			this.polling = false;
			this.lastEvent = performance.now();
		}
	}

	onStatus(st) {
		const prev = this.status;
		this.status = st;
		if (prev && st.generation !== undefined && st.generation !== prev.generation) this.app.liveData && this.app.liveData(null, null);
		const ready = this.progress(st.request);
		this.renderStatus();
		this.renderControls();
		if (ready) this.landed();
	}

	/*
	 * The server's count of a trace request ({id, steps, begun, landed, failed}) for the
	 * request this page made: armed (none begun), tracing (some begun), processing (all
	 * begun, not all landed), ready (all landed). True when it just became ready.
	 */
	progress(q) {
		const r = this.req;
		if (!q || !r || r.id === null || String(q.id) !== String(r.id)) return false;
		if (!['armed', 'tracing', 'processing'].includes(r.state)) return false;
		r.begun = Math.max(r.begun, Number(q.begun) || 0);
		r.landed = Math.max(r.landed, Number(q.landed) || 0);
		r.failed = Math.max(r.failed, Number(q.failed) || 0);
		r.state = r.landed >= r.steps ? 'ready' : r.begun === 0 ? 'armed' : r.begun < r.steps ? 'tracing' : 'processing';
		return r.state === 'ready';
	}

	/* A requested trace is all in: say so (the notice opens its first landed step). */
	landed() {
		const r = this.req;
		if (r && r.state === 'ready' && r.note && this.app.traceLanded) this.app.traceLanded(r.note);
	}

	onRun(d) {
		const name = d.name || '(unnamed)';
		let k = this.kinds.get(name);
		if (!k) {
			k = { name, count: 0, traced: 0, mean: 0, min: null, max: null, p50: null, p99: null, last: null, steps: [], sum: 0 };
			this.kinds.set(name, k);
			if (!this.selected) this.selected = name;
		}
		const dur = Number(d.dur_ns) || 0;
		k.steps.push({ index: Number(d.index), start: big(d.start_ns), dur, traced: !!d.traced });
		if (k.steps.length > MAX_POINTS) k.steps.splice(0, k.steps.length - MAX_POINTS);
		k.count++;
		k.sum = (k.sum || 0) + dur;
		k.mean = k.sum / k.count;
		k.last = dur;
		if (d.traced) k.traced++;
		k.min = k.min === null ? dur : Math.min(k.min, dur);
		k.max = k.max === null ? dur : Math.max(k.max, dur);
		this.dirtyRuns = true; // p50 / p99 from the server's histogram, at most every 5 s
		this.scheduleDraw();
		const start = big(d.start_ns);
		this.app.liveData && this.app.liveData(start, start + BigInt(Math.round(dur)));
	}

	/*
	 * Part of a traced step (or a trace) landed in the file. complete: all of the step is
	 * in (its runtime events and the profiler traces it waits for); only then is it a
	 * "Trace landed" note. request: the server's count for the request it belongs to.
	 */
	onTrace(d) {
		const note = {
			step: d.step === null || d.step === undefined ? null : Number(d.step), name: d.name || '', source: d.source || '',
			events: Number(d.events) || 0, start: big(d.start_ns), end: big(d.end_ns), at: Date.now(),
			error: d.error ? String(d.error) : '',
		};
		const complete = d.complete !== false;
		if (complete) {
			this.notes.unshift(note);
			if (this.notes.length > 20) this.notes.length = 20;
		}
		const r = this.req;
		if (complete && r && d.request && String(d.request.id) === String(r.id) && !r.note) r.note = note;
		const ready = this.progress(d.request);
		// the step is traced now
		for (const k of this.kinds.values()) for (const s of k.steps) if (note.step !== null && s.index === note.step && !s.traced) { s.traced = true; }
		this.renderNotes();
		this.renderControls();
		this.scheduleDraw();
		this.app.liveData && this.app.liveData(note.start, note.end);
		if (ready) this.landed();
	}

	/*
	 * The global tracing switch: the server's `global` (tracing is also on while a
	 * requested step runs, so it cannot tell); an older server without it: as this page
	 * last set it, while tracing is on.
	 */
	globalOn() {
		const st = this.status;
		if (st && typeof st.global === 'boolean') return st.global;
		return !!(st && st.tracing && this.globalWanted);
	}

	/* ---- controls ------------------------------------------------------------------ */

	async trace(body, label) {
		const r = { ...body, label, state: 'sending', at: Date.now(), id: null, begun: 0, landed: 0, failed: 0, note: null };
		this.req = r;
		this.renderControls();
		try {
			const j = await postJSON('api/trace', body);
			if (this.req !== r) return; // another request replaced it meanwhile
			if (body.steps === 0 && body.every === undefined) { this.req = null; this.app.toast('Trace request cancelled'); }
			else if (body.steps !== undefined && body.steps > 0) {
				r.id = j.request === null || j.request === undefined ? null : String(j.request);
				r.state = 'armed';
				// events may have counted some of it before this answer came
				if (this.status && this.progress(this.status.request)) this.landed();
			} else { this.req.state = 'every'; this.req.every = Number(j.every) || 0; }
			if (this.status) { this.status.pending = j.pending ?? this.status.pending; this.status.every = j.every ?? this.status.every; }
		} catch (e) {
			this.req.state = 'error';
			this.req.error = e.message;
		}
		this.renderControls();
		this.renderStatus();
	}

	async setGlobal(on) {
		if (on && !window.confirm('Global tracing records every op of every step. It slows the job down (often by 10–50%) and the session file grows quickly. Turn it on?')) {
			this.renderControls();
			return;
		}
		try {
			const j = await postJSON('api/tracing', { on });
			this.globalWanted = !!j.tracing;
			if (this.status) {
				this.status.tracing = !!j.tracing;
				if (typeof this.status.global === 'boolean') this.status.global = !!j.tracing;
			}
			this.app.toast(j.tracing ? 'Global tracing is on' : 'Global tracing is off');
		} catch (e) {
			this.app.toast(`Could not switch tracing: ${e.message}`);
		}
		this.renderControls();
		this.renderStatus();
	}

	async save() {
		const btn = this.root.querySelector('.r-save');
		if (btn) btn.disabled = true;
		try {
			const j = await postJSON('api/save', {});
			this.saved = `Saved ${fmtBytes(Number(j.bytes) || 0)} to ${j.path}`;
			this.app.toast('Session saved');
		} catch (e) {
			this.saved = `Save failed: ${e.message}`;
		}
		if (btn) btn.disabled = false;
		this.renderControls();
	}

	async stop() {
		if (!window.confirm('Stop the tftracer server? The training job keeps running, but this page loses its connection and the live controls.')) return;
		try {
			this.stopping = true; // the stream's end is ours: its `end` event follows
			await postJSON('api/stop', {});
			this.app.toast('Server stopping');
		} catch (e) {
			this.stopping = false;
			this.app.toast(`Could not stop the server: ${e.message}`);
		}
		this.renderStatus();
		this.renderControls();
	}

	/* ---- rendering ----------------------------------------------------------------- */

	render() {
		this.root.innerHTML = `
		<div class="runs">
			<section class="panel r-statuspanel"><h3>Runtime <span class="r-conn"></span></h3><div class="r-status"></div></section>
			<div class="r-banner" hidden></div>
			${this.live ? `<section class="panel r-controls"><h3>Tracing</h3>
				<div class="r-row">
					<button type="button" class="r-next" title="Record every op of the next step">Trace next step</button>
					<span class="r-group"><button type="button" class="r-nextn">Trace next</button><input type="number" class="r-n" min="1" max="100000" value="5" aria-label="number of steps"> steps</span>
					<span class="r-group"><button type="button" class="r-every">Trace every</button><input type="number" class="r-k" min="1" max="1000000" value="100" aria-label="k"><span>-th step</span><button type="button" class="r-every-off" title="Stop tracing every k-th step">off</button></span>
					<label class="r-switch" title="Trace every step (slows the job down)"><input type="checkbox" class="r-global"><span class="r-slider"></span> Global tracing</label>
					<span class="spacer"></span>
					<button type="button" class="r-save" title="Write a consistent copy of the live session next to it">Save session</button>
					<button type="button" class="r-stop danger" title="Stop the tftracer server (the job goes on)">Stop server</button>
				</div>
				<p class="r-req muted"></p></section>` : `<p class="r-static muted">${isStatic() ? 'Static export: the steps recorded in the file.' : 'Recorded session (not live): the steps in the file.'} Live controls (trace the next step, global tracing, save, stop) appear when the page is served by the running program (<code>tftracer.TracingServer</code>).</p>`}
			<div class="r-notes"></div>
			<section class="panel r-chartpanel"><h3>Step time <select class="r-kind" aria-label="Run kind"></select> <span class="r-chartstats muted"></span></h3>
				<div class="stepchart-wrap"><canvas class="r-chart" height="200"></canvas><div class="step-tip" hidden></div></div>
				<p class="legend"><span class="sw traced-hl"></span> traced <span class="sw untraced"></span> not traced · dashed: median · click a bar to open the step on the Timeline</p></section>
			<div class="r-cards"></div>
		</div>`;
		const $ = (s) => this.root.querySelector(s);
		if (this.live) {
			$('.r-next').onclick = () => this.trace({ steps: 1 }, 'the next step');
			$('.r-nextn').onclick = () => { const n = Math.max(1, Math.min(100000, Math.round(+$('.r-n').value || 1))); this.trace({ steps: n }, `the next ${n} steps`); };
			$('.r-every').onclick = () => { const k = Math.max(1, Math.min(1000000, Math.round(+$('.r-k').value || 1))); this.trace({ every: k }, `every ${k}-th step`); };
			$('.r-every-off').onclick = () => this.trace({ every: 0 }, 'no periodic tracing');
			$('.r-global').onchange = (e) => this.setGlobal(e.target.checked);
			$('.r-save').onclick = () => this.save();
			$('.r-stop').onclick = () => this.stop();
			this.root.querySelector('.r-req').addEventListener('click', (e) => {
				const a = e.target.closest('[data-act]');
				if (!a) return;
				e.preventDefault();
				if (a.dataset.act === 'cancel') this.trace({ steps: 0 }, 'cancel');
				else if (a.dataset.act === 'open' && this.req && this.req.note) this.openNote(this.req.note);
			});
		}
		$('.r-kind').onchange = (e) => { this.selected = e.target.value; this.drawChart(); this.renderChartStats(); };
		this.root.querySelector('.r-notes').addEventListener('click', (e) => {
			const a = e.target.closest('[data-note]');
			if (!a) return;
			e.preventDefault();
			const n = this.notes[+a.dataset.note];
			if (n) this.openNote(n);
		});
		this.root.querySelector('.r-cards').addEventListener('click', (e) => {
			const c = e.target.closest('[data-kind]');
			if (!c) return;
			this.selected = c.dataset.kind;
			this.renderKinds();
		});
		this.setupChart();
		this.renderStatus();
		this.renderControls();
		this.renderNotes();
	}

	renderStatus() {
		const el = this.root.querySelector('.r-status');
		if (!el) return;
		const conn = this.root.querySelector('.r-conn');
		const st = this.status;
		if (!this.live) {
			conn.className = 'r-conn muted';
			conn.textContent = isStatic() ? '· static export' : '· not live';
			const s = this.session || {};
			el.innerHTML = `<dl class="r-kv"><dt>Steps</dt><dd>${fmtInt((s.step_list || []).length)}</dd><dt>Events</dt><dd>${fmtInt((Number(s.slices) || 0) + (Number(s.instants) || 0) + (Number(s.counters) || 0))}</dd>
				<dt>Dropped</dt><dd class="${Number(s.dropped) > 0 ? 'warn' : ''}">${fmtInt(s.dropped ?? 0)}</dd></dl>`;
			this.app.setLive && this.app.setLive(null);
			return;
		}
		const label = { none: '', connecting: 'connecting…', open: 'live', retrying: 'reconnecting…', lost: 'connection lost', stopped: 'stopped' }[this.conn] || this.conn;
		conn.className = `r-conn c-${this.conn}`;
		conn.textContent = `● ${label}`;
		this.app.setLive && this.app.setLive(this.conn);
		if (!st) { el.innerHTML = '<p class="loading">waiting for the runtime…</p>'; return; }
		const dropped = Number(st.dropped) || 0;
		const tracing = this.conn === 'stopped' ? '–' : st.tracing ? (this.globalOn() ? 'on (global)' : 'on') : 'off';
		// once stopped, what the server said last, and that it is over
		const state = this.conn === 'stopped' ? 'stopped' : st.state || '–';
		el.innerHTML = `<dl class="r-kv">
			<dt>State</dt><dd class="r-state-v ${state === 'running' ? 'ok' : 'warn'}">${esc(state)}</dd>
			<dt>Events</dt><dd>${fmtInt(st.events)}</dd>
			<dt title="events lost because a thread's trace buffer was full">Dropped</dt><dd class="r-dropped ${dropped > 0 ? 'warn' : ''}">${fmtInt(dropped)}</dd>
			<dt>Steps</dt><dd>${fmtInt(st.steps)}</dd>
			<dt>Tracing</dt><dd class="r-tracing">${esc(tracing)}</dd>
			<dt title="traced steps requested and not begun yet">Pending</dt><dd class="r-pending">${fmtInt(st.pending ?? 0)}</dd>
			<dt title="trace every k-th step (0 = off)">Every</dt><dd>${Number(st.every) ? `${fmtInt(st.every)}-th step` : 'off'}</dd>
			<dt>Threads</dt><dd>${fmtInt(st.threads)}</dd>
			<dt>Written</dt><dd>${esc(fmtBytes(Number(st.bytes_written) || 0))}</dd>
			${Number(st.imports) || Number(st.import_errors) ? `<dt>Imports</dt><dd class="${Number(st.import_errors) ? 'warn' : ''}">${fmtInt(st.imports)}${Number(st.import_errors) ? ` · ${fmtInt(st.import_errors)} failed` : ''}</dd>` : ''}
		</dl>`;
		const banner = this.root.querySelector('.r-banner');
		const msgs = [];
		if (dropped > 0) msgs.push(`<b>${esc(fmtInt(dropped))} events dropped</b>: a thread's trace buffer overflowed, so counts and times undercount. Trace fewer steps or enlarge the buffers.`);
		if (st.state === 'disabled') msgs.push(`<b>The runtime disabled itself</b>${st.disabled_reason ? `: ${esc(st.disabled_reason)}` : ''}. Steps are no longer recorded.`);
		if (st.tracing && this.globalOn()) msgs.push('<b>Global tracing is on</b>: every step is traced, which slows the job down.');
		if (this.conn === 'retrying') msgs.push('<b>The connection to the training job broke</b>; reconnecting.');
		if (this.conn === 'lost') msgs.push(`<b>Connection to the training job lost</b>${this.lostAt ? ` (no answer since ${esc(new Date(this.lostAt).toLocaleTimeString())})` : ''}: the job may have ended or crashed. <a href="#" class="r-reconnect">Reconnect</a>`);
		banner.hidden = !msgs.length;
		banner.innerHTML = msgs.map((m) => `<p>${m}</p>`).join('');
		const rc = banner.querySelector('.r-reconnect');
		if (rc) rc.onclick = (e) => { e.preventDefault(); this.reconnect(); };
	}

	/* What the end of the live session means, for the controls' line. */
	endText() {
		const e = this.ended || {};
		const file = e.session ? ` <code>${esc(e.session)}</code>` : '';
		const n = e.steps !== undefined && e.steps !== null ? `${esc(fmtInt(Number(e.steps)))} steps recorded, all shown here. ` : '';
		if (e.reason === 'api') return `The tftracer server was stopped from this page. The job goes on, untraced by this page; its session file${file} keeps what was recorded.`;
		if (e.reason === 'serve') return 'The server now serves another session file: <a href="" class="r-reload">reload the page</a> to see it.';
		if (e.next === 'serve') return `The job stopped: ${n}<code>tftracer record --serve</code> serves its session file${file} at this address now: <a href="" class="r-reload">reload the page</a> to explore all of it.`;
		return `The job stopped: ${n}Its session file${file} has it all: <code>tftracer ${esc(e.session || 'FILE')}</code> opens it.`;
	}

	renderControls() {
		if (!this.live) return;
		const $ = (s) => this.root.querySelector(s);
		const g = $('.r-global');
		if (g) {
			if (this.status && this.globalWanted === undefined) this.globalWanted = false;
			g.checked = this.status && typeof this.status.global === 'boolean' ? this.status.global : !!this.globalWanted;
		}
		const stopped = this.conn === 'stopped';
		for (const b of this.root.querySelectorAll('.r-controls button, .r-controls input')) b.disabled = stopped;
		const r = this.req;
		const el = $('.r-req');
		let html = '';
		if (r) {
			const steps = ['armed', 'tracing', 'processing', 'ready'];
			const idx = steps.indexOf(r.state);
			if (r.state === 'error') html = `<span class="error">Trace request failed: ${esc(r.error)}</span>`;
			else if (r.state === 'sending') html = `Requesting ${esc(r.label)}…`;
			else if (r.state === 'every') html = r.every ? `Tracing every ${esc(fmtInt(r.every))}-th step.` : 'Periodic tracing is off.';
			else if (r.state === 'ended') html = `Trace ${esc(r.label)}: the job stopped first (${esc(fmtInt(r.landed || 0))} of ${esc(fmtInt(r.steps))} landed).`;
			else {
				html = `Trace ${esc(r.label)}: ${steps.map((s, i) => `<span class="r-state ${i < idx ? 'done' : i === idx ? 'on' : ''}">${{ armed: 'armed (waiting for the step)', tracing: 'tracing', processing: 'processing', ready: 'ready' }[s]}</span>`).join(' → ')}`;
				if (r.state === 'armed') html += ' <a href="#" data-act="cancel">cancel</a>';
				// the server's count: a step has landed once all of it (its profiler trace too) is in
				if (r.steps > 1) html += ` <span class="r-count muted">(${fmtInt(r.landed || 0)} of ${fmtInt(r.steps)} landed)</span>`;
				if (r.failed) html += ` <span class="warn">${fmtInt(r.failed)} without their profiler trace</span>`;
				if (r.state === 'ready' && r.note) html += ` <a href="#" data-act="open" class="r-open">open step ${esc(r.note.step ?? '')} on the Timeline</a>`;
			}
		}
		if (this.saved) html += `${html ? '<br>' : ''}${esc(this.saved)}`;
		if (stopped) html = `${this.endText()}${r && r.state === 'ended' ? ` <span class="muted">(${esc(r.label)}: ${esc(fmtInt(r.landed || 0))} of ${esc(fmtInt(r.steps))} landed first)</span>` : ''}`;
		el.innerHTML = html;
	}

	renderNotes() {
		const el = this.root.querySelector('.r-notes');
		if (!el) return;
		el.innerHTML = this.notes.slice(0, 5).map((n, i) => `<div class="r-note${i === 0 && Date.now() - n.at < 30000 ? ' fresh' : ''}">
			Trace landed: <b>${n.step !== null ? `step ${esc(n.step)}` : esc(n.name || 'trace')}</b> ${n.name && n.step !== null ? `<span class="muted">${esc(n.name)}</span>` : ''}
			<span class="muted">${esc(n.source)}${n.events ? ` · ${esc(fmtInt(n.events))} events` : ''} · ${esc(fmtDur(Number(n.end - n.start)))}</span>${n.error ? ` <span class="warn" title="${esc(n.error)}">without its profiler trace</span>` : ''}
			<a href="#" data-note="${i}">Open on the Timeline →</a></div>`).join('');
	}

	openNote(n) {
		this.app.openStep({ abs: n.start, dur: Math.max(1, Number(n.end - n.start)) });
	}

	renderKinds() {
		const sel = this.root.querySelector('.r-kind');
		if (!sel) return;
		const names = [...this.kinds.keys()];
		sel.innerHTML = names.map((n) => `<option value="${esc(n)}"${n === this.selected ? ' selected' : ''}>${esc(n)}</option>`).join('') || '<option value="">no steps</option>';
		const cards = this.root.querySelector('.r-cards');
		if (!this.kinds.size) {
			cards.innerHTML = `<p class="empty">${this.live ? 'No step has finished yet. Steps come from <code>tftracer.step()</code> (or the hooks) in the training loop.' : 'No step markers in this session (<code>ProfilerStep#N</code> slices, TensorFlow steps or runtime steps).'}${this.runsError ? ` <span class="error">${esc(this.runsError)}</span>` : ''}</p>`;
		} else {
			cards.innerHTML = [...this.kinds.values()].map((k) => `<section class="card r-card${k.name === this.selected ? ' on' : ''}" data-kind="${esc(k.name)}" title="Show this run kind in the chart">
				<h3 title="${esc(k.name)}">${esc(k.name)}</h3>
				<canvas class="r-spark" width="220" height="36"></canvas>
				<dl><dt>Runs</dt><dd>${fmtInt(k.count)}</dd><dt>Traced</dt><dd>${fmtInt(k.traced)}</dd>
				<dt>Mean</dt><dd>${esc(fmtDur(k.mean))}</dd><dt>P50</dt><dd>${esc(fmtDur(k.p50))}</dd><dt>P99</dt><dd>${esc(fmtDur(k.p99))}</dd>
				<dt>Min / max</dt><dd>${esc(fmtDur(k.min))} / ${esc(fmtDur(k.max))}</dd><dt>Last</dt><dd>${esc(fmtDur(k.last))}</dd></dl></section>`).join('')
				+ (this.evicted ? `<p class="muted">${fmtInt(this.evicted)} more run kinds were dropped from memory (over 64 distinct step names).</p>` : '');
			for (const c of cards.querySelectorAll('.r-card')) this.drawSpark(c.querySelector('canvas'), this.kinds.get(c.dataset.kind));
		}
		this.renderChartStats();
		this.drawChart();
	}

	renderChartStats() {
		const el = this.root.querySelector('.r-chartstats');
		const k = this.kinds.get(this.selected);
		if (!el) return;
		el.textContent = k ? `${fmtInt(k.count)} runs · mean ${fmtDur(k.mean)} · p50 ${fmtDur(k.p50)} · p99 ${fmtDur(k.p99)}${k.steps.length < k.count ? ` · last ${fmtInt(k.steps.length)} shown` : ''}` : '';
	}

	scheduleDraw() {
		if (this.drawPending) return;
		this.drawPending = true;
		requestAnimationFrame(() => {
			this.drawPending = false;
			if (this.root.hidden) { this.needCards = true; return; }
			this.renderChartStats();
			this.drawChart();
			this.updateCards();
		});
	}

	/* Refresh the cards' numbers and sparklines without rebuilding them (cheap per event). */
	updateCards() {
		const cards = this.root.querySelectorAll('.r-card');
		if (cards.length !== this.kinds.size) { this.renderKinds(); return; }
		for (const c of cards) {
			const k = this.kinds.get(c.dataset.kind);
			if (!k) { this.renderKinds(); return; }
			const dd = c.querySelectorAll('dd');
			const v = [fmtInt(k.count), fmtInt(k.traced), fmtDur(k.mean), fmtDur(k.p50), fmtDur(k.p99), `${fmtDur(k.min)} / ${fmtDur(k.max)}`, fmtDur(k.last)];
			v.forEach((t, i) => { if (dd[i] && dd[i].textContent !== t) dd[i].textContent = t; });
			this.drawSpark(c.querySelector('canvas'), k);
		}
	}

	show() {
		if (this.needCards) { this.needCards = false; this.renderKinds(); }
		else this.drawChart();
		this.renderNotes();
	}

	colors() {
		const cs = getComputedStyle(document.documentElement);
		const v = (n, d) => cs.getPropertyValue(n).trim() || d;
		// the step colours are the theme's, shared with the Overview (style.css --step-*)
		return { fg: v('--fg', '#222'), muted: v('--muted', '#777'), accent: v('--step-untraced', '#0969da'), grid: v('--tl-grid', 'rgba(0,0,0,0.08)'), hl: v('--step-traced', '#e36209') };
	}

	drawSpark(c, k) {
		if (!c || !k) return;
		const dpr = window.devicePixelRatio || 1;
		const W = c.clientWidth || 220, H = 36;
		if (c.width !== Math.round(W * dpr)) { c.width = Math.round(W * dpr); c.height = Math.round(H * dpr); }
		const ctx = c.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, W, H);
		const pts = k.steps.slice(-120);
		if (!pts.length) return;
		const max = Math.max(...pts.map((p) => p.dur)) || 1;
		const C = this.colors();
		const bw = W / Math.max(pts.length, 30);
		pts.forEach((p, i) => {
			const h = Math.max(1, p.dur / max * (H - 2));
			ctx.fillStyle = p.traced ? C.hl : C.accent;
			ctx.globalAlpha = p.traced ? 1 : 0.55;
			ctx.fillRect(i * bw, H - h, Math.max(1, bw - 0.5), h);
		});
		ctx.globalAlpha = 1;
	}

	setupChart() {
		const c = this.root.querySelector('.r-chart');
		const tip = this.root.querySelector('.r-chartpanel .step-tip');
		this.canvas = c;
		new ResizeObserver(() => this.drawChart()).observe(c);
		c.addEventListener('mousemove', (e) => {
			const i = this.barAt(e);
			if (i !== this.hover) { this.hover = i; this.drawChart(); }
			const k = this.kinds.get(this.selected);
			const st = k && i >= 0 ? k.steps[i] : null;
			if (!st) { tip.hidden = true; return; }
			tip.hidden = false;
			tip.innerHTML = `<b>step ${esc(st.index)}</b> ${esc(fmtDur(st.dur))}${st.traced ? ' · traced' : ''}`;
			const r = c.getBoundingClientRect();
			tip.style.transform = `translate(${Math.min(e.clientX - r.left + 12, r.width - 160)}px, ${e.clientY - r.top - 36}px)`;
		});
		c.addEventListener('mouseleave', () => { this.hover = -1; tip.hidden = true; this.drawChart(); });
		c.addEventListener('click', (e) => {
			const k = this.kinds.get(this.selected);
			const i = this.barAt(e);
			const st = k && i >= 0 ? k.steps[i] : null;
			if (st) this.app.openStep({ abs: st.start, dur: Math.max(1, st.dur) });
		});
	}

	layoutChart() {
		const k = this.kinds.get(this.selected);
		const n = k ? k.steps.length : 0;
		const w = this.canvas.clientWidth, h = 200;
		const left = 60, right = 10, top = 10, bottom = 20;
		const pw = Math.max(10, w - left - right);
		// at least 60 slots so a young run does not draw a few huge bars
		const slots = this.live ? Math.max(n, 60) : Math.max(n, 12);
		return { k, n, w, h, left, top, bottom, pw, ph: h - top - bottom, per: pw / slots };
	}

	barAt(e) {
		if (!this.canvas) return -1;
		const L = this.layoutChart();
		const r = this.canvas.getBoundingClientRect();
		const x = e.clientX - r.left - L.left;
		if (x < 0 || !L.n) return -1;
		const i = Math.floor(x / L.per);
		return i < L.n ? i : -1;
	}

	drawChart() {
		const c = this.canvas;
		if (!c || !c.isConnected || !c.clientWidth) return;
		const L = this.layoutChart();
		const dpr = window.devicePixelRatio || 1;
		c.width = Math.round(L.w * dpr);
		c.height = Math.round(L.h * dpr);
		c.style.height = `${L.h}px`;
		const ctx = c.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, L.w, L.h);
		const C = this.colors();
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		if (!L.n) {
			ctx.fillStyle = C.muted;
			ctx.fillText(this.live ? 'Waiting for steps…' : 'No steps.', L.left, L.h / 2);
			return;
		}
		const steps = L.k.steps;
		let max = 0;
		for (const s of steps) if (s.dur > max) max = s.dur;
		max = max || 1;
		const y = (v) => L.top + L.ph - v / max * L.ph;
		ctx.fillStyle = C.muted;
		for (const f of [0, 0.5, 1]) {
			ctx.fillText(fmtTime(max * f, max), 4, y(max * f));
			ctx.fillStyle = C.grid;
			ctx.fillRect(L.left, Math.round(y(max * f)) + 0.5, L.pw, 1);
			ctx.fillStyle = C.muted;
		}
		const bw = Math.max(1, L.per - (L.per > 4 ? 1 : 0));
		for (let i = 0; i < L.n; i++) {
			const s = steps[i];
			const x = L.left + i * L.per;
			const top = y(s.dur);
			if (s.traced) {
				ctx.globalAlpha = 1;
				ctx.fillStyle = i === this.hover ? C.fg : C.hl;
				ctx.fillRect(x, top, bw, L.top + L.ph - top);
			} else {
				ctx.globalAlpha = i === this.hover ? 1 : 0.5;
				ctx.fillStyle = i === this.hover ? C.fg : C.accent;
				ctx.fillRect(x, top, bw, L.top + L.ph - top);
			}
		}
		ctx.globalAlpha = 1;
		if (L.k.p50) {
			ctx.strokeStyle = C.fg;
			ctx.setLineDash([4, 3]);
			ctx.beginPath();
			ctx.moveTo(L.left, Math.round(y(L.k.p50)) + 0.5);
			ctx.lineTo(L.left + L.pw, Math.round(y(L.k.p50)) + 0.5);
			ctx.stroke();
			ctx.setLineDash([]);
		}
		ctx.fillStyle = C.muted;
		ctx.fillText(`step ${steps[0].index}`, L.left, L.h - 8);
		const lastLabel = `step ${steps[L.n - 1].index}`;
		ctx.fillText(lastLabel, Math.min(L.left + L.n * L.per, L.w) - ctx.measureText(lastLabel).width, L.h - 8);
	}

	/* For tests. */
	state() {
		const k = this.kinds.get(this.selected);
		return {
			live: this.live, conn: this.conn, kinds: this.kinds.size, selected: this.selected,
			points: k ? k.steps.length : 0, traced: k ? k.steps.filter((s) => s.traced).length : 0,
			tracedAll: [...this.kinds.values()].reduce((n, x) => n + x.steps.filter((s) => s.traced).length, 0),
			status: this.status, request: this.req ? { state: this.req.state, error: this.req.error || null, id: this.req.id, steps: this.req.steps ?? null, begun: this.req.begun ?? 0, landed: this.req.landed ?? 0, failed: this.req.failed ?? 0 } : null,
			notes: this.notes.length, global: this.globalOn(), ended: this.ended,
			steps: [...this.kinds.values()].reduce((n, x) => n + (x.count || 0), 0),
		};
	}
}
