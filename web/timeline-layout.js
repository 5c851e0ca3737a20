// SPDX-License-Identifier: MIT
// The Timeline's layout: tracks from the session summary (kinds, lanes, heights),
// grouped by process and, in a job, by rank; groups collapsed or open; tracks pinned
// to the top, hidden or filtered; the rows they make (their y and height, in the
// scrolling area or the pinned one) and the scroll positions that show them.
// Methods of Timeline (timeline.js mixes them in; `this` is the Timeline). State:
// tracks, procs, groups, rankGroups, steps, span, rows, pinRows, pinned, pinH,
// pinContentH, contentH, scrollY, pinScrollY, filter, hiddenTracks, layoutGen.
import { big } from './api.js';
import { kindName, KIND_ORDER } from './kinds.js';
import { distinctStarts } from './textfit.js';

// geometry (css px)
export const GUTTER = 220;      // the track names, left of the plot
export const RULER_H = 32;      // the time ruler and steps band, above the tracks
export const SCROLLBAR_W = 14;
export const LANE_H = 18;       // one level of a track's stack
export const SLICE_H = 16;
export const GROUP_H = 24;      // a process (or rank) header
export const COUNTER_H = 46;
export const TRACK_PAD = 4;
export const SUMMARY_H = 12;    // a collapsed group's strip of its tracks
export const MAX_LANES = 40;    // levels shown before "levels N–M hidden: show"
export const MAX_SUMMARY_TRACKS = 16; // tracks drawn in a collapsed group's strip
export const MIN_SPAN = 20;     // ns across the plot: the deepest zoom

/*
 * The time origin and end (BigInt ns) of a session: its events' span joined with
 * its steps' (a live session's untraced steps have no events, but are shown).
 */
export function sessionExtent(s) {
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

export class TimelineLayout {
	/*
	 * Tracks, groups and steps from a session summary. Track objects (with their
	 * lanes, counter scales, pins) and the groups' collapsed state survive a rebuild,
	 * so a live session can grow in place.
	 */
	buildTracks(s) {
		const end = sessionExtent(s).end;
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

	/* Where a track's name is drawn: its top, or, while its top is scrolled away and
	 * the rest of it is in view, the top of the area (a sticky name). */
	labelTop(row, sy) {
		if (row.type !== 'track') return sy;
		const areaTop = row.pin ? RULER_H : RULER_H + this.pinH;
		return Math.max(sy, Math.min(areaTop, sy + row.h - LANE_H - 2));
	}
}
