// SPDX-License-Identifier: MIT
// GET /api/slice in a static export, as src/server/api_slice.c answers it: the slice at a
// time and depth, the deepest one there, the next or previous at its depth, the seq-th of
// those starting together; its self time and children (on nesting tracks), ancestors,
// step, flows bound to it (a flow end binds to the deepest slice around it), arguments
// and the graph nodes it joins (write_graph's keys and order).
// Methods of StaticSession (static-session.js; staticapi.js mixes them in, `this` is the
// session). Loaded by the export's worker too: plain declarations only, each top-level
// name once across the modules staticapi.js imports.
import { kindName, EV_INSTANT, EVF_UNCLOSED } from './kinds.js';
import { big } from './bigjson.js';
import { present, queryInt, I64_MIN, I64_MAX, U32_MAX } from './query.js';
import { fail, firstReaching } from './static-session.js';

/* First position in a depth list whose event starts at or after `at` (after it: `after`). */
function startBound(t, p, at, after) {
	let lo = 0, hi = p.n;
	while (lo < hi) { const m = (lo + hi) >> 1; const s = t.ts[p.ids[m]]; if (s < at || (after && s === at)) lo = m + 1; else hi = m; }
	return lo;
}

export class StaticSlice {
	/*
	 * Index of the latest-starting event at `depth` whose [ts, ts+dur] holds `at` (of
	 * several starting together, the last), or -1; with `slices`, instants are passed over.
	 */
	eventAt(t, depth, at, slices = false) {
		const p = this.index(t).get(depth);
		if (!p) return -1;
		let lo = 0, hi = p.n;
		while (lo < hi) { const m = (lo + hi) >> 1; if (t.ts[p.ids[m]] <= at) lo = m + 1; else hi = m; }
		for (let j = lo - 1; j >= 0; j--) {
			if (p.maxEnd[j] < at) break;
			const i = p.ids[j];
			if (t.ts[i] + t.dur[i] >= at && !(slices && t.ekind && t.ekind[i] === EV_INSTANT)) return i;
		}
		return -1;
	}

	/*
	 * The deepest slice of track `tid` enclosing `at`, or -1: where a flow end at `at`
	 * binds, as on the server (flows bind to slices, never to instants).
	 */
	deepestAt(tid, at) {
		const t = this.tracks.get(tid);
		if (!t || t.counter) return -1;
		this.index(t);
		for (let d = t.maxDepth; d >= 0; d--) {
			const i = this.eventAt(t, d, at, true);
			if (i >= 0) return i;
		}
		return -1;
	}

	/*
	 * Slices at a depth are ordered by start, then by the order of the data (the store's)
	 * among those starting together; `seq` is the ordinal in such a run (as the server).
	 * Index of the first event at `depth` after (at, seq) (dir 1; without seq, after every
	 * one starting at `at`) or the last before it (-1; without seq, before them all), or -1.
	 */
	stepAt(t, depth, at, dir, seq) {
		const p = this.index(t).get(depth);
		if (!p) return -1;
		const lo = startBound(t, p, at, false), hi = startBound(t, p, at, true);
		if (dir > 0) {
			const pos = seq === null ? hi : Math.min(lo + seq + 1, hi);
			return pos < p.n ? p.ids[pos] : -1;
		}
		const pos = (seq === null ? lo : Math.min(lo + seq, hi)) - 1;
		return pos >= 0 ? p.ids[pos] : -1;
	}

	/* Index of the seq-th event at `depth` starting at `at`, or -1. */
	nthAt(t, depth, at, seq) {
		const p = this.index(t).get(depth);
		if (!p) return -1;
		const lo = startBound(t, p, at, false), hi = startBound(t, p, at, true);
		return seq < hi - lo ? p.ids[lo + seq] : -1;
	}

	/* The seq of event i: its ordinal among the events of its depth starting when it starts. */
	seqOf(t, i) {
		const p = this.index(t).get(t.depth[i]);
		let lo = 0, hi = p.n;
		while (lo < hi) { const m = (lo + hi) >> 1; if (p.ids[m] < i) lo = m + 1; else hi = m; } // ids ascend
		return lo - startBound(t, p, t.ts[i], false);
	}

	/*
	 * Direct children of event i and their clipped union, as the server counts them: on
	 * nesting tracks only (elsewhere depth is a lane), slices (not instants) one depth
	 * below that start inside it and overlap it for more than 0 ns (so neither a
	 * zero-duration slice nor the next sibling's child starting where it ends).
	 */
	children(t, i) {
		let n = 0, covered = 0, reach = -Infinity;
		if (!t.stack || (t.ekind && t.ekind[i] === EV_INSTANT)) return { n, covered };
		const p = this.index(t).get(t.depth[i] + 1);
		const s = t.ts[i], e = s + t.dur[i];
		if (!p) return { n, covered };
		for (let j = firstReaching(p, s); j < p.n; j++) {
			const c = p.ids[j];
			const cs = t.ts[c];
			if (cs > e) break;
			if (cs < s || (t.ekind && t.ekind[c] === EV_INSTANT)) continue;
			const b = Math.min(cs + t.dur[c], e);
			if (b <= cs) continue;
			n++;
			const a = Math.max(cs, reach);
			if (b > a) covered += b - a;
			if (b > reach) reach = b;
		}
		return { n, covered };
	}

	// The step holding `at` on the process, as the server's step_at (src/server/api_slice.c):
	// [start, start + dur), a step of the process before a global one.
	stepRowOf(procId, at) {
		let best = null;
		for (const st of this.session.step_list || []) {
			const global = st.process === null || st.process === undefined;
			if (!global && st.process !== procId) continue;
			const s = Number(big(st.start_ns) - this.T0);
			if (at < s || at >= s + Number(st.dur_ns || 0)) continue;
			if (!best || ((best.process === null || best.process === undefined) && !global)) best = st;
		}
		return best;
	}

	stepOf(procId, at) {
		const st = this.stepRowOf(procId, at);
		return st ? st.index : null;
	}

	flowIndex() {
		if (this.byTrack) return this.byTrack;
		const m = new Map();
		const add = (tid, key, f) => {
			let e = m.get(tid);
			if (!e) { e = { src: [], dst: [] }; m.set(tid, e); }
			e[key].push(f);
		};
		for (const f of this.flows) {
			if (f.src) add(f.src.track, 'src', f);
			if (f.dst) add(f.dst.track, 'dst', f);
		}
		// by the end's time, then the session's flow order, as the server lists them (a
		// stable sort); so past 1000 flows on a slice the two list the same ones
		for (const e of m.values()) {
			e.src.sort((a, b) => a.src.ts - b.src.ts);
			e.dst.sort((a, b) => a.dst.ts - b.dst.ts);
		}
		this.byTrack = m;
		return m;
	}

	slice(q) {
		// checked as the server checks them (src/server/api_slice.c), in its order, with its texts
		if (!present(q.track) || !present(q.ts)) throw fail(400, 'track and ts are required');
		const track = queryInt(q.track, 0n, U32_MAX - 1n, 0n), ts = queryInt(q.ts, I64_MIN, I64_MAX, 0n);
		const depthB = queryInt(q.depth, 0n, U32_MAX - 1n, 0n);
		if (track === null || ts === null || depthB === null) throw fail(400, 'track, ts and depth must be integers');
		const deepestB = queryInt(q.deepest, 0n, 1n, 0n);
		if (deepestB === null) throw fail(400, 'deepest must be 0 or 1');
		const seqB = queryInt(q.seq, 0n, I64_MAX, -1n);
		if (seqB === null) throw fail(400, 'seq must be a non-negative integer');
		const nav = present(q.nav) ? String(q.nav) : null;
		if (nav !== null && nav !== 'next' && nav !== 'prev') throw fail(400, 'nav must be next or prev');
		const deepest = deepestB === 1n, seq = seqB < 0n ? null : Number(seqB);
		if (deepest && nav !== null) throw fail(400, 'deepest=1 and nav exclude each other');
		if (deepest && seq !== null) throw fail(400, 'deepest=1 and seq exclude each other');
		const tid = Number(track), depth = Number(depthB);
		const info = this.trackInfo.get(tid);
		if (!info) throw fail(404, 'no such track');
		const t = this.tracks.get(tid);
		const missing = nav === 'next' ? 'no later slice at this depth' : nav === 'prev' ? 'no earlier slice at this depth' : 'no slice at this time and depth';
		if (!t || t.counter) throw fail(404, missing);
		const at = Number(ts - this.T0);
		// as the server: the deepest slice containing ts, the next / previous at depth, the seq-th
		// starting at ts or the one at depth containing ts
		const i = deepest ? this.deepestAt(tid, at) : nav ? this.stepAt(t, depth, at, nav === 'next' ? 1 : -1, seq)
			: seq !== null ? this.nthAt(t, depth, at, seq) : this.eventAt(t, depth, at);
		if (i < 0) throw fail(404, missing);
		const s = t.ts[i], dur = t.dur[i];
		const stack = t.stack;
		const ancestors = [];
		for (let d = 0; stack && d < t.depth[i] && d < 1024; d++) {
			const a = this.eventAt(t, d, s);
			if (a >= 0 && t.ts[a] + t.dur[a] >= s + dur) ancestors.push({ name: this.str(t.name[a]), ts: this.abs(t.ts[a]), dur: t.dur[a], depth: d });
		}
		const ch = this.children(t, i);
		const proc = this.procs.get(info.process);
		const flows = this.flowIndex().get(tid) || { src: [], dst: [] };
		const bound = (end) => end.ts >= s && end.ts <= s + dur && this.deepestAt(tid, end.ts) === i;
		const flowItem = (f, other) => ({
			flow_id: f.id, name: this.str(f.name), cat: this.str(f.cat),
			track: other ? other.track : null, ts: other ? this.abs(other.ts) : null, unmatched: !f.src || !f.dst,
		});
		const out = flows.src.filter((f) => bound(f.src)).slice(0, 1000).map((f) => flowItem(f, f.dst));
		const inn = flows.dst.filter((f) => bound(f.dst)).slice(0, 1000).map((f) => flowItem(f, f.src));
		return {
			name: this.str(t.name[i]), cat: t.cat ? this.str(t.cat[i]) : '',
			kind: t.ekind && t.ekind[i] === EV_INSTANT ? 'instant' : 'slice',
			ts: this.abs(s), dur, depth: t.depth[i], seq: this.seqOf(t, i),
			self_ns: stack ? Math.max(0, dur - ch.covered) : dur,
			children: ch.n,
			unclosed: !!(t.flags && (t.flags[i] & EVF_UNCLOSED)),
			ancestors,
			track: { id: tid, name: info.name ?? '', kind: kindName(info.kind) },
			process: proc ? { id: proc.id, name: proc.name ?? '', pid: proc.pid ?? null, rank: proc.rank ?? -1 } : null,
			args: this.argsOf(t, i) || {},
			step: this.stepOf(info.process, s),
			flows_out: out,
			flows_in: inn,
			...(this.graphIndex() ? { graph: this.graphOf(this.str(t.name[i]), this.argsOf(t, i), this.stepRowOf(info.process, s)) } : {}),
			...(this.graphTruncated ? { graph_truncated: this.graphTruncated } : {}),
		};
	}

	// The graph nodes a slice joins, by the server's keys in its order (src/server/api_slice.c
	// write_graph): the `node` arg, `long_name` and `tf_op` without ":Op", the `name` arg;
	// only with none of them, the slice's name, then without ":Op".
	graphOf(name, args, step) {
		const a = args && typeof args === 'object' ? args : {};
		const str = (v) => (typeof v === 'string' && v ? v : null);
		const nodePart = (p) => {
			const base = p.lastIndexOf('/') + 1, colon = p.lastIndexOf(':');
			return colon >= base && colon > 0 ? p.slice(0, colon) : p;
		};
		const keys = [];
		if (str(a.node)) keys.push(a.node);
		if (str(a.long_name)) keys.push(nodePart(a.long_name));
		if (str(a.tf_op)) keys.push(nodePart(a.tf_op));
		if (str(a.name)) keys.push(a.name);
		if (!keys.length && str(name)) { keys.push(name); if (nodePart(name) !== name) keys.push(nodePart(name)); }
		// the graphs the importer linked to the slice's step (graph_steps) first, as the server
		const own = (g) => !!step && present(g.step_start_ns) &&
			String(big(g.step_start_ns)) === String(big(step.start_ns)) &&
			(!present(g.step_process) || g.step_process === step.process);
		for (const k of keys) {
			const rows = k && !k.includes('\0') && new TextEncoder().encode(k).length < 1024 ? this.graphRowsOf(k) : null;
			if (rows && rows.length) return step ? [...rows.filter(own), ...rows.filter((g) => !own(g))].slice(0, 16) : rows.slice(0, 16);
		}
		return [];
	}
}
