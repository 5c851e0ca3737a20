// SPDX-License-Identifier: MIT
// GET /api/stats in a static export, as src/server/api_stats.c (src/analyze/stats.c)
// answers it from the events: slices grouped by name, category or track; count, total,
// self time (a counted parent loses its children's time), mean, min, max and exact
// percentiles; a window, its slices clipped to it or not; derived tracks left out unless
// asked for. The server's approximate percentiles of stored summaries have no
// counterpart: an export's are exact.
// Methods of StaticSession (static-session.js; staticapi.js mixes them in, `this` is the
// session). Loaded by the export's worker too: plain declarations only, each top-level
// name once across the modules staticapi.js imports.
import { EV_INSTANT } from './kinds.js';
import { fail } from './static-session.js';

export class StaticStats {
	stats(q) {
		const by = q.by || 'name';
		if (!['name', 'category', 'track'].includes(by)) throw fail(400, 'by must be name, category or track');
		const hasWin = (q.t0 !== undefined && q.t0 !== '') || (q.t1 !== undefined && q.t1 !== '');
		const w0 = this.rel(q.t0, -Infinity), w1 = this.rel(q.t1, Infinity);
		if (w1 < w0) throw fail(400, 't1 is before t0');
		const clip = hasWin && String(q.clip ?? '0') === '1';
		const top = q.top === undefined || q.top === '' ? 0 : +q.top;
		const groups = new Map();
		let slices = 0, totalAll = 0;
		for (const tid of this.trackIds(q.track, false)) {
			const info = this.trackInfo.get(tid);
			if (!info) throw fail(404, `no track ${tid}`);
			const t = this.tracks.get(tid);
			if (!t || t.counter || !t.n) continue;
			if (t.derived && (q.track === undefined || q.track === '')) continue; // repeats other tracks' work: counted there
			const stack = t.stack;
			const n = t.n;
			const cd = new Float64Array(n);  // (clipped) duration of counted events
			const self = new Float64Array(n);
			const open = [];                  // per depth: the last event seen
			const counted = new Uint8Array(n);
			for (let i = 0; i < n; i++) {
				if (t.ekind && t.ekind[i] === EV_INSTANT) continue;
				const s = t.ts[i], e = s + t.dur[i];
				const dep = t.depth[i];
				open[dep] = i;
				open.length = dep + 1;
				if (stack && dep > 0) {
					// A counted parent loses its child's time inside it: all of it without
					// clipping, wherever the child lies (analyze/stats.c); inside the
					// window when clipping.
					const p = open[dep - 1];
					if (p !== undefined && counted[p] && t.ts[p] <= s) {
						let a = Math.max(s, t.ts[p]), b = Math.min(e, t.ts[p] + t.dur[p]);
						if (clip) { a = Math.max(a, w0); b = Math.min(b, w1); }
						if (b > a) self[p] -= b - a;
					}
				}
				if (e < w0 || s > w1) continue;
				const d = clip ? Math.max(0, Math.min(e, w1) - Math.max(s, w0)) : t.dur[i];
				cd[i] = d;
				self[i] += d;
				counted[i] = 1;
			}
			for (let i = 0; i < n; i++) {
				if (!counted[i]) continue;
				let key, name;
				if (by === 'name') { key = t.name[i]; name = this.str(key); }
				else if (by === 'category') { key = t.cat ? t.cat[i] : 0; name = this.str(key); }
				else { key = tid; name = String(info.name ?? `track ${tid}`); }
				let g = groups.get(key);
				if (!g) { g = { name, track_id: by === 'track' ? tid : undefined, count: 0, total: 0, self: 0, durs: [] }; groups.set(key, g); }
				g.count++;
				g.total += cd[i];
				g.self += Math.max(0, self[i]);
				g.durs.push(cd[i]);
				slices++;
				totalAll += cd[i];
			}
		}
		const rows = [];
		for (const g of groups.values()) {
			const d = Float64Array.from(g.durs).sort();
			const rank = (p) => d[Math.min(d.length - 1, Math.max(0, Math.ceil(p * d.length) - 1))];
			const row = {
				name: g.name, count: g.count, total_ns: g.total, self_ns: g.self, mean_ns: g.count ? g.total / g.count : 0,
				min_ns: d[0], max_ns: d[d.length - 1], p50_ns: rank(0.5), p99_ns: rank(0.99),
				exact: true, share: totalAll ? (g.total / totalAll) * 100 : 0,
			};
			if (g.track_id !== undefined) row.track_id = g.track_id;
			rows.push(row);
		}
		rows.sort((a, b) => b.total_ns - a.total_ns || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
		// (every group's percentiles exact: the server's approximate ones come from the
		// stored summaries of big tracks, which an export does not carry)
		return { group_by: by, slices, total_ns: totalAll, percentile_error: 0, stored_tracks: 0, groups: rows.length, rows: top > 0 ? rows.slice(0, top) : rows };
	}
}
