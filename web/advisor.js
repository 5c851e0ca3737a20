// SPDX-License-Identifier: MIT
// The Advisor page: what slows the session's steps (GET /api/advise, `tftracer
// advise`): the findings as cards ranked by their cost per step, each with its
// explanation, what to change, and its evidence (a click opens the Timeline on it,
// the range shaded and its slices selected); then each checker's verdict and the
// steps' breakdown. Also the advice loader the Overview shares (one request).
import { getJSON, big } from './api.js';
import { fmtDur, fmtPct, fmtInt, escapeHtml } from './format.js';

const esc = escapeHtml;

/* The breakdown's parts, in the order the advisor claims each nanosecond. */
export const PARTS = [
	{ key: 'device_compute', label: 'device compute', css: '--adv-device' },
	{ key: 'communication', label: 'communication', css: '--adv-comm' },
	{ key: 'memcpy', label: 'memcpy', css: '--adv-memcpy' },
	{ key: 'input', label: 'input (waiting for data)', css: '--adv-input' },
	{ key: 'host_compute', label: 'host compute', css: '--adv-host' },
	{ key: 'idle', label: 'idle', css: '--adv-idle' },
];

/* The colours of the parts, from the theme. */
export function partColors() {
	const cs = getComputedStyle(document.documentElement);
	const fall = ['#2da44e', '#8250df', '#0969da', '#cf222e', '#e36209', '#8c959f'];
	return PARTS.map((p, i) => cs.getPropertyValue(p.css).trim() || fall[i]);
}

const num = (v) => (typeof v === 'bigint' ? Number(v) : Number(v) || 0);

/* The default advice (every checker, the analysed steps), fetched once and shared. */
let advice = null;
export function fetchAdvice() {
	if (!advice) advice = getJSON('api/advise', null, { exact: true, quiet: true }).catch((e) => { advice = null; throw e; });
	return advice;
}
/* A live session grew: the advice is recomputed when next shown. */
export function invalidateAdvice() { advice = null; }

/* "TRACK.TS.DEPTH" -> {track, ts (BigInt), depth}, or null. */
export function parseSliceId(id) {
	const m = /^(\d+)\.(-?\d+)\.(\d+)$/.exec(String(id));
	return m ? { track: +m[1], ts: BigInt(m[2]), depth: +m[3] } : null;
}

export class Advisor {
	constructor(root, app) {
		this.root = root;
		this.app = app;
		this.data = null;
		this.query = '';     // '' (default), 'all', or a step number
		this.gen = 0;
		this.error = null;
	}

	/* Shown: fetch once (or again after a live refresh). */
	show() {
		if (!this.app.session) return;
		if (!this.data && !this.loading) this.load();
	}

	invalidate() {
		this.data = null;
		invalidateAdvice();
		if (this.app.page === 'advisor') this.load();
	}

	async load() {
		const gen = ++this.gen;
		this.loading = true;
		this.error = null;
		if (!this.data) this.root.innerHTML = '<div class="adv"><p class="loading">Looking for what slows the steps…</p></div>';
		let d;
		try {
			d = this.query === '' ? await fetchAdvice()
				: await getJSON('api/advise', this.query === 'all' ? { all_steps: 1 } : { step: this.query }, { exact: true, quiet: true });
		} catch (e) {
			if (gen !== this.gen) return;
			this.loading = false;
			this.error = e.message;
			this.data = null;
			this.root.innerHTML = `<div class="adv"><h2>Advisor</h2><p class="error">Could not run the advisor: ${esc(e.message)}</p></div>`;
			return;
		}
		if (gen !== this.gen) return;
		this.loading = false;
		this.data = d;
		this.render();
	}

	render() {
		const d = this.data;
		if (!d) return;
		const s = this.app.session;
		const findings = d.findings || [];
		const steps = d.steps || [];
		const n = num(d.analysed_steps);
		const per = n ? num(d.analysed_ns) / n : 0;
		const stepOpts = [...new Set(steps.map((st) => String(st.index)))].slice(0, 2000)
			.map((i) => `<option value="${esc(i)}"${this.query === i ? ' selected' : ''}>step ${esc(i)}</option>`).join('');
		this.root.innerHTML = `
		<div class="adv">
			<div class="adv-head">
				<h2>Advisor</h2>
				<span class="muted">${fmtInt(n)} step${n === 1 ? '' : 's'} analysed · ${esc(fmtDur(per))} per step · ${fmtInt(findings.length)} finding${findings.length === 1 ? '' : 's'}</span>
				<span class="spacer"></span>
				${steps.length ? `<label>Steps <select class="adv-steps"><option value="">analysed (without each worker's first)</option><option value="all"${this.query === 'all' ? ' selected' : ''}>all, the first ones too</option>${stepOpts}</select></label>` : ''}
			</div>
			${findings.length ? '' : `<p class="adv-none">No findings: ${esc(s && s.slices ? 'nothing the checkers look for slows these steps (their verdicts below).' : 'the session has no slices.')}</p>`}
			<div class="adv-cards">${findings.map((f, i) => this.card(f, i, per)).join('')}</div>
			<section class="panel adv-checked"><h3>Checked</h3>
				<table class="grid"><tr><th>checker</th><th>verdict</th></tr>
				${(d.checked || []).map((c) => `<tr><td class="mono">${esc(c.checker)}</td><td>${esc(c.verdict)}</td></tr>`).join('')}</table></section>
			${steps.length ? this.stepTable(steps) : ''}
		</div>`;
		const sel = this.root.querySelector('.adv-steps');
		if (sel) sel.onchange = () => { this.query = sel.value; this.data = null; this.load(); };
		for (const c of this.root.querySelectorAll('.adv-card')) {
			const f = findings[+c.dataset.i];
			c.querySelector('.adv-open').onclick = (e) => { e.stopPropagation(); this.open(f, 0); };
			for (const a of c.querySelectorAll('a.adv-ev')) a.onclick = (e) => { e.preventDefault(); e.stopPropagation(); this.open(f, +a.dataset.e); };
			c.onclick = (e) => { if (!e.target.closest('a, button, select')) this.open(f, 0); };
		}
	}

	card(f, i, per) {
		const s = this.app.session;
		const tracks = new Map((s.track_list || []).map((t) => [t.id, t]));
		const procs = new Map((s.process_list || []).map((p) => [p.id, p]));
		const T0 = big(s.start_ns);
		const ev = (f.evidence || []).map((e, k) => {
			const t = e.track !== null && e.track !== undefined ? tracks.get(num(e.track)) : null;
			const name = t ? (String(t.name || '').trim() || procs.get(t.process)?.name || `track ${t.id}`) : 'all tracks';
			const rel = Number(big(e.t0_ns) - T0), dur = Number(big(e.t1_ns) - big(e.t0_ns));
			const ns = (e.slice_ids || []).length;
			return `<li><a href="#" class="adv-ev" data-e="${k}" title="Open on the Timeline">${esc(name)}</a> <span class="muted">at ${esc(fmtDur(rel))}, ${esc(fmtDur(dur))}${ns ? ` · ${fmtInt(ns)} slice${ns === 1 ? '' : 's'}` : ''}</span></li>`;
		}).join('');
		const cost = num(f.cost_ns);
		return `<section class="card adv-card" data-i="${i}" data-checker="${esc(f.checker)}" tabindex="0">
			<div class="adv-top"><span class="adv-rank">${i + 1}</span><h3 class="bidi">${esc(f.title)}</h3>
				<span class="adv-cost" title="What it costs per analysed step">${esc(fmtDur(cost))} / step${per ? ` · ${esc(fmtPct(cost / per))}` : ''}</span></div>
			<p class="adv-checker muted">${esc(f.checker)}</p>
			<p class="adv-expl">${esc(f.explanation || '')}</p>
			<p class="adv-rec"><b>What to do.</b> ${esc(f.recommendation || '')}</p>
			${ev ? `<div class="adv-evl"><b>Evidence</b><ul>${ev}</ul></div>` : ''}
			${(f.evidence || []).length ? '<button type="button" class="adv-open">Show on the Timeline</button>' : ''}
		</section>`;
	}

	stepTable(steps) {
		const rows = steps.slice(0, 500).map((st) => {
			const b = st.breakdown || {};
			const d = num(st.duration_ns) || 1;
			const bar = PARTS.map((p, k) => `<span class="adv-seg" style="width:${(num(b[p.key]) / d * 100).toFixed(2)}%;background:var(${p.css})" title="${esc(p.label)} ${esc(fmtDur(num(b[p.key])))}"></span>`).join('');
			return `<tr class="${st.analysed ? '' : 'muted'}"><td class="num">${esc(st.index)}</td><td class="num">${st.rank >= 0 ? esc(st.rank) : ''}</td><td class="num">${esc(fmtDur(num(st.duration_ns)))}</td><td class="adv-barcell"><span class="adv-bar">${bar}</span></td></tr>`;
		}).join('');
		return `<section class="panel adv-steps-panel"><h3>Step-time breakdown <span class="muted">${fmtInt(steps.length)} steps${steps.length > 500 ? ', the first 500 shown' : ''}; grey: not analysed</span></h3>
			<p class="legend">${PARTS.map((p) => `<span class="sw" style="background:var(${p.css})"></span> ${esc(p.label)}`).join(' ')}</p>
			<div class="tablewrap"><table class="grid"><tr><th class="num">step</th><th class="num">rank</th><th class="num">duration</th><th>breakdown</th></tr>${rows}</table></div></section>`;
	}

	/* Open evidence k of finding f on the Timeline. */
	open(f, k) {
		const e = (f.evidence || [])[k];
		if (e) this.app.openEvidence(e, f.title);
	}

	state() {
		const d = this.data;
		return {
			loaded: !!d, error: this.error,
			cards: this.root.querySelectorAll('.adv-card').length,
			findings: d ? (d.findings || []).map((f) => ({ checker: f.checker, title: f.title, evidence: (f.evidence || []).length })) : [],
			checked: d ? (d.checked || []).map((c) => c.checker) : [],
		};
	}
}
