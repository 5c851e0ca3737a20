// SPDX-License-Identifier: MIT
// The Overview page: session summary cards, workers and devices, a step-time bar
// chart marking traced steps (click opens the step on the Timeline), split into
// compute and communication when the session has comm tracks, health warnings
// (drops, unmatched flows, unclosed slices) and the top ops by self time.
import { big, getJSON } from './api.js';
import { fmtDur, fmtTime, fmtInt, fmtPct, escapeHtml } from './format.js';
import { fetchAllByName } from './stats.js';
import { stepColors } from './colors.js';

const KINDS = ['', 'thread', 'device', 'gpu_stream', 'comm', 'counter', 'async', 'object'];

export class Overview {
	constructor(root, app) {
		this.root = root;
		this.app = app;
		this.steps = [];
		this.canvas = null;
		this.hoverStep = -1;
	}

	render(s) {
		const T0 = big(s.start_ns);
		const steps = (s.step_list || []).map((st) => ({ index: st.index, name: st.name, abs: big(st.start_ns), rel: Number(big(st.start_ns) - T0), dur: Number(st.dur_ns) || 0, traced: st.traced !== false }));
		this.steps = steps;
		const tracks = s.track_list || [];
		const procs = s.process_list || [];
		const byKind = {};
		for (const t of tracks) {
			const k = typeof t.kind === 'number' ? KINDS[t.kind] : t.kind;
			byKind[k] = (byKind[k] || 0) + 1;
		}
		const dur = Number(s.duration_ns ?? Number(big(s.end_ns) - T0));
		const warn = (n) => (Number(n) > 0 ? ' warn' : '');
		const esc = escapeHtml;
		const stepStats = this.stepStats(steps);
		const procRows = procs.filter((p) => tracks.some((t) => t.process === p.id)).map((p) => {
			const ts = tracks.filter((t) => t.process === p.id);
			const kinds = {};
			let slices = 0;
			for (const t of ts) { const k = typeof t.kind === 'number' ? KINDS[t.kind] : t.kind; kinds[k] = (kinds[k] || 0) + 1; slices += Number(t.slices) || 0; }
			return `<tr><td>${esc(p.name || `process ${p.id}`)}</td><td class="num">${esc(p.pid ?? '')}</td><td class="num">${p.rank >= 0 ? esc(p.rank) : '–'}</td><td>${esc(p.host || '')}</td><td>${esc(Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(', ') || '–')}</td><td class="num">${fmtInt(slices)}</td></tr>`;
		}).join('');
		this.root.innerHTML = `
		<div class="ov">
			<div class="cards">
				<section class="card"><h3>Session</h3>
					<dl><dt>Format</dt><dd title="${esc(s.format ?? '')}">${esc(s.format ?? '–')}</dd><dt>Producer</dt><dd title="${esc(s.producer || '')}">${esc(s.producer || '–')}</dd>
					<dt>Time span</dt><dd title="${esc(big(s.start_ns).toString())} – ${esc(big(s.end_ns).toString())} ns">${esc(fmtDur(dur))}</dd>
					<dt>Start</dt><dd class="mono">${esc(big(s.start_ns).toString())} ns</dd></dl></section>
				<section class="card"><h3>Events</h3>
					<dl><dt>Slices</dt><dd>${fmtInt(s.slices)}</dd><dt>Instants</dt><dd>${fmtInt(s.instants)}</dd>
					<dt>Counter samples</dt><dd>${fmtInt(s.counters)}</dd><dt>Flows</dt><dd>${fmtInt(s.flows)}</dd></dl></section>
				<section class="card"><h3>Workers and devices</h3>
					<dl><dt>Processes</dt><dd>${fmtInt(s.processes ?? procs.length)}</dd><dt>Tracks</dt><dd>${fmtInt(s.tracks ?? tracks.length)}</dd>
					${Object.entries(byKind).map(([k, n]) => `<dt title="${esc(k)}">${esc(k)}</dt><dd>${fmtInt(n)}</dd>`).join('')}</dl></section>
				<section class="card health"><h3>Health</h3>
					<dl><dt title="events the tracer could not record (buffers full)">Dropped events</dt><dd class="${warn(s.dropped)}">${fmtInt(s.dropped ?? 0)}</dd>
					<dt title="flow starts or ends without a partner">Unmatched flows</dt><dd class="${warn(s.unmatched_flows)}">${fmtInt(s.unmatched_flows ?? 0)}</dd>
					<dt title="slices that began but never ended; drawn to the trace end">Unclosed slices</dt><dd class="${warn(s.unclosed_slices)}">${fmtInt(s.unclosed_slices ?? 0)}</dd>
					${Number(s.profiler_errors) > 0 || Number(s.profiler_warnings) > 0 ? `<dt title="what the TF/JAX profiler reported about its own trace (XSpace errors and warnings)">Profiler messages</dt><dd class="warn">${fmtInt(Number(s.profiler_errors) || 0)} errors, ${fmtInt(Number(s.profiler_warnings) || 0)} warnings</dd>` : ''}</dl>
					${[...(s.profiler_error_messages || []).map((m) => ['error', m]), ...(s.profiler_warning_messages || []).map((m) => ['warning', m])]
						.map(([k, m]) => `<p class="hint profiler-msg"><b>Profiler ${k}:</b> ${esc(m)}</p>`).join('')}
					<p class="hint">${[
						Number(s.dropped) > 0 ? 'Events were dropped while tracing: totals undercount (enlarge the trace buffer).' : '',
						Number(s.unclosed_slices) > 0 ? 'Some slices never ended (the program stopped mid-op or the trace was cut); they run to the end of the trace.' : '',
						Number(s.unmatched_flows) > 0 ? 'Some flow arrows lost one end (often launches whose kernels fell outside the trace window).' : '',
					].filter(Boolean).join(' ') || 'No drops or broken events.'}</p></section>
			</div>
			<section class="panel steps-panel"><h3>Steps <span class="muted">${steps.length ? `${fmtInt(steps.length)} steps · ${fmtInt(steps.filter((x) => x.traced).length)} traced` : ''}</span></h3>
				${steps.length ? `<p class="step-stats">average ${esc(fmtDur(stepStats.mean))} ± ${esc(fmtDur(stepStats.sd))} · median ${esc(fmtDur(stepStats.median))} · min ${esc(fmtDur(stepStats.min))} · max ${esc(fmtDur(stepStats.max))}</p>
				<p class="step-breakdown legend" title="Busy time per step: compute = device/stream (or thread) tracks, communication = comm tracks not overlapped by compute, other = the rest of the step"></p>
				<div class="stepchart-wrap"><canvas class="stepchart" height="180"></canvas><div class="step-tip" hidden></div></div>
				<p class="legend"><span class="sw traced"></span> traced step <span class="sw untraced"></span> not traced <span class="sw slow"></span> slower than P90 (red top) · click a bar to open the step on the Timeline</p>`
			: `<p class="empty">No step markers in this session. Steps come from <code>ProfilerStep#N</code> slices (PyTorch: call <code>prof.step()</code> each iteration), TensorFlow <code>tf.profiler.experimental.Trace('train', step_num=N)</code> or RunMetadata per <code>session.run</code>. Without them the Timeline and Ops pages still work on the whole trace.</p>`}
			</section>
			<div class="two">
				<section class="panel"><h3>Top ops by self time</h3><div class="topops"><p class="loading">Loading…</p></div>
					<p><a href="#/ops" class="link">All ops →</a></p></section>
				<section class="panel"><h3>Processes and devices</h3>
					<div class="tablewrap"><table class="grid"><tr><th>name</th><th class="num">pid</th><th class="num">rank</th><th>host</th><th>tracks</th><th class="num">slices</th></tr>${procRows || '<tr><td colspan="6" class="muted">none</td></tr>'}</table></div></section>
			</div>
		</div>`;
		if (steps.length) this.setupChart();
		this.loadTop();
		this.breakdown = null;
		if (steps.length && tracks.some((t) => (typeof t.kind === 'number' ? KINDS[t.kind] : t.kind) === 'comm')) this.loadBreakdown(s);
	}

	/*
	 * Compute vs communication per step, from one coarse viewport over the whole
	 * session (10,000 buckets): per bucket the busy fraction of the compute tracks
	 * (GPU streams, else devices, else threads) and of the comm tracks
	 * (depth 0, the largest track's fraction as the union's estimate). Per step:
	 * compute, communication not hidden under compute, and the rest (host, idle).
	 */
	async loadBreakdown(s) {
		const kind = (t) => (typeof t.kind === 'number' ? KINDS[t.kind] : t.kind);
		const tracks = s.track_list || [];
		const comm = tracks.filter((t) => kind(t) === 'comm').map((t) => t.id);
		// kernels (GPU streams) first; device lines (often op and step summaries) only without them
		let comp = tracks.filter((t) => kind(t) === 'gpu_stream').map((t) => t.id);
		if (!comp.length) comp = tracks.filter((t) => kind(t) === 'device').map((t) => t.id);
		if (!comp.length) comp = tracks.filter((t) => kind(t) === 'thread').map((t) => t.id);
		const T0 = big(s.start_ns);
		const span = Math.max(1, Number(big(s.end_ns) - T0));
		const width = 10000;
		const bw = span / width;
		const busy = async (ids) => {
			const acc = new Float64Array(width);
			for (let i = 0; i < ids.length; i += 64) {
				const j = await getJSON('api/viewport', { tracks: ids.slice(i, i + 64).join(','), t0: T0.toString(), t1: (T0 + BigInt(span)).toString(), width, rel: 1 }, { quiet: true });
				for (const t of j.tracks || []) {
					if (!Array.isArray(t.ts) || !Array.isArray(t.dur)) continue;
					const one = new Float64Array(width);
					for (let k = 0; k < t.ts.length; k++) {
						if (t.depth && t.depth[k] !== 0) continue;
						const a = t.ts[k] / bw, b = (t.ts[k] + t.dur[k]) / bw;
						for (let x = Math.max(0, Math.floor(a)); x < Math.min(width, Math.ceil(b)); x++) one[x] += Math.min(b, x + 1) - Math.max(a, x);
					}
					for (let x = 0; x < width; x++) if (one[x] > acc[x]) acc[x] = Math.min(1, one[x]);
				}
			}
			return acc;
		};
		try {
			const [c, m] = await Promise.all([busy(comp), busy(comm)]);
			const out = this.steps.map((st) => {
				let compute = 0, commOnly = 0;
				const a = Math.max(0, st.rel / bw), b = Math.min(width, (st.rel + st.dur) / bw);
				for (let x = Math.floor(a); x < Math.ceil(b); x++) {
					const f = Math.min(b, x + 1) - Math.max(a, x);
					if (f <= 0) continue;
					compute += c[x] * f * bw;
					commOnly += Math.min(1 - c[x], m[x]) * f * bw;
				}
				compute = Math.min(compute, st.dur);
				commOnly = Math.min(commOnly, st.dur - compute);
				return { compute, comm: commOnly, other: Math.max(0, st.dur - compute - commOnly) };
			});
			this.breakdown = out;
			const tot = out.reduce((acc, r) => { acc.compute += r.compute; acc.comm += r.comm; acc.other += r.other; return acc; }, { compute: 0, comm: 0, other: 0 });
			const all = tot.compute + tot.comm + tot.other || 1;
			const el = this.root.querySelector('.step-breakdown');
			if (el) el.innerHTML = `<span class="sw b-compute"></span> compute ${escapeHtml(fmtPct(tot.compute / all))} <span class="sw b-comm"></span> communication (not overlapped) ${escapeHtml(fmtPct(tot.comm / all))} <span class="sw b-other"></span> other: host, input, idle ${escapeHtml(fmtPct(tot.other / all))}`;
			this.drawChart();
		} catch (e) {
			const el = this.root.querySelector('.step-breakdown');
			if (el) el.textContent = `no compute/communication breakdown: ${e.message}`;
		}
	}

	stepStats(steps) {
		const d = steps.map((s) => s.dur).sort((a, b) => a - b);
		if (!d.length) return {};
		const mean = d.reduce((a, b) => a + b, 0) / d.length;
		const sd = Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / d.length);
		// nearest rank, as `tftracer stats` and the Runs page
		const q = (p) => d[Math.min(d.length - 1, Math.max(0, Math.ceil(p * d.length) - 1))];
		return { mean, sd, median: q(0.5), min: d[0], max: d[d.length - 1], p90: q(0.9) };
	}

	async loadTop() {
		const el = this.root.querySelector('.topops');
		try {
			const rows = (await fetchAllByName()).slice();
			rows.sort((a, b) => b.self - a.self);
			const top = rows.slice(0, 10);
			const max = top.reduce((m, r) => Math.max(m, r.self), 0) || 1;
			el.innerHTML = top.length ? `<table class="grid top"><tr><th>op</th><th class="num">self</th><th class="num">share</th><th class="num">count</th></tr>${top.map((r, i) => `<tr data-i="${i}"><td class="name"><span class="bar" style="width:${(r.self / max * 100).toFixed(1)}%"></span><a href="#" title="${escapeHtml(r.name)}">${escapeHtml(r.name)}</a></td><td class="num">${escapeHtml(fmtDur(r.self))}</td><td class="num">${escapeHtml(fmtPct(r.share))}</td><td class="num">${fmtInt(r.count)}</td></tr>`).join('')}</table>
				<p class="hint">${top[0] ? `Most self time: <b>${escapeHtml(top[0].name)}</b> (${escapeHtml(fmtPct(top[0].share))}). Click an op to see it on the Timeline.` : ''}</p>` : '<p class="empty">No slices.</p>';
			for (const a of el.querySelectorAll('tr[data-i] a')) {
				a.onclick = (e) => { e.preventDefault(); this.app.highlightName(top[+a.closest('tr').dataset.i].name, true, { first: true }); };
			}
		} catch (e) {
			el.innerHTML = `<p class="error">Could not load op statistics: ${escapeHtml(e.message)}</p>`;
		}
	}

	setupChart() {
		const c = this.root.querySelector('.stepchart');
		const tip = this.root.querySelector('.step-tip');
		this.canvas = c;
		const draw = () => this.drawChart();
		new ResizeObserver(draw).observe(c);
		c.addEventListener('mousemove', (e) => {
			const i = this.stepAt(e);
			if (i !== this.hoverStep) { this.hoverStep = i; draw(); }
			if (i < 0) { tip.hidden = true; return; }
			const st = this.steps[i];
			tip.hidden = false;
			const bd = this.breakdown && this.breakdown[i];
			tip.innerHTML = `<b>step ${escapeHtml(st.index)}</b> ${escapeHtml(st.name || '')}<br>${escapeHtml(fmtDur(st.dur))}${st.traced ? '' : ' · not traced'}` +
				(bd ? `<br>compute ${escapeHtml(fmtDur(bd.compute))} · comm ${escapeHtml(fmtDur(bd.comm))} · other ${escapeHtml(fmtDur(bd.other))}` : '');
			const r = c.getBoundingClientRect();
			tip.style.transform = `translate(${Math.min(e.clientX - r.left + 12, r.width - 180)}px, ${e.clientY - r.top - 40}px)`;
		});
		c.addEventListener('mouseleave', () => { this.hoverStep = -1; tip.hidden = true; draw(); });
		c.addEventListener('click', (e) => {
			const i = this.stepAt(e);
			if (i >= 0) this.app.openStep(this.steps[i]);
		});
		draw();
	}

	layoutChart() {
		const c = this.canvas;
		const w = c.clientWidth, h = 180;
		const n = this.steps.length;
		const left = 56, right = 8, top = 10, bottom = 22;
		const pw = Math.max(10, w - left - right);
		const perBar = pw / n;
		return { w, h, n, left, right, top, bottom, pw, perBar, ph: h - top - bottom };
	}

	stepAt(e) {
		const L = this.layoutChart();
		const r = this.canvas.getBoundingClientRect();
		const x = e.clientX - r.left - L.left;
		if (x < 0 || x >= L.pw) return -1;
		return Math.min(L.n - 1, Math.floor(x / L.perBar));
	}

	drawChart() {
		const c = this.canvas;
		if (!c || !c.isConnected) return;
		const dpr = window.devicePixelRatio || 1;
		const L = this.layoutChart();
		c.width = Math.round(L.w * dpr);
		c.height = Math.round(L.h * dpr);
		c.style.height = `${L.h}px`;
		const ctx = c.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		const cs = getComputedStyle(document.documentElement);
		const fg = cs.getPropertyValue('--fg').trim() || '#222';
		const muted = cs.getPropertyValue('--muted').trim() || '#777';
		const SC = stepColors(); // the Runs page's colours
		ctx.clearRect(0, 0, L.w, L.h);
		const st = this.stepStats(this.steps);
		const max = st.max || 1;
		const y = (v) => L.top + L.ph - v / max * L.ph;
		ctx.font = '10px system-ui, sans-serif';
		ctx.fillStyle = muted;
		ctx.textBaseline = 'middle';
		for (const f of [0, 0.5, 1]) {
			ctx.fillText(fmtTime(max * f, max), 4, y(max * f)); // (the axis in one unit)
			ctx.fillStyle = 'rgba(127,127,127,0.15)';
			ctx.fillRect(L.left, Math.round(y(max * f)), L.pw, 1);
			ctx.fillStyle = muted;
		}
		// when zoomed out (bars under 2 px), a column shows the max of its steps
		const cols = Math.min(L.n, Math.floor(L.pw / 2));
		const perCol = L.n / cols;
		for (let c0 = 0; c0 < cols; c0++) {
			const a = Math.floor(c0 * perCol), b = Math.max(a + 1, Math.floor((c0 + 1) * perCol));
			let m = 0, traced = false, hov = false;
			for (let i = a; i < b; i++) { if (this.steps[i].dur > m) m = this.steps[i].dur; traced = traced || this.steps[i].traced; hov = hov || i === this.hoverStep; }
			const x0 = L.left + c0 * (L.pw / cols), bw = Math.max(1, L.pw / cols - (L.pw / cols > 4 ? 1 : 0));
			const slow = m > st.p90 && L.n >= 5;
			const bd = this.breakdown && b - a === 1 ? this.breakdown[a] : null;
			// as on the Runs page: traced steps solid orange, the others pale blue (and outlined)
			ctx.fillStyle = hov ? fg : traced ? SC.traced : SC.untraced;
			ctx.globalAlpha = hov ? 1 : bd ? 0.4 : traced ? 1 : 0.3;
			ctx.fillRect(x0, y(m), bw, L.top + L.ph - y(m));
			if (bd) {
				// stacked: compute at the bottom, communication above it, the rest pale
				const base = L.top + L.ph;
				const hc = bd.compute / max * L.ph, hm = bd.comm / max * L.ph;
				ctx.globalAlpha = hov ? 1 : 0.9;
				ctx.fillStyle = SC.compute;
				ctx.fillRect(x0, base - hc, bw, hc);
				ctx.fillStyle = SC.comm;
				ctx.fillRect(x0, base - hc - hm, bw, hm);
			}
			ctx.globalAlpha = 1;
			if (!traced) { ctx.strokeStyle = SC.untraced; ctx.strokeRect(x0 + 0.5, y(m) + 0.5, Math.max(0, bw - 1), L.top + L.ph - y(m) - 1); }
			// slower than P90: a red cap
			if (slow) { ctx.fillStyle = SC.slow; ctx.fillRect(x0, y(m), bw, Math.min(4, L.top + L.ph - y(m))); }
		}
		ctx.fillStyle = fg;
		ctx.fillRect(L.left, Math.round(y(st.median)), L.pw, 1);
		ctx.fillText('median', L.left + L.pw - 40, y(st.median) - 6);
		ctx.fillStyle = muted;
		ctx.fillText(`step ${this.steps[0].index}`, L.left, L.h - 8);
		const last = `step ${this.steps[L.n - 1].index}`;
		ctx.fillText(last, L.left + L.pw - ctx.measureText(last).width, L.h - 8);
	}
}
