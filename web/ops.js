// SPDX-License-Identifier: MIT
// The Ops page: a sortable, filterable (device/track, step, name) virtualised table
// of op statistics with a top-N bar chart and CSV export; clicking an op highlights
// its slices on the Timeline.
import { big } from './api.js';
import { kindName } from './kinds.js';
import { fmtDur, fmtInt, fmtPct, escapeHtml } from './format.js';
import { fetchStats, fetchAllByName } from './stats.js';
import { VirtualTable, toCsv } from './vtable.js';
import { colorFor } from './colors.js';
import { elide, distinctStarts } from './textfit.js';

const TOP_N = 15;

export class Ops {
	constructor(root, app) {
		this.root = root;
		this.app = app;
		this.rows = [];
		this.gen = 0;
		this.built = false;
		this.filters = { track: '', step: '', by: 'name', text: '' };
	}

	build(session) {
		this.session = session;
		const esc = escapeHtml;
		const T0 = big(session.start_ns);
		this.T0 = T0;
		const procs = new Map((session.process_list || []).map((p) => [p.id, p]));
		const trackOpts = (session.track_list || []).filter((t) => kindName(t.kind) !== 'counter')
			.map((t) => `<option value="${esc(t.id)}">${esc((procs.get(t.process)?.name || `process ${t.process}`) + ' / ' + (t.name || t.id))}</option>`).join('');
		this.steps = session.step_list || [];
		const stepOpts = this.steps.map((s, i) => `<option value="${i}">step ${esc(s.index)}${s.traced === false ? ' (not traced)' : ''}</option>`).join('');
		this.root.innerHTML = `
		<div class="ops">
			<div class="toolbar">
				<label>Group by <select class="o-by"><option value="name">op name</option><option value="category">category</option><option value="track">track</option></select></label>
				<label>Device / track <select class="o-track"><option value="">all tracks</option>${trackOpts}</select></label>
				<label>Step <select class="o-step"><option value="">all steps</option>${stepOpts}</select></label>
				<label class="grow">Filter <input type="search" class="o-text" placeholder="name contains… (or /regex/)" spellcheck="false"></label>
				<button type="button" class="o-csv" title="Download the table as CSV">CSV</button>
				<span class="o-status muted"></span>
			</div>
			<div class="ops-body">
				<section class="panel ops-chart"><h3>Top ${TOP_N} <span class="o-metric muted"></span></h3><canvas class="o-bars"></canvas></section>
				<section class="panel ops-table"><div class="o-table"></div></section>
			</div>
		</div>`;
		const $ = (s) => this.root.querySelector(s);
		this.table = new VirtualTable($('.o-table'), [
			{ key: 'name', label: 'Name', width: 'minmax(200px, 4fr)' },
			{ key: 'count', label: 'Count', num: true, fmt: fmtInt, width: '90px' },
			{ key: 'total', label: 'Total', num: true, fmt: (v) => fmtDur(v), width: '100px', title: 'inclusive time', filter: 'dur' },
			{ key: 'self', label: 'Self', num: true, fmt: (v) => fmtDur(v), width: '100px', title: 'exclusive time (children removed)', filter: 'dur' },
			{ key: 'mean', label: 'Mean', num: true, fmt: (v) => fmtDur(v), width: '90px', filter: 'dur' },
			{ key: 'p50', label: 'P50', num: true, fmt: (v) => fmtDur(v), width: '90px', filter: 'dur' },
			{ key: 'p99', label: 'P99', num: true, fmt: (v) => fmtDur(v), width: '90px', filter: 'dur' },
			{ key: 'share', label: 'Self %', num: true, fmt: (v) => fmtPct(v), width: '110px', bar: (r) => r.share, title: 'self time / self time of all ops (self adds up to busy time)', filter: 'pct' },
			{ key: 'cum', label: 'Cum.', num: true, fmt: (v) => fmtPct(v), width: '70px', title: 'cumulative self share in this order', filter: 'pct' },
		], {
			sortKey: 'self',
			filters: true,
			onFilter: (shown, all) => {
				this.cumulate();
				this.drawBars();
				const st = this.root.querySelector('.o-status');
				if (st && !st.classList.contains('error')) st.textContent = shown === all ? this.countText(all) : `${fmtInt(shown)} of ${this.countText(all)}`;
			},
			onClick: (r) => this.app.highlightRow(this.filters.by, r),
			onSort: () => { this.cumulate(); this.drawBars(); },
		});
		// (a filter changed: the address keeps it, as it keeps the view on the Timeline)
		$('.o-by').onchange = (e) => { this.filters.by = e.target.value; this.load(); };
		$('.o-track').onchange = (e) => { this.filters.track = e.target.value; this.trackTitle(); this.load(); this.app.updateHash(); };
		$('.o-step').onchange = (e) => { this.filters.step = e.target.value; this.load(); this.app.updateHash(); };
		let timer = 0;
		$('.o-text').oninput = (e) => {
			clearTimeout(timer);
			// emptied (Esc, the × of the box): at once
			timer = setTimeout(() => { this.filters.text = e.target.value; this.applyFilter(); this.app.updateHash(); }, e.target.value ? 150 : 0);
		};
		this.trackTitle();
		$('.o-csv').onclick = () => this.csv();
		const bars = $('.o-bars');
		new ResizeObserver(() => this.drawBars()).observe(bars);
		bars.addEventListener('click', (e) => {
			const r = bars.getBoundingClientRect();
			const i = Math.floor((e.clientY - r.top - 4) / this.barH);
			const row = this.top && this.top[i];
			if (row) this.app.highlightRow(this.filters.by, row);
		});
		bars.addEventListener('mousemove', (e) => {
			const r = bars.getBoundingClientRect();
			const i = Math.floor((e.clientY - r.top - 4) / this.barH);
			bars.style.cursor = this.top && this.top[i] ? 'pointer' : '';
			bars.title = this.top && this.top[i] ? `${this.top[i].name}\n${fmtDur(this.top[i][this.metric()])}` : '';
		});
		this.built = true;
	}

	show() {
		if (!this.loaded) this.load();
		else { this.table.paint(true); this.drawBars(); }
	}

	/* The track select shows a long "process / track" cut: its tooltip has the whole. */
	trackTitle() {
		const s = this.root.querySelector('.o-track');
		if (s) s.title = s.selectedOptions[0] ? s.selectedOptions[0].textContent : '';
	}

	setFilters(f) {
		if (f.track !== undefined) { this.filters.track = f.track; const s = this.root.querySelector('.o-track'); if (s) { s.value = f.track; this.trackTitle(); } }
		if (f.step !== undefined) { this.filters.step = f.step; const s = this.root.querySelector('.o-step'); if (s) s.value = f.step; }
		if (f.text !== undefined) { this.filters.text = f.text; const s = this.root.querySelector('.o-text'); if (s) s.value = f.text; }
		this.loaded = false;
	}

	async load() {
		const gen = ++this.gen;
		this.loaded = true;
		const st = this.root.querySelector('.o-status');
		st.textContent = 'loading…';
		st.classList.remove('error');
		const q = { by: this.filters.by };
		if (this.filters.track !== '') q.track = this.filters.track;
		if (this.filters.step !== '') {
			const s = this.steps[+this.filters.step];
			if (s) { q.t0 = big(s.start_ns).toString(); q.t1 = (big(s.start_ns) + big(s.dur_ns)).toString(); q.clip = 1; }
		}
		try {
			const plain = q.by === 'name' && q.track === undefined && q.t0 === undefined;
			const rows = plain ? await fetchAllByName() : await fetchStats(q);
			if (gen !== this.gen) return;
			this.rows = rows;
			st.textContent = this.countText(rows.length);
			this.applyFilter();
		} catch (e) {
			if (gen !== this.gen) return;
			this.rows = [];
			st.textContent = `error: ${e.message}`;
			st.classList.add('error');
			this.applyFilter(`Could not load op statistics: ${e.message}`);
		}
	}

	countText(n) { return `${fmtInt(n)} ${this.filters.by === 'name' ? 'ops' : this.filters.by === 'category' ? 'categories' : 'tracks'}`; }

	applyFilter(emptyText) {
		let rows = this.rows;
		const f = this.filters.text.trim();
		if (f) {
			let test;
			const m = /^\/(.*)\/([i]*)$/.exec(f);
			if (m) { try { const re = new RegExp(m[1], m[2] || 'i'); test = (s) => re.test(s); } catch { test = () => false; } }
			else { const lc = f.toLowerCase(); test = (s) => s.toLowerCase().includes(lc); }
			rows = rows.filter((r) => test(r.name));
		}
		this.view = rows;
		this.table.setRows(rows, emptyText || (this.rows.length ? 'No op matches the filter.' : 'No slices in this selection.'));
		this.cumulate();
		this.drawBars();
	}

	cumulate() {
		let acc = 0;
		for (const r of this.table.ordered()) { acc += r.share || 0; r.cum = acc; }
		this.table.paint(true);
	}

	metric() {
		const k = this.table.sortKey;
		return ['total', 'self', 'mean', 'p50', 'p99', 'count'].includes(k) ? k : 'self';
	}

	drawBars() {
		const c = this.root.querySelector('.o-bars');
		if (!c || !c.clientWidth) return;
		const m = this.metric();
		this.root.querySelector('.o-metric').textContent = `by ${m === 'p50' ? 'P50' : m === 'p99' ? 'P99' : m}`;
		const rows = (this.table ? this.table.ordered() : this.view || []).slice().sort((a, b) => (b[m] || 0) - (a[m] || 0)).slice(0, TOP_N);
		this.top = rows;
		const dpr = window.devicePixelRatio || 1;
		const w = c.clientWidth;
		this.barH = 22;
		const h = Math.max(60, rows.length * this.barH + 8);
		c.style.height = `${h}px`;
		c.width = Math.round(w * dpr);
		c.height = Math.round(h * dpr);
		const ctx = c.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, w, h);
		const cs = getComputedStyle(document.documentElement);
		const fg = cs.getPropertyValue('--fg').trim() || '#222';
		ctx.font = '11px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		if (!rows.length) { ctx.fillStyle = fg; ctx.fillText('No data.', 8, 20); return; }
		const max = rows[0][m] || 1;
		const labelW = Math.min(260, w * 0.45);
		// names measured in the font and cut in the middle to end before the bars (a
		// long name without spaces used to run over the bar and its value)
		const keep = distinctStarts(rows.map((r) => r.name));
		const measure = (t) => ctx.measureText(t).width;
		this.labels = [];
		rows.forEach((r, i) => {
			const y = 4 + i * this.barH;
			const name = elide(r.name, labelW - 12, measure, keep.get(r.name), ctx.font);
			this.labels.push(name);
			ctx.fillStyle = fg;
			ctx.fillText(name, 4, y + 10);
			const bw = Math.max(1, (w - labelW - 90) * (r[m] || 0) / max);
			ctx.fillStyle = colorFor(r.name).fill;
			ctx.fillRect(labelW, y + 3, bw, this.barH - 6);
			ctx.fillStyle = fg;
			ctx.fillText(m === 'count' ? fmtInt(r[m]) : fmtDur(r[m]), labelW + bw + 6, y + 10);
		});
	}

	csv() {
		const cols = [
			{ key: 'name' }, { key: 'count' }, { key: 'total', csv: 'total_ns' }, { key: 'self', csv: 'self_ns' }, { key: 'mean', csv: 'mean_ns' },
			{ key: 'min', csv: 'min_ns' }, { key: 'max', csv: 'max_ns' }, { key: 'p50', csv: 'p50_ns' }, { key: 'p99', csv: 'p99_ns' }, { key: 'share' },
		];
		const blob = new Blob([toCsv(cols, this.table.ordered())], { type: 'text/csv' });
		const a = document.createElement('a');
		a.href = URL.createObjectURL(blob);
		a.download = 'tftracer-ops.csv';
		a.click();
		setTimeout(() => URL.revokeObjectURL(a.href), 1000);
	}
}
