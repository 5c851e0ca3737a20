// SPDX-License-Identifier: MIT
// A virtualised, sortable table: a fixed pool of row elements re-filled on scroll,
// so tables of any length keep a few dozen DOM nodes.

const ROW_H = 24;

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
		container.replaceChildren(this.head, this.body, this.emptyEl);
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
		const v = this.rows.slice();
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
		this.emptyEl.textContent = this.emptyText || 'Nothing to show.';
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

	/* Rows in the current order (for CSV export). */
	ordered() { return this.view; }
}

export function toCsv(columns, rows) {
	const esc = (v) => {
		const s = String(v ?? '');
		return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
	};
	const lines = [columns.map((c) => esc(c.csv || c.key)).join(',')];
	for (const r of rows) lines.push(columns.map((c) => esc(r[c.key])).join(','));
	return lines.join('\n') + '\n';
}
