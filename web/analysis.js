// SPDX-License-Identifier: MIT
// The Analysis page: tfprof's views of the session (GET /api/prof, `tftracer prof`,
// docs/cmd-prof.md): the scope, op, graph and code views as expandable tables with
// the CLI's columns (each selected metric's self and total, per step), an icicle chart
// of the scope and code trees, and tfprof's options as controls. A click on a node
// selects its executions (its slices and the kernels they launched) on the Timeline.
// Also the slice details' profile line (loadSliceProf): a slice's graph node, FLOPs
// and achieved FLOP/s. A static export carries the default views only.
import { getJSON, isStatic } from './api.js';
import { fmtDur, fmtInt, escapeHtml } from './format.js';
import { colorFor } from './colors.js';

const esc = escapeHtml;

export const VIEWS = ['scope', 'op', 'graph', 'code'];
export const METRICS = ['micros', 'accelerator_micros', 'cpu_micros', 'bytes', 'peak_bytes', 'residual_bytes',
	'output_bytes', 'params', 'float_ops', 'occurrence'];
const ORDERS = ['name', 'depth', ...METRICS];
const REGEXES = ['show_name_regexes', 'hide_name_regexes', 'start_name_regexes', 'trim_name_regexes', 'account_type_regexes'];
const TIME = new Set(['micros', 'accelerator_micros', 'cpu_micros']);
const BYTES = new Set(['bytes', 'peak_bytes', 'residual_bytes', 'output_bytes']);
const AUTO_MAX = 2000000; // slices: a slice's profile line is looked up without asking up to this size

/* tfprof's number formats, as the CLI writes them (export_prof.c). */
export function fmtMetric(m, v) {
	v = Number(v) || 0;
	if (TIME.has(m)) return fmtDur(v * 1000);
	if (BYTES.has(m)) {
		if (v >= 1e6) return `${(v / 1e6).toFixed(2)}MB`;
		if (v >= 1e3) return `${(v / 1e3).toFixed(2)}KB`;
		return `${Math.round(v)}B`;
	}
	if (m === 'occurrence') return fmtInt(Math.round(v * 100) / 100);
	if (v >= 1e9) return `${(v / 1e9).toFixed(2)}b`;
	if (v >= 1e6) return `${(v / 1e6).toFixed(2)}m`;
	if (v >= 1e3) return `${(v / 1e3).toFixed(2)}k`;
	return String(Math.round(v * 100) / 100);
}

export function fmtRate(v) {
	if (v === null || v === undefined || !isFinite(v)) return '–';
	if (v >= 1e12) return `${(v / 1e12).toFixed(2)} TFLOP/s`;
	if (v >= 1e9) return `${(v / 1e9).toFixed(2)} GFLOP/s`;
	if (v >= 1e6) return `${(v / 1e6).toFixed(2)} MFLOP/s`;
	return `${v.toFixed(0)} FLOP/s`;
}

export class Analysis {
	constructor(root, app) {
		this.root = root;
		this.app = app;
		this.opts = { view: 'scope', select: 'micros,accelerator_micros,cpu_micros,params,float_ops,occurrence', order_by: 'micros',
			max_depth: '10', min_micros: '', step: '-1' };
		for (const r of REGEXES) this.opts[r] = '';
		this.data = null;
		this.error = null;
		this.open = new Set([0]);
		this.gen = 0;
		this.built = false;
		this.lastSelect = null;
	}

	show() {
		if (!this.app.session) return;
		if (!this.built) this.build();
		if (!this.data && !this.loading) this.load();
	}

	invalidate() {
		this.data = null;
		if (this.app.page === 'analysis') this.load();
	}

	build() {
		this.built = true;
		const o = this.opts;
		const sel = new Set(o.select.split(','));
		this.root.innerHTML = `
		<div class="an">
			<form class="toolbar an-opts" autocomplete="off">
				<label>View <select name="view">${VIEWS.map((v) => `<option${v === o.view ? ' selected' : ''}>${v}</option>`).join('')}</select></label>
				<label>Step <select name="step"><option value="-1">average over the steps</option></select></label>
				<label>Order by <select name="order_by">${ORDERS.map((v) => `<option${v === o.order_by ? ' selected' : ''}>${v}</option>`).join('')}</select></label>
				<label>Max depth <input name="max_depth" type="number" min="0" value="${esc(o.max_depth)}" style="width:5em"></label>
				<label>Min micros <input name="min_micros" type="number" min="0" value="${esc(o.min_micros)}" placeholder="0" style="width:6em"></label>
				<details class="an-more"><summary>Columns and regexes</summary>
					<fieldset class="an-cols"><legend>-select</legend>${METRICS.map((m) => `<label><input type="checkbox" name="col" value="${m}"${sel.has(m) ? ' checked' : ''}> ${m}</label>`).join(' ')}</fieldset>
					${REGEXES.map((r) => `<label class="an-re">${r} <input name="${r}" type="text" spellcheck="false" placeholder="${r === 'hide_name_regexes' || r === 'trim_name_regexes' ? '(none)' : '.*'}"></label>`).join('')}
				</details>
				<button type="submit" class="an-apply">Apply</button>
				<span class="an-status muted"></span>
			</form>
			<section class="panel an-flame-panel"><h3>Icicle <span class="muted an-flame-note"></span></h3><div class="an-flame"></div></section>
			<section class="panel an-table-panel"><div class="an-table"></div></section>
		</div>`;
		const f = this.root.querySelector('.an-opts');
		f.onsubmit = (e) => { e.preventDefault(); this.readForm(); this.open = new Set([0]); this.load(); };
		f.querySelector('[name=view]').onchange = () => f.requestSubmit();
		f.querySelector('[name=step]').onchange = () => f.requestSubmit();
		f.querySelector('[name=order_by]').onchange = () => f.requestSubmit();
		if (isStatic()) {
			for (const el of f.querySelectorAll('input, select:not([name=view])')) el.disabled = true;
			f.querySelector('.an-status').textContent = 'a static export holds the default views only';
		}
	}

	readForm() {
		const f = this.root.querySelector('.an-opts');
		const val = (n) => f.querySelector(`[name=${n}]`).value.trim();
		this.opts.view = val('view');
		this.opts.step = val('step');
		this.opts.order_by = val('order_by');
		this.opts.max_depth = val('max_depth');
		this.opts.min_micros = val('min_micros');
		const cols = [...f.querySelectorAll('[name=col]:checked')].map((c) => c.value);
		this.opts.select = (cols.length ? cols : ['micros']).join(',');
		for (const r of REGEXES) this.opts[r] = val(r);
	}

	/* The query of the current options (only those set), as the CLI's. */
	query() {
		const q = {};
		for (const [k, v] of Object.entries(this.opts)) if (v !== '' && v !== null && v !== undefined) q[k] = v;
		return q;
	}

	async load() {
		const gen = ++this.gen;
		this.loading = true;
		const st = this.root.querySelector('.an-status');
		if (st && !isStatic()) st.textContent = 'computing…';
		let d;
		try {
			d = await getJSON('api/prof', isStatic() ? { view: this.opts.view } : this.query(), { exact: false, quiet: true });
		} catch (e) {
			if (gen !== this.gen) return;
			this.loading = false;
			this.error = e.message;
			this.data = null;
			if (st) st.textContent = '';
			this.root.querySelector('.an-table').innerHTML = `<p class="error">Could not compute the view: ${esc(e.message)}</p>`;
			this.root.querySelector('.an-flame').innerHTML = '';
			return;
		}
		if (gen !== this.gen) return;
		this.loading = false;
		this.error = null;
		this.data = d;
		this.byId = new Map();
		const walk = (n, depth, parent) => { n.depth = depth; n.parent = parent; this.byId.set(n.id, n); for (const c of n.children || []) walk(c, depth + 1, n); };
		walk(d.root, 0, null);
		const stepSel = this.root.querySelector('[name=step]');
		if (stepSel && stepSel.options.length === 1 && d.steps > 1) {
			for (let i = 0; i < d.steps; i++) stepSel.insertAdjacentHTML('beforeend', `<option value="${i}">step ${i}</option>`);
		}
		if (st && !isStatic()) st.textContent = `${fmtInt(this.byId.size)} nodes · ${d.steps} step${d.steps === 1 ? '' : 's'}${d.step >= 0 ? `, step ${d.step} shown` : ', per-step averages'}`;
		this.render();
	}

	render() {
		this.renderTable();
		this.renderFlame();
	}

	renderTable() {
		const d = this.data;
		const cols = d.select || [];
		const head = `<tr><th class="an-name">name</th>${cols.map((m) => `<th class="num" colspan="2">${esc(m)} <span class="muted">self / total</span></th>`).join('')}</tr>`;
		const rows = [];
		const emit = (n) => {
			const kids = n.children || [];
			const isOpen = this.open.has(n.id);
			const tw = kids.length ? `<button type="button" class="an-tw" data-tw="${n.id}" aria-expanded="${isOpen}">${isOpen ? '▾' : '▸'}</button>` : '<span class="an-tw"></span>';
			rows.push(`<tr class="an-row${n.accounted ? '' : ' muted'}" data-id="${n.id}" data-name="${esc(n.name)}">
				<td class="an-name" style="padding-left:${4 + n.depth * 14}px">${tw}<a href="#" class="an-node" data-id="${n.id}" title="Select its executions on the Timeline">${esc(n.name)}</a></td>
				${cols.map((m) => `<td class="num" data-m="${m}" data-k="self" data-v="${Number(n.self?.[m]) || 0}">${esc(n.accounted || n.depth === 0 ? fmtMetric(m, n.self?.[m]) : '--')}</td><td class="num" data-m="${m}" data-k="total" data-v="${Number(n.total?.[m]) || 0}">${esc(fmtMetric(m, n.total?.[m]))}</td>`).join('')}
			</tr>`);
			if (isOpen) for (const c of kids) emit(c);
		};
		emit(d.root);
		const el = this.root.querySelector('.an-table');
		el.innerHTML = `<div class="tablewrap"><table class="grid an-grid">${head}${rows.join('')}</table></div>`;
		for (const b of el.querySelectorAll('[data-tw]')) {
			b.onclick = (e) => {
				e.preventDefault();
				const id = +b.dataset.tw;
				if (this.open.has(id)) this.open.delete(id); else this.open.add(id);
				this.renderTable();
			};
		}
		for (const a of el.querySelectorAll('a.an-node')) a.onclick = (e) => { e.preventDefault(); this.select(+a.dataset.id); };
	}

	/* The metric the icicle sizes by: the first selected time metric, else the first selected. */
	flameMetric() {
		const cols = this.data.select || [];
		return cols.find((m) => TIME.has(m)) || cols[0] || 'micros';
	}

	renderFlame() {
		const d = this.data;
		const el = this.root.querySelector('.an-flame');
		const panel = this.root.querySelector('.an-flame-panel');
		const tree = d.view === 'scope' || d.view === 'code';
		panel.hidden = !tree;
		if (!tree) { el.innerHTML = ''; return; }
		const m = this.flameMetric();
		const rootV = Number(d.root.total?.[m]) || 0;
		this.root.querySelector('.an-flame-note').textContent = `${d.view} tree, width: total ${m}`;
		if (!rootV) { el.innerHTML = `<p class="muted">no ${esc(m)} to show</p>`; return; }
		const cells = [];
		const H = 18;
		let maxDepth = 0;
		const place = (n, x, w) => {
			if (w < 0.05) return; // narrower than 0.05 % of the chart
			maxDepth = Math.max(maxDepth, n.depth);
			const label = n.name.split('/').pop();
			cells.push(`<div class="an-cell" data-id="${n.id}" style="left:${x.toFixed(3)}%;width:${w.toFixed(3)}%;top:${n.depth * H}px;background:${colorFor(label)}" title="${esc(n.name)}: ${esc(fmtMetric(m, n.total?.[m]))}">${w >= 1.5 ? esc(label) : ''}</div>`);
			let cx = x;
			for (const c of n.children || []) {
				const cw = (Number(c.total?.[m]) || 0) / rootV * 100;
				place(c, cx, cw);
				cx += cw;
			}
		};
		place(d.root, 0, 100);
		el.innerHTML = `<div class="an-icicle" style="height:${(maxDepth + 1) * H}px">${cells.join('')}</div>`;
		for (const c of el.querySelectorAll('.an-cell')) c.onclick = () => this.select(+c.dataset.id);
	}

	/* Select node id's executions (its slices, the kernels they launched) on the Timeline. */
	async select(id) {
		const n = this.byId?.get(id);
		if (!n) return;
		if (isStatic()) {
			// (no executions in a static export: highlight the slices of its name)
			const leaf = n.name.split('/').pop();
			this.app.highlightName(leaf, true, { first: true });
			return;
		}
		const st = this.root.querySelector('.an-status');
		let r;
		try {
			r = await getJSON('api/prof', { ...this.query(), node: id }, { exact: true, quiet: true });
		} catch (e) {
			this.app.toast(`Could not find the executions of ${n.name}: ${e.message}`);
			return;
		}
		this.lastSelect = { id, name: n.name, executions: Number(r.executions), slice_ids: r.slice_ids };
		if (!Number(r.executions)) {
			if (st) st.textContent = `${n.name}: no executions in the step(s)`;
			this.app.toast(`${n.name} has no executions in the step(s) shown`);
			return;
		}
		await this.app.openEvidence({ track: r.track, t0_ns: r.t0_ns, t1_ns: r.t1_ns, slice_ids: r.slice_ids },
			`${n.name} (${fmtInt(Number(r.executions))} executions${r.truncated ? `, the first ${r.slice_ids.length} marked` : ''})`);
	}

	state() {
		const d = this.data;
		return {
			loaded: !!d, error: this.error, view: d?.view, rows: this.root.querySelectorAll('.an-row').length,
			cells: this.root.querySelectorAll('.an-cell').length, lastSelect: this.lastSelect,
		};
	}
}

/*
 * The slice details' profile line: the graph node the slice is an execution of
 * (its scope path), parameters, FLOPs of one execution and the achieved FLOP/s
 * (GET /api/prof?slice=). Nothing in a static export or when the slice is none.
 */
export async function loadSliceProf(el, sel, isCurrent, slices = 0) {
	if (!el || isStatic()) return;
	// (each answer scans the session twice: above AUTO_MAX slices only when asked for)
	if (slices > AUTO_MAX && !el.dataset.asked) {
		el.innerHTML = '<h4>Profile <span class="muted">(tftracer prof)</span></h4><button type="button" class="dr-prof-load">Find its graph node, FLOPs and FLOP/s</button>';
		el.querySelector('button').onclick = () => { el.dataset.asked = '1'; el.innerHTML = '<p class="loading">Scanning the session…</p>'; loadSliceProf(el, sel, isCurrent, slices); };
		return;
	}
	let r;
	try {
		r = await getJSON('api/prof', { slice: `${sel.track}.${sel.abs.toString()}.${sel.depth}` }, { exact: false, quiet: true });
	} catch {
		if (el.dataset.asked && isCurrent()) el.innerHTML = '';
		return;
	}
	if (!isCurrent()) return;
	if (!r || !r.found) { if (el.dataset.asked) el.innerHTML = '<p class="muted">Not an execution of a graph node in the traced steps.</p>'; return; }
	const row = (k, v) => `<tr><th>${esc(k)}</th><td>${v}</td></tr>`;
	el.innerHTML = `<h4>Profile <span class="muted">(tftracer prof)</span></h4><table class="kv dr-prof-kv">
		${row('Graph node', `<span class="mono">${esc(r.record)}</span>${r.op && r.op !== r.record ? ` <span class="muted">${esc(r.op)}</span>` : ''}`)}
		${r.params ? row('Parameters', esc(fmtInt(r.params))) : ''}
		${row('FLOPs', r.float_ops === null ? '<span class="muted">unknown</span>' : esc(fmtMetric('float_ops', r.float_ops)))}
		${r.accelerator_micros !== null ? row('On the accelerator', esc(fmtDur(r.accelerator_micros * 1000)) + ' <span class="muted">per execution</span>') : ''}
		${row('Achieved', r.flops_per_s === null ? '<span class="muted">unknown</span>' : `<span class="dr-prof-rate">${esc(fmtRate(r.flops_per_s))}</span>`)}
	</table>`;
}
