// SPDX-License-Identifier: MIT
// The details drawer under the timeline: everything /api/slice knows about the
// selected slice (op fields, args tree, flows) and the per-name table of an area
// selection. Values copy on click.
import { getJSON, toJSONText, big } from './api.js';
import { loadSliceProf } from './analysis.js';
import { fmtDur, fmtDurFull, fmtOffset, fmtRange, fmtInt, fmtBytes, fmtPct, escapeHtml } from './format.js';
import { VirtualTable } from './vtable.js';
import { fetchStatsMulti } from './stats.js';

/* Arg keys that producers use for the op fields the drawer shows first. */
const FIELDS = [
	['Op type', ['op', 'op_type', 'Op type', 'type', 'kernel_type']],
	['Inputs', ['inputs', 'Input names', 'input_names', 'input']],
	['Shapes', ['shapes', 'Input Dims', 'Input dims', 'input_shapes', 'shape', 'Output dims']],
	['Dtypes', ['dtypes', 'Input type', 'input_types', 'dtype', 'Output type']],
	['Bytes', ['bytes', 'Bytes', 'bytes_accessed', 'allocator_bytes_in_use', 'requested_bytes', 'total_bytes', 'Bytes transferred']],
	['Timeline label', ['timeline_label', 'label', 'description']],
];

function argLookup(args, keys) {
	if (!args) return undefined;
	for (const k of keys) if (args[k] !== undefined && args[k] !== '' && !(Array.isArray(args[k]) && !args[k].length)) return args[k];
	// TF RunMetadata style: input0, input1, ...
	if (keys[0] === 'inputs') {
		const ins = Object.keys(args).filter((k) => /^input\d+$/.test(k)).sort((a, b) => +a.slice(5) - +b.slice(5));
		if (ins.length) return ins.map((k) => args[k]);
	}
	return undefined;
}

function valueText(v) {
	if (typeof v === 'bigint') return v.toString();
	if (typeof v === 'string') {
		const t = v.trim();
		if ((t.startsWith('[') || t.startsWith('{')) && t.length < 100000) {
			try { return toJSONText(JSON.parse(t)); } catch { /* not JSON */ }
		}
		return v;
	}
	if (v === null || v === undefined) return 'null';
	if (typeof v === 'object') return toJSONText(v);
	return String(v);
}

async function copyText(text) {
	try {
		await navigator.clipboard.writeText(text);
		return true;
	} catch {
		const ta = document.createElement('textarea');
		ta.value = text;
		document.body.appendChild(ta);
		ta.select();
		let ok = false;
		try { ok = document.execCommand('copy'); } catch { /* ignore */ }
		ta.remove();
		return ok;
	}
}

export class Details {
	constructor(root, app) {
		this.root = root;
		this.app = app;
		this.selBody = root.querySelector('.dr-sel');
		this.areaBody = root.querySelector('.dr-area');
		this.tabs = root.querySelectorAll('.dr-tab');
		this.gen = 0;
		this.areaGen = 0;
		this.current = null;
		for (const b of this.tabs) b.addEventListener('click', () => this.tab(b.dataset.tab));
		root.addEventListener('click', (e) => {
			const v = e.target.closest('[data-copy]');
			if (v) {
				copyText(v.dataset.copy === '1' ? v.textContent : v.dataset.copy).then((ok) => app.toast(ok ? 'Copied' : 'Copy failed'));
			}
		});
		this.areaTable = null;
		this.showEmpty();
	}

	tab(name) {
		for (const b of this.tabs) b.classList.toggle('on', b.dataset.tab === name);
		this.selBody.hidden = name !== 'sel';
		this.areaBody.hidden = name !== 'area';
	}

	showEmpty() {
		this.selBody.innerHTML = '<p class="empty">Click a slice to see its details. Drag across the tracks to aggregate a range; <kbd>?</kbd> lists every key.</p>';
	}

	async show(sel) {
		const gen = ++this.gen;
		this.current = null;
		if (!sel) { this.showEmpty(); return; }
		this.tab('sel');
		const tl = this.app.timeline;
		const nm = sel.nameText ?? tl.nameText(sel.name);
		this.selBody.innerHTML = `<h3>${escapeHtml(nm || '…')}</h3><p class="loading">Loading details…</p>`;
		// with seq (a step or a link landed on one of several slices starting together): that one
		const q = { track: sel.track, ts: sel.abs.toString(), depth: sel.depth };
		if (sel.seq !== undefined) q.seq = sel.seq;
		let d;
		try {
			d = await getJSON('api/slice', q, { exact: true, quiet: true });
		} catch (e) {
			if (gen !== this.gen) return;
			this.selBody.innerHTML = `<h3>${escapeHtml(nm || '')}</h3><p class="error">Could not load the details: ${escapeHtml(e.message)}</p>`;
			return;
		}
		if (gen !== this.gen) return; // a newer selection won
		this.current = d;
		tl.setFlows(d);
		// The server's slice is authoritative: fix start and duration.
		if (d.ts !== undefined) { sel.rel = Number(big(d.ts) - tl.T0); sel.abs = big(d.ts); }
		if (d.dur !== undefined) sel.dur = Number(d.dur);
		if (d.seq !== undefined) sel.seq = Number(d.seq);
		this.render(d, sel);
		this.app.selectionDetails(d);
	}

	render(d, sel) {
		const tl = this.app.timeline;
		const rel = Number(big(d.ts) - tl.T0);
		const dur = Number(d.dur) || 0;
		const args = d.args && typeof d.args === 'object' ? d.args : {};
		const rows = [];
		const row = (k, v, raw) => rows.push(`<tr><th>${escapeHtml(k)}</th><td><span class="cp" data-copy="${escapeHtml(raw ?? v)}" title="click to copy">${v}</span></td></tr>`);
		const esc = escapeHtml;
		row('Name', esc(d.name ?? ''), d.name ?? '');
		if (d.cat) row('Category', esc(d.cat), d.cat);
		let step = null;
		if (d.step !== null && d.step !== undefined) {
			const same = (tl.steps || []).filter((s) => String(s.index) === String(d.step));
			step = same.find((s) => s.rel <= rel && rel <= s.rel + s.dur) || same[0] || null;
		}
		row('Start', `${esc(fmtOffset(rel))} <span class="muted">from trace start${step ? ` · ${esc(fmtOffset(rel - step.rel))} from step ${esc(step.index)}` : ''} · ${esc(big(d.ts).toString())} ns absolute</span>`, big(d.ts).toString());
		row('Duration', esc(fmtDurFull(dur)) + ((d.unclosed || (d.flags & 1)) ? ' <i>(Did Not Finish)</i>' : ''), String(dur));
		if (d.self_ns !== undefined && d.self_ns !== null) row('Self time', `${esc(fmtDurFull(Number(d.self_ns)))} <span class="muted">${dur ? fmtPct(Number(d.self_ns) / dur) : ''}</span>`, String(d.self_ns));
		for (const [label, keys] of FIELDS) {
			const v = argLookup(args, keys);
			if (v === undefined) continue;
			const txt = label === 'Bytes' && typeof v === 'number' ? `${fmtInt(v)} B (${fmtBytes(v)})` : valueText(v);
			row(label, esc(txt), valueText(v));
		}
		const p = d.process || {};
		const pdesc = [p.name, p.pid !== undefined ? `pid ${p.pid}` : '', p.rank !== undefined && p.rank >= 0 ? `rank ${p.rank}` : ''].filter(Boolean).join(' · ');
		if (pdesc) row('Device / process', esc(pdesc), p.name || '');
		const t = d.track || {};
		const tr = tl.tracks.get(t.id ?? sel.track);
		row('Thread / track', `${esc(t.name ?? tr?.name ?? '')} <span class="muted">${esc(t.kind ?? tr?.kind ?? '')}${tr && tr.tid !== undefined ? ` · tid ${esc(tr.tid)}` : ''}</span>`, t.name ?? '');
		row('Depth', esc(d.depth ?? sel.depth), String(d.depth ?? sel.depth));
		row('Step', d.step === null || d.step === undefined ? '<span class="muted">none</span>' : esc(d.step), String(d.step ?? ''));
		// the enclosing slices from the server; an older one: those drawn
		const anc = Array.isArray(d.ancestors) ? d.ancestors.map((a) => ({ ...tl.selOf(a, sel.track), label: a.name ?? '' }))
			: sel.depth > 0 ? tl.ancestors({ ...sel, rel, dur }).map((a) => a && { ...a, label: tl.nameText(a.name) }) : [];
		this.ancestorsList = anc;
		const chain = anc.length ? `<p class="chain">${anc.map((a, i) => a ? `<a href="#" data-anc="${i}" title="${esc(`${a.label} · ${fmtDur(a.dur)} · depth ${i}`)}">${esc(a.label)}</a>` : '<span class="muted">?</span>').join(' › ')} › <b>${esc(d.name ?? '')}</b></p>` : '';
		const flowsHtml = this.flowTable('Incoming flows', d.flows_in || [], rel, 'in') + this.flowTable('Outgoing flows', d.flows_out || [], rel, 'out');
		const graphHtml = this.graphNodes(Array.isArray(d.graph) ? d.graph : null, Number(d.graph_truncated) || 0);
		const argKeys = Object.keys(args);
		this.selBody.innerHTML = `
			<div class="dr-headline"><h3 title="${esc(d.name ?? '')}">${esc(d.name ?? '')}</h3>
			<div class="dr-actions">
				<button type="button" data-act="zoom" title="Fit the slice (F)">Zoom to</button>
				<button type="button" data-act="same" title="Highlight every slice with this name">Highlight name</button>
				<button type="button" data-act="stats" title="Op statistics for this name">Stats</button>
				<button type="button" data-act="json" title="Copy the slice as JSON">Copy JSON</button>
			</div></div>
			${chain}
			<div class="dr-cols">
				<table class="kv">${rows.join('')}</table>
				<div>
					<h4 title="${esc(d.name ?? '')}">Durations of “${esc((d.name ?? '').length > 40 ? d.name.slice(0, 39) + '…' : d.name ?? '')}” <span class="muted dr-hist-note"></span></h4>
					<div class="dr-hist"><canvas height="84"></canvas><p class="dr-hist-stats muted">loading…</p></div>
					<h4>Arguments <span class="muted">(${argKeys.length})</span></h4>
					${argKeys.length ? `<div class="args">${this.argTree(args, 0)}</div>` : '<p class="muted">none</p>'}
					${graphHtml}
					<div class="dr-prof"></div>
					${flowsHtml}
				</div>
			</div>`;
		this.selBody.querySelector('[data-act=zoom]').onclick = () => tl.focusRange(sel.rel, sel.dur, true);
		this.selBody.querySelector('[data-act=same]').onclick = () => this.app.highlightName(d.name);
		this.selBody.querySelector('[data-act=stats]').onclick = () => this.app.statsFor(d.name);
		this.selBody.querySelector('[data-act=json]').onclick = () => copyText(toJSONText(d, 2)).then((ok) => this.app.toast(ok ? 'Slice copied as JSON' : 'Copy failed'));
		this.loadHist(d, dur, this.gen);
		{ const gen = this.gen; loadSliceProf(this.selBody.querySelector('.dr-prof'), sel, () => gen === this.gen, Number(this.app.session?.slices) || 0); }
		for (const a of this.selBody.querySelectorAll('[data-anc]')) {
			a.onclick = (e) => {
				e.preventDefault();
				const x = this.ancestorsList[+a.dataset.anc];
				if (x) { tl.reveal(x, false); tl.select(x); }
			};
		}
		for (const a of this.selBody.querySelectorAll('[data-flow]')) {
			a.onclick = (e) => {
				e.preventDefault();
				const f = (a.dataset.dir === 'in' ? d.flows_in : d.flows_out)[+a.dataset.flow];
				tl.selectAt(f.track, Number(big(f.ts) - tl.T0));
			};
		}
	}

	/* Duration histogram of every slice with this name (log-x), this one marked. */
	async loadHist(d, dur, gen) {
		const statsEl = this.selBody.querySelector('.dr-hist-stats');
		const canvas = this.selBody.querySelector('.dr-hist canvas');
		if (!statsEl || !d.name) { if (statsEl) statsEl.textContent = ''; return; }
		let j;
		try {
			j = await getJSON('api/search', { q: d.name, exact: 1, limit: 10000 }, { exact: true, quiet: true });
		} catch (e) {
			if (gen === this.gen) statsEl.textContent = `no distribution: ${e.message}`;
			return;
		}
		if (gen !== this.gen) return;
		const ds = (j.results || []).filter((r) => r.name === d.name).map((r) => Number(r.dur) || 0).sort((a, b) => a - b);
		const total = Number(j.total ?? ds.length);
		if (!ds.length) { statsEl.textContent = ''; canvas.hidden = true; return; }
		const n = ds.length;
		const mean = ds.reduce((a, b) => a + b, 0) / n;
		const sd = Math.sqrt(ds.reduce((a, b) => a + (b - mean) ** 2, 0) / n);
		const q = (p) => ds[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))];
		const note = this.selBody.querySelector('.dr-hist-note');
		if (note) note.textContent = total > n ? `(first ${fmtInt(n)} of ${fmtInt(total)})` : `(${fmtInt(n)})`;
		statsEl.innerHTML = '<span class="lg-this">▮</span> this one <span class="lg-med">▮</span> median <span class="lg-mean">▮</span> mean · ' + escapeHtml(`mean ${fmtDur(mean)} · σ ${fmtDur(sd)} · CV ${mean ? (sd / mean).toFixed(2) : '–'} · p50 ${fmtDur(q(0.5))} · p90 ${fmtDur(q(0.9))} · p99 ${fmtDur(q(0.99))} · p99.9 ${fmtDur(q(0.999))} · this one ${fmtDur(dur)} (rank ${fmtPct(ds.filter((x) => x <= dur).length / n)})`);
		const dpr = window.devicePixelRatio || 1;
		const W = Math.max(200, canvas.clientWidth || 360), H = 84;
		canvas.width = Math.round(W * dpr);
		canvas.height = Math.round(H * dpr);
		const ctx = canvas.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		const lo = Math.max(1, ds[0]), hi = Math.max(lo * 1.0001, ds[n - 1]);
		const bins = Math.min(40, Math.max(8, Math.round(Math.sqrt(n))));
		const lx = (v) => (Math.log(Math.max(lo, v)) - Math.log(lo)) / (Math.log(hi) - Math.log(lo) || 1);
		const cnt = new Array(bins).fill(0);
		for (const v of ds) cnt[Math.min(bins - 1, Math.floor(lx(v) * bins))]++;
		const maxc = Math.max(...cnt);
		const cs = getComputedStyle(document.documentElement);
		const accent = cs.getPropertyValue('--accent').trim() || '#0969da';
		const bad = cs.getPropertyValue('--bad').trim() || '#cf222e';
		const fg = cs.getPropertyValue('--fg').trim() || '#222';
		const muted = cs.getPropertyValue('--muted').trim() || '#777';
		const pw = W - 8, ph = H - 18;
		ctx.clearRect(0, 0, W, H);
		ctx.fillStyle = muted;
		ctx.globalAlpha = 0.55;
		for (let b = 0; b < bins; b++) {
			if (!cnt[b]) continue;
			// log-y so single outliers stay visible
			const h = Math.max(1, Math.log1p(cnt[b]) / Math.log1p(maxc) * ph);
			ctx.fillRect(4 + b * pw / bins, 2 + ph - h, Math.max(1, pw / bins - 1), h);
		}
		ctx.globalAlpha = 1;
		const mark = (v, col, w) => { ctx.fillStyle = col; ctx.fillRect(4 + lx(v) * pw - w / 2, 0, w, ph + 2); };
		mark(q(0.5), accent, 1.5);
		mark(mean, bad, 1.5);
		mark(dur, fg, 3);
		ctx.fillStyle = muted;
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'bottom';
		ctx.fillText(fmtDur(ds[0]), 4, H);
		const r = fmtDur(ds[n - 1]);
		ctx.fillText(r, W - 4 - ctx.measureText(r).width, H);
	}

	// The graph nodes the server joined to the slice by name (GraphDef, CostGraphDef rows);
	// null: the session has no graph, so no section at all.
	graphNodes(nodes, leftOut = 0) {
		if (!nodes) return '';
		const esc = escapeHtml;
		if (!nodes.length) {
			return `<h4>Graph node</h4><p class="muted gn-none">no node of this name in the session's graphs${leftOut
				? ` held by this page (${fmtInt(leftOut)} graph nodes were left out of it: the server has them)` : ''}</p>`;
		}
		const items = nodes.map((n) => {
			const kv = [];
			const add = (k, v) => { if (v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && !v.length)) kv.push(`<tr><th>${esc(k)}</th><td>${esc(valueText(v))}</td></tr>`); };
			add('Op', n.op);
			add('Device', n.device);
			add('Inputs', Array.isArray(n.inputs) ? n.inputs.join(', ') : n.inputs);
			add('Output shapes', Array.isArray(n.output_shapes) ? n.output_shapes.map((sh) => Array.isArray(sh) ? `[${sh.join(', ')}]` : valueText(sh)).join(', ') : n.output_shapes);
			if (n.compute_cost !== null && n.compute_cost !== undefined) add('Compute cost', fmtDurFull(Number(n.compute_cost) * 1000));
			if (n.temporary_memory) add('Temporary memory', fmtBytes(Number(n.temporary_memory)));
			if (n.persistent_memory) add('Persistent memory', fmtBytes(Number(n.persistent_memory)));
			// what a tfprof OpLogProto (tfprof_log) says of it: types, float ops, code (outermost frame first)
			add('Op types', Array.isArray(n.op_types) ? n.op_types.join(', ') : n.op_types);
			if (n.float_ops !== null && n.float_ops !== undefined) add('Float ops', fmtInt(Number(n.float_ops)));
			add('Code', Array.isArray(n.code) ? n.code.join(' › ') : n.code);
			const attrs = n.attrs && typeof n.attrs === 'object' ? n.attrs : {};
			const cost = n.cost && typeof n.cost === 'object' ? n.cost : {};
			return `<div class="gn"><p class="gn-src muted">${esc(n.graph ?? '')} · ${esc(n.kind ?? '')}${n.name ? ` · ${esc(n.name)}` : ''}</p>
				<table class="kv gn-kv">${kv.join('')}</table>
				${Object.keys(attrs).length ? `<div class="args">${this.argTree(attrs, 0)}</div>` : ''}
				${Object.keys(cost).length ? `<div class="args">${this.argTree(cost, 0)}</div>` : ''}</div>`;
		});
		// (the page's cap may have left out some of this name's rows: say so wherever it applies)
		const cut = leftOut ? `<p class="muted gn-cut">This page holds part of the session's graph nodes (${fmtInt(leftOut)} were left out); the server may list more.</p>` : '';
		return `<h4>Graph node <span class="muted">(${nodes.length})</span></h4>${cut}${items.join('')}`;
	}

	flowTable(title, flows, rel, dir) {
		if (!flows.length) return '';
		const tl = this.app.timeline;
		const rows = flows.map((f, i) => {
			const fr = Number(big(f.ts) - tl.T0);
			const tr = tl.tracks.get(f.track);
			const delay = dir === 'out' ? fr - rel : rel - fr;
			return `<tr><td><a href="#" data-flow="${i}" data-dir="${dir}">${escapeHtml(f.name || f.cat || 'flow')}</a></td><td>${escapeHtml(tr ? tr.name : `track ${f.track}`)}</td><td class="num">${escapeHtml(fmtOffset(fr))}</td><td class="num">${escapeHtml(fmtDur(delay))}</td></tr>`;
		}).join('');
		return `<h4>${title} <span class="muted">(${flows.length})</span></h4><table class="flows"><tr><th>flow</th><th>track</th><th>at</th><th>delay</th></tr>${rows}</table>`;
	}

	argTree(v, depth) {
		if (depth > 6) return '<span class="muted">…</span>';
		if (v && typeof v === 'object' && !Array.isArray(v)) {
			const keys = Object.keys(v);
			return `<dl>${keys.slice(0, 500).map((k) => {
				const x = v[k];
				if (x && typeof x === 'object' && (Array.isArray(x) ? x.some((y) => y && typeof y === 'object') : true) && JSON.stringify(x, (a, b) => (typeof b === 'bigint' ? String(b) : b)).length > 80)
					return `<dt>${escapeHtml(k)}</dt><dd><details><summary>${Array.isArray(x) ? `[${x.length}]` : `{${Object.keys(x).length}}`}</summary>${this.argTree(x, depth + 1)}</details></dd>`;
				const txt = valueText(x);
				return `<dt>${escapeHtml(k)}</dt><dd><span class="cp" data-copy="1" title="click to copy">${escapeHtml(txt.length > 2000 ? txt.slice(0, 2000) + '…' : txt)}</span></dd>`;
			}).join('')}${keys.length > 500 ? `<dt>…</dt><dd>${keys.length - 500} more</dd>` : ''}</dl>`;
		}
		if (Array.isArray(v)) return `<dl>${v.slice(0, 500).map((x, i) => `<dt>${i}</dt><dd>${x && typeof x === 'object' ? this.argTree(x, depth + 1) : `<span class="cp" data-copy="1">${escapeHtml(valueText(x))}</span>`}</dd>`).join('')}</dl>`;
		return escapeHtml(valueText(v));
	}

	/* Area selection: per-name aggregation over the range and tracks. */
	async showArea(area) {
		const gen = ++this.areaGen;
		if (!area) { this.areaBody.innerHTML = '<p class="empty">Drag across the tracks (or along the time ruler) to select a range.</p>'; this.areaTable = null; return; }
		this.tab('area');
		const tl = this.app.timeline;
		const dur = area.e - area.s;
		const nTracks = area.tracks ? area.tracks.size : tl.tracks.size;
		this.areaBody.innerHTML = `<div class="dr-headline"><h3>Range ${escapeHtml(fmtDur(dur))}</h3><span class="muted">${escapeHtml(fmtRange(area.s, area.e))} · ${nTracks} track${nTracks === 1 ? '' : 's'}</span></div><p class="loading">Aggregating…</p><div class="area-table"></div>`;
		const t0 = (tl.T0 + BigInt(Math.max(0, Math.round(area.s)))).toString();
		const t1 = (tl.T0 + BigInt(Math.max(0, Math.round(area.e)))).toString();
		let rows;
		try {
			rows = await fetchStatsMulti(area.tracks && area.tracks.size ? area.tracks : null, t0, t1);
		} catch (e) {
			if (gen !== this.areaGen) return;
			this.areaBody.querySelector('.loading').outerHTML = `<p class="error">Could not aggregate: ${escapeHtml(e.message)}</p>`;
			return;
		}
		if (gen !== this.areaGen) return;
		this.areaBody.querySelector('.loading').remove();
		let tot = { name: 'Σ total', count: 0, total: 0, self: 0, min: null, max: null };
		for (const r of rows) {
			r.range = dur > 0 ? r.total / dur : 0;
			tot.count += r.count; tot.total += r.total; tot.self += r.self;
			tot.min = tot.min === null ? r.min : Math.min(tot.min, r.min ?? Infinity);
			tot.max = tot.max === null ? r.max : Math.max(tot.max, r.max ?? -Infinity);
		}
		tot.mean = tot.count ? tot.total / tot.count : 0;
		tot.range = dur > 0 ? tot.total / dur : 0;
		const maxTotal = rows.reduce((m, r) => Math.max(m, r.total), 0) || 1;
		const el = this.areaBody.querySelector('.area-table');
		const table = new VirtualTable(el, [
			{ key: 'name', label: 'Name', width: 'minmax(180px, 3fr)' },
			{ key: 'count', label: 'Count', num: true, fmt: fmtInt, width: '80px' },
			{ key: 'total', label: 'Total', num: true, fmt: (v) => fmtDur(v), width: '110px', bar: (r) => r.total / maxTotal },
			{ key: 'self', label: 'Self', num: true, fmt: (v) => fmtDur(v), width: '90px' },
			{ key: 'mean', label: 'Avg', num: true, fmt: (v) => fmtDur(v), width: '90px' },
			{ key: 'min', label: 'Min', num: true, fmt: (v) => fmtDur(v), width: '90px' },
			{ key: 'max', label: 'Max', num: true, fmt: (v) => fmtDur(v), width: '90px' },
			{ key: 'range', label: '% of range', num: true, fmt: (v) => fmtPct(v), width: '90px', title: 'time inside the range / range duration (slices are clipped to the range; nested and parallel slices add up, so this can pass 100%)' },
		], { sortKey: 'total', onClick: (r) => { if (r !== tot) this.app.highlightName(r.name, true); } });
		table.setRows(rows.length ? [tot, ...rows] : [], 'No slices in this range.');
		this.areaTable = table;
	}
}
