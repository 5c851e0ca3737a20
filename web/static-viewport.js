// SPDX-License-Identifier: MIT
// GET /api/viewport in a static export, as src/server/api_viewport.c answers it from the
// events (lod 0): the parameters read and refused as the server does; per track and
// depth, runs of events shorter than a bucket with gaps shorter than a bucket folded into
// counted blocks, events of a bucket or more as themselves, instants merged only with
// instants; counters one sample per bucket (last value, min, max), from the one in force
// at t0. The server answers coarse windows of big tracks from its stored summary levels
// instead (docs/ui.md "Static export").
// Methods of StaticSession (static-session.js; staticapi.js mixes them in, `this` is the
// session). Loaded by the export's worker too: plain declarations only, each top-level
// name once across the modules staticapi.js imports.
import { kindName, EVF_SUMMARY } from './kinds.js';
import { big } from './bigjson.js';
import { present, queryInt, queryIdList, I64_MIN, I64_MAX } from './query.js';
import { fail, firstReaching } from './static-session.js';

export class StaticViewport {
	viewport(q) {
		// checked as the server checks them (src/server/api_viewport.c), in its order, with its texts
		const widthB = queryInt(q.width, 1n, 10000n, 1000n);
		if (widthB === null) throw fail(400, 'width must be an integer in 1..10000');
		const relB = queryInt(q.rel, 0n, 1n, 0n);
		if (relB === null) throw fail(400, 'rel must be 0 or 1');
		const t0B = queryInt(q.t0, I64_MIN, I64_MAX, big(this.session.start_ns));
		const t1B = queryInt(q.t1, I64_MIN, I64_MAX, big(this.session.end_ns));
		if (t0B === null || t1B === null) throw fail(400, 't0 and t1 must be integer nanoseconds');
		if (t1B < t0B) throw fail(400, 't1 must not be before t0');
		let ids = [...this.trackInfo.keys()].sort((a, b) => a - b);
		if (present(q.tracks) && String(q.tracks).length) {
			const l = queryIdList(q.tracks, (id) => this.trackInfo.has(id), 4096);
			if (l.error === 'unknown') throw fail(404, 'no such track');
			if (l.error === 'too many') throw fail(400, 'too many track ids');
			if (l.error) throw fail(400, 'tracks must be a comma-separated list of track ids');
			ids = l.ids;
		}
		const t0 = Number(t0B - this.T0), t1 = Number(t1B - this.T0), width = Number(widthB), rel = relB === 1n;
		const span = Math.max(1, t1 - t0);
		const res = Math.max(1, Math.floor(span / width));
		const used = new Set();
		const out = [];
		for (const id of ids) {
			const info = this.trackInfo.get(id);
			const t = this.tracks.get(id);
			const kind = kindName(info.kind);
			if (kind === 'counter') { out.push(this.counterWindow(id, t, t0, t1, res)); continue; }
			out.push(this.sliceWindow(id, kind, t, t0, t1, res, used));
		}
		const strings = {};
		for (const id of used) strings[id] = this.str(id);
		// times from t0 with rel=1, else absolute (BigInt: exact)
		if (!rel) for (const o of out) o.ts = o.ts.map((v) => t0B + BigInt(Math.round(v)));
		// the window answered (a point: one nanosecond)
		const w1 = t1B !== t0B ? t1B : t0B === I64_MAX ? t0B : t0B + 1n, w0 = w1 !== t0B ? t0B : t0B - 1n;
		return { t0: w0, t1: w1, resolution_ns: res, ...(rel ? { rel: 1 } : {}), tracks: out, strings };
	}

	counterWindow(id, t, t0, t1, res) {
		const o = { id, kind: 'counter', lod: 0, ts: [], value: [], min: [], max: [] };
		if (!t || !t.n) return o;
		let lo = 0, hi = t.n;
		while (lo < hi) { const m = (lo + hi) >> 1; if (t.ts[m] < t0) lo = m + 1; else hi = m; }
		let i = lo > 0 ? lo - 1 : 0; // the sample in force at t0
		let bucket = null;
		for (; i < t.n && t.ts[i] <= t1; i++) {
			const b = Math.floor((t.ts[i] - t0) / res);
			const v = t.value[i];
			if (bucket === b) {
				const k = o.value.length - 1;
				o.value[k] = v;
				if (v < o.min[k]) o.min[k] = v;
				if (v > o.max[k]) o.max[k] = v;
				continue;
			}
			bucket = b;
			o.ts.push(t.ts[i] - t0);
			o.value.push(v);
			o.min.push(v);
			o.max.push(v);
		}
		return o;
	}

	/*
	 * The server's rule: per depth, runs of events shorter than a bucket separated by
	 * gaps shorter than a bucket fold into one block (extent, count, the longest
	 * event's name); an event of a bucket or more is returned as itself; instants
	 * merge only with instants.
	 */
	sliceWindow(id, kind, t, t0, t1, res, used) {
		const o = { id, kind, lod: 0, ts: [], dur: [], depth: [], name: [], count: [], flags: [], ekind: [], cat: [] };
		if (!t || !t.n) return o;
		const items = [];
		const emit = (s, d, dep, i, count, flags, ek) => {
			const name = t.name[i], cat = t.cat ? t.cat[i] : 0;
			items.push({ s, d, dep, name, cat, count, flags, ek });
			used.add(name);
			used.add(cat);
		};
		for (const [dep, p] of this.index(t)) {
			let run = null;
			const flush = () => {
				if (!run) return;
				if (run.count === 1) {
					const i = run.first;
					emit(t.ts[i], t.dur[i], dep, i, 1, t.flags ? t.flags[i] : 0, run.ek);
				} else {
					emit(run.s, run.e - run.s, dep, run.longest, run.count, EVF_SUMMARY, run.ek);
				}
				run = null;
			};
			for (let j = firstReaching(p, t0); j < p.n; j++) {
				const i = p.ids[j];
				const s = t.ts[i];
				if (s > t1) break;
				const d = t.dur[i];
				if (s + d < t0) continue;
				const ek = t.ekind ? t.ekind[i] : 0;
				if (d >= res) {
					flush();
					emit(s, d, dep, i, 1, t.flags ? t.flags[i] : 0, ek);
					continue;
				}
				if (run && run.ek === ek && s - run.e < res) {
					run.count++;
					if (s + d > run.e) run.e = s + d;
					if (d > t.dur[run.longest]) run.longest = i;
					continue;
				}
				flush();
				run = { s, e: s + d, count: 1, first: i, longest: i, ek };
			}
			flush();
		}
		items.sort((a, b) => a.s - b.s || a.dep - b.dep);
		for (const it of items) {
			o.ts.push(it.s - t0);
			o.dur.push(it.d);
			o.depth.push(it.dep);
			o.name.push(it.name);
			o.count.push(it.count);
			o.flags.push(it.flags);
			o.ekind.push(it.ek);
			o.cat.push(it.cat);
		}
		return o;
	}
}
