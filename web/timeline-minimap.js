// SPDX-License-Identifier: MIT
// The Timeline's overview strip: each process's busy share per pixel column over the
// whole session (one /api/viewport query at the strip's width, fetched once the first
// screen is complete and again as a live session grows), steps, search hits, the
// selection, and a brush of the view that drags, resizes or jumps.
// Methods of Timeline (timeline.js mixes them in; `this` is the Timeline). State:
// miniData, miniAt, miniImg, miniKey, miniImgData, miniTicks.
import { getJSON } from './api.js';
import { palette, colorIndex } from './colors.js';
import { decodeViewport } from './tiledata.js';
import { GUTTER, SCROLLBAR_W, MIN_SPAN } from './timeline-layout.js';
import { makeCanvas } from './timeline-tiles.js';

export class TimelineMinimap {
	async fetchMini() {
		const width = this.miniWidth();
		const ids = [...this.tracks.values()].filter((t) => !t.counter).map((t) => t.id).slice(0, 400);
		if (!ids.length) { this.miniData = { width, rows: [] }; this.drawMini(); return; }
		try {
			const j = await getJSON('api/viewport', { tracks: ids.join(','), t0: this.T0.toString(), t1: (this.T0 + BigInt(Math.ceil(this.span))).toString(), width, rel: 1 }, { quiet: true });
			const per = new Map();
			const bw = this.span / width;
			for (const d of decodeViewport(j, this.T0.toString()).tracks) {
				const tr = this.tracks.get(d.id);
				if (!tr || d.counter) continue;
				let acc = per.get(tr.process);
				if (!acc) { acc = new Float64Array(width); per.set(tr.process, acc); }
				for (let i = 0; i < d.n; i++) {
					if (d.depth[i] !== 0) continue;
					const a = d.off[i] / bw, b = (d.off[i] + d.dur[i]) / bw;
					for (let x = Math.max(0, Math.floor(a)); x < Math.min(width, Math.ceil(b)); x++) {
						acc[x] += Math.min(b, x + 1) - Math.max(a, x);
					}
				}
			}
			const rows = [];
			for (const g of this.groups) {
				const acc = per.get(g.id);
				if (!acc) continue;
				const n = g.tracks.filter((t) => !t.counter).length || 1;
				rows.push({ g, acc: acc.map((v) => Math.min(1, v / n)) });
			}
			this.miniData = { width, rows };
		} catch (e) {
			this.miniData = { width, rows: [], error: e.message };
		}
		this.drawMini();
	}

	miniWidth() { return Math.max(100, Math.round(this.mini.getBoundingClientRect().width - GUTTER - SCROLLBAR_W)); }

	/* The overview strip: a cached density image, then ticks, selection and brush. */
	drawMini() {
		const ctx = this.mctx;
		const dpr = this.dpr;
		const w = this.mini.width / dpr, h = this.mini.height / dpr;
		if (!this.colors) this.readColors();
		const C = this.colors;
		const key = `${this.mini.width}x${this.mini.height}:${this.renderGen}:${!!this.session}`;
		if (this.miniKey !== key || this.miniImgData !== this.miniData) {
			this.miniKey = key;
			this.miniImgData = this.miniData;
			this.miniImg = this.renderMiniImage(w, h);
		}
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		ctx.drawImage(this.miniImg, 0, 0);
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		if (!this.session) return;
		const pw = w - GUTTER - SCROLLBAR_W;
		const X = (rel) => GUTTER + rel / this.span * pw;
		if (this.searchHits.length) {
			// one tick per pixel column that holds a hit (cached: there may be 10^5 hits)
			const key = `${Math.round(pw)}:${this.span}`;
			if (this.miniTicks?.hits !== this.searchHits || this.miniTicks.key !== key) {
				const cols = new Set();
				for (const s of this.searchHits) cols.add(Math.round(X(s.rel)));
				this.miniTicks = { hits: this.searchHits, key, cols: [...cols] };
			}
			ctx.fillStyle = C.hl;
			for (const x of this.miniTicks.cols) ctx.fillRect(x, 0, 1.5, 5);
		}
		if (this.sel) { ctx.fillStyle = C.sel; ctx.fillRect(X(this.sel.rel) - 1, 0, 3, h); }
		const bx0 = X(Math.max(0, this.view.s)), bx1 = X(Math.min(this.span, this.view.e));
		ctx.fillStyle = 'rgba(127,127,127,0.25)';
		ctx.fillRect(GUTTER, 0, Math.max(0, bx0 - GUTTER), h);
		ctx.fillRect(bx1, 0, Math.max(0, GUTTER + pw - bx1), h);
		ctx.strokeStyle = C.accent;
		ctx.lineWidth = 1.5;
		ctx.strokeRect(bx0, 0.75, Math.max(2, bx1 - bx0), h - 1.5);
	}

	renderMiniImage(w, h) {
		const dpr = this.dpr;
		const c = makeCanvas(Math.max(1, Math.round(w * dpr)), Math.max(1, Math.round(h * dpr)));
		const ctx = c.getContext('2d');
		ctx.scale(dpr, dpr);
		const C = this.colors;
		ctx.fillStyle = C.ruler;
		ctx.fillRect(0, 0, w, h);
		ctx.fillStyle = C.muted;
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		ctx.fillText('overview', 8, 10);
		ctx.fillStyle = C.border;
		ctx.fillRect(0, h - 1, w, 1);
		if (!this.session) return c;
		const pw = w - GUTTER - SCROLLBAR_W;
		const md = this.miniData;
		ctx.fillStyle = C.muted;
		if (md && md.rows.length) {
			const rh = Math.max(2, Math.min(10, (h - 4) / md.rows.length));
			md.rows.slice(0, Math.floor((h - 4) / rh)).forEach((row, j) => {
				ctx.fillStyle = palette[colorIndex(String(row.g.proc.name || row.g.id))].fill;
				const y0 = 2 + j * rh;
				ctx.beginPath();
				const bw = pw / md.width;
				for (let x = 0; x < md.width; x++) {
					const v = row.acc[x];
					if (v <= 0.002) continue;
					const bh = Math.max(1, v * (rh - 1));
					ctx.rect(GUTTER + x * bw, y0 + rh - 1 - bh, Math.max(1, bw), bh);
				}
				ctx.fill();
			});
		} else if (md && md.error) {
			ctx.fillText(`overview unavailable: ${md.error}`, GUTTER + 8, h / 2);
		} else if (!md) {
			ctx.fillText('loading…', GUTTER + 8, h / 2);
		}
		ctx.fillStyle = 'rgba(127,127,127,0.5)';
		for (const st of this.steps || []) ctx.fillRect(GUTTER + st.rel / this.span * pw, h - 4, 1, 4);
		return c;
	}

	onMiniDown(e) {
		const r = this.mini.getBoundingClientRect();
		const pw = r.width - GUTTER - SCROLLBAR_W;
		const T = (cx) => (cx - r.left - GUTTER) / pw * this.span;
		const t = T(e.clientX);
		const bs = Math.max(0, this.view.s), be = Math.min(this.span, this.view.e);
		const edgeTol = 5 / pw * this.span;
		let mode;
		if (Math.abs(t - bs) < edgeTol) mode = 'left';
		else if (Math.abs(t - be) < edgeTol) mode = 'right';
		else if (t > bs && t < be) mode = 'move';
		else mode = 'new';
		this.pushHistory();
		const v0 = { ...this.view };
		const move = (ev) => {
			const t2 = T(ev.clientX);
			if (mode === 'move') this.setView(v0.s + t2 - t, v0.e + t2 - t);
			else if (mode === 'left') this.setView(Math.min(t2, v0.e - MIN_SPAN), v0.e);
			else if (mode === 'right') this.setView(v0.s, Math.max(t2, v0.s + MIN_SPAN));
			else if (Math.abs(t2 - t) > edgeTol) this.setView(Math.min(t, t2), Math.max(t, t2));
		};
		const up = (ev) => {
			window.removeEventListener('mousemove', move);
			window.removeEventListener('mouseup', up);
			if (mode === 'new' && Math.abs(T(ev.clientX) - t) <= edgeTol) {
				const w = this.view.e - this.view.s;
				this.setView(t - w / 2, t + w / 2);
			}
		};
		window.addEventListener('mousemove', move);
		window.addEventListener('mouseup', up);
		e.preventDefault();
	}
}
