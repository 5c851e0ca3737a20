// SPDX-License-Identifier: MIT
// A static export's session, loaded from its inlined data (staticapi.js parses it): the
// tracks' events as typed arrays sorted by (ts, depth), per-depth indexes of them, the
// strings, flows, graph nodes, the precomputed advice and tfprof views; and the answer to
// GET PATH (the endpoints' dispatch). The endpoints that mirror the server's are methods
// of their own files, as in src/server/: static-viewport.js (api_viewport.c),
// static-slice.js (api_slice.c), static-search.js (api_search.c), static-stats.js
// (api_stats.c); staticapi.js mixes them in. Loaded by the export's worker too: plain
// declarations only, each top-level name once across the modules staticapi.js imports.
import { numbers } from './tiledata.js';
import { kindName, STACK_KINDS } from './kinds.js';
import { big, parseExact } from './bigjson.js';
import { present } from './query.js';

/*
 * A value of DATA that the exporter wrote as its JSON text (a string where a number or
 * an object belongs) because it holds an integer beyond 2^53: parsed keeping such
 * integers exact (BigInt), as the served UI reads the server's answers. Anything else
 * as it is. `what` names the value in the error a damaged text gives.
 */
function exactText(v, what) {
	if (typeof v !== 'string') return v;
	try { return parseExact(v); } catch (e) { throw fail(500, `the inlined session data is damaged: ${what} is not JSON text (${e.message})`); }
}

export function fail(status, message) {
	const e = new Error(message);
	e.status = status;
	return e;
}

/* A track's array `what` as a typed array of n numbers (null when absent); a length
 * other than n is an error. */
function numArray(a, n, what, id, Type = Float64Array) {
	if (a === undefined || a === null) return null;
	if (!Array.isArray(a) || a.length !== n) throw new Error(`track ${id}: "${what}" has ${Array.isArray(a) ? a.length : 'no'} items, "ts" has ${n}`);
	return numbers(a, n, Type);
}

/* Reorder the track's arrays by (ts, depth) when the producer did not sort them. */
function ensureSorted(t) {
	const n = t.n;
	let sorted = true;
	for (let i = 1; i < n; i++) {
		if (t.ts[i] < t.ts[i - 1] || (t.ts[i] === t.ts[i - 1] && t.depth && t.depth[i] < t.depth[i - 1])) { sorted = false; break; }
	}
	if (sorted) return;
	const order = Array.from({ length: n }, (_, i) => i);
	order.sort((a, b) => t.ts[a] - t.ts[b] || (t.depth ? t.depth[a] - t.depth[b] : 0) || a - b);
	for (const k of ['ts', 'dur', 'depth', 'name', 'cat', 'flags', 'ekind', 'value']) {
		const a = t[k];
		if (!a) continue;
		const b = new a.constructor(n);
		for (let i = 0; i < n; i++) b[i] = a[order[i]];
		t[k] = b;
	}
	if (t.args) t.args = order.map((i) => t.args[i]);
}

/* First position in a depth list whose running max end reaches t. */
export function firstReaching(p, t) {
	let lo = 0, hi = p.n;
	while (lo < hi) { const m = (lo + hi) >> 1; if (p.maxEnd[m] < t) lo = m + 1; else hi = m; }
	return lo;
}

export class StaticSession {
	constructor(data, error) {
		this.error = error;
		this.searchCache = null;
		if (!error) {
			try { this.init(data); } catch (e) { this.error = `the inlined session data is not usable: ${e.message}`; }
		}
	}

	init(d) {
		if (!d || typeof d !== 'object' || !d.session || typeof d.session !== 'object') throw new Error('no "session" object');
		this.session = d.session;
		this.T0 = big(d.session.start_ns);
		this.strings = Array.isArray(d.strings) ? d.strings.map((s) => (s === null || s === undefined ? '' : String(s))) : [];
		this.procs = new Map();
		for (const p of d.session.process_list || []) this.procs.set(p.id, p);
		this.trackInfo = new Map();
		for (const t of d.session.track_list || []) this.trackInfo.set(t.id, t);
		this.tracks = new Map();
		for (const t of Array.isArray(d.tracks) ? d.tracks : []) {
			if (!t || typeof t !== 'object') continue;
			const info = this.trackInfo.get(t.id);
			const kind = info ? kindName(info.kind) : (Array.isArray(t.value) ? 'counter' : 'thread');
			const n = Array.isArray(t.ts) ? t.ts.length : 0;
			const tr = { id: t.id, kind, counter: kind === 'counter', n, ts: numArray(t.ts || [], n, 'ts', t.id), idx: null,
				// depth is nesting on call stacks, a lane on concurrent tracks (GPU streams, TF devices)
				stack: STACK_KINDS.has(kind) && !(info && info.concurrent),
				derived: !!(info && info.derived) };
			if (tr.counter) {
				tr.value = numArray(t.value || [], n, 'value', t.id);
			} else {
				tr.dur = numArray(t.dur || new Array(n).fill(0), n, 'dur', t.id);
				tr.depth = numArray(t.depth || new Array(n).fill(0), n, 'depth', t.id, Uint32Array);
				tr.name = numArray(t.name || new Array(n).fill(0), n, 'name', t.id, Uint32Array);
				tr.cat = numArray(t.cat, n, 'cat', t.id, Uint32Array);
				tr.flags = numArray(t.flags, n, 'flags', t.id, Uint8Array);
				tr.ekind = numArray(t.ekind, n, 'ekind', t.id, Uint8Array);
				if (t.args !== undefined && t.args !== null) {
					if (!Array.isArray(t.args) || t.args.length !== n) throw new Error(`track ${t.id}: "args" has ${Array.isArray(t.args) ? t.args.length : 'no'} items, "ts" has ${n}`);
					tr.args = t.args;
				}
			}
			ensureSorted(tr);
			this.tracks.set(t.id, tr);
		}
		// graph nodes (GraphDef, CostGraphDef rows), when the session has any: indexed by
		// name on the first /api/slice (graphIndex)
		this.graphRows = Array.isArray(d.graph) ? d.graph : null;
		this.graph = null;
		this.graphTruncated = Number(d.graph_truncated) || 0; // rows the exporter's cap left out
		this.flows = [];
		for (const f of Array.isArray(d.flows) ? d.flows : []) {
			if (!f || typeof f !== 'object') continue;
			const has = (k) => present(f[k]);
			this.flows.push({
				id: exactText(f.id, 'a flow id') ?? 0, name: +f.name || 0, cat: +f.cat || 0, flags: +f.flags || 0,
				src: has('src_track') && has('src_ts') ? { track: f.src_track, ts: +f.src_ts } : null,
				dst: has('dst_track') && has('dst_ts') ? { track: f.dst_track, ts: +f.dst_ts } : null,
			});
		}
		this.truncated = Number(d.truncated) || 0;
		// the advisor's default result, precomputed by the exporter (GET /api/advise)
		this.advice = d.advise && typeof d.advise === 'object' ? d.advise : null;
		// tftracer prof's four views with the Analysis page's default options (GET /api/prof)
		this.prof = d.prof && typeof d.prof === 'object' ? d.prof : null;
	}

	/* What the UI shows about the export (title bar, truncation banner). */
	info() {
		return { error: this.error, truncated: this.truncated || 0, producer: this.session ? this.session.producer : null };
	}

	str(id) { return this.strings[id] ?? ''; }

	/* The arguments of event i of track t: an object, or null (the exporter's text of one
	 * with an integer beyond 2^53 parsed exactly here, once). */
	argsOf(t, i) {
		let a = t.args ? t.args[i] : null;
		if (typeof a === 'string') t.args[i] = a = exactText(a, `track ${t.id}'s args[${i}]`);
		return a && typeof a === 'object' ? a : null;
	}

	/* The graph nodes by name, or null: name -> rows, each an object or the exporter's
	 * text of one (read here for its name only; graphRowsOf parses it exactly). */
	graphIndex() {
		if (this.graph || !this.graphRows) return this.graph;
		this.graph = new Map();
		for (const g of this.graphRows) {
			let o = g;
			if (typeof g === 'string') { try { o = JSON.parse(g); } catch { throw fail(500, 'the inlined session data is damaged: a graph row is not JSON text'); } }
			if (!o || typeof o !== 'object' || typeof o.name !== 'string') continue;
			const l = this.graph.get(o.name);
			if (l) l.push(g); else this.graph.set(o.name, [g]);
		}
		this.graphRows = null;
		return this.graph;
	}

	/* The graph rows named `name` (their texts parsed exactly, once), or undefined. */
	graphRowsOf(name) {
		const l = this.graphIndex() && this.graph.get(name);
		if (l) for (let j = 0; j < l.length; j++) if (typeof l[j] === 'string') l[j] = exactText(l[j], 'a graph row');
		return l;
	}

	abs(off) { return this.T0 + BigInt(Math.round(off)); }

	rel(v, dflt) {
		if (v === undefined || v === null || v === '') return dflt;
		if (typeof v === 'string' && !/^-?\d+$/.test(v)) throw fail(400, 'bad time parameter');
		return Number(big(v) - this.T0);
	}

	/* The answer to GET `path` with the parameters of its URL `q` (name -> text; api.js
	 * passes what a served request's URL would carry, query.js queryParams). */
	query(path, q) {
		if (this.error) throw fail(500, this.error);
		switch (path) {
			case 'api/session': return this.session;
			case 'api/steps': return { steps: this.session.step_list || [] };
			case 'api/live/status': return { live: false, generation: 0 };
			case 'api/viewport': return this.viewport(q);
			case 'api/slice': return this.slice(q);
			case 'api/search': return this.search(q);
			case 'api/stats': return this.stats(q);
			case 'api/advise':
				if (!this.advice) throw fail(404, 'the advisor is not in this export (export it again)');
				if (q && Object.keys(q).some((k) => q[k] !== undefined && q[k] !== null && q[k] !== '')) throw fail(404, 'a static export holds the default advice only (all steps, every checker)');
				return this.advice;
			case 'api/prof': {
				const v = (q && q.view) || 'scope';
				if (!this.prof || !this.prof[v]) throw fail(404, 'tftracer prof\'s views are not in this export (export it again)');
				if (q && Object.keys(q).some((k) => k !== 'view' && q[k] !== undefined && q[k] !== null && q[k] !== '')) throw fail(404, 'a static export holds the default views only');
				return this.prof[v];
			}
			default: throw fail(404, 'not available in a static export');
		}
	}

	trackIds(param, withCounters = true) {
		if (param === undefined || param === null || param === '') {
			const all = [...this.trackInfo.keys()].sort((a, b) => a - b);
			return withCounters ? all : all.filter((id) => kindName(this.trackInfo.get(id).kind) !== 'counter');
		}
		const ids = String(param).split(',').filter(Boolean).map((x) => {
			if (!/^\d+$/.test(x)) throw fail(400, 'bad track list');
			return +x;
		});
		if (ids.length > 4096) throw fail(400, 'too many tracks');
		return ids;
	}

	/* Per depth: event indexes in time order and the running maximum of their ends. */
	index(t) {
		if (t.idx) return t.idx;
		const per = new Map();
		const count = new Map();
		for (let i = 0; i < t.n; i++) count.set(t.depth[i], (count.get(t.depth[i]) || 0) + 1);
		for (const [d, c] of count) per.set(d, { ids: new Int32Array(c), maxEnd: new Float64Array(c), n: 0 });
		for (let i = 0; i < t.n; i++) {
			const p = per.get(t.depth[i]);
			const end = t.ts[i] + t.dur[i];
			p.maxEnd[p.n] = p.n ? Math.max(p.maxEnd[p.n - 1], end) : end;
			p.ids[p.n++] = i;
		}
		t.idx = per;
		t.maxDepth = count.size ? Math.max(...count.keys()) : 0;
		return per;
	}
}
