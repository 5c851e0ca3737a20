// SPDX-License-Identifier: MIT
// A virtualised, sortable table: a fixed pool of row elements re-filled on scroll,
// so tables of any length keep a few dozen DOM nodes. Optional per-column filters:
// text (substring, /regex/, !negation) and numbers (>1ms, <=50us, 1ms..5ms, >5%).

const ROW_H = 24;
const UNITS = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9 };

/*
 * A column filter from its text: a predicate on the cell value, null for an empty
 * filter, or undefined when the text does not parse. kind: 'text' | 'dur' | 'num' | 'pct'.
 */
export function parseFilter(text, kind) {
	const t = String(text ?? '').trim();
	if (!t) return null;
	if (kind === 'text') {
		const neg = t.startsWith('!');
		const body = neg ? t.slice(1) : t;
		let test;
		const m = /^\/(.*)\/([a-z]*)$/.exec(body);
		if (m) {
			let re;
			try { re = new RegExp(m[1], m[2].includes('i') ? m[2] : m[2] + 'i'); } catch { return undefined; }
			test = (v) => re.test(String(v ?? ''));
		} else {
			const lc = body.toLowerCase();
			test = (v) => String(v ?? '').toLowerCase().includes(lc);
		}
		return neg ? (v) => !test(v) : test;
	}
	const num = (s) => {
		const m = /^(-?\d+(?:\.\d*)?(?:e[+-]?\d+)?|-?\.\d+)\s*(ns|us|µs|ms|s|%)?$/i.exec(s.trim());
		if (!m) return NaN;
		let v = parseFloat(m[1]);
		const u = (m[2] || '').toLowerCase();
		if (kind === 'dur') { if (u === '%') return NaN; v *= UNITS[u] || 1; }
		else if (kind === 'pct') { if (u && u !== '%') return NaN; v /= 100; }
		else if (u) return NaN;
		return v;
	};
	const range = /^(.+?)\s*\.\.\s*(.+)$/.exec(t);
	if (range) {
		const a = num(range[1]), b = num(range[2]);
		if (Number.isNaN(a) || Number.isNaN(b)) return undefined;
		return (v) => typeof v === 'number' && v >= a && v <= b;
	}
	const m = /^(>=|<=|>|<|=|==)?\s*(.+)$/.exec(t);
	const x = num(m[2]);
	if (Number.isNaN(x)) return undefined;
	switch (m[1]) {
		case '>': return (v) => typeof v === 'number' && v > x;
		case '<': return (v) => typeof v === 'number' && v < x;
		case '<=': return (v) => typeof v === 'number' && v <= x;
		case '=': case '==': return (v) => typeof v === 'number' && Math.abs(v - x) <= Math.abs(x) * 1e-9;
		default: return (v) => typeof v === 'number' && v >= x; // a bare value: at least
	}
}

/*
 * columns: [{key, label, width (CSS grid track), num (bool), fmt(v, row), bar (0..1 getter),
 * title}]; opts: {onClick(row), sortKey, sortDesc, empty}.
 */
export class VirtualTable {
	constructor(container, columns, opts = {}) {
		this.el = container;
		this.columns = columns;
		this.opts = opts;
		this.rows = [];
		this.view = [];
		this.sortKey = opts.sortKey || null;
		this.sortDesc = opts.sortDesc !== false;
		this.selected = null;
		container.classList.add('vt');
		const tmpl = columns.map((c) => c.width || '1fr').join(' ');
		this.head = document.createElement('div');
		this.head.className = 'vt-head';
		this.head.style.gridTemplateColumns = tmpl;
		for (const c of columns) {
			const h = document.createElement('button');
			h.type = 'button';
			h.className = 'vt-h' + (c.num ? ' num' : '');
			h.textContent = c.label;
			if (c.title) h.title = c.title;
			h.dataset.key = c.key;
			h.addEventListener('click', () => this.sortBy(c.key));
			this.head.appendChild(h);
		}
		this.body = document.createElement('div');
		this.body.className = 'vt-body';
		this.spacer = document.createElement('div');
		this.spacer.className = 'vt-spacer';
		this.layer = document.createElement('div');
		this.layer.className = 'vt-layer';
		this.body.append(this.spacer, this.layer);
		this.emptyEl = document.createElement('div');
		this.emptyEl.className = 'vt-empty';
		this.emptyEl.hidden = true;
		this.filters = new Map(); // column key -> predicate
		this.filterRow = null;
		if (opts.filters) {
			this.filterRow = document.createElement('div');
			this.filterRow.className = 'vt-filters';
			this.filterRow.style.gridTemplateColumns = tmpl;
			for (const c of columns) {
				const kind = c.filter || (c.num ? 'num' : 'text');
				const inp = document.createElement('input');
				inp.type = 'search';
				inp.className = 'vt-f' + (c.num ? ' num' : '');
				inp.dataset.key = c.key;
				inp.spellcheck = false;
				inp.placeholder = kind === 'text' ? 'filter…' : kind === 'dur' ? '>1ms' : kind === 'pct' ? '>5%' : '>10';
				inp.title = kind === 'text' ? 'contains text, /regex/, !excluded' : `${kind === 'dur' ? 'a time with ns, us, ms or s' : kind === 'pct' ? 'a percentage' : 'a number'}: >x, <x, >=x, <=x, =x, a..b (a bare x means at least x)`;
				inp.setAttribute('aria-label', `filter ${c.label}`);
				let timer = 0;
				inp.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => this.setFilter(c.key, inp.value, kind, inp), 120); });
				this.filterRow.appendChild(inp);
			}
		}
		container.replaceChildren(...[this.head, this.filterRow, this.body, this.emptyEl].filter(Boolean));
		this.pool = [];
		this.tmpl = tmpl;
		this.body.addEventListener('scroll', () => this.paint());
		new ResizeObserver(() => this.paint()).observe(this.body);
		this.markSort();
	}

	setRows(rows, emptyText) {
		this.rows = rows || [];
		this.emptyText = emptyText;
		this.applySort();
	}

	/* Set column `key`'s filter text (kind as in parseFilter); bad text marks the input. */
	setFilter(key, text, kind, input) {
		const c = this.columns.find((x) => x.key === key);
		kind = kind || (c && (c.filter || (c.num ? 'num' : 'text'))) || 'text';
		if (!input && this.filterRow) {
			input = this.filterRow.querySelector(`input[data-key="${key}"]`);
			if (input) input.value = text;
		}
		const f = parseFilter(text, kind);
		if (input) input.classList.toggle('bad', f === undefined);
		if (f) this.filters.set(key, f); else this.filters.delete(key);
		this.applySort();
		if (this.opts.onFilter) this.opts.onFilter(this.view.length, this.rows.length);
	}

	clearFilters() {
		this.filters.clear();
		if (this.filterRow) for (const i of this.filterRow.querySelectorAll('input')) { i.value = ''; i.classList.remove('bad'); }
		this.applySort();
	}

	sortBy(key) {
		if (this.sortKey === key) this.sortDesc = !this.sortDesc;
		else {
			this.sortKey = key;
			const c = this.columns.find((x) => x.key === key);
			this.sortDesc = !!(c && c.num);
		}
		this.applySort();
		if (this.opts.onSort) this.opts.onSort(this.sortKey, this.sortDesc);
	}

	applySort() {
		const k = this.sortKey;
		let v = this.rows.slice();
		if (this.filters.size) {
			const fs = [...this.filters];
			v = v.filter((r) => fs.every(([key, f]) => f(r[key])));
		}
		if (k) {
			const dir = this.sortDesc ? -1 : 1;
			v.sort((a, b) => {
				const x = a[k], y = b[k];
				if (typeof x === 'number' && typeof y === 'number') return (x - y) * dir;
				return String(x ?? '').localeCompare(String(y ?? '')) * dir;
			});
		}
		this.view = v;
		this.spacer.style.height = `${v.length * ROW_H}px`;
		this.markSort();
		this.emptyEl.hidden = v.length > 0;
		this.emptyEl.textContent = this.rows.length && this.filters.size ? 'No row matches the column filters.' : this.emptyText || 'Nothing to show.';
		this.paint(true);
	}

	markSort() {
		for (const h of this.head.children) {
			const on = h.dataset.key === this.sortKey;
			h.classList.toggle('sorted', on);
			h.dataset.dir = on ? (this.sortDesc ? '▼' : '▲') : '';
		}
	}

	paint(force) {
		const top = this.body.scrollTop;
		const h = this.body.clientHeight || 400;
		const first = Math.max(0, Math.floor(top / ROW_H) - 4);
		const count = Math.min(this.view.length - first, Math.ceil(h / ROW_H) + 8);
		while (this.pool.length < count) {
			const r = document.createElement('div');
			r.className = 'vt-row';
			r.style.gridTemplateColumns = this.tmpl;
			for (const c of this.columns) {
				const cell = document.createElement('div');
				cell.className = 'vt-c' + (c.num ? ' num' : '');
				if (c.bar) {
					const bar = document.createElement('span');
					bar.className = 'vt-bar';
					const txt = document.createElement('span');
					txt.className = 'vt-t';
					cell.append(bar, txt);
				}
				r.appendChild(cell);
			}
			r.addEventListener('click', () => {
				const row = r._row;
				if (!row) return;
				this.selected = row;
				this.paint(true);
				if (this.opts.onClick) this.opts.onClick(row);
			});
			this.layer.appendChild(r);
			this.pool.push(r);
		}
		this.layer.style.transform = `translateY(${first * ROW_H}px)`;
		for (let j = 0; j < this.pool.length; j++) {
			const r = this.pool[j];
			if (j >= count) { r.hidden = true; r._row = null; continue; }
			const row = this.view[first + j];
			r.hidden = false;
			if (r._row === row && !force) continue;
			r._row = row;
			r.classList.toggle('sel', row === this.selected);
			r.classList.toggle('odd', (first + j) % 2 === 1);
			this.columns.forEach((c, ci) => {
				const cell = r.children[ci];
				const v = row[c.key];
				const text = c.fmt ? c.fmt(v, row) : v ?? '';
				if (c.bar) {
					const f = Math.max(0, Math.min(1, c.bar(row) || 0));
					cell.firstChild.style.width = `${(f * 100).toFixed(1)}%`;
					cell.lastChild.textContent = text;
				} else {
					cell.textContent = text;
				}
				cell.title = c.key === 'name' ? String(v ?? '') : '';
			});
		}
	}

	/* Rows that pass the filters, in the current order (for CSV export). */
	ordered() { return this.view; }
}

/*
 * RFC 4180 CSV of the rows. Trace text is untrusted: a field a spreadsheet
 * would take for a formula (= + - @, a tab or CR first) gets a leading ',
 * and one holding a quote, comma, CR or LF is quoted. Numbers stay numbers.
 */
export function toCsv(columns, rows) {
	const esc = (v) => {
		let s = String(v ?? '');
		if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
		return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
	};
	const lines = [columns.map((c) => esc(c.csv || c.key)).join(',')];
	for (const r of rows) lines.push(columns.map((c) => esc(r[c.key])).join(','));
	return lines.join('\n') + '\n';
}
