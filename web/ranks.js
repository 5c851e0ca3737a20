// SPDX-License-Identifier: MIT
// The Ranks page of a distributed job (GET /api/ranks, analyze/ranks.h): per step and
// rank compute / communication / waiting in communication / idle as stacked bars; the
// straggler (the rank the others waited for) with the ops of its run-ups against those
// of the ranks that waited; the communication matrix (messages, bytes or time between
// each pair of ranks); each collective's skew (first to last arrival) over the run and
// the largest ones; the ranks' clocks with their error bounds, and the switch between
// aligned and raw clocks (POST /api/clock; a job directory only). Clicks lead to the
// Timeline: a rank, a step, an op (highlighted), a collective (its window).
import { getJSON, postJSON, isStatic, big } from './api.js';
import { fmtDur, fmtInt, fmtBytes, escapeHtml } from './format.js';

const esc = escapeHtml;
const PARTS = [
	{ key: 'compute_ns', label: 'compute', css: 'rk-c' },
	{ key: 'comm_ns', label: 'communication', css: 'rk-m' },
	{ key: 'wait_ns', label: 'waiting in communication', css: 'rk-w' },
	{ key: 'idle_ns', label: 'idle', css: 'rk-i' },
];
const MAX_COLL_ROWS = 20;

const STYLE = `
#page-ranks { overflow: auto; padding: 12px 16px 40px; }
.rk-head { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; }
.rk-head h2 { margin: 0; font-size: 16px; }
.rk section { margin-top: 18px; }
.rk h3 { font-size: 13px; margin: 0 0 6px; }
.rk-tools { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; margin-bottom: 6px; }
.rk-legend span { display: inline-flex; align-items: center; gap: 4px; margin-right: 10px; font-size: 12px; }
.rk-legend i { width: 10px; height: 10px; border-radius: 2px; display: inline-block; }
.rk-c { background: var(--step-compute); } .rk-m { background: var(--step-comm); }
.rk-w { background: var(--step-slow); } .rk-i { background: var(--border); }
.rk-bars { display: grid; grid-template-columns: max-content 1fr max-content; gap: 2px 8px; align-items: center; max-width: 1100px; }
.rk-rank { font-family: var(--mono); font-size: 12px; cursor: pointer; white-space: nowrap; }
.rk-rank:hover { color: var(--accent); }
.rk-bar { display: flex; height: 14px; border-radius: 3px; overflow: hidden; background: var(--panel); cursor: pointer; }
.rk-bar > div { height: 100%; }
.rk-tot { font-size: 11px; color: var(--muted); white-space: nowrap; }
.rk-badge { background: var(--step-slow); color: #fff; border-radius: 8px; padding: 0 6px; font-size: 11px; margin-left: 4px; }
.rk table { border-collapse: collapse; font-size: 12px; }
.rk td, .rk th { padding: 2px 10px 2px 0; text-align: left; white-space: nowrap; }
.rk th { color: var(--muted); font-weight: 600; }
.rk td.num, .rk th.num { text-align: right; }
.rk tr.rk-link { cursor: pointer; }
.rk tr.rk-link:hover td { color: var(--accent); }
.rk-mat, .rk-skewc { display: block; border: 1px solid var(--border); border-radius: 4px; background: var(--bg); }
.rk-clockbtn button[aria-pressed="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
.rk-note { color: var(--warn); }
`;

function injectStyle() {
	if (document.querySelector('style[data-tft="ranks"]')) return;
	const st = document.createElement('style');
	st.dataset.tft = 'ranks';
	st.textContent = STYLE;
	document.head.appendChild(st);
}

function cssVar(name, dflt) {
	const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
	return v || dflt;
}

export class Ranks {
	constructor(root, app) {
		this.root = root;
		this.app = app;
		this.data = null;
		this.loading = null;
		this.step = 'all';
		this.metric = 'bytes';
		this.error = null;
	}

	/* The session summary: a job (processes of two or more ranks) shows the page's link. */
	setSession(s) {
		this.session = s;
		const ranks = new Set((s.process_list || []).map((p) => p.rank).filter((r) => r >= 0));
		this.hasRanks = ranks.size >= 2 || !!s.job;
		const a = document.querySelector('nav.pages a[data-page="ranks"]');
		if (a) a.hidden = !this.hasRanks;
	}

	show() {
		injectStyle();
		if (this.data || this.loading) { if (this.data) this.render(); return; }
		this.load();
	}

	async load() {
		this.root.innerHTML = '<p class="loading">Analysing the ranks…</p>';
		if (isStatic()) {
			this.root.innerHTML = '<div class="rk"><p class="muted">The Ranks page needs the tftracer server (<code>tftracer serve JOBDIR</code>): a static export holds no analysis.</p></div>';
			return;
		}
		this.loading = getJSON('api/ranks', null, { exact: true });
		try {
			this.data = await this.loading;
			this.error = null;
		} catch (e) {
			this.error = e.message;
			this.root.innerHTML = `<div class="rk"><p class="error">Could not analyse the ranks: ${esc(e.message)}</p></div>`;
			return;
		} finally {
			this.loading = null;
		}
		this.render();
	}

	/* ---- rendering --------------------------------------------------------------- */

	render() {
		const d = this.data, a = d.analysis;
		const T0 = big(this.session.start_ns);
		this.T0 = T0;
		if (!a.ranks.length) {
			this.root.innerHTML = '<div class="rk"><h2>Ranks</h2><p class="muted">This session has no ranks: its processes carry none. A job is a directory of <code>rank-&lt;N&gt;.tft</code> files (<code>tftracer record -o JOBDIR</code> under mpirun or torchrun), or ranks\' traces imported together.</p></div>';
			return;
		}
		const c = a.comm;
		const maxErr = Math.max(0, ...a.ranks.map((r) => Number(r.clock.error_ns)));
		const unknown = a.ranks.some((r) => Number(r.clock.error_ns) < 0 && !r.clock.method.includes('reference'));
		const clockText = d.clock_mode === 'raw'
			? 'each rank on its own clock (raw)'
			: a.clock_aligned ? `aligned to rank ${a.ranks[0].rank}${unknown ? ' (some ranks\u2019 error unknown)' : ` within ${fmtDur(maxErr)}`}` : 'as recorded (not aligned)';
		this.root.innerHTML = `<div class="rk">
			<div class="rk-head"><h2>Ranks</h2>
				<span class="rk-summary muted">${fmtInt(a.ranks.length)} ranks · ${fmtInt(a.steps.length)} step${a.steps.length === 1 ? '' : 's'} · ${fmtInt(c.messages)} messages matched${c.unmatched_sends + c.unmatched_receives ? ` <span class="rk-note">(${fmtInt(c.unmatched_sends)} sends, ${fmtInt(c.unmatched_receives)} receives unmatched)</span>` : ''} · ${fmtInt(c.collectives)} collectives${c.incomplete_collectives ? ` <span class="rk-note">(${fmtInt(c.incomplete_collectives)} incomplete)</span>` : ''}</span>
				<span class="spacer"></span>
				<span class="rk-clock">Clocks: ${esc(clockText)}</span>
				${d.clock_switchable ? `<span class="rk-clockbtn"><button type="button" data-mode="aligned" aria-pressed="${d.clock_mode !== 'raw'}">aligned</button> <button type="button" data-mode="raw" aria-pressed="${d.clock_mode === 'raw'}">raw</button></span>` : ''}
			</div>
			<section class="rk-time"><h3>Time per rank</h3>
				<div class="rk-tools"><label>Step <select class="rk-step"></select></label>
				<span class="rk-legend">${PARTS.map((p) => `<span><i class="${p.css}"></i>${p.label}</span>`).join('')}</span>
				<button type="button" class="rk-openstep" title="Show this step on the Timeline">Open on the Timeline</button></div>
				<div class="rk-bars"></div></section>
			<section class="rk-straggler"><h3>Straggler</h3><div class="rk-strag"></div></section>
			<section class="rk-matrix"><h3>Communication matrix <span class="muted">(point-to-point; rows send, columns receive)</span></h3>
				<div class="rk-tools"><label>Show <select class="rk-metric"><option value="bytes">bytes</option><option value="time_ns">time (send to arrival)</option><option value="messages">messages</option></select></label><span class="rk-matinfo muted"></span></div>
				<canvas class="rk-mat"></canvas></section>
			<section class="rk-skew"><h3>Collective skew <span class="muted">(first to last arrival)</span></h3>
				<canvas class="rk-skewc"></canvas><div class="rk-colls"></div></section>
			<section class="rk-clocks"><details><summary>Clock alignment per rank</summary><div class="rk-clocktab"></div></details></section>
		</div>`;
		const q = (s) => this.root.querySelector(s);
		const sel = q('.rk-step');
		sel.innerHTML = `<option value="all">all steps (${fmtInt(a.steps.length)})</option>` +
			a.steps.map((st, i) => `<option value="${i}">${esc(st.name || 'step')} ${esc(String(st.index))} · ${fmtDur(Number(big(st.end_ns) - big(st.start_ns)))}</option>`).join('');
		sel.value = this.step;
		if (sel.value !== this.step) { this.step = 'all'; sel.value = 'all'; }
		sel.onchange = () => { this.step = sel.value; this.drawBars(); };
		q('.rk-openstep').onclick = () => this.openStep();
		const met = q('.rk-metric');
		met.value = this.metric;
		met.onchange = () => { this.metric = met.value; this.drawMatrix(); };
		for (const b of this.root.querySelectorAll('.rk-clockbtn button')) b.onclick = () => this.setClock(b.dataset.mode);
		this.drawBars();
		this.drawStraggler();
		this.drawMatrix();
		this.drawSkew();
		this.drawClocks();
	}

	/* The cells of the chosen step (or every rank's totals). */
	cells() {
		const a = this.data.analysis;
		if (this.step === 'all') return a.ranks.map((r) => ({ compute_ns: r.compute_ns, comm_ns: r.comm_ns, wait_ns: r.wait_ns, idle_ns: r.idle_ns }));
		return a.steps[+this.step].cells;
	}

	drawBars() {
		const a = this.data.analysis;
		const cells = this.cells();
		const tot = cells.map((c) => PARTS.reduce((s, p) => s + Number(c[p.key]), 0));
		const max = Math.max(1, ...tot);
		const box = this.root.querySelector('.rk-bars');
		box.innerHTML = a.ranks.map((r, i) => {
			const c = cells[i];
			const segs = PARTS.map((p) => {
				const v = Number(c[p.key]);
				return v > 0 ? `<div class="${p.css}" style="width:${(100 * v / max).toFixed(3)}%" title="${esc(`rank ${r.rank}: ${p.label} ${fmtDur(v)} (${(100 * v / (tot[i] || 1)).toFixed(1)}%)`)}"></div>` : '';
			}).join('');
			const strag = a.straggler && a.straggler.rank === r.rank ? '<span class="rk-badge">straggler</span>' : '';
			return `<span class="rk-rank" data-rank="${r.rank}" title="Show rank ${r.rank} on the Timeline">rank ${r.rank}${strag}</span><div class="rk-bar" data-rank="${r.rank}">${segs}</div><span class="rk-tot">${fmtDur(tot[i])} · wait ${fmtDur(Number(c.wait_ns))}</span>`;
		}).join('');
		for (const el of box.querySelectorAll('[data-rank]')) el.onclick = () => this.openRank(+el.dataset.rank);
	}

	drawStraggler() {
		const a = this.data.analysis, box = this.root.querySelector('.rk-strag');
		const s = a.straggler;
		if (!s) {
			box.innerHTML = '<p class="muted">None: no rank waited for another.</p>';
			return;
		}
		const ops = s.ops || [];
		box.innerHTML = `<p><b class="rk-strank">rank ${s.rank}</b>: the other ranks waited <b>${fmtDur(Number(s.caused_ns))}</b> for it (${(100 * s.share).toFixed(0)}% of all waiting in communication; waiting for a rank that was itself waiting is charged to whom it waited for).
			<a href="#" class="rk-showstrag">Show it on the Timeline</a></p>
			${ops.length ? `<p class="muted">Before the calls it was late to (since the last collective), it ran these ops longer than the ranks that waited (self time, summed over those run-ups; the others: per rank):</p>
			<table class="rk-ops"><thead><tr><th>op</th><th class="num">on rank ${s.rank}</th><th class="num">on the others</th><th class="num">excess</th><th class="num">slices</th></tr></thead><tbody>
			${ops.map((o, i) => `<tr class="rk-link" data-i="${i}" title="Highlight ${esc(o.name)} on the Timeline"><td class="bidi">${esc(o.name)}</td><td class="num">${fmtDur(Number(o.straggler_ns))}</td><td class="num">${fmtDur(Number(o.others_ns))}</td><td class="num">${fmtDur(Number(o.straggler_ns) - Number(o.others_ns))}</td><td class="num">${fmtInt(o.count)}</td></tr>`).join('')}
			</tbody></table>` : ''}`;
		box.querySelector('.rk-showstrag').onclick = (e) => { e.preventDefault(); this.openRank(s.rank); };
		for (const tr of box.querySelectorAll('tr[data-i]')) tr.onclick = () => this.app.highlightName(ops[+tr.dataset.i].name, true, { first: true });
	}

	drawMatrix() {
		const a = this.data.analysis;
		const cv = this.root.querySelector('.rk-mat');
		const n = a.ranks.length;
		const idx = new Map(a.ranks.map((r, i) => [r.rank, i]));
		const cell = Math.max(3, Math.min(22, Math.floor(560 / n)));
		const pad = 40, W = pad + n * cell + 2, H = pad + n * cell + 2;
		const dpr = window.devicePixelRatio || 1;
		cv.width = Math.round(W * dpr);
		cv.height = Math.round(H * dpr);
		cv.style.width = `${W}px`;
		cv.style.height = `${H}px`;
		const ctx = cv.getContext('2d');
		ctx.scale(dpr, dpr);
		ctx.fillStyle = cssVar('--bg', '#fff');
		ctx.fillRect(0, 0, W, H);
		const val = (p) => Number(p[this.metric]);
		const max = Math.max(0, ...a.matrix.map(val));
		const fg = cssVar('--fg', '#000'), muted = cssVar('--muted', '#666');
		ctx.font = '10px system-ui, sans-serif';
		ctx.fillStyle = muted;
		const every = Math.max(1, Math.ceil(12 / cell));
		ctx.textAlign = 'right';
		ctx.textBaseline = 'middle';
		for (let i = 0; i < n; i += every) ctx.fillText(String(a.ranks[i].rank), pad - 4, pad + i * cell + cell / 2);
		ctx.textAlign = 'center';
		ctx.textBaseline = 'bottom';
		for (let i = 0; i < n; i += every) ctx.fillText(String(a.ranks[i].rank), pad + i * cell + cell / 2, pad - 3);
		ctx.strokeStyle = cssVar('--border', '#ccc');
		ctx.strokeRect(pad - 0.5, pad - 0.5, n * cell + 1, n * cell + 1);
		this.cellsAt = new Map();
		for (const p of a.matrix) {
			const i = idx.get(p.src), j = idx.get(p.dst);
			if (i === undefined || j === undefined) continue;
			const v = val(p);
			const f = max > 0 ? Math.log1p(v) / Math.log1p(max) : 0;
			ctx.fillStyle = `rgba(130, 80, 223, ${(0.15 + 0.85 * f).toFixed(3)})`;
			ctx.fillRect(pad + j * cell, pad + i * cell, cell - (cell > 4 ? 1 : 0), cell - (cell > 4 ? 1 : 0));
			this.cellsAt.set(i * n + j, p);
		}
		void fg;
		this.root.querySelector('.rk-matinfo').textContent = a.matrix.length
			? `${fmtInt(a.matrix.length)} pairs · largest ${this.fmtMetric(max)} (colour: log scale)`
			: 'no point-to-point messages (collectives are below)';
		cv.onmousemove = (e) => {
			const r = cv.getBoundingClientRect();
			const j = Math.floor((e.clientX - r.left - pad) / cell), i = Math.floor((e.clientY - r.top - pad) / cell);
			const p = i >= 0 && j >= 0 && i < n && j < n ? this.cellsAt.get(i * n + j) : null;
			cv.title = p ? `rank ${p.src} → rank ${p.dst}: ${fmtInt(p.messages)} messages, ${fmtBytes(Number(p.bytes))}, ${fmtDur(Number(p.time_ns))} send to arrival`
				: i >= 0 && j >= 0 && i < n && j < n ? `rank ${a.ranks[i].rank} → rank ${a.ranks[j].rank}: nothing` : '';
		};
	}

	fmtMetric(v) {
		return this.metric === 'bytes' ? fmtBytes(v) : this.metric === 'time_ns' ? fmtDur(v) : `${fmtInt(v)} messages`;
	}

	drawSkew() {
		const a = this.data.analysis;
		const colls = a.collectives;
		const cv = this.root.querySelector('.rk-skewc');
		const W = Math.max(400, Math.min(1100, this.root.clientWidth - 40)), H = 160, padL = 60, padB = 18;
		const dpr = window.devicePixelRatio || 1;
		cv.width = Math.round(W * dpr);
		cv.height = Math.round(H * dpr);
		cv.style.width = `${W}px`;
		cv.style.height = `${H}px`;
		const ctx = cv.getContext('2d');
		ctx.scale(dpr, dpr);
		ctx.fillStyle = cssVar('--bg', '#fff');
		ctx.fillRect(0, 0, W, H);
		const box = this.root.querySelector('.rk-colls');
		if (!colls.length) {
			ctx.fillStyle = cssVar('--muted', '#666');
			ctx.font = '12px system-ui, sans-serif';
			ctx.fillText('no collectives', padL, H / 2);
			box.innerHTML = '';
			return;
		}
		const t0 = this.T0;
		const xs = colls.map((c) => Number(big(c.first_ns) - t0));
		const span = Math.max(1, Number(big(this.session.end_ns) - t0));
		const maxSkew = Math.max(1, ...colls.map((c) => Number(c.skew_ns)));
		ctx.strokeStyle = cssVar('--border', '#ccc');
		ctx.strokeRect(padL - 0.5, 4.5, W - padL - 4, H - padB - 8);
		ctx.fillStyle = cssVar('--muted', '#666');
		ctx.font = '10px system-ui, sans-serif';
		ctx.textAlign = 'right';
		ctx.textBaseline = 'middle';
		ctx.fillText(fmtDur(maxSkew), padL - 4, 8);
		ctx.fillText('0', padL - 4, H - padB - 4);
		ctx.textAlign = 'left';
		ctx.textBaseline = 'bottom';
		ctx.fillText(`${fmtDur(span)} of run →`, padL, H - 2);
		const names = [...new Set(colls.map((c) => c.name))];
		const pal = ['#8250df', '#cf222e', '#1a7f37', '#0969da', '#9a6700', '#e36209'];
		const pts = [];
		colls.forEach((c, k) => {
			const x = padL + (xs[k] / span) * (W - padL - 6);
			const y = H - padB - 4 - (Number(c.skew_ns) / maxSkew) * (H - padB - 14);
			ctx.fillStyle = pal[names.indexOf(c.name) % pal.length];
			ctx.fillRect(x - 1.5, y - 1.5, 3, 3);
			pts.push({ x, y, c });
		});
		cv.onmousemove = (e) => {
			const r = cv.getBoundingClientRect();
			const mx = e.clientX - r.left, my = e.clientY - r.top;
			let best = null, bd = 64;
			for (const p of pts) {
				const dd = (p.x - mx) ** 2 + (p.y - my) ** 2;
				if (dd < bd) { bd = dd; best = p; }
			}
			cv.title = best ? `${best.c.name} #${best.c.seq}: skew ${fmtDur(Number(best.c.skew_ns))}, rank ${best.c.last_rank} last` : '';
			cv.style.cursor = best ? 'pointer' : '';
			cv.dataset.hover = best ? colls.indexOf(best.c) : '';
		};
		cv.onclick = () => { const k = cv.dataset.hover; if (k !== '' && k !== undefined) this.openColl(colls[+k]); };
		const top = [...colls].sort((x, y) => Number(y.skew_ns) - Number(x.skew_ns)).slice(0, MAX_COLL_ROWS);
		box.innerHTML = `<p class="muted">${fmtInt(a.collectives_total)} collectives${a.collectives_total > colls.length ? ` (the ${fmtInt(colls.length)} largest skews shown)` : ''}; the largest:</p>
			<table class="rk-colltab"><thead><tr><th>collective</th><th class="num">#</th><th class="num">comm</th><th class="num">ranks</th><th class="num">skew</th><th>first → last</th><th class="num">waiting in it</th></tr></thead><tbody>
			${top.map((c, i) => `<tr class="rk-link" data-i="${i}" title="Show it on the Timeline"><td class="bidi">${esc(c.name)}</td><td class="num">${esc(String(c.seq))}</td><td class="num">${esc(String(c.comm))}</td><td class="num">${fmtInt(c.members)}${c.members < c.expected ? ` <span class="rk-note">of ${fmtInt(c.expected)}</span>` : ''}</td><td class="num">${fmtDur(Number(c.skew_ns))}</td><td>rank ${c.first_rank} → rank ${c.last_rank}</td><td class="num">${fmtDur(Number(c.wait_ns))}</td></tr>`).join('')}
			</tbody></table>`;
		for (const tr of box.querySelectorAll('tr[data-i]')) tr.onclick = () => this.openColl(top[+tr.dataset.i]);
	}

	drawClocks() {
		const a = this.data.analysis, box = this.root.querySelector('.rk-clocktab');
		box.innerHTML = `<table><thead><tr><th>rank</th><th class="num">offset</th><th class="num">± error bound</th><th class="num">drift</th><th>from</th></tr></thead><tbody>
			${a.ranks.map((r) => {
		const k = r.clock, off = Number(k.offset_ns), err = Number(k.error_ns);
		return `<tr><td>${r.rank}</td><td class="num">${off < 0 ? '−' : '+'}${fmtDur(Math.abs(off))}</td><td class="num">${k.method.includes('reference') ? 'reference' : err < 0 ? 'unknown' : fmtDur(err)}</td><td class="num">${k.drift_ppm ? `${Number(k.drift_ppm).toFixed(2)} ppm` : '–'}</td><td>${esc(k.method.join(', ') || 'nothing: not aligned')}</td></tr>`;
	}).join('')}</tbody></table>
			<p class="muted">A rank's clock = the reference's + offset (+ drift × time). The true offset lies within the error bound as long as what bounded it happened in that order: each ping-pong round, each message (its send before its arrival), each collective (nobody leaves before the last arrival).</p>`;
	}

	/* ---- to the Timeline ------------------------------------------------------------ */

	openRank(rank) {
		const procs = new Set((this.session.process_list || []).filter((p) => p.rank === rank).map((p) => p.id));
		const t = (this.session.track_list || []).find((x) => procs.has(x.process));
		this.app.go('timeline');
		if (t) this.app.timeline.showLane(t.id);
	}

	openStep() {
		const a = this.data.analysis;
		const st = this.step === 'all' ? null : a.steps[+this.step];
		if (!st) { this.app.go('timeline'); this.app.timeline.setView(0, this.app.timeline.span); return; }
		this.app.openStep({ abs: big(st.start_ns), dur: Number(big(st.end_ns) - big(st.start_ns)) });
	}

	openColl(c) {
		const first = big(c.first_ns);
		const dur = Math.max(1000, Number(c.skew_ns));
		this.app.openStep({ abs: first - BigInt(Math.round(dur * 0.1)), dur: Math.round(dur * 1.3) });
	}

	async setClock(mode) {
		if (!this.data || mode === this.data.clock_mode) return;
		try {
			await postJSON(`api/clock?mode=${mode}`);
		} catch (e) {
			this.app.banner(`Could not switch the clocks: ${e.message}`);
			return;
		}
		location.reload(); // every page's times change
	}

	/* For the browser tests. */
	state() {
		const a = this.data && this.data.analysis;
		return {
			loaded: !!a,
			error: this.error,
			ranks: a ? a.ranks.map((r) => r.rank) : [],
			straggler: a && a.straggler ? a.straggler.rank : null,
			ops: a && a.straggler ? a.straggler.ops.map((o) => o.name) : [],
			pairs: a ? a.matrix.length : 0,
			collectives: a ? a.collectives_total : 0,
			bars: this.root.querySelectorAll('.rk-bar').length,
			segments: this.root.querySelectorAll('.rk-bar > div').length,
			clockMode: this.data ? this.data.clock_mode : null,
			switchable: this.data ? this.data.clock_switchable : false,
			step: this.step,
		};
	}
}
