// SPDX-License-Identifier: MIT
// The Timeline page: tracks grouped by process/device, slices packed into lanes,
// counters as area charts, drawn on canvas from cached tiles (tiles.js); zoom and
// pan with wheel, drag and W/A/S/D; hover, selection, flows, area selection, search
// ticks and an overview strip with a brush; tracks pinned to the top; colour by name,
// category or duration; live sessions grow in place. No DOM node is created per event.
import { TileStore, TILE_PX, tileSpan } from './tiles.js';
import { palette, colorIndex, UNKNOWN, counterColor, durationIndex } from './colors.js';
import { fmtDur, fmtDurFull, fmtTick, tickStep, fmtOffset, fmtInt, escapeHtml } from './format.js';
import { elide, distinctStarts } from './textfit.js';
import { big, getJSON } from './api.js';

const KIND_NAMES = ['', 'thread', 'device', 'gpu_stream', 'comm', 'counter', 'async', 'object'];
const KIND_ORDER = { thread: 0, async: 1, device: 2, gpu_stream: 3, comm: 4, object: 5, counter: 6 };
const KIND_LABEL = { thread: 'thread', async: 'async', device: 'device', gpu_stream: 'stream', comm: 'comm', object: 'objects', counter: 'counter' };

export const GUTTER = 220;
export const RULER_H = 32;
const LANE_H = 18;
const SLICE_H = 16;
const GROUP_H = 24;
const COUNTER_H = 46;
const TRACK_PAD = 4;
const SUMMARY_H = 12;
const MAX_LANES = 40;
const MIN_SPAN = 20;          // ns: the deepest zoom
const LABEL_MIN_PX = 22;      // labels only on slices at least this wide
const STRETCH_MAX = 1.5;      // device px per tile bucket above which chevrons are drawn on screen
const FOLD_PX = 3;            // runs of slices under this fold into one box
const MAX_SUMMARY_TRACKS = 16;
const SCROLLBAR_W = 14;
const RENDER_BUDGET_MS = 9;   // tile canvases rendered per frame, beyond the first

function kindName(k) {
	if (typeof k === 'number') return KIND_NAMES[k] || 'thread';
	return k || 'thread';
}

function makeCanvas(w, h) {
	if (typeof OffscreenCanvas !== 'undefined') return new OffscreenCanvas(w, h);
	const c = document.createElement('canvas');
	c.width = w; c.height = h;
	return c;
}

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

	/* ---- session and layout ------------------------------------------- */

	/*
	 * The time origin and end (BigInt ns) of a session: its events' span joined with
	 * its steps' (a live session's untraced steps have no events, but are shown).
	 */
	static extent(s) {
		let a = null, b = null;
		if (Number(s.slices || 0) + Number(s.instants || 0) + Number(s.counters || 0) > 0) { a = big(s.start_ns); b = big(s.end_ns); }
		for (const st of s.step_list || []) {
			const x = big(st.start_ns), y = x + big(st.dur_ns);
			if (a === null || x < a) a = x;
			if (b === null || y > b) b = y;
		}
		if (a === null) { a = big(s.start_ns); b = big(s.end_ns); }
		return { start: a, end: b < a ? a : b };
	}

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
	 * Tracks, groups and steps from a session summary. Track objects (with their
	 * lanes, counter scales, pins) and the groups' collapsed state survive a rebuild,
	 * so a live session can grow in place.
	 */
	buildTracks(s) {
		const end = Timeline.extent(s).end;
		this.span = Math.max(1, Number(end - this.T0) || Number(s.duration_ns) || 1);
		this.procs = new Map();
		for (const p of s.process_list || []) this.procs.set(p.id, p);
		const old = this.tracks || new Map();
		const oldGroups = new Map((this.groups || []).map((g) => [g.id, g]));
		this.tracks = new Map();
		const groups = new Map();
		for (const t of s.track_list || []) {
			const kind = kindName(t.kind);
			const depth = Number(t.max_depth) || 0;
			let tr = old.get(t.id);
			if (!tr) {
				tr = { id: t.id, cmax: -Infinity, cmin: Infinity, scaleGen: 0, h: 0, deepest: depth, lanes: 1 };
			}
			Object.assign(tr, {
				process: t.process, kind, name: t.name || `${kind} ${t.tid ?? t.id}`, tid: t.tid,
				counter: kind === 'counter', sort: t.sort_index ?? t.id,
				maxRel: t.max_ts_ns !== undefined && t.max_ts_ns !== null ? Number(big(t.max_ts_ns) - this.T0) : this.span,
				slices: t.slices, counters: t.counters,
			});
			tr.deepest = Math.max(tr.deepest, depth);
			tr.lanes = Math.max(tr.lanes, Math.max(1, Math.min(MAX_LANES, depth + 1)));
			tr.h = tr.counter ? COUNTER_H : tr.lanes * LANE_H + TRACK_PAD;
			this.tracks.set(tr.id, tr);
			let g = groups.get(t.process);
			if (!g) {
				const p = this.procs.get(t.process) || { id: t.process, name: `process ${t.process}` };
				const was = oldGroups.get(t.process);
				g = { id: t.process, proc: p, tracks: [], collapsed: was ? was.collapsed : false };
				groups.set(t.process, g);
			}
			g.tracks.push(tr);
		}
		for (const g of groups.values()) {
			// compute first, then communication beside it, counters last
			g.tracks.sort((a, b) => (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || a.sort - b.sort || a.id - b.id);
		}
		const fresh = !this.groups;
		this.groups = [...groups.values()].sort((a, b) =>
			(a.proc.sort_index ?? 0) - (b.proc.sort_index ?? 0) || (a.proc.rank ?? -1) - (b.proc.rank ?? -1) ||
			(a.proc.pid ?? 0) - (b.proc.pid ?? 0) || a.id - b.id);
		this.buildRankGroups(fresh);
		// Many groups: start with the big ones open and the rest collapsed (a job: by rank).
		if (fresh && !this.rankGroups && this.groups.length > 12) this.groups.forEach((g, i) => { g.collapsed = i >= 6; });
		this.pinned = this.pinned.filter((id) => this.tracks.has(id));
		// where each track name (and process label) stops reading like another one
		this.nameKeep = distinctStarts([...this.tracks.values()].map((t) => t.name));
		this.stepKeep = { get: () => 5 }; // "step 12": the number is kept
		this.groupKeep = distinctStarts([...this.groups, ...(this.rankGroups || [])].map((g) => this.groupLabel(g)));
		this.steps = (s.step_list || []).map((st) => ({
			index: st.index, name: st.name, rel: Number(big(st.start_ns) - this.T0), dur: Number(st.dur_ns) || 0, traced: st.traced !== false,
		}));
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

	/* ---- pinned tracks ------------------------------------------------------ */

	isPinned(id) { return this.pinned.includes(id); }

	togglePin(id) {
		if (this.isPinned(id)) this.pinned = this.pinned.filter((x) => x !== id);
		else if (this.tracks.has(id)) this.pinned.push(id);
		this.pinsChanged();
	}

	setPins(ids) {
		this.pinned = [...new Set(ids)].filter((id) => this.tracks && this.tracks.has(id));
		this.pinsChanged();
	}

	unpinAll() { this.pinned = []; this.pinsChanged(); }

	pinsChanged() {
		this.layout();
		this.invalidate(true);
		this.scheduleFetch();
		this.app.pinsChanged && this.app.pinsChanged(this.pinned.length);
	}

	/* ---- colour ---------------------------------------------------------- */

	setColorBy(mode) {
		this.colorBy = ['name', 'category', 'duration'].includes(mode) ? mode : 'name';
		try { localStorage.setItem('tft.colorby', this.colorBy); } catch { /* ignore */ }
		this.renderGen++;
		if (this.store) this.store.dropCanvases();
		this.invalidate(true);
	}

	/*
	 * Palette index of item i of a tile: by name, category or duration. The server
	 * leaves `cat` out of a track whose items have no category, so once some tile had
	 * categories a tile without them is uncategorised ("", as a static export's zeros);
	 * until then the server may predate categories and names stand in (the toolbar says so).
	 */
	colorKey(d, i) {
		if (this.colorBy === 'duration') return durationIndex(d.dur[i]);
		if (this.colorBy === 'category') {
			if (d.cat) return this.colorOf(d.cat[i]);
			if (this.catSeen) return this.colorOf(0);
		}
		return this.colorOf(d.name[i]);
	}

	/*
	 * A distributed job (processes of two or more ranks): the ranks become the top-level
	 * groups, in rank order, each holding its processes' groups; their collapsed state
	 * survives a rebuild. A job of many ranks starts with the first four open.
	 */
	buildRankGroups(fresh) {
		const byRank = new Map();
		for (const g of this.groups) {
			const r = g.proc.rank;
			if (!(r >= 0)) continue;
			if (!byRank.has(r)) byRank.set(r, []);
			byRank.get(r).push(g);
		}
		if (byRank.size < 2 || byRank.size !== new Set(this.groups.map((g) => (g.proc.rank >= 0 ? g.proc.rank : -1))).size) {
			// (a session without ranks, or with processes outside every rank: processes on top)
			this.rankGroups = null;
			return;
		}
		const old = new Map((this.rankGroups || []).map((g) => [g.rank, g]));
		this.rankGroups = [...byRank.entries()].sort((a, b) => a[0] - b[0]).map(([rank, groups], i) => {
			const hosts = [...new Set(groups.map((g) => g.proc.host).filter(Boolean))];
			const was = old.get(rank);
			return {
				id: `rank:${rank}`, rank, isRank: true, groups,
				procIds: new Set(groups.map((g) => g.id)),
				tracks: groups.flatMap((g) => g.tracks),
				proc: { name: `rank ${rank}`, host: hosts.join(', '), labels: groups.length > 1 ? `${groups.length} processes` : '' },
				collapsed: was ? was.collapsed : fresh && byRank.size > 8 && i >= 4,
			};
		});
	}

	/* A process header's label: its name, and its labels (rank, host) when it has them. */
	groupLabel(g) {
		const p = g.proc;
		let label = p.name || `process ${p.id}`;
		if (p.labels && p.labels !== label) label += ` · ${p.labels}`;
		return label;
	}

	trackVisible(t) {
		if (this.hiddenTracks && this.hiddenTracks.has(t.id)) return false;
		if (!this.filter) return true;
		const f = this.filter.toLowerCase();
		const p = this.procs.get(t.process);
		return t.name.toLowerCase().includes(f) || (p && String(p.name || '').toLowerCase().includes(f)) || t.kind.includes(f);
	}

	layout() {
		const rows = [];
		const pinRows = [];
		let y = 0, py = 0;
		let hidden = 0;
		const pins = new Set(this.pinned);
		for (const id of this.pinned) {
			const t = this.tracks.get(id);
			if (!t || !this.trackVisible(t)) continue;
			t.h = t.counter ? COUNTER_H : t.lanes * LANE_H + TRACK_PAD;
			const g = (this.groups || []).find((x) => x.id === t.process);
			pinRows.push({ type: 'track', t, g, y: py, h: t.h, pin: true });
			py += t.h;
		}
		const layGroup = (g, header) => {
			const shown = g.tracks.filter((t) => this.trackVisible(t));
			hidden += g.tracks.length - shown.length;
			const vis = shown.filter((t) => !pins.has(t.id));
			if (!vis.length) return;
			if (header) {
				const h = GROUP_H + (g.collapsed ? SUMMARY_H + 4 : 0);
				rows.push({ type: 'group', g, y, h, vis });
				y += h;
				if (g.collapsed) return;
			}
			for (const t of vis) {
				t.h = t.counter ? COUNTER_H : t.lanes * LANE_H + TRACK_PAD;
				rows.push({ type: 'track', t, g, y, h: t.h });
				y += t.h;
			}
		};
		if (this.rankGroups) {
			// a job: ranks on top, each its processes (a rank of one process: its tracks)
			for (const rg of this.rankGroups) {
				const vis = rg.tracks.filter((t) => this.trackVisible(t) && !pins.has(t.id));
				if (!vis.length) { hidden += rg.tracks.filter((t) => !this.trackVisible(t)).length; continue; }
				const h = GROUP_H + (rg.collapsed ? SUMMARY_H + 4 : 0);
				rows.push({ type: 'group', g: rg, y, h, vis });
				y += h;
				if (rg.collapsed) { hidden += rg.tracks.filter((t) => !this.trackVisible(t)).length; continue; }
				for (const g of rg.groups) layGroup(g, rg.groups.length > 1);
			}
		} else {
			for (const g of this.groups || []) layGroup(g, true);
		}
		this.rows = rows;
		this.pinRows = pinRows;
		this.pinContentH = py;
		// the pinned area takes at most half of the plot; a 2 px rule under it
		this.pinH = py ? Math.min(py, Math.max(LANE_H * 2, Math.floor((this.H - RULER_H) * 0.5))) + 2 : 0;
		this.scroller.style.top = `${RULER_H + this.pinH}px`;
		this.layoutGen = (this.layoutGen || 0) + 1;
		this.hiddenCount = hidden;
		this.contentH = y + 40;
		this.scrollInner.style.height = `${this.contentH}px`;
		this.clampScroll();
		this.app.layoutChanged && this.app.layoutChanged(hidden);
	}

	/* Screen y (css px) of a row's top: pinned rows stay, the others scroll. */
	rowTop(row) {
		return row.pin ? RULER_H + row.y - this.pinScrollY : RULER_H + this.pinH + row.y - this.scrollY;
	}

	/* Clip ctx to the pinned area (pin) or to the scrolling area under it. */
	clipArea(ctx, pin, x = 0, w = this.W) {
		ctx.beginPath();
		if (pin) ctx.rect(x, RULER_H, w, Math.max(0, this.pinH - 2));
		else ctx.rect(x, RULER_H + this.pinH, w, Math.max(0, this.H - RULER_H - this.pinH));
		ctx.clip();
	}

	setFilter(f) {
		this.filter = f || '';
		this.layout();
		this.invalidate(true);
		this.scheduleFetch();
	}

	hideTrack(id) {
		(this.hiddenTracks || (this.hiddenTracks = new Set())).add(id);
		this.layout();
		this.invalidate(true);
		this.scheduleFetch();
	}

	showAllTracks() {
		this.hiddenTracks = new Set();
		this.filter = '';
		this.layout();
		this.invalidate(true);
		this.scheduleFetch();
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

	setCollapsedAll(c) {
		for (const g of this.groups || []) g.collapsed = c;
		for (const g of this.rankGroups || []) g.collapsed = c;
		this.layout();
		this.invalidate(true);
	}

	toggleGroup(g) {
		g.collapsed = !g.collapsed;
		this.layout();
		this.invalidate(true);
	}

	clampScroll() {
		const plotH = this.H - RULER_H - this.pinH;
		const max = Math.max(0, this.contentH - plotH);
		this.scrollY = Math.max(0, Math.min(max, this.scrollY));
		if (Math.abs(this.scroller.scrollTop - this.scrollY) > 1) this.scroller.scrollTop = this.scrollY;
		this.pinScrollY = Math.max(0, Math.min(this.pinContentH - (this.pinH - 2), this.pinScrollY));
	}

	/* ---- geometry ------------------------------------------------------- */

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

	rowAtY(y) {
		if (this.pinH && y < RULER_H + this.pinH) {
			const py = y - RULER_H + this.pinScrollY;
			return this.pinRows.find((r) => py >= r.y && py < r.y + r.h) || null;
		}
		const cy = y - RULER_H - this.pinH + this.scrollY;
		const rows = this.rows;
		let lo = 0, hi = rows.length - 1;
		while (lo <= hi) {
			const m = (lo + hi) >> 1;
			if (rows[m].y + rows[m].h <= cy) lo = m + 1;
			else if (rows[m].y > cy) hi = m - 1;
			else return rows[m];
		}
		return null;
	}

	visibleRows(margin = 0) {
		const top = this.scrollY - margin, bot = this.scrollY + this.H - RULER_H - this.pinH + margin;
		const out = this.pinRows.slice();
		for (const r of this.rows) {
			if (r.y + r.h < top) continue;
			if (r.y > bot) break;
			out.push(r);
		}
		return out;
	}

	rowOfTrack(id) {
		return this.pinRows.find((r) => r.t.id === id) || this.rows.find((r) => r.type === 'track' && r.t.id === id) || null;
	}

	/* The row a track is drawn in: its own, or its collapsed group's header. */
	rowOrGroupOfTrack(id) {
		const r = this.rowOfTrack(id);
		if (r) return r;
		const t = this.tracks.get(id);
		if (!t) return null;
		return this.rows.find((x) => x.type === 'group' && x.g.id === t.process) ||
			this.rows.find((x) => x.type === 'group' && x.g.procIds && x.g.procIds.has(t.process)) || null;
	}

	/* ---- view changes ----------------------------------------------------- */

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

	/* F: centre the selection, a second F fits it; 0 fits everything. */
	keyF() {
		const target = this.sel ? { s: this.sel.rel, d: Math.max(this.sel.dur, 1) } : this.area ? { s: this.area.s, d: this.area.e - this.area.s } : null;
		if (!target) return;
		const again = this.lastF && this.lastF.s === target.s && this.lastF.d === target.d;
		this.focusRange(target.s, target.d, again || (this.area && !this.sel));
		this.lastF = target;
		if (this.sel) this.showLane(this.sel.track, this.sel.depth);
	}

	/*
	 * Scroll the tracks (or the pinned area, for a pinned row) so that `row` is in view,
	 * and in it lane `depth` (a slice's level in its stack: in a deep Python stack it can
	 * be hundreds of pixels under the track's name). Nothing moves when it is in view
	 * already; else the row's top goes a third of the way down, or, when the lane would
	 * still be out of view, the lane to the middle.
	 */
	scrollToRow(row, depth) {
		if (!row) return;
		const pin = !!row.pin;
		const areaH = pin ? this.pinH - 2 : this.H - RULER_H - this.pinH;
		const cur = pin ? this.pinScrollY : this.scrollY;
		const lane = depth !== undefined && row.type === 'track' && !row.t.counter;
		const top = lane ? row.y + depth * LANE_H : row.y;
		const bot = lane ? top + LANE_H : row.y + Math.min(row.h, areaH);
		if (top >= cur && bot <= cur + areaH) return;
		let y = row.y - areaH / 3;
		if (bot > y + areaH || top < y) y = (top + bot) / 2 - areaH / 2;
		if (pin) this.pinScrollY = y; else this.scrollY = y;
		this.clampScroll();
		this.invalidate(true);
		this.scheduleFetch();
	}

	/*
	 * Show a track and, in it, lane `depth`: a track hidden (×) or left out by the
	 * track filter comes back (the filter is cleared, with a note), a collapsed process
	 * opens, a track with more levels than it shows grows to show this one; then it is
	 * scrolled into view (scrollToRow). For every way a slice gets selected: search,
	 * F, the Ops page, flows, the address.
	 */
	showLane(track, depth) {
		const t = this.tracks && this.tracks.get(track);
		if (!t) return;
		let relayout = false;
		if (this.hiddenTracks && this.hiddenTracks.delete(track)) relayout = true;
		if (this.filter && !this.trackVisible(t)) {
			this.filter = '';
			relayout = true;
			this.app.filterCleared && this.app.filterCleared(t.name);
		}
		const grp = (this.groups || []).find((g) => g.id === t.process);
		if (grp && grp.collapsed && !this.pinned.includes(track)) { grp.collapsed = false; relayout = true; }
		const rg = (this.rankGroups || []).find((g) => g.procIds.has(t.process));
		if (rg && rg.collapsed && !this.pinned.includes(track)) { rg.collapsed = false; relayout = true; }
		if (depth !== undefined && !t.counter && depth >= t.lanes) { t.lanes = depth + 1; relayout = true; }
		if (relayout) { this.layout(); this.invalidate(true); this.scheduleFetch(); }
		this.scrollToRow(this.rowOfTrack(track), depth);
	}

	/* ---- data ------------------------------------------------------------- */

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

	async fetchMini() {
		const width = this.miniWidth();
		const ids = [...this.tracks.values()].filter((t) => !t.counter).map((t) => t.id).slice(0, 400);
		if (!ids.length) { this.miniData = { width, rows: [] }; this.drawMini(); return; }
		try {
			const j = await getJSON('api/viewport', { tracks: ids.join(','), t0: this.T0.toString(), t1: (this.T0 + BigInt(Math.ceil(this.span))).toString(), width, rel: 1 }, { quiet: true });
			const rel = j.rel === 1;
			const t0n = Number(this.T0);
			const per = new Map();
			for (const t of j.tracks || []) {
				const tr = this.tracks.get(t.id);
				if (!tr || !Array.isArray(t.ts)) continue;
				let acc = per.get(tr.process);
				if (!acc) { acc = new Float64Array(width); per.set(tr.process, acc); }
				const bw = this.span / width;
				for (let i = 0; i < t.ts.length; i++) {
					if (t.depth && t.depth[i] !== 0) continue;
					const s = rel ? t.ts[i] : t.ts[i] - t0n;
					const d = t.dur ? t.dur[i] : 0;
					let a = s / bw, b = (s + d) / bw;
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

	/* ---- tile rendering ---------------------------------------------------- */

	nameText(id) { return this.store.strings.get(id) ?? ''; }

	colorOf(id) {
		let m = this.colorCache || (this.colorCache = new Map());
		let c = m.get(id);
		if (c === undefined) {
			c = colorIndex(this.nameText(id));
			if (this.store.strings.has(id)) m.set(id, c);
		}
		return c;
	}

	highlighted(id) {
		const h = this.highlight;
		if (!h) return true;
		let v = h.ids.get(id);
		if (v === undefined) {
			const s = this.store.strings.get(id);
			if (s === undefined) return false;
			v = h.exact ? s === h.name : h.re ? h.re.test(s) : s === h.name;
			h.ids.set(id, v);
		}
		return v;
	}

	/* Is item i of a tile's data (of track `track`) highlighted (or nothing is)? */
	lit(d, i, track) {
		const h = this.highlight;
		if (!h) return true;
		if (h.field === 'track') return track === h.track;
		return this.highlighted(h.field === 'cat' ? (d.cat ? d.cat[i] : 0) : d.name[i]);
	}

	/* A tile's canvas; `bare`: without the instants' chevrons (drawn on screen instead). */
	tileCanvas(tile, t, bare = false) {
		const key = this.canvasKey(t, bare);
		if (tile.canvas && tile.canvasGen === key) return tile.canvas;
		const had = !!tile.canvas;
		const old = tile.canvas;
		tile.canvas = null;
		this.reuse = old;
		this.bare = bare;
		tile.canvas = t.counter ? this.renderCounterTile(tile, t) : this.renderSliceTile(tile, t);
		this.bare = false;
		this.reuse = null;
		tile.canvasGen = key;
		if (!had) this.store.noteCanvas();
		return tile.canvas;
	}

	/* A w x h canvas for a tile: the tile's previous one, a pooled one, or new. */
	tileSurface(w, h) {
		let c = null;
		if (this.reuse && this.reuse.width === w && this.reuse.height === h) c = this.reuse;
		else {
			const list = this.canvasPool && this.canvasPool.get(`${w}x${h}`);
			if (list && list.length) c = list.pop();
		}
		if (!c) return makeCanvas(w, h);
		const ctx = c.getContext('2d');
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		ctx.globalAlpha = 1;
		ctx.clearRect(0, 0, w, h);
		return c;
	}

	renderSliceTile(tile, t) {
		const d = tile.data;
		if (d.cat && !this.catSeen) {
			this.catSeen = true;
			// tiles drawn so far in category mode used name colours: draw them again
			if (this.colorBy === 'category') { this.renderGen++; this.invalidate(true); }
			this.app.catsSeen && this.app.catsSeen();
		}
		const dpr = this.dpr;
		const ch = Math.max(1, Math.round(t.h * dpr));
		const c = this.tileSurface(TILE_PX, ch);
		const ctx = c.getContext('2d');
		ctx.scale(1, dpr);
		const res = tile.res;
		const batches = new Map(); // colour key -> [x, y, w, ...]
		const hatch = [];
		const chevrons = [];
		const unclosed = [];
		const runs = new Map(); // depth -> {x0, x1, count, key, summary}
		const lanes = t.lanes;
		let deepest = t.deepest;
		const push = (key, x, y, w) => {
			let b = batches.get(key);
			if (!b) { b = []; batches.set(key, b); }
			b.push(x, y, w);
		};
		const flush = (dep) => {
			const r = runs.get(dep);
			if (!r) return;
			runs.delete(dep);
			const y = dep * LANE_H + 1;
			const w = Math.max(1, r.x1 - r.x0);
			push(r.key, r.x0, y, w);
			if (r.count > 1) hatch.push(r.x0, y, w);
		};
		const hl = !!this.highlight;
		for (let i = 0; i < d.n; i++) {
			const dep = d.depth[i];
			if (dep > deepest) deepest = dep;
			if (dep >= lanes) continue;
			const x = d.off[i] / res;
			const w = d.dur[i] / res;
			if (x > TILE_PX + 1 || x + w < -1) continue;
			const ci = this.colorKey(d, i);
			const dim = hl && !this.lit(d, i, t.id);
			const key = dim ? ci + 1000 : ci;
			const cnt = d.count[i];
			if (((d.flags[i] & 128) || d.dur[i] === 0) && cnt <= 1) {
				if (!this.bare) chevrons.push(x, dep * LANE_H + 1, key);
				continue;
			}
			const x0 = Math.max(-1, x), x1 = Math.min(TILE_PX + 1, x + w);
			if ((d.flags[i] & 1) && cnt <= 1) { unclosed.push(x0, dep * LANE_H + 1, x1 - x0, key, x, x + w); continue; }
			const small = x1 - x0 < FOLD_PX || cnt > 1;
			const r = runs.get(dep);
			if (small) {
				if (r && x0 - r.x1 < FOLD_PX && x0 >= r.x0) {
					r.x1 = Math.max(r.x1, x1);
					r.count += cnt;
					continue;
				}
				flush(dep);
				runs.set(dep, { x0, x1, count: cnt, key });
				continue;
			}
			if (r) flush(dep);
			push(key, x0, dep * LANE_H + 1, x1 - x0);
		}
		for (const dep of [...runs.keys()]) flush(dep);
		if (deepest > t.deepest) {
			t.deepest = deepest;
			const want = Math.min(MAX_LANES, deepest + 1);
			if (want > t.lanes) { t.lanes = want; this.needLayout = true; }
		}
		for (const [key, b] of batches) {
			const p = palette[key >= 1000 ? key - 1000 : key];
			ctx.fillStyle = key >= 1000 ? this.colors.dim : p.fill;
			if (key >= 1000) ctx.fillStyle = p.dim;
			ctx.beginPath();
			for (let j = 0, n = 0; j < b.length; j += 3, n++) {
				if (n === 1000) { ctx.fill(); ctx.beginPath(); n = 0; }
				ctx.rect(b[j], b[j + 1], b[j + 2], SLICE_H);
			}
			ctx.fill();
		}
		if (hatch.length) {
			ctx.fillStyle = this.hatchPattern(ctx);
			ctx.beginPath();
			for (let j = 0; j < hatch.length; j += 3) ctx.rect(hatch[j], hatch[j + 1], hatch[j + 2], SLICE_H);
			ctx.fill();
		}
		for (let j = 0; j < unclosed.length; j += 6) {
			const x = unclosed[j], y = unclosed[j + 1], w = unclosed[j + 2], key = unclosed[j + 3];
			const p = palette[key >= 1000 ? key - 1000 : key];
			// one gradient over the whole slice (its start to its end, in this tile's
			// coordinates), so that the tiles it spans join up
			const g = ctx.createLinearGradient(unclosed[j + 4], 0, Math.max(unclosed[j + 5], unclosed[j + 4] + 1), 0);
			g.addColorStop(0, key >= 1000 ? p.dim : p.fill);
			g.addColorStop(1, 'rgba(128,128,128,0.1)');
			ctx.fillStyle = g;
			ctx.fillRect(x, y, w, SLICE_H);
		}
		for (let j = 0; j < chevrons.length; j += 3) {
			const x = chevrons[j], y = chevrons[j + 1], key = chevrons[j + 2];
			const p = palette[key >= 1000 ? key - 1000 : key];
			ctx.fillStyle = key >= 1000 ? p.dim : p.fill;
			ctx.beginPath();
			ctx.moveTo(x, y);
			ctx.lineTo(x + 4, y + SLICE_H / 2);
			ctx.lineTo(x, y + SLICE_H);
			ctx.lineTo(x - 4, y + SLICE_H / 2);
			ctx.closePath();
			ctx.fill();
		}
		return c;
	}

	hatchPattern(ctx) {
		if (!this.hatchTile) this.hatchTile = this.makeHatch();
		return ctx.createPattern(this.hatchTile, 'repeat');
	}

	makeHatch() {
		const p = makeCanvas(6, 6);
		const pc = p.getContext('2d');
		pc.strokeStyle = 'rgba(255,255,255,0.32)';
		pc.lineWidth = 1;
		pc.beginPath();
		pc.moveTo(0, 6); pc.lineTo(6, 0);
		pc.moveTo(-1, 1); pc.lineTo(1, -1);
		pc.moveTo(5, 7); pc.lineTo(7, 5);
		pc.stroke();
		return p;
	}

	renderCounterTile(tile, t) {
		const d = tile.data;
		const dpr = this.dpr;
		const ch = Math.max(1, Math.round(t.h * dpr));
		const c = this.tileSurface(TILE_PX, ch);
		const ctx = c.getContext('2d');
		ctx.scale(1, dpr);
		if (!d.n) return c;
		const res = tile.res;
		const lo = Math.min(0, t.cmin), hi = Math.max(t.cmax, lo + 1e-9);
		const top = 4, bottom = t.h - 3;
		const y = (v) => bottom - (v - lo) / (hi - lo) * (bottom - top);
		const col = counterColor(t.id);
		const endX = Math.min(TILE_PX, (t.maxRel - tile.relStart) / res);
		// the first item may be the sample in force at the tile's start (before it: x 0);
		// a value holds until the next sample, the last one until the track's last sample
		const xAt = (i) => Math.max(0, d.off[i] / res);
		const xNext = (i) => (i + 1 < d.n ? Math.max(0, d.off[i + 1] / res)
			: d.off[i] >= 0 ? Math.max(xAt(i) + 1, endX) : Math.max(0, endX));
		if (d.min && d.max) {
			ctx.fillStyle = col.fill;
			ctx.globalAlpha = 0.3;
			ctx.beginPath();
			for (let i = 0; i < d.n; i++) {
				const x0 = xAt(i), x1 = Math.min(TILE_PX, xNext(i));
				if (x1 <= 0 || x0 >= TILE_PX) continue;
				const y0 = y(d.max[i]), y1 = y(d.min[i]);
				ctx.rect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
			}
			ctx.fill();
			ctx.globalAlpha = 1;
		}
		ctx.beginPath();
		ctx.moveTo(xAt(0), bottom);
		for (let i = 0; i < d.n; i++) {
			const x0 = xAt(i), x1 = Math.min(TILE_PX + 1, xNext(i));
			const yy = y(d.value[i]);
			ctx.lineTo(x0, yy);
			ctx.lineTo(x1, yy);
		}
		ctx.lineTo(Math.min(TILE_PX + 1, xNext(d.n - 1)), bottom);
		ctx.closePath();
		ctx.globalAlpha = 0.55;
		ctx.fillStyle = col.fill;
		ctx.fill();
		ctx.globalAlpha = 1;
		ctx.strokeStyle = col.fill;
		ctx.lineWidth = 1;
		ctx.beginPath();
		for (let i = 0; i < d.n; i++) {
			const x0 = xAt(i), x1 = Math.min(TILE_PX + 1, xNext(i));
			const yy = y(d.value[i]);
			if (i === 0) ctx.moveTo(x0, yy); else ctx.lineTo(x0, yy);
			ctx.lineTo(x1, yy);
		}
		ctx.stroke();
		return c;
	}

	/* Counter scale: grows as data arrives (y range over everything seen). */
	noteCounterRange(tile, t) {
		if (tile.scaled) return;
		tile.scaled = true;
		const d = tile.data;
		let lo = t.cmin, hi = t.cmax;
		const a = d.max || d.value, b = d.min || d.value;
		for (let i = 0; i < d.n; i++) { if (a[i] > hi) hi = a[i]; if (b[i] < lo) lo = b[i]; }
		if (hi > t.cmax || lo < t.cmin) {
			// grow with headroom so that arriving tiles rarely force a re-render
			const first = !isFinite(t.cmax);
			const span = Math.max(Math.abs(hi - lo), Math.abs(hi), 1e-9);
			if (hi > t.cmax) t.cmax = first ? hi : hi + span * 0.15;
			if (lo < t.cmin) t.cmin = first ? lo : lo - (lo < 0 ? span * 0.15 : 0);
			t.scaleGen++;
			// tiles already copied to the screen used the old scale: draw again
			this.dirty = true;
		}
	}

	/* ---- drawing ----------------------------------------------------------- */

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

	readColors() {
		const cs = getComputedStyle(document.documentElement);
		const v = (n, d) => (cs.getPropertyValue(n) || d).trim() || d;
		this.colors = {
			bg: v('--tl-bg', '#ffffff'), fg: v('--fg', '#1b1f24'), muted: v('--muted', '#6a737d'),
			grid: v('--tl-grid', 'rgba(0,0,0,0.08)'), alt: v('--tl-alt', 'rgba(0,0,0,0.025)'),
			group: v('--tl-group', '#eef1f5'), gutter: v('--tl-gutter', '#f7f8fa'), border: v('--border', '#d0d7de'),
			accent: v('--accent', '#0969da'), sel: v('--tl-sel', '#000000'), hatch: v('--tl-loading', 'rgba(128,128,128,0.18)'),
			ruler: v('--tl-ruler', '#fbfbfc'), area: v('--tl-area', 'rgba(9,105,218,0.12)'), hl: v('--tl-hl', '#ff9900'),
			dim: '#cccccc',
		};
		this.renderGen++;
		if (this.store) this.store.dropCanvases();
	}

	drawBase() {
		if (!this.colors) this.readColors();
		const C = this.colors;
		const ctx = this.bctx;
		const dpr = this.dpr;
		const W = this.W, H = this.H;
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.imageSmoothingEnabled = false;
		ctx.fillStyle = C.bg;
		ctx.fillRect(0, 0, W, H);
		this.drawn = [];
		this.incomplete = 0;
		this.drawnCount = 0;
		if (!this.session) return;
		if (!this.rows.length) {
			ctx.fillStyle = C.muted;
			ctx.font = '13px system-ui, sans-serif';
			ctx.fillText(this.tracks.size ? 'Every track is hidden by the filter.' : 'This session has no tracks.', GUTTER + 16, RULER_H + 30);
		}
		const L = this.level();
		const span = tileSpan(L);
		const r = this.res();
		const k0 = Math.floor(this.view.s / span), k1 = Math.floor(this.view.e / span);
		const rows = this.visibleRows();
		// counter scales first, so that every tile of a track is drawn to the same scale
		for (const row of rows) {
			if (row.type !== 'track' || !row.t.counter) continue;
			for (let k = Math.max(0, k0); k <= k1; k++) {
				const tile = this.store.peek(L, k, row.t.id);
				if (tile && tile.state === 'ok' && tile.data.n) this.noteCounterRange(tile, row.t);
			}
		}
		this.dirty = false;
		// grid lines under everything
		const step = tickStep(this.view.e - this.view.s, this.PW);
		ctx.strokeStyle = C.grid;
		ctx.lineWidth = 1;
		ctx.beginPath();
		for (let t = Math.ceil(this.view.s / step) * step; t <= this.view.e; t += step) {
			const x = Math.round(this.xOf(t)) + 0.5;
			ctx.moveTo(x, RULER_H); ctx.lineTo(x, H);
		}
		ctx.stroke();
		for (const pin of [false, true]) {
		if (pin && !this.pinH) break;
		ctx.save();
		this.clipArea(ctx, pin);
		for (const row of rows) {
			if (!!row.pin !== pin) continue;
			const sy = this.rowTop(row);
			if (row.type === 'group') {
				ctx.fillStyle = C.group;
				ctx.fillRect(0, sy, W, row.h);
				ctx.fillStyle = C.border;
				ctx.fillRect(0, sy, W, 1);
				if (row.g.collapsed) {
					ctx.save();
					ctx.beginPath();
					ctx.rect(GUTTER, sy, this.PW, row.h);
					ctx.clip();
					for (const t of row.vis.slice(0, MAX_SUMMARY_TRACKS)) {
						if (t.counter) continue;
						this.blitTrack(ctx, row, t, sy + GROUP_H, L, k0, k1, span, r, true);
					}
					ctx.restore();
				}
				continue;
			}
			const t = row.t;
			if (row.t.id % 2) { ctx.fillStyle = C.alt; ctx.fillRect(GUTTER, sy, this.PW, row.h); }
			ctx.fillStyle = C.grid;
			ctx.fillRect(GUTTER, sy + row.h - 1, this.PW, 1);
			ctx.save();
			ctx.beginPath();
			ctx.rect(GUTTER, sy, this.PW, row.h);
			ctx.clip();
			this.blitTrack(ctx, row, t, sy, L, k0, k1, span, r, false);
			ctx.restore();
		}
		ctx.restore();
		}
		if (this.pinH) {
			// the rule under the pinned tracks
			ctx.fillStyle = C.accent;
			ctx.fillRect(0, RULER_H + this.pinH - 2, W, 2);
			// taller than their area: where its view is (the wheel over them scrolls it)
			const ph = this.pinH - 2;
			if (this.pinContentH > ph) {
				ctx.fillStyle = C.muted;
				const th = Math.max(12, ph * ph / this.pinContentH);
				ctx.fillRect(W - SCROLLBAR_W + 5, RULER_H + (ph - th) * this.pinScrollY / (this.pinContentH - ph), 4, th);
			}
		}
		this.drawGutterCached(ctx, rows);
		this.drawRuler(ctx);
	}

	/* Draw one track's tiles for [k0, k1] at level L, falling back to coarser
	 * or finer cached levels, and hatching what is still loading. */
	blitTrack(ctx, row, t, sy, L, k0, k1, span, r, summary) {
		const dpr = this.dpr;
		for (let k = k0; k <= k1; k++) {
			const relS = k * span;
			if (k < 0 || relS >= this.span) continue; // no data outside the session
			const x0 = GUTTER + (relS - this.view.s) / r, x1 = GUTTER + (relS + span - this.view.s) / r;
			const dx0 = Math.round(x0 * dpr), dx1 = Math.round(x1 * dpr);
			const hDest = summary ? SUMMARY_H : t.h;
			let done = false;
			const tile = this.store.get(L, k, t.id);
			if (tile && tile.state === 'ok') done = this.drawTileInto(ctx, tile, t, 0, TILE_PX, dx0, dx1, sy, summary, row, k);
			if (!done) {
				// stale detail while the right level loads (or renders): coarser, then finer
				for (let L2 = L + 1; L2 <= L + 12 && !done; L2++) {
					const span2 = tileSpan(L2);
					const k2 = Math.floor(relS / span2);
					const t2 = this.store.peek(L2, k2, t.id);
					if (t2 && t2.state === 'ok') {
						const sx = (relS - k2 * span2) / t2.res;
						done = this.drawTileInto(ctx, t2, t, sx, span / t2.res, dx0, dx1, sy, summary, row, k);
					}
				}
				if (!done && L > 0) {
					const a = this.store.peek(L - 1, 2 * k, t.id), b = this.store.peek(L - 1, 2 * k + 1, t.id);
					if (a && b && a.state === 'ok' && b.state === 'ok' && this.hasCanvas(a, t) && this.hasCanvas(b, t)) {
						const dm = Math.round(((x0 + x1) / 2) * dpr);
						this.drawTileInto(ctx, a, t, 0, TILE_PX, dx0, dm, sy, summary, row, k);
						this.drawTileInto(ctx, b, t, 0, TILE_PX, dm, dx1, sy, summary, row, k);
						done = true;
					}
				}
			}
			if (!done) {
				this.incomplete++;
				ctx.save();
				ctx.setTransform(1, 0, 0, 1, 0, 0);
				ctx.fillStyle = this.colors.hatch;
				ctx.fillRect(dx0, Math.round(sy * dpr), dx1 - dx0, Math.round(hDest * dpr));
				ctx.restore();
				if (tile && tile.state === 'error') this.tileErrors = (this.tileErrors || 0) + 1;
			}
		}
	}

	/* Copy a tile (its [sx, sx+sw) buckets) to device x [dx0, dx1). False when its
	 * canvas still has to be rendered and this frame's render budget is spent. */
	drawTileInto(ctx, tile, t, sx, sw, dx0, dx1, sy, summary, row, k) {
		if (tile.data.n) {
			if (t.counter) this.noteCounterRange(tile, t);
			if (this.firstDraw && !this.hasCanvas(tile, t) && performance.now() - this.frameStart > RENDER_BUDGET_MS && this.rendered > 0) {
				this.dirty = true; // finish in the next frame
				return false;
			}
		}
		this.drawnCount++;
		this.drawn.push({ row, tile, t, summary });
		if (!tile.data.n) return true;
		const dpr = this.dpr;
		// Zoomed past the finest tiles' 1 ns buckets, a tile is stretched: its
		// instants' chevrons would stretch with it, so they are drawn on screen.
		const stretched = !summary && !t.counter && dx1 - dx0 > STRETCH_MAX * dpr * sw;
		const had = this.hasCanvas(tile, t, stretched);
		const cv = this.tileCanvas(tile, t, stretched);
		if (!had) this.rendered++;
		ctx.save();
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		if (summary) {
			ctx.drawImage(cv, sx, 0, sw, Math.min(cv.height, Math.round(LANE_H * dpr)), dx0, Math.round(sy * dpr), dx1 - dx0, Math.round(SUMMARY_H * dpr));
		} else {
			ctx.drawImage(cv, sx, 0, sw, cv.height, dx0, Math.round(sy * dpr), dx1 - dx0, cv.height);
		}
		if (stretched) this.drawChevrons(ctx, tile, t, sx, sw, dx0, dx1, sy);
		ctx.restore();
		return true;
	}

	/* The chevrons of a stretched tile's instants in [sx, sx + sw), at their screen size. */
	drawChevrons(ctx, tile, t, sx, sw, dx0, dx1, sy) {
		const d = tile.data, dpr = this.dpr, f = (dx1 - dx0) / sw, res = tile.res;
		const hl = !!this.highlight, half = 4 * dpr, h = SLICE_H * dpr;
		ctx.beginPath();
		ctx.rect(dx0, Math.round(sy * dpr), dx1 - dx0, t.h * dpr);
		ctx.clip();
		for (let i = 0; i < d.n; i++) {
			if (!((d.flags[i] & 128) || d.dur[i] === 0) || d.count[i] > 1 || d.depth[i] >= t.lanes) continue;
			const b = d.off[i] / res;
			if (b < sx - 1 || b > sx + sw + 1) continue;
			const x = dx0 + (b - sx) * f, y = (sy + d.depth[i] * LANE_H + 1) * dpr;
			const p = palette[this.colorKey(d, i)];
			ctx.fillStyle = hl && !this.lit(d, i, t.id) ? p.dim : p.fill;
			ctx.beginPath();
			ctx.moveTo(x, y);
			ctx.lineTo(x + half, y + h / 2);
			ctx.lineTo(x, y + h);
			ctx.lineTo(x - half, y + h / 2);
			ctx.closePath();
			ctx.fill();
		}
	}

	canvasKey(t, bare) {
		return `${this.renderGen}:${t.scaleGen}:${t.h}:${this.dpr}${bare ? ':bare' : ''}`;
	}

	hasCanvas(tile, t, bare = false) {
		return !!tile.canvas && tile.canvasGen === this.canvasKey(t, bare);
	}

	/* The track names change only with scrolling, layout or theme: reuse an image. */
	drawGutterCached(ctx, rows) {
		let sig = `${this.scrollY}:${this.pinScrollY}:${this.layoutGen}:${this.H}:${this.dpr}:${this.renderGen}:${this.pinH}`;
		for (const r of rows) if (r.type === 'track' && (r.t.counter || r.t.deepest >= r.t.lanes)) sig += `:${r.t.cmax}:${r.t.deepest}:${r.t.lanes}`;
		const dpr = this.dpr;
		const w = Math.round(GUTTER * dpr), h = Math.round(this.H * dpr);
		if (!this.gutterImg || this.gutterSig !== sig || this.gutterImg.width !== w || this.gutterImg.height !== h) {
			if (!this.gutterImg || this.gutterImg.width !== w || this.gutterImg.height !== h) this.gutterImg = makeCanvas(w, h);
			const g = this.gutterImg.getContext('2d');
			g.setTransform(1, 0, 0, 1, 0, 0);
			g.clearRect(0, 0, w, h);
			g.setTransform(dpr, 0, 0, dpr, 0, 0);
			this.drawGutter(g, rows);
			this.gutterSig = sig;
		}
		ctx.save();
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		ctx.drawImage(this.gutterImg, 0, 0);
		ctx.restore();
	}

	drawGutter(ctx, rows) {
		const C = this.colors;
		ctx.fillStyle = C.gutter;
		ctx.fillRect(0, RULER_H, GUTTER, this.H - RULER_H);
		ctx.fillStyle = C.border;
		ctx.fillRect(GUTTER - 1, RULER_H, 1, this.H - RULER_H);
		for (const pin of [false, true]) {
		if (pin && !this.pinH) break;
		ctx.save();
		this.clipArea(ctx, pin, 0, GUTTER);
		if (pin) { ctx.fillStyle = C.gutter; ctx.fillRect(0, RULER_H, GUTTER, this.pinH); }
		ctx.textBaseline = 'middle';
		for (const row of rows) {
			if (!!row.pin !== pin) continue;
			const sy = this.rowTop(row);
			if (row.type === 'group') {
				ctx.fillStyle = C.group;
				ctx.fillRect(0, sy, GUTTER, row.h);
				ctx.fillStyle = C.border;
				ctx.fillRect(0, sy, GUTTER, 1);
				ctx.fillStyle = C.fg;
				ctx.beginPath();
				const cx = 10, cy = sy + GROUP_H / 2;
				if (row.g.collapsed) { ctx.moveTo(cx - 3, cy - 5); ctx.lineTo(cx + 4, cy); ctx.lineTo(cx - 3, cy + 5); }
				else { ctx.moveTo(cx - 5, cy - 3); ctx.lineTo(cx + 5, cy - 3); ctx.lineTo(cx, cy + 4); }
				ctx.fill();
				ctx.font = '600 12px system-ui, sans-serif';
				const p = row.g.proc;
				ctx.fillText(this.label(ctx, this.groupLabel(row.g), GUTTER - 30, this.groupKeep), 20, cy);
				ctx.font = '10px system-ui, sans-serif';
				ctx.fillStyle = C.muted;
				const sub = [p.pid !== undefined ? `pid ${p.pid}` : '', p.rank >= 0 ? `rank ${p.rank}` : '', p.host || '', `${row.vis.length} tracks`].filter(Boolean).join(' · ');
				if (row.g.collapsed) ctx.fillText(this.label(ctx, sub, GUTTER - 24), 20, sy + GROUP_H + SUMMARY_H / 2 + 1);
				continue;
			}
			const t = row.t;
			ctx.fillStyle = C.grid;
			ctx.fillRect(0, sy + row.h - 1, GUTTER, 1);
			// the name stays in view while the rest of a tall track is (a deep stack)
			const ly = this.labelTop(row, sy);
			const ty = ly + Math.min(row.h, LANE_H + 2) / 2 + 1;
			ctx.font = '10px system-ui, sans-serif';
			const tag = KIND_LABEL[t.kind] || t.kind;
			const tagW = ctx.measureText(tag).width;
			ctx.fillStyle = t.kind === 'comm' ? C.hl : C.muted;
			ctx.fillText(tag, GUTTER - 8 - tagW, ty);
			ctx.font = '12px system-ui, sans-serif';
			ctx.fillStyle = C.fg;
			// names cut in the middle, keeping what tells them apart (the whole in the tooltip)
			const room = GUTTER - 8 - tagW - 6 - 14;
			if (row.pin) {
				// pinned: an accent mark, and the process in the label
				ctx.fillStyle = C.accent;
				ctx.fillRect(3, ly + 3, 3, Math.min(row.h, LANE_H) - 4);
				ctx.fillStyle = C.fg;
				// (the track's name first; its process after it if there is room, else under
				// it in a tall track; always in the tooltip)
				const full = row.g ? this.groupLabel(row.g) : '';
				const nm = this.label(ctx, t.name, room, this.nameKeep);
				const left = room - ctx.measureText(`${nm} · `).width;
				const pn = full && left >= 30 ? this.label(ctx, full, left, this.groupKeep) : '';
				ctx.fillText(pn ? `\u2068${nm}\u2069 · \u2068${pn}\u2069` : nm, 14, ty);
				if (full && !pn && row.h >= 2 * LANE_H + TRACK_PAD && !(t.deepest >= t.lanes)) {
					ctx.font = '10px system-ui, sans-serif';
					ctx.fillStyle = C.muted;
					ctx.fillText(this.label(ctx, full, room, this.groupKeep), 14, ty + 14);
				}
			} else {
				ctx.fillText(this.label(ctx, t.name, room, this.nameKeep), 14, ty);
			}
			ctx.font = '10px system-ui, sans-serif';
			if (t.counter && isFinite(t.cmax)) {
				ctx.fillStyle = C.muted;
				ctx.fillText(`max ${this.fmtValue(t.cmax)}`, 14, sy + 30);
			}
			if (t.deepest >= t.lanes && ly + 30 < sy + row.h) {
				ctx.fillStyle = C.accent;
				ctx.fillText(`levels ${t.lanes}–${t.deepest} hidden: show`, 14, ly + 30);
			}
		}
		ctx.restore();
		}
	}

	/* `text` fitted to `px` in ctx's font, cut in the middle (textfit.js); `keep`: a
	 * distinctStarts map of the names it is shown with. */
	label(ctx, text, px, keep) {
		return elide(text, px, (x) => ctx.measureText(x).width, keep ? keep.get(text) ?? 0 : 0, ctx.font);
	}

	/* Where a track's name is drawn: its top, or, while its top is scrolled away and
	 * the rest of it is in view, the top of the area (a sticky name). */
	labelTop(row, sy) {
		if (row.type !== 'track') return sy;
		const areaTop = row.pin ? RULER_H : RULER_H + this.pinH;
		return Math.max(sy, Math.min(areaTop, sy + row.h - LANE_H - 2));
	}

	fmtValue(v) {
		const a = Math.abs(v);
		if (a >= 1e9) return `${(v / 1e9).toFixed(2)}G`;
		if (a >= 1e6) return `${(v / 1e6).toFixed(2)}M`;
		if (a >= 1e3) return `${(v / 1e3).toFixed(2)}k`;
		return Number.isInteger(v) ? String(v) : v.toFixed(3);
	}

	drawRuler(ctx) {
		const C = this.colors;
		ctx.fillStyle = C.ruler;
		ctx.fillRect(0, 0, this.W, RULER_H);
		ctx.fillStyle = C.border;
		ctx.fillRect(0, RULER_H - 1, this.W, 1);
		// steps band (upper half)
		ctx.save();
		ctx.beginPath();
		ctx.rect(GUTTER, 0, this.PW, RULER_H);
		ctx.clip();
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		for (const st of this.steps || []) {
			if (st.rel > this.view.e || st.rel + st.dur < this.view.s) continue;
			const x0 = this.xOf(st.rel), x1 = this.xOf(st.rel + st.dur);
			ctx.fillStyle = st.index % 2 ? 'rgba(127,127,127,0.16)' : 'rgba(127,127,127,0.08)';
			ctx.fillRect(x0, 0, Math.max(1, x1 - x0), 12);
			if (!st.traced) { ctx.fillStyle = 'rgba(127,127,127,0.35)'; ctx.fillRect(x0, 10, Math.max(1, x1 - x0), 2); }
			ctx.fillStyle = C.muted;
			ctx.fillRect(x0, 0, 1, 12);
			if (x1 - x0 > 50) {
				ctx.fillStyle = C.fg;
				const lx = Math.max(x0, GUTTER) + 3;
				ctx.fillText(this.label(ctx, `step ${st.index}`, Math.min(x1, GUTTER + this.PW) - lx - 4, this.stepKeep), lx, 6.5);
			}
		}
		// ticks (lower half), all in the unit of the largest (format.js fmtTick)
		const span = this.view.e - this.view.s;
		const step = tickStep(span, this.PW);
		const maxAbs = Math.max(Math.abs(this.view.s), Math.abs(this.view.e));
		ctx.fillStyle = C.fg;
		ctx.strokeStyle = C.muted;
		ctx.beginPath();
		for (let t = Math.ceil(this.view.s / step) * step; t <= this.view.e; t += step) {
			const x = Math.round(this.xOf(t)) + 0.5;
			ctx.moveTo(x, RULER_H - 9); ctx.lineTo(x, RULER_H - 1);
			ctx.fillText(fmtTick(t, step, maxAbs), x + 3, RULER_H - 11);
		}
		ctx.stroke();
		ctx.restore();
		ctx.fillStyle = C.muted;
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		ctx.fillText(`${fmtDur(span)} window`, 8, 9);
		ctx.fillText(fmtOffset(Math.max(0, this.view.s), this.res()), 8, RULER_H - 10);
	}

	/* Overlay: labels, highlights, selection, flows, area, crosshair, ticks. */
	drawOver() {
		const ctx = this.octx;
		const dpr = this.dpr;
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, this.W, this.H);
		if (!this.session) return;
		const C = this.colors;
		const r = this.res();
		// per area (scrolling tracks, then the pinned ones above them)
		const selRow = this.sel ? this.rowOfTrack(this.sel.track) : null;
		for (const pin of [false, true]) {
			if (pin && !this.pinH) break;
			ctx.save();
			this.clipArea(ctx, pin, GUTTER, this.PW);
			this.drawLabels(ctx, r, pin);
			if (this.hover && !this.drag) this.drawSameName(ctx, this.hover.name, C.fg, 1, pin);
			if (this.area) {
				const x0 = Math.max(GUTTER, this.xOf(this.area.s)), x1 = Math.min(GUTTER + this.PW, this.xOf(this.area.e));
				ctx.fillStyle = C.area;
				for (const row of this.visibleRows()) {
					if (!!row.pin !== pin) continue;
					if (this.area.tracks && (row.type !== 'track' || !this.area.tracks.has(row.t.id))) continue;
					ctx.fillRect(x0, this.rowTop(row), Math.max(1, x1 - x0), row.h);
				}
			}
			if (this.sel && selRow && !!selRow.pin === pin) this.drawSelection(ctx);
			ctx.restore();
		}
		ctx.save();
		ctx.beginPath();
		ctx.rect(GUTTER, RULER_H, this.PW, this.H - RULER_H);
		ctx.clip();
		if (this.area) {
			const x0 = Math.max(GUTTER, this.xOf(this.area.s)), x1 = Math.min(GUTTER + this.PW, this.xOf(this.area.e));
			ctx.fillStyle = C.accent;
			ctx.fillRect(x0, RULER_H, 1, this.H);
			ctx.fillRect(x1, RULER_H, 1, this.H);
		}
		// flows cross between pinned and scrolling tracks
		if (this.flows.length && this.sel) this.drawFlows(ctx);
		if (this.mouse && this.mouse.x > GUTTER && !this.drag?.pan) {
			ctx.fillStyle = C.muted;
			ctx.fillRect(Math.round(this.mouse.x), RULER_H, 1, this.H);
		}
		ctx.restore();
		if (this.gutterHover) {
			// the pin and hide buttons of the hovered track name
			const gh = this.gutterHover;
			const sy = this.labelTop(gh, this.rowTop(gh));
			if (sy >= RULER_H && (gh.pin ? sy < RULER_H + this.pinH - 2 : sy >= RULER_H + this.pinH - 2)) {
				ctx.fillStyle = C.gutter;
				ctx.fillRect(GUTTER - 46, sy + 1, 45, 17);
				ctx.strokeStyle = C.muted;
				ctx.lineWidth = 1.5;
				ctx.beginPath();
				const cx = GUTTER - 12, cy = sy + 10;
				ctx.moveTo(cx - 4, cy - 4); ctx.lineTo(cx + 4, cy + 4);
				ctx.moveTo(cx + 4, cy - 4); ctx.lineTo(cx - 4, cy + 4);
				ctx.stroke();
				// a pin: head and needle; filled while pinned
				const px = GUTTER - 34;
				ctx.beginPath();
				ctx.arc(px, cy - 2, 3.5, 0, Math.PI * 2);
				ctx.moveTo(px, cy + 1.5); ctx.lineTo(px, cy + 7);
				if (gh.pin) { ctx.fillStyle = C.accent; ctx.fill(); ctx.strokeStyle = C.accent; }
				ctx.stroke();
			}
		}
		// ruler overlays: search ticks, area label, crosshair time
		ctx.save();
		ctx.beginPath();
		ctx.rect(GUTTER, 0, this.PW, RULER_H);
		ctx.clip();
		if (this.searchHits.length) {
			ctx.fillStyle = C.hl;
			let last = -10;
			const hits = this.searchHits;
			// hits are in time order: start at the view
			let lo = 0, hi = hits.length;
			while (lo < hi) { const m = (lo + hi) >> 1; if (hits[m].rel < this.view.s - r) lo = m + 1; else hi = m; }
			for (let j = lo; j < hits.length; j++) {
				const h = hits[j];
				if (h.rel > this.view.e) break;
				const x = Math.round(this.xOf(h.rel));
				if (x === last) continue;
				last = x;
				ctx.fillRect(x, RULER_H - 5, 2, 5);
			}
		}
		ctx.font = '11px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		if (this.area) {
			const x0 = this.xOf(this.area.s), x1 = this.xOf(this.area.e);
			const label = fmtDur(this.area.e - this.area.s);
			ctx.fillStyle = C.accent;
			ctx.fillRect(x0, RULER_H - 4, x1 - x0, 3);
			const w = ctx.measureText(label).width + 8;
			const cx = Math.max(GUTTER + w / 2, Math.min(GUTTER + this.PW - w / 2, (x0 + x1) / 2));
			ctx.fillRect(cx - w / 2, 1, w, 14);
			ctx.fillStyle = '#fff';
			ctx.fillText(label, cx - w / 2 + 4, 8);
		}
		if (this.mouse && this.mouse.x > GUTTER) {
			const t = this.tOf(this.mouse.x);
			const label = fmtOffset(t, r); // (to the pixel)
			const w = ctx.measureText(label).width + 8;
			const x = Math.min(this.mouse.x + 2, GUTTER + this.PW - w);
			ctx.fillStyle = C.fg;
			ctx.fillRect(x, RULER_H - 16, w, 15);
			ctx.fillStyle = C.bg;
			ctx.fillText(label, x + 4, RULER_H - 8.5);
		}
		ctx.restore();
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

	wideIdx(tile) {
		if (tile.wide) return tile.wide;
		const d = tile.data, min = 12 * tile.res;
		const out = [];
		for (let i = 0; i < d.n; i++) if (d.dur[i] >= min) out.push(i);
		tile.wide = Int32Array.from(out);
		return tile.wide;
	}

	drawLabels(ctx, r, pin) {
		ctx.font = '11px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		const seen = new Set();
		const cw = this.charW;
		const left = GUTTER, right = GUTTER + this.PW;
		this.forDrawn((tile, i, x0, x1, y, row, rel) => {
			const d = tile.data;
			const w = Math.min(x1, right) - Math.max(x0, left);
			if (w < LABEL_MIN_PX) return;
			if (d.off[i] < 0 || d.off[i] + d.dur[i] > tileSpan(tile.L)) {
				const key = `${tile.track}:${d.depth[i]}:${rel}`;
				if (seen.has(key)) return;
				seen.add(key);
			}
			let text = this.nameText(d.name[i]);
			if (d.count[i] > 1) text = `${text} (+${fmtInt(d.count[i] - 1)})`;
			if (d.flags[i] & 1) text += ' (Did Not Finish)';
			const max = Math.floor((w - 6) / cw);
			if (max < 3) return;
			if (text.length > max) text = text.slice(0, max - 1) + '…';
			const ci = this.colorKey(d, i);
			const dim = this.highlight && !this.lit(d, i, tile.track);
			ctx.fillStyle = dim ? '#555' : palette[ci].text;
			const cx = (Math.max(x0, left) + Math.min(x1, right)) / 2;
			const tw = text.length * cw;
			ctx.fillText(text, cx - tw / 2, y + SLICE_H / 2 + 0.5);
		}, { wide: true, pin });
	}

	drawSameName(ctx, nameId, color, width, pin) {
		ctx.strokeStyle = color;
		ctx.lineWidth = width;
		ctx.beginPath();
		let n = 0;
		this.forDrawn((tile, i, x0, x1, y) => {
			if (tile.data.name[i] !== nameId) return;
			ctx.rect(Math.round(x0) + 0.5, y + 0.5, Math.max(1, x1 - x0 - 1), SLICE_H - 1);
			if (++n > 5000) return false;
		}, { pin });
		ctx.stroke();
	}

	selRect() {
		const s = this.sel;
		if (!s) return null;
		const row = this.rowOfTrack(s.track);
		if (!row) return null;
		const y = this.rowTop(row) + s.depth * LANE_H + 1;
		const x0 = this.xOf(s.rel), x1 = this.xOf(s.rel + s.dur);
		return { x0, x1, y, h: SLICE_H };
	}

	drawSelection(ctx) {
		const b = this.selRect();
		if (!b) return;
		const x0 = Math.max(GUTTER - 4, b.x0), x1 = Math.min(GUTTER + this.PW + 4, b.x1);
		ctx.lineWidth = 3;
		ctx.strokeStyle = this.colors.sel;
		ctx.strokeRect(x0 - 1, b.y - 1, Math.max(2, x1 - x0) + 2, b.h + 2);
		ctx.lineWidth = 1;
		ctx.strokeStyle = this.colors.bg;
		ctx.strokeRect(x0 + 1, b.y + 1, Math.max(1, x1 - x0 - 2), b.h - 2);
	}

	laneOf(trackId, rel) {
		let best = 0;
		for (const dr of this.drawn) {
			if (dr.t.id !== trackId || dr.summary) continue;
			const d = dr.tile.data;
			for (let i = 0; i < d.n; i++) {
				const s = dr.tile.relStart + d.off[i];
				if (s <= rel && s + d.dur[i] >= rel && d.depth[i] > best && d.depth[i] < dr.t.lanes) best = d.depth[i];
			}
		}
		return best;
	}

	drawFlows(ctx) {
		const b = this.selRect();
		if (!b) return;
		ctx.lineWidth = 1.5;
		ctx.strokeStyle = this.colors.accent;
		ctx.fillStyle = this.colors.accent;
		for (const f of this.flows) {
			const row = this.rowOrGroupOfTrack(f.track);
			if (!row) continue;
			let ty = this.rowTop(row);
			if (row.type === 'track') ty += (f.lane ?? (f.lane = this.laneOf(f.track, f.rel))) * LANE_H + SLICE_H / 2 + 1;
			else ty += GROUP_H / 2;
			const tx = this.xOf(f.rel);
			const sx = f.dir === 'out' ? Math.min(b.x1, this.xOf(f.srcRel ?? this.sel.rel)) : b.x0;
			const sy = b.y + SLICE_H / 2;
			let ax, ay, bx, by;
			if (f.dir === 'out') { ax = sx; ay = sy; bx = tx; by = ty; } else { ax = tx; ay = ty; bx = sx; by = sy; }
			const dx = Math.max(30, Math.abs(bx - ax) / 2);
			ctx.beginPath();
			ctx.moveTo(ax, ay);
			ctx.bezierCurveTo(ax + dx, ay, bx - dx, by, bx, by);
			ctx.stroke();
			ctx.beginPath();
			ctx.moveTo(bx, by);
			ctx.lineTo(bx - 7, by - 4);
			ctx.lineTo(bx - 7, by + 4);
			ctx.closePath();
			ctx.fill();
			ctx.beginPath();
			ctx.arc(ax, ay, 2.5, 0, Math.PI * 2);
			ctx.fill();
		}
	}

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

	/* ---- hit testing ---------------------------------------------------- */

	hit(x, y) {
		if (x < GUTTER || x > GUTTER + this.PW || y < RULER_H) return null;
		const row = this.rowAtY(y);
		if (!row || row.type !== 'track') return row ? { row } : null;
		const t = row.t;
		const sy = this.rowTop(row);
		const r = this.res();
		const tm = this.tOf(x);
		if (t.counter) {
			let best = null;
			for (const dr of this.drawn) {
				if (dr.t.id !== t.id) continue;
				const d = dr.tile.data;
				for (let i = 0; i < d.n; i++) {
					const s = dr.tile.relStart + d.off[i];
					if (s <= tm && (!best || s > best.rel)) best = { rel: s, value: d.value[i], min: d.min?.[i], max: d.max?.[i] };
				}
			}
			return { row, counter: best };
		}
		const lane = Math.floor((y - sy - 1) / LANE_H);
		const tol = 2 * r;
		let best = null, bestD = Infinity;
		for (const dr of this.drawn) {
			if (dr.t.id !== t.id || dr.summary) continue;
			const tile = dr.tile, d = tile.data;
			for (let i = 0; i < d.n; i++) {
				if (d.depth[i] !== lane) continue;
				const s = tile.relStart + d.off[i], e = s + d.dur[i];
				// an instant's chevron is 4 tile buckets either side, or 4 px on a
				// stretched tile (drawn on screen, drawChevrons: as drawTileInto decides)
				const tl = (d.flags[i] & 128) || d.dur[i] === 0 ? Math.max(tol, 4 * (tile.res > STRETCH_MAX * r ? r : tile.res)) : tol;
				if (s - tl > tm || e + tl < tm) continue;
				const dist = tm < s ? s - tm : tm > e ? tm - e : 0;
				if (dist < bestD || (dist === bestD && best && d.dur[i] < best.dur)) {
					bestD = dist;
					best = {
						track: t.id, depth: lane, rel: s, dur: d.dur[i], name: d.name[i], count: d.count[i], flags: d.flags[i],
						abs: tile.absStart + BigInt(Math.round(d.off[i])),
					};
				}
			}
		}
		return { row, slice: best };
	}

	/* ---- selection, highlight, search hits ---------------------------------- */

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
		const sel = { track, depth: Number(d.depth) || 0, rel: Number(abs - this.T0), dur: Number(d.dur) || 0, name: null, nameText: d.name ?? '', count: 1, flags: d.unclosed ? 1 : 0, abs };
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

	/* ---- animation: W/A/S/D with acceleration and easing --------------------- */

	animate(dt) {
		const k = this.keys;
		const fast = k.has('ShiftLeft') || k.has('ShiftRight') ? 2.2 : 1;
		const zoomDir = (k.has('KeyW') ? 1 : 0) - (k.has('KeyS') ? 1 : 0);
		const panDir = (k.has('KeyD') ? 1 : 0) - (k.has('KeyA') ? 1 : 0);
		this.keyHeld.zoom = zoomDir ? this.keyHeld.zoom + dt : 0;
		this.keyHeld.pan = panDir ? this.keyHeld.pan + dt : 0;
		// speed grows the longer a key is held (zoom in ln-units/s, pan in px/s)
		const zTarget = zoomDir * fast * Math.min(5, 1.6 + this.keyHeld.zoom * 2.5);
		const pTarget = panDir * fast * Math.min(4000, 500 + this.keyHeld.pan * 2200);
		// held: follow the target at once; released: a short spring-like glide (~60 ms)
		const ease = 1 - Math.exp(-dt / 0.06);
		this.vel.zoom += (zTarget - this.vel.zoom) * (zoomDir ? 1 : ease);
		this.vel.pan += (pTarget - this.vel.pan) * (panDir ? Math.max(ease, 0.5) : ease);
		if (Math.abs(this.vel.zoom) < 0.02) this.vel.zoom = 0;
		if (Math.abs(this.vel.pan) < 10) this.vel.pan = 0;
		let moved = false;
		if (this.vel.zoom) {
			const x = this.mouse && this.mouse.x > GUTTER ? this.mouse.x : undefined;
			this.zoomAt(Math.exp(-this.vel.zoom * dt), x);
			moved = true;
		}
		if (this.vel.pan) {
			this.panPx(this.vel.pan * dt);
			moved = true;
		}
		return moved || zoomDir !== 0 || panDir !== 0;
	}

	/* ---- input ---------------------------------------------------------------- */

	_bind() {
		const ov = this.over;
		ov.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
		ov.addEventListener('mousedown', (e) => this.onDown(e));
		window.addEventListener('mousemove', (e) => this.onMove(e));
		window.addEventListener('mouseup', (e) => this.onUp(e));
		ov.addEventListener('mouseleave', () => { this.mouse = null; this.hover = null; this.gutterHover = null; this.tooltip.hidden = true; this.invalidate(false); });
		ov.addEventListener('dblclick', (e) => this.onDbl(e));
		ov.addEventListener('contextmenu', (e) => e.preventDefault());
		this.scroller.addEventListener('scroll', () => {
			if (Math.abs(this.scroller.scrollTop - this.scrollY) < 1) return;
			this.scrollY = this.scroller.scrollTop;
			this.invalidate(true);
			this.scheduleFetch();
		});
		this.mini.addEventListener('mousedown', (e) => this.onMiniDown(e));
		window.addEventListener('blur', () => { this.keys.clear(); });
		new ResizeObserver(() => { if (this.visible) this.resize(); }).observe(this.main);
		const mq = () => {
			const m = matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
			m.addEventListener('change', () => { this.resize(); mq(); }, { once: true });
		};
		mq();
	}

	local(e) {
		const r = this.over.getBoundingClientRect();
		return { x: e.clientX - r.left, y: e.clientY - r.top };
	}

	onWheel(e) {
		e.preventDefault();
		const p = this.local(e);
		const unit = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
		let dx = e.deltaX * unit, dy = e.deltaY * unit;
		if (p.x < GUTTER || e.altKey) {
			// over the pinned tracks: they scroll (when taller than their area)
			if (this.pinH && p.y >= RULER_H && p.y < RULER_H + this.pinH) this.pinScrollY += dy || dx;
			else this.scrollY += dy || dx;
			this.clampScroll();
			this.invalidate(true);
			this.scheduleFetch();
			return;
		}
		if (e.shiftKey && !dy && dx) { dy = dx; dx = 0; }
		if (Math.abs(dx) > Math.abs(dy) && !e.shiftKey && !e.ctrlKey) {
			this.panPx(dx);
			return;
		}
		const k = e.ctrlKey ? 0.0008 : e.shiftKey ? 0.008 : 0.0025;
		this.zoomAt(Math.exp(dy * k), p.x);
	}

	onDown(e) {
		const p = this.local(e);
		this.over.focus?.();
		if (p.x < GUTTER) {
			const row = this.rowAtY(p.y);
			if (row && row.type === 'group' && e.button === 0) this.toggleGroup(row.g);
			else if (row && row.type === 'track' && e.button === 0 && p.x > GUTTER - 24) { this.gutterHover = null; this.hideTrack(row.t.id); }
			else if (row && row.type === 'track' && e.button === 0 && p.x > GUTTER - 46) { this.gutterHover = null; this.togglePin(row.t.id); }
			else if (row && row.type === 'track' && e.button === 0 && this.hiddenLevelsAt(row, p.y)) this.showLane(row.t.id, row.t.deepest);
			return;
		}
		if (p.y < RULER_H && e.button === 0 && !e.shiftKey) {
			this.drag = { mode: 'measure', x0: p.x, y0: p.y, moved: false };
			return;
		}
		const pan = e.button === 1 || e.button === 2 || e.shiftKey;
		this.drag = { mode: pan ? 'pan' : 'press', pan, x0: p.x, y0: p.y, last: p.x, lastY: p.y, moved: false, button: e.button };
		e.preventDefault();
	}

	onMove(e) {
		if (!this.visible) return;
		const p = this.local(e);
		const d = this.drag;
		if (d) {
			if (Math.abs(p.x - d.x0) > 3 || Math.abs(p.y - d.y0) > 3) d.moved = true;
			if (d.mode === 'pan') {
				this.panPx(d.last - p.x);
				d.last = p.x;
				this.scrollY += d.lastY - p.y;
				d.lastY = p.y;
				this.clampScroll();
			} else if ((d.mode === 'press' || d.mode === 'area') && d.moved) {
				d.mode = 'area';
				this.setArea(d, p);
			} else if (d.mode === 'measure' && d.moved) {
				const a = this.tOf(Math.min(d.x0, p.x)), b = this.tOf(Math.max(d.x0, p.x));
				this.area = { s: a, e: b, tracks: null };
			}
			this.mouse = p;
			this.invalidate(false);
			return;
		}
		if (e.target !== this.over) return;
		const gh = p.x < GUTTER ? this.rowAtY(p.y) : null;
		const gRow = gh && gh.type === 'track' ? gh : null;
		if (gRow !== this.gutterHover) { this.gutterHover = gRow; this.invalidate(false); }
		const onButtons = gRow && p.x > GUTTER - 46;
		this.over.style.cursor = onButtons || (gRow && this.hiddenLevelsAt(gRow, p.y)) ? 'pointer' : '';
		this.over.title = gRow && p.x > GUTTER - 24 ? 'Hide this track' : onButtons ? (gRow.pin ? 'Unpin this track' : 'Pin this track to the top') : '';
		this.mouse = p;
		if (gh && !onButtons) { this.hover = null; this.gutterTooltip(gh, e); this.invalidate(false); return; }
		const h = this.hit(p.x, p.y);
		const prev = this.hover;
		this.hover = h && h.slice ? h.slice : null;
		this.updateTooltip(h, e);
		if (prev?.name !== this.hover?.name || prev?.rel !== this.hover?.rel) this.invalidate(false);
		else this.invalidate(false);
	}

	/* Is y on a track's "levels N–M hidden: show" note (labelTop + 30)? */
	hiddenLevelsAt(row, y) {
		const t = row.t;
		if (t.counter || t.deepest < t.lanes) return false;
		const ly = this.labelTop(row, this.rowTop(row));
		return Math.abs(y - (ly + 30)) <= 8;
	}

	setArea(d, p) {
		const a = this.tOf(Math.min(d.x0, p.x)), b = this.tOf(Math.max(d.x0, p.x));
		const y0 = Math.min(d.y0, p.y), y1 = Math.max(d.y0, p.y);
		const tracks = new Set();
		for (const row of this.visibleRows()) {
			const sy = this.rowTop(row);
			if (sy + row.h < y0 || sy > y1) continue;
			if (row.type === 'track') tracks.add(row.t.id);
			else if (row.g.collapsed) for (const t of row.vis) tracks.add(t.id);
		}
		this.area = { s: a, e: b, tracks };
	}

	onUp(e) {
		const d = this.drag;
		if (!d) return;
		this.drag = null;
		const p = this.local(e);
		if ((d.mode === 'area' || d.mode === 'measure') && this.area) {
			this.app.areaChanged(this.area);
			this.invalidate(false);
			return;
		}
		if (d.mode === 'measure' && !d.moved) { this.area = null; this.app.areaChanged(null); this.invalidate(false); return; }
		if (d.moved || d.mode === 'pan') { this.scheduleFetch(); return; }
		// a click
		const h = this.hit(p.x, p.y);
		if (h && h.slice) {
			if (h.slice.count > 1) { this.focusRange(h.slice.rel, h.slice.dur, true); return; }
			if (e.button === 1) { this.focusRange(h.slice.rel, h.slice.dur, true); return; }
			this.select(h.slice);
		} else {
			if (this.area) { this.area = null; this.app.areaChanged(null); }
			if (this.sel) this.select(null);
			this.invalidate(false);
		}
	}

	onDbl(e) {
		const p = this.local(e);
		const h = this.hit(p.x, p.y);
		if (h && h.slice) this.focusRange(h.slice.rel, h.slice.dur, true);
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

	/* Over a track name or a process header: the whole name (the gutter cuts long ones)
	 * and what the track is. */
	gutterTooltip(row, e) {
		const esc = escapeHtml;
		let html;
		if (row.type === 'group') {
			const p = row.g.proc;
			const sub = [p.pid !== undefined ? `pid ${p.pid}` : '', p.rank >= 0 ? `rank ${p.rank}` : '', p.host || '', `${row.vis.length} track${row.vis.length === 1 ? '' : 's'}`].filter(Boolean).join(' · ');
			html = `<b class="bidi">${esc(this.groupLabel(row.g))}</b><br><span class="muted">${esc(sub)} · click to ${row.g.collapsed ? 'expand' : 'collapse'}</span>`;
		} else {
			const t = row.t;
			const p = row.g ? this.groupLabel(row.g) : '';
			const what = [KIND_LABEL[t.kind] || t.kind, t.tid !== undefined && t.tid !== null ? `tid ${t.tid}` : '', t.slices ? `${fmtInt(t.slices)} slices` : '',
				!t.counter && t.deepest > 0 ? `${t.deepest + 1} levels` : ''].filter(Boolean).join(' · ');
			html = `<b class="bidi">${esc(t.name)}</b>${p ? `<br><span class="bidi">${esc(p)}</span>` : ''}<br><span class="muted">${esc(what)}</span>`;
		}
		this.tooltip.innerHTML = html;
		this.placeTooltip(e);
	}

	placeTooltip(e) {
		const tt = this.tooltip;
		tt.hidden = false;
		const r = this.main.getBoundingClientRect();
		let x = e.clientX - r.left + 14, y = e.clientY - r.top + 14;
		const tw = tt.offsetWidth, th = tt.offsetHeight;
		if (x + tw > this.W - 4) x = e.clientX - r.left - tw - 10;
		if (y + th > this.H - 4) y = e.clientY - r.top - th - 10;
		tt.style.transform = `translate(${Math.max(0, x)}px, ${Math.max(0, y)}px)`;
	}

	updateTooltip(h, e) {
		const tt = this.tooltip;
		if (!h || (!h.slice && !h.counter)) { tt.hidden = true; return; }
		let html;
		if (h.slice) {
			const s = h.slice;
			// (names run to thousands of characters: the drawer has the whole of it)
			let nm = s.nameText ?? this.nameText(s.name);
			if (nm.length > 300) nm = `${nm.slice(0, 299)}…`;
			const name = escapeHtml(nm || '(no name)');
			html = `<b>${name}</b><br>${fmtDur(s.dur)}`;
			if (s.count > 1) html = `<b>${fmtInt(s.count)} events</b> merged (longest: <span class="bidi">${name}</span>)<br>${fmtDur(s.dur)} span · click to zoom in`;
			if (s.flags & 1) html += ' <i>(Did Not Finish)</i>';
			html += `<br><span class="muted"><span class="bidi">${escapeHtml(h.row.t.name)}</span> · at ${fmtOffset(s.rel)}</span>`;
		} else {
			const c = h.counter;
			html = `<b>${escapeHtml(h.row.t.name)}</b><br>${this.fmtValue(c.value)}`;
			if (c.min !== undefined && c.max !== undefined && c.min !== c.max) html += `<br><span class="muted">min ${this.fmtValue(c.min)} · max ${this.fmtValue(c.max)}</span>`;
			html += `<br><span class="muted">at ${fmtOffset(c.rel)}</span>`;
		}
		tt.innerHTML = html;
		this.placeTooltip(e);
	}

	/* Keyboard, by KeyboardEvent.code; returns true when handled. */
	keyDown(e) {
		const c = e.code;
		if (['KeyW', 'KeyA', 'KeyS', 'KeyD'].includes(c) && !e.ctrlKey && !e.metaKey && !e.altKey) {
			if (!this.keys.has(c)) { this.keys.add(c); this.invalidate(true); }
			if (e.shiftKey) this.keys.add('ShiftLeft');
			return true;
		}
		if (c === 'ShiftLeft' || c === 'ShiftRight') { this.keys.add(c); return false; }
		if (e.ctrlKey || e.metaKey || e.altKey) return false;
		switch (c) {
			case 'KeyF': this.keyF(); return true;
			case 'Digit0': case 'Numpad0': this.fitAll(); return true;
			case 'Escape':
				if (this.area) { this.area = null; this.app.areaChanged(null); }
				if (this.sel) this.select(null);
				this.invalidate(false);
				return true;
			case 'Backspace': this.undoZoom(); return true;
			case 'ArrowUp': this.scrollY -= 60; this.clampScroll(); this.invalidate(true); this.scheduleFetch(); return true;
			case 'ArrowDown': this.scrollY += 60; this.clampScroll(); this.invalidate(true); this.scheduleFetch(); return true;
			case 'ArrowLeft': this.panPx(-this.PW * 0.1); return true;
			case 'ArrowRight': this.panPx(this.PW * 0.1); return true;
			case 'Period': this.stepSlice(1); return true;
			case 'Comma': this.stepSlice(-1); return true;
			case 'BracketRight': this.followFlow('out'); return true;
			case 'BracketLeft': this.followFlow('in'); return true;
			case 'KeyM': if (this.sel) { this.area = { s: this.sel.rel, e: this.sel.rel + this.sel.dur, tracks: new Set([this.sel.track]) }; this.app.areaChanged(this.area); this.invalidate(false); } return true;
			default: return false;
		}
	}

	keyUp(e) {
		this.keys.delete(e.code);
		if (e.code === 'ShiftLeft' || e.code === 'ShiftRight') { this.keys.delete('ShiftLeft'); this.keys.delete('ShiftRight'); }
		this.invalidate(true);
	}

	/* , and . : previous/next slice at the selection's depth on its track, from the
	 * server (slices merged into a block at this zoom are not skipped). The selection's
	 * seq (its ordinal among the slices starting with it, from the details) makes the
	 * step visit each of several slices that start together. */
	async stepSlice(dir) {
		const s = this.sel;
		if (!s) return;
		const q = { track: s.track, ts: s.abs.toString(), depth: s.depth, nav: dir > 0 ? 'next' : 'prev' };
		if (s.seq !== undefined) q.seq = s.seq;
		let d;
		try {
			d = await getJSON('api/slice', q, { exact: true, quiet: true });
		} catch {
			return; // none on that side
		}
		if (this.sel !== s) return;
		const sel = this.selOf(d, s.track);
		this.reveal(sel, false);
		this.select(sel);
	}

	async followFlow(dir) {
		const f = this.flows.find((x) => x.dir === dir);
		if (!f) return;
		await this.selectAt(f.track, f.rel);
	}

	/* ---- visibility and state --------------------------------------------- */

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
