// SPDX-License-Identifier: MIT
// The Overview page: session summary cards, workers and devices, a step-time bar
// chart marking traced steps (click opens the step on the Timeline), under it each
// step's breakdown from the advisor (device compute, communication, memcpy, input,
// host compute, idle: stacked bars), the advisor's top three findings (a click opens the
// evidence on the Timeline), health warnings (drops, unmatched flows, unclosed
// slices) and the top ops by self time.
import { big } from './api.js';
import { kindName } from './kinds.js';
import { fmtDur, fmtTime, fmtInt, fmtPct, escapeHtml } from './format.js';
import { fetchAllByName } from './stats.js';
import { stepColors } from './colors.js';
import { fetchAdvice, PARTS, partColors } from './advisor.js';

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
			const k = kindName(t.kind);
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
			for (const t of ts) { const k = kindName(t.kind); kinds[k] = (kinds[k] || 0) + 1; slices += Number(t.slices) || 0; }
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
				<div class="stepchart-wrap"><canvas class="stepchart" height="180"></canvas><div class="step-tip" hidden></div></div>
				<p class="legend"><span class="sw traced"></span> traced step <span class="sw untraced"></span> not traced <span class="sw slow"></span> slower than P90 (red top) · click a bar to open the step on the Timeline</p>
				<h3 class="bd-title">Step-time breakdown <span class="muted">where each step's time goes (tftracer advise)</span></h3>
				<p class="step-breakdown legend" title="The advisor's step-time breakdown: each nanosecond of a step goes to the first of these that runs"><span class="loading">computing…</span></p>
				<div class="stepchart-wrap"><canvas class="bdchart" height="140"></canvas></div>`
			: `<p class="empty">No step markers in this session. Steps come from <code>ProfilerStep#N</code> slices (PyTorch: call <code>prof.step()</code> each iteration), TensorFlow <code>tf.profiler.experimental.Trace('train', step_num=N)</code> or RunMetadata per <code>session.run</code>. Without them the Timeline and Ops pages still work on the whole trace.</p>`}
			</section>
			<section class="panel ov-findings"><h3>Top findings <span class="muted">what slows the steps</span></h3><div class="ov-flist"><p class="loading">Looking for what slows the steps…</p></div>
				<p><a href="#/advisor" class="link">All findings and verdicts →</a></p></section>
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
		this.loadAdvice();
	}

	/*
	 * The advisor's result: each step's breakdown (its steps are the session's, in
	 * the same order) for the chart, and its top three findings.
	 */
	async loadAdvice() {
		const el = this.root.querySelector('.ov-flist');
		let d;
		try {
			d = await fetchAdvice();
		} catch (e) {
			if (el) el.innerHTML = `<p class="error">Could not run the advisor: ${escapeHtml(e.message)}</p>`;
			const bl = this.root.querySelector('.step-breakdown');
			if (bl) bl.textContent = `no step-time breakdown: ${e.message}`;
			return;
		}
		if (!el || !el.isConnected) return;
		const num = (v) => (typeof v === 'bigint' ? Number(v) : Number(v) || 0);
		const as = d.steps || [];
		const key = (index, start) => `${index}@${start}`;
		const by = new Map(as.map((st) => [key(st.index, big(st.start_ns)), st]));
		this.breakdown = this.steps.map((st, i) => {
			const a = as.length === this.steps.length ? as[i] : by.get(key(st.index, st.abs));
			return a ? PARTS.map((p) => num(a.breakdown && a.breakdown[p.key])) : null;
		});
		if (!this.breakdown.some(Boolean)) this.breakdown = null;
		const bl = this.root.querySelector('.step-breakdown');
		if (bl && this.breakdown) {
			const tot = PARTS.map(() => 0);
			for (const b of this.breakdown) if (b) b.forEach((v, k) => { tot[k] += v; });
			const all = tot.reduce((x, y) => x + y, 0) || 1;
			bl.innerHTML = PARTS.map((p, k) => `<span class="sw" style="background:var(${p.css})"></span> ${escapeHtml(p.label)} ${escapeHtml(fmtPct(tot[k] / all))}`).join(' ');
		} else if (bl) {
			bl.textContent = 'no breakdown: the advisor has none for these steps';
		}
		const f = (d.findings || []).slice(0, 3);
		const n = num(d.analysed_steps), per = n ? num(d.analysed_ns) / n : 0;
		el.innerHTML = f.length ? f.map((x, i) => `<section class="card adv-card" data-i="${i}" data-checker="${escapeHtml(x.checker)}" tabindex="0">
				<div class="adv-top"><span class="adv-rank">${i + 1}</span><h3 class="bidi">${escapeHtml(x.title)}</h3><span class="adv-cost">${escapeHtml(fmtDur(num(x.cost_ns)))} / step${per ? ` · ${escapeHtml(fmtPct(num(x.cost_ns) / per))}` : ''}</span></div>
				<p class="adv-rec"><b>What to do.</b> ${escapeHtml(x.recommendation || '')}</p></section>`).join('')
			: `<p class="empty">No findings: ${escapeHtml((d.checked || []).length ? 'the checkers found nothing that slows the steps.' : 'nothing to check.')}</p>`;
		for (const c of el.querySelectorAll('.adv-card')) {
			const x = f[+c.dataset.i];
			c.onclick = () => { if ((x.evidence || []).length) this.app.openEvidence(x.evidence[0], x.title); else this.app.go('advisor'); };
		}
		this.drawChart();
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
		const bc = this.root.querySelector('.bdchart');
		const tip = this.root.querySelector('.step-tip');
		this.canvas = c;
		this.bdCanvas = bc;
		const draw = () => this.drawChart();
		new ResizeObserver(draw).observe(c);
		for (const cv of [c, bc]) {
			cv.addEventListener('mousemove', (e) => {
				const i = this.stepAt(e, cv);
				if (i !== this.hoverStep) { this.hoverStep = i; draw(); }
				if (i < 0) { tip.hidden = true; return; }
				const st = this.steps[i];
				tip.hidden = false;
				const bd = this.breakdown && this.breakdown[i];
				tip.innerHTML = `<b>step ${escapeHtml(st.index)}</b> ${escapeHtml(st.name || '')}<br>${escapeHtml(fmtDur(st.dur))}${st.traced ? '' : ' · not traced'}` +
					(bd ? PARTS.map((p, k) => (bd[k] ? `<br>${escapeHtml(p.label)} ${escapeHtml(fmtDur(bd[k]))}` : '')).join('') : '');
				const r = c.getBoundingClientRect(), rv = cv.getBoundingClientRect();
				tip.style.transform = `translate(${Math.min(e.clientX - r.left + 12, r.width - 180)}px, ${e.clientY - r.top - 40 - (cv === c ? 0 : r.top - rv.top)}px)`;
			});
			cv.addEventListener('mouseleave', () => { this.hoverStep = -1; tip.hidden = true; draw(); });
			cv.addEventListener('click', (e) => {
				const i = this.stepAt(e, cv);
				if (i >= 0) this.app.openStep(this.steps[i]);
			});
		}
		draw();
	}

	layoutChart(c, h) {
		const w = c.clientWidth;
		const n = this.steps.length;
		const left = 56, right = 8, top = 10, bottom = 22;
		const pw = Math.max(10, w - left - right);
		const perBar = pw / n;
		return { w, h, n, left, right, top, bottom, pw, perBar, ph: h - top - bottom };
	}

	stepAt(e, c = this.canvas) {
		const L = this.layoutChart(c, c === this.bdCanvas ? 140 : 180);
		const r = c.getBoundingClientRect();
		const x = e.clientX - r.left - L.left;
		if (x < 0 || x >= L.pw) return -1;
		return Math.min(L.n - 1, Math.floor(x / L.perBar));
	}

	/* The step-time chart, and under it the breakdown's (the same columns). */
	drawChart() {
		this.drawOne(this.canvas, 180, false);
		this.drawOne(this.bdCanvas, 140, true);
	}

	drawOne(c, height, parts) {
		if (!c || !c.isConnected) return;
		const dpr = window.devicePixelRatio || 1;
		const L = this.layoutChart(c, height);
		c.width = Math.round(L.w * dpr);
		c.height = Math.round(L.h * dpr);
		c.style.height = `${L.h}px`;
		const ctx = c.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		const cs = getComputedStyle(document.documentElement);
		const fg = cs.getPropertyValue('--fg').trim() || '#222';
		const muted = cs.getPropertyValue('--muted').trim() || '#777';
		const SC = stepColors(); // the Runs page's colours
		const PC = partColors(); // the advisor's parts
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
			let m = 0, traced = false, hov = false, longest = a;
			for (let i = a; i < b; i++) {
				if (this.steps[i].dur > m) { m = this.steps[i].dur; longest = i; }
				traced = traced || this.steps[i].traced;
				hov = hov || i === this.hoverStep;
			}
			const x0 = L.left + c0 * (L.pw / cols), bw = Math.max(1, L.pw / cols - (L.pw / cols > 4 ? 1 : 0));
			const slow = m > st.p90 && L.n >= 5;
			if (parts) {
				// stacked from the bottom in the advisor's order (a column of several: its longest step)
				const bd = this.breakdown && this.breakdown[longest];
				if (!bd) continue;
				let y0 = L.top + L.ph;
				ctx.globalAlpha = hov ? 1 : 0.9;
				for (let k = 0; k < PARTS.length; k++) {
					const h = bd[k] / max * L.ph;
					ctx.fillStyle = PC[k];
					ctx.fillRect(x0, y0 - h, bw, h);
					y0 -= h;
				}
				ctx.globalAlpha = 1;
				continue;
			}
			// as on the Runs page: traced steps solid orange, the others pale blue (and outlined)
			ctx.fillStyle = hov ? fg : traced ? SC.traced : SC.untraced;
			ctx.globalAlpha = hov ? 1 : traced ? 1 : 0.3;
			ctx.fillRect(x0, y(m), bw, L.top + L.ph - y(m));
			ctx.globalAlpha = 1;
			if (!traced) { ctx.strokeStyle = SC.untraced; ctx.strokeRect(x0 + 0.5, y(m) + 0.5, Math.max(0, bw - 1), L.top + L.ph - y(m) - 1); }
			// slower than P90: a red cap
			if (slow) { ctx.fillStyle = SC.slow; ctx.fillRect(x0, y(m), bw, Math.min(4, L.top + L.ph - y(m))); }
		}
		if (parts && !this.breakdown) return;
		ctx.fillStyle = fg;
		ctx.fillRect(L.left, Math.round(y(st.median)), L.pw, 1);
		ctx.fillText('median', L.left + L.pw - 40, y(st.median) - 6);
		ctx.fillStyle = muted;
		ctx.fillText(`step ${this.steps[0].index}`, L.left, L.h - 8);
		const last = `step ${this.steps[L.n - 1].index}`;
		ctx.fillText(last, L.left + L.pw - ctx.measureText(last).width, L.h - 8);
	}
}
