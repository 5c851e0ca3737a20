// SPDX-License-Identifier: MIT
// The Timeline page: tracks grouped by process/device, slices packed into lanes,
// counters as area charts, drawn on canvas from cached tiles (tiles.js); zoom and
// pan with wheel, drag and W/A/S/D; hover, selection, flows, area selection, search
// ticks and an overview strip with a brush; tracks pinned to the top; colour by name,
// category or duration; live sessions grow in place. No DOM node is created per event.
// This file holds the view that ties the parts together: the session and its time
// origin, the visible window (zoom, pan, history) and its mapping to pixels, tile
// fetching, the frame loop, selection, highlight and search hits, and what tests and
// app.js ask of it. The parts, mixed into Timeline's prototype (methods with `this`
// the Timeline): timeline-layout.js (tracks, groups, rows, pins, scrolling),
// timeline-tiles.js (tiles drawn and copied to the screen), timeline-paint.js (the
// frame around them: gutter, ruler, overlay), timeline-input.js (mouse, keys, hit
// testing, tooltips), timeline-minimap.js (the overview strip).
import { TileStore, tileSpan } from './tiles.js';
import { big, getJSON } from './api.js';
import { EVF_UNCLOSED } from './kinds.js';
import { TimelineLayout, sessionExtent, GUTTER, RULER_H, SCROLLBAR_W, LANE_H, SLICE_H, MAX_SUMMARY_TRACKS, MIN_SPAN } from './timeline-layout.js';
import { TimelineTiles } from './timeline-tiles.js';
import { TimelinePaint } from './timeline-paint.js';
import { TimelineInput } from './timeline-input.js';
import { TimelineMinimap } from './timeline-minimap.js';

export { GUTTER, RULER_H } from './timeline-layout.js';

export class Timeline {
	/* root: the #page-timeline element; app: callbacks (see app.js). */
	constructor(root, app) {
		this.root = root;
		this.app = app;
		this.main = root.querySelector('.tl-main');
		this.base = root.querySelector('.tl-base');
		this.over = root.querySelector('.tl-over');
		this.mini = root.querySelector('.tl-mini');
		this.scroller = root.querySelector('.tl-scroll');
		this.scrollInner = root.querySelector('.tl-scroll-inner');
		this.tooltip = root.querySelector('.tl-tooltip');
		this.bctx = this.base.getContext('2d', { alpha: false });
		this.octx = this.over.getContext('2d');
		this.mctx = this.mini.getContext('2d');
		this.session = null;
		this.view = { s: 0, e: 1 };
		this.scrollY = 0;
		this.W = 0; this.H = 0; this.PW = 0; this.dpr = 1;
		this.rows = [];
		this.contentH = 0;
		this.sel = null;          // selected slice
		this.hover = null;        // hovered slice {track, depth, name, ...}
		this.mouse = null;        // {x, y} in css px over the main canvas
		this.area = null;         // {s, e, tracks: Set|null}
		this.drag = null;
		this.keys = new Set();
		this.vel = { zoom: 0, pan: 0 };
		this.keyHeld = { zoom: 0, pan: 0 };
		this.lastFrame = 0;
		this.raf = 0;
		this.dirty = true;
		this.highlight = null;    // {name, ids: Map(id -> bool)}
		this.renderGen = 1;
		this.searchHits = [];     // [{track, rel, dur, depth}]
		this.flows = [];          // [{dir, track, rel}]
		this.history = [];
		this.filter = '';
		this.drawn = [];          // per frame: [{row, tile, k}]
		this.incomplete = 0;
		this.firstDraw = false;
		this.visible = false;
		this.fetchTimer = 0;
		this.lastPlan = 0;
		this.charW = 6.5;
		this.lastF = null;
		this.miniData = null;
		this.frames = [];
		this.pinned = [];         // track ids pinned to the top, in pin order
		this.pinRows = [];
		this.pinH = 0;
		this.pinScrollY = 0;      // the pinned area scrolls too (its tracks can be taller than it)
		this.pinContentH = 0;
		this.follow = false;      // live: keep the newest data in view
		this.catSeen = false;     // did any tile carry categories (the server sends them)?
		this.colorBy = 'name';
		try { const c = localStorage.getItem('tft.colorby'); if (['name', 'category', 'duration'].includes(c)) this.colorBy = c; } catch { /* ignore */ }
		window.__tft_frames = this.frames;
		this._bind();
	}

	/* ---- session --------------------------------------------------------- */

	/* The time origin and end (BigInt ns) of a session (timeline-layout.js). */
	static extent(s) { return sessionExtent(s); }

	setSession(s) {
		this.session = s;
		this.T0 = Timeline.extent(s).start;
		this.buildTracks(s);
		this.store = new TileStore(this.T0, this.span, () => this.onData(), (msg, status) => this.app.tileError(msg, status));
		this.canvasPool = new Map();
		this.store.onCanvasFree = (c) => {
			const k = `${c.width}x${c.height}`;
			let list = this.canvasPool.get(k);
			if (!list) { list = []; this.canvasPool.set(k, list); }
			if (list.length < 64) list.push(c);
		};
		this.view = { s: 0, e: this.span };
		this.layout();
		this.resize();
		this.invalidate(true);
		this.scheduleFetch();
	}

	/*
	 * A live session grew: new summary `s`; cached tiles ending after `dirtyRel`
	 * (ns from the trace start) are dropped and fetched again. With "follow" on, the
	 * window slides to keep the newest data in view.
	 */
	updateSession(s, dirtyRel) {
		if (!this.session || Timeline.extent(s).start !== this.T0) {
			// the origin moved (data before the old start): start over
			this.store = null;
			this.session = null;
			this.tracks = null;
			this.groups = null;
			const v = this.view, oldT0 = this.T0;
			this.setSession(s);
			// the same absolute range: relative times count from the new origin
			if (v && !this.follow && oldT0 !== undefined) {
				const d = Number(oldT0 - this.T0);
				this.setView(v.s + d, v.e + d);
			}
			return;
		}
		const oldSpan = this.span;
		this.session = s;
		this.buildTracks(s);
		this.store.spanNs = this.span;
		this.store.invalidateAfter(Number.isFinite(dirtyRel) ? dirtyRel : oldSpan);
		this.layout();
		if (this.follow) {
			const w = this.view.e - this.view.s;
			this.setView(this.span + w * 0.02 - w, this.span + w * 0.02, { follow: true });
		} else {
			this.invalidate(true);
			this.scheduleFetch();
		}
		// the overview strip: at most every 2 s while data streams in
		const now = performance.now();
		if (this.miniData && now - (this.miniAt || 0) > 2000) { this.miniAt = now; this.fetchMini(); }
	}

	setFollow(on) {
		this.follow = !!on;
		if (this.follow && this.session) {
			const w = Math.min(this.view.e - this.view.s, this.span);
			this.setView(this.span + w * 0.02 - w, this.span + w * 0.02, { follow: true });
		}
		this.app.followChanged && this.app.followChanged(this.follow);
	}

	setColorBy(mode) {
		this.colorBy = ['name', 'category', 'duration'].includes(mode) ? mode : 'name';
		try { localStorage.setItem('tft.colorby', this.colorBy); } catch { /* ignore */ }
		this.renderGen++;
		if (this.store) this.store.dropCanvases();
		this.invalidate(true);
	}

	/* Ancestors of a slice (depth 0 first) from the loaded tiles of its track. */
	ancestors(sel) {
		const out = [];
		for (let dep = 0; dep < sel.depth; dep++) {
			let best = null;
			for (const dr of this.drawn) {
				if (dr.t.id !== sel.track || dr.summary) continue;
				const d = dr.tile.data;
				for (let i = 0; i < d.n; i++) {
					if (d.depth[i] !== dep || d.count[i] > 1) continue;
					const s = dr.tile.relStart + d.off[i];
					if (s <= sel.rel && s + d.dur[i] >= sel.rel + sel.dur) {
						best = { track: sel.track, depth: dep, rel: s, dur: d.dur[i], name: d.name[i], count: 1, flags: d.flags[i], abs: dr.tile.absStart + BigInt(Math.round(d.off[i])) };
						break;
					}
				}
				if (best) break;
			}
			out.push(best);
		}
		return out;
	}

	/* ---- geometry: the window and its pixels ----------------------------- */

	resize() {
		const r = this.main.getBoundingClientRect();
		const dpr = window.devicePixelRatio || 1;
		const W = Math.max(100, Math.floor(r.width));
		const H = Math.max(60, Math.floor(r.height));
		if (W === this.W && H === this.H && dpr === this.dpr) return;
		const dprChanged = dpr !== this.dpr;
		this.W = W; this.H = H; this.dpr = dpr;
		this.PW = Math.max(10, W - GUTTER - SCROLLBAR_W);
		for (const c of [this.base, this.over]) {
			c.width = Math.round(W * dpr);
			c.height = Math.round(H * dpr);
			c.style.width = `${W}px`;
			c.style.height = `${H}px`;
		}
		const mr = this.mini.getBoundingClientRect();
		this.mini.width = Math.round(Math.max(100, mr.width) * dpr);
		this.mini.height = Math.round(Math.max(20, mr.height) * dpr);
		if (this.pinned.length && this.groups) this.layout();
		this.octx.font = '11px system-ui, sans-serif';
		this.charW = this.octx.measureText('abcdefghijklmnopqrstuvwxyz_:ABCDEFGH').width / 36;
		if (dprChanged && this.store) { this.store.dropCanvases(); this.renderGen++; }
		this.clampScroll();
		this.invalidate(true);
		if (this.session && this.miniData && Math.abs(this.miniData.width - this.miniWidth()) > 40) this.fetchMini();
	}

	res() { return (this.view.e - this.view.s) / this.PW; }

	level() { return Math.max(0, Math.floor(Math.log2(Math.max(1, this.res())))); }

	xOf(rel) { return GUTTER + (rel - this.view.s) / this.res(); }

	tOf(x) { return this.view.s + (x - GUTTER) * this.res(); }

	/* ---- view changes ---------------------------------------------------- */

	setView(s, e, opts = {}) {
		let span = e - s;
		const maxSpan = this.span * 1.2 + 1000;
		if (span < MIN_SPAN) { const c = (s + e) / 2; s = c - MIN_SPAN / 2; e = c + MIN_SPAN / 2; span = MIN_SPAN; }
		if (span > maxSpan) { const c = (s + e) / 2; s = c - maxSpan / 2; e = c + maxSpan / 2; span = maxSpan; }
		const lo = -this.span * 0.1, hi = this.span * 1.1;
		if (s < lo) { s = lo; e = s + span; }
		if (e > hi) { e = hi; s = e - span; }
		if (opts.history) { this.pushHistory(); this.stopGlide(); }
		if (this.follow && !opts.follow) { this.follow = false; this.app.followChanged && this.app.followChanged(false, true); }
		this.view = { s, e };
		this.lastF = opts.keepF ? this.lastF : null;
		this.invalidate(true);
		this.scheduleFetch();
		this.app.viewChanged && this.app.viewChanged();
	}

	/* A jump (fit, F, Backspace, a search hit): the W/A/S/D glide stops. */
	stopGlide() { this.vel.zoom = 0; this.vel.pan = 0; }

	pushHistory() {
		const last = this.history[this.history.length - 1];
		if (last && last.s === this.view.s && last.e === this.view.e) return;
		this.history.push({ ...this.view });
		if (this.history.length > 50) this.history.shift();
	}

	undoZoom() {
		const v = this.history.pop();
		this.stopGlide();
		if (v) this.setView(v.s, v.e);
	}

	zoomAt(factor, x) {
		const px = x === undefined ? GUTTER + this.PW / 2 : Math.max(GUTTER, Math.min(GUTTER + this.PW, x));
		const t = this.tOf(px);
		const s = t - (t - this.view.s) * factor;
		const e = t + (this.view.e - t) * factor;
		this.setView(s, e);
	}

	panPx(dx) {
		const d = dx * this.res();
		this.setView(this.view.s + d, this.view.e + d);
	}

	fitAll() { this.setView(-this.span * 0.01, this.span * 1.01, { history: true }); }

	/* Centre on [s, s+d]; fit it (80% of the width) if `fit` or it does not fit. */
	focusRange(s, d, fit) {
		const cur = this.view.e - this.view.s;
		if (!fit && d < cur * 0.9) {
			const c = s + d / 2;
			this.setView(c - cur / 2, c + cur / 2, { history: true, keepF: true });
		} else {
			const w = Math.max(d / 0.8, MIN_SPAN * 4);
			const c = s + d / 2;
			this.setView(c - w / 2, c + w / 2, { history: true, keepF: true });
		}
	}

	/* ---- data ------------------------------------------------------------ */

	onData() {
		this.invalidate(true);
		this.app.activity && this.app.activity();
	}

	/* Throttled: at once if the last plan is older than 60 ms, else at its end. */
	scheduleFetch() {
		if (this.fetchTimer) return;
		const wait = Math.max(0, 60 - (performance.now() - this.lastPlan));
		if (!this.store || !this.visible) return; // show() plans
		if (wait === 0) {
			this.lastPlan = performance.now();
			this.planFetch();
			return;
		}
		this.fetchTimer = setTimeout(() => {
			this.fetchTimer = 0;
			this.lastPlan = performance.now();
			this.planFetch();
		}, wait);
	}

	wantedTracks(rows) {
		const ids = [];
		for (const r of rows) {
			if (r.type === 'track') ids.push(r.t.id);
			else if (r.g.collapsed) for (const t of r.vis.slice(0, MAX_SUMMARY_TRACKS)) ids.push(t.id);
		}
		return ids;
	}

	planFetch() {
		if (!this.store || !this.visible) return;
		if (!this.firstPlan) { this.firstPlan = true; performance.mark('tft-first-plan'); }
		const L = this.level();
		const span = tileSpan(L);
		const k0 = Math.floor(this.view.s / span), k1 = Math.floor(this.view.e / span);
		const vis = this.wantedTracks(this.visibleRows());
		const near = this.wantedTracks(this.visibleRows(this.H)).filter((id) => !vis.includes(id));
		const want = [];
		for (let k = k0; k <= k1; k++) want.push({ L, k, tracks: vis, prio: Math.abs(k - (k0 + k1) / 2) * 0.01 });
		want.push({ L, k: k0 - 1, tracks: vis, prio: 1 });
		want.push({ L, k: k1 + 1, tracks: vis, prio: 1 });
		if (near.length) for (let k = k0; k <= k1; k++) want.push({ L, k, tracks: near, prio: 2 });
		this.store.plan(want);
		this.app.activity && this.app.activity();
	}

	/* ---- frames ---------------------------------------------------------- */

	invalidate(base) {
		if (base) this.dirty = true;
		this.overDirty = true;
		// one frame at a time: calls made while a frame runs are picked up by it
		if (!this.raf && !this.inFrame && this.visible) this.raf = requestAnimationFrame((ts) => this.frame(ts));
	}

	frame(now) {
		this.raf = 0;
		this.inFrame = true;
		const t0 = performance.now();
		this.frameStart = t0;
		this.rendered = 0;
		let animating = false;
		try {
			const dt = this.lastFrame ? Math.min(0.1, (now - this.lastFrame) / 1000) : 0.016;
			this.lastFrame = now;
			animating = this.animate(dt);
			if (this.needLayout) { this.needLayout = false; this.layout(); this.dirty = true; }
			const base = this.dirty, over = this.overDirty;
			this.dirty = false;
			this.overDirty = false;
			if (base) { this.drawBase(); this.drawMini(); }
			if (base || over) this.drawOver();
			if (this.needLayout) { this.needLayout = false; this.layout(); this.dirty = true; }
		} finally {
			this.inFrame = false;
		}
		const ms = performance.now() - t0;
		this.frames.push({ t: now, ms });
		if (this.frames.length > 2000) this.frames.splice(0, 1000);
		// (a session without tracks is complete at once)
		if (!this.firstDraw && this.session && this.incomplete === 0 && (this.drawnCount > 0 || !this.tracks.size)) {
			this.firstDraw = true;
			window.__tft_first_draw_ms = performance.now();
			this.app.firstDraw && this.app.firstDraw();
			// the overview strip waits until the first screen is complete
			if (!this.miniData) setTimeout(() => this.fetchMini(), 0);
		}
		if (!animating) this.lastFrame = 0;
		if ((animating || this.dirty || this.overDirty) && this.visible) this.raf = requestAnimationFrame((ts) => this.frame(ts));
	}

	/* Iterate visible (drawn) slices: fn(tile, i, x0, x1, y, row) in css px. */
	forDrawn(fn, opts = {}) {
		const r = this.res();
		for (const dr of this.drawn) {
			if (dr.summary || dr.t.counter) continue;
			if (opts.pin !== undefined && !!dr.row.pin !== opts.pin) continue;
			const tile = dr.tile, d = tile.data;
			if (!d.n) continue;
			const sy = this.rowTop(dr.row);
			const list = opts.wide ? this.wideIdx(tile) : null;
			const n = list ? list.length : d.n;
			for (let j = 0; j < n; j++) {
				const i = list ? list[j] : j;
				const dep = d.depth[i];
				if (dep >= dr.t.lanes) continue;
				const rel = tile.relStart + d.off[i];
				if (rel > this.view.e || rel + d.dur[i] < this.view.s) continue;
				const x0 = GUTTER + (rel - this.view.s) / r;
				const x1 = x0 + d.dur[i] / r;
				if (fn(tile, i, x0, x1, sy + dep * LANE_H + 1, dr.row, rel) === false) return;
			}
		}
	}

	/* ---- selection, highlight, search hits ------------------------------- */

	select(s, opts = {}) {
		this.sel = s;
		this.flows = [];
		this.lastF = null;
		this.invalidate(false);
		this.drawMini();
		this.app.selectionChanged(s, opts);
	}

	setFlows(details) {
		const out = [];
		const srcRel = this.sel ? this.sel.rel : 0;
		for (const f of (details && details.flows_out) || []) out.push({ dir: 'out', track: f.track, rel: Number(big(f.ts) - this.T0), srcRel });
		for (const f of (details && details.flows_in) || []) out.push({ dir: 'in', track: f.track, rel: Number(big(f.ts) - this.T0) });
		this.flows = out;
		this.invalidate(false);
	}

	/*
	 * Select the slice on `track` covering rel: at `depth`, or the deepest one (where a
	 * flow end binds). The server finds it, so a slice merged into a block or outside
	 * the view is found too; it is brought into view, zoomed in when it is sub-pixel.
	 */
	async selectAt(track, rel, depth) {
		const ts = (this.T0 + BigInt(Math.round(rel))).toString();
		const q = depth === undefined ? { track, ts, deepest: 1 } : { track, ts, depth };
		let d;
		try {
			d = await getJSON('api/slice', q, { exact: true, quiet: true });
		} catch (e) {
			this.app.toast && this.app.toast(`No slice there (${e.message})`);
			return null;
		}
		const sel = this.selOf(d, track);
		this.reveal(sel, true);
		this.select(sel);
		return sel;
	}

	/* A selection from an /api/slice answer (`seq` tells apart slices that start together). */
	selOf(d, track) {
		const abs = big(d.ts);
		const sel = { track, depth: Number(d.depth) || 0, rel: Number(abs - this.T0), dur: Number(d.dur) || 0, name: null, nameText: d.name ?? '', count: 1, flags: d.unclosed ? EVF_UNCLOSED : 0, abs };
		if (d.seq !== undefined) sel.seq = Number(d.seq);
		return sel;
	}

	/* Bring a slice into view: its row shown, centred when outside the window; with
	 * `zoom`, zoomed in until it is a few pixels wide. */
	reveal(sel, zoom) {
		this.showLane(sel.track, sel.depth);
		const cur = this.view.e - this.view.s;
		const want = zoom && sel.dur / this.res() < 4 ? Math.max(MIN_SPAN * 4, sel.dur * this.PW / 12) : cur;
		const c = sel.rel + sel.dur / 2;
		if (want < cur || sel.rel + sel.dur < this.view.s || sel.rel > this.view.e) {
			if (sel.dur > want * 0.9) this.focusRange(sel.rel, sel.dur, true);
			else this.setView(c - want / 2, c + want / 2, { history: true });
		}
	}

	/* Select a search result {track, ts, dur, depth, name} and bring it into view. */
	gotoResult(res) {
		const rel = Number(big(res.ts) - this.T0);
		const dur = Number(res.dur) || 0;
		this.showLane(res.track, Number(res.depth) || 0);
		const cur = this.view.e - this.view.s;
		if (dur > cur * 0.8) this.focusRange(rel, dur, true);
		else if (rel < this.view.s || rel + dur > this.view.e) this.setView(rel + dur / 2 - cur / 2, rel + dur / 2 + cur / 2, { history: true });
		const sel = { track: res.track, depth: Number(res.depth) || 0, rel, dur, name: null, nameText: res.name, count: 1, flags: 0, abs: big(res.ts) };
		if (res.seq !== undefined) sel.seq = Number(res.seq); // this one of several starting together
		this.select(sel);
	}

	setSearchHits(results) {
		this.searchHits = (results || []).map((r) => ({ track: r.track, rel: Number(big(r.ts) - this.T0), dur: Number(r.dur) || 0 })).sort((a, b) => a.rel - b.rel);
		this.invalidate(false);
		this.drawMini();
	}

	/* Highlight every slice whose name (field 'cat': category) is `name` (exact) or
	 * matches `re`; field 'track': every slice of track `track`. */
	setHighlight(name, re, field = 'name', track = null) {
		this.highlight = name || re || field === 'track' ? { name, re: re || null, exact: !re, ids: new Map(), field, track } : null;
		this.renderGen++;
		if (this.store) this.store.dropCanvases();
		this.invalidate(true);
	}

	/* ---- visibility and state -------------------------------------------- */

	show() {
		this.visible = true;
		this.resize();
		this.invalidate(true);
		this.scheduleFetch();
	}

	hide() {
		this.visible = false;
		this.keys.clear();
		this.tooltip.hidden = true;
	}

	isIdle() {
		return !!this.store && this.store.busy() === 0 && !this.raf && !this.fetchTimer && this.incomplete === 0;
	}

	whenIdle(timeout = 5000) {
		const t0 = performance.now();
		return new Promise((resolve) => {
			const check = () => {
				if (this.isIdle() || performance.now() - t0 > timeout) resolve();
				else setTimeout(check, 30);
			};
			setTimeout(check, 30);
		});
	}

	/* For tests: a visible, selectable slice at least minPx wide. */
	findSlice(minPx = 30, summaries = false) {
		let out = null;
		this.forDrawn((tile, i, x0, x1, y, row, rel) => {
			const a = Math.max(x0, GUTTER + 2), b = Math.min(x1, GUTTER + this.PW - 2);
			if (b - a < minPx || (tile.data.count[i] > 1 && !summaries)) return;
			if (y < RULER_H + (row.pin ? 0 : this.pinH) || y + SLICE_H > (row.pin ? RULER_H + this.pinH - 2 : this.H)) return;
			out = { x: (a + b) / 2, y: y + SLICE_H / 2, name: this.nameText(tile.data.name[i]), track: tile.track, depth: tile.data.depth[i], rel };
			return false;
		});
		return out;
	}

	countHighlighted() {
		let n = 0, all = 0;
		this.forDrawn((tile, i) => { all++; if (this.lit(tile.data, i, tile.track)) n++; });
		return { highlighted: n, drawn: all };
	}
}

/* Each part's methods on Timeline's prototype; a name defined twice is a mistake. */
for (const Part of [TimelineLayout, TimelineTiles, TimelinePaint, TimelineInput, TimelineMinimap]) {
	for (const name of Object.getOwnPropertyNames(Part.prototype)) {
		if (name === 'constructor') continue;
		if (Object.prototype.hasOwnProperty.call(Timeline.prototype, name)) throw new Error(`Timeline.${name} is defined twice`);
		Object.defineProperty(Timeline.prototype, name, Object.getOwnPropertyDescriptor(Part.prototype, name));
	}
}
