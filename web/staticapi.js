// SPDX-License-Identifier: MIT
// Static mode: a standalone HTML export (`tftracer export -f html`, docs/http-api.md
// "Static HTML export") inlines the session; this module answers the UI's API queries
// (session, steps, viewport with per-pixel merging, slice, search, stats) in the page.
// The data is parsed and queried in a Web Worker (this module and the modules it
// imports, taken from the page's inlined module texts and run as one classic worker
// script, which file:// pages allow) so a big export never blocks drawing; failing
// that, on the main thread. So this module and its imports declare plain functions,
// classes and constants only, each top-level name once across them.
import { decodeViewport, numbers } from './tiledata.js';
import { kindName, STACK_KINDS, EV_INSTANT, EVF_UNCLOSED, EVF_SUMMARY } from './kinds.js';
import { big, exactReviver } from './bigjson.js';
import { present, queryInt, queryIdList, I64_MIN, I64_MAX, U32_MAX } from './query.js';

const MAX_LIMIT = 10000;

function fail(status, message) {
	const e = new Error(message);
	e.status = status;
	return e;
}

/*
 * [start, end) of the value of top-level key `key` in the JSON object `text`, or
 * null. Walks only the keys before it, so the big event arrays after "session"
 * are never scanned twice.
 */
function findTopLevel(text, key) {
	const n = text.length;
	let i = text.indexOf('{');
	if (i < 0) return null;
	i++;
	const ws = () => { while (i < n) { const c = text.charCodeAt(i); if (c === 32 || c === 9 || c === 10 || c === 13) i++; else break; } };
	const skipString = () => {
		i++;
		while (i < n) {
			const c = text.charCodeAt(i++);
			if (c === 92) i++;
			else if (c === 34) return;
		}
	};
	const skipValue = () => {
		ws();
		const c = text.charCodeAt(i);
		if (c === 34) { skipString(); return; }
		if (c === 123 || c === 91) {
			let depth = 0;
			while (i < n) {
				const ch = text.charCodeAt(i);
				if (ch === 34) { skipString(); continue; }
				if (ch === 123 || ch === 91) depth++;
				else if (ch === 125 || ch === 93) { depth--; if (depth === 0) { i++; return; } }
				i++;
			}
			return;
		}
		while (i < n) { const ch = text.charCodeAt(i); if (ch === 44 || ch === 125 || ch === 93) break; i++; }
	};
	for (let guard = 0; guard < 64; guard++) {
		ws();
		if (text.charCodeAt(i) !== 34) return null;
		const ks = i;
		skipString();
		let k;
		try { k = JSON.parse(text.slice(ks, i)); } catch { return null; }
		ws();
		if (text.charCodeAt(i) !== 58) return null;
		i++;
		ws();
		const vs = i;
		skipValue();
		if (k === key) return [vs, i];
		ws();
		if (text.charCodeAt(i) !== 44) return null;
		i++;
	}
	return null;
}

function parseData(text) {
	const data = JSON.parse(text);
	// (the keys with nanosecond times the UI needs exact; "advise" follows "session")
	for (const key of ['session', 'advise']) {
		const r = findTopLevel(text, key);
		if (r && data && typeof data === 'object') {
			try { data[key] = JSON.parse(text.slice(r[0], r[1]), exactReviver); } catch { /* keep the rounded copy */ }
		}
	}
	return data;
}

/*
 * The inlined data of this page (window.__TFT_STATIC__ or <script id="tft-data">) as a
 * client: {query(path, q) -> Promise, tile(q, t0) -> Promise of decoded tracks, info()},
 * or null when the page is served.
 */
export function staticSource() {
	if (typeof window === 'undefined' || typeof document === 'undefined') return null;
	const w = window.__TFT_STATIC__;
	if (w && typeof w === 'object') return new LocalClient(new StaticSession(w, null));
	const el = document.getElementById('tft-data');
	if (!el) return null;
	const text = el.textContent || '';
	el.textContent = ''; // the worker (or the local session) keeps the only copy
	const src = workerSource();
	if (src) {
		try {
			const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
			return new WorkerClient(new Worker(url, { name: 'tftracer-static' }), text);
		} catch { /* no workers here: answer on the main thread */ }
	}
	return localClient(text);
}

function localClient(text) {
	let data = null, error = null;
	try { data = parseData(text); } catch (e) { error = `the inlined session data is damaged (${e.message})`; }
	return new LocalClient(new StaticSession(data, error));
}

/*
 * A classic worker script from the page's inlined module texts: this module and
 * those it imports, each once, dependencies first (imports dropped, exports made
 * plain declarations); null when one is not in the page. Module workers from blob:
 * URLs are refused in file:// pages.
 */
function workerSource() {
	const text = (n) => { const el = document.querySelector(`script[data-tft-module="${n}"]`); return el ? el.textContent : null; };
	const order = [], seen = new Set();
	const visit = (name) => {
		if (seen.has(name)) return true;
		seen.add(name);
		const t = text(name);
		if (t === null) return false;
		for (const m of t.matchAll(/^import\s[^;]*?\bfrom\s*['"]\.\/([A-Za-z0-9_.-]+\.js)['"];/gm)) if (!visit(m[1])) return false;
		order.push(t);
		return true;
	};
	if (!visit('staticapi.js')) return null;
	return order.map((t) => t.replace(/^import\s[^;]*;[ \t]*$/gm, '').replace(/^export\s+(?=(?:async\s+)?function\b|class\b|const\b|let\b)/gm, '')).join('\n;\n');
}

/* Queries answered on the main thread (no worker, or data given as an object). */
class LocalClient {
	constructor(sess) { this.sess = sess; this.ready = Promise.resolve(); }
	info() { return this.sess.info(); }
	async query(path, q) { await null; return this.sess.query(path, q); }
	async tile(q, t0) {
		await null;
		const d = decodeViewport(this.sess.query('api/viewport', q), t0);
		delete d.transfer;
		return d;
	}
}

/* Queries posted to the worker; answers come back by id (BigInt and typed arrays survive the copy). */
class WorkerClient {
	constructor(worker, text) {
		this.worker = worker;
		this.pending = new Map();
		this.nextId = 1;
		this.meta = null;
		this.ready = new Promise((resolve) => { this.resolveReady = resolve; });
		worker.onmessage = (ev) => {
			const m = ev.data;
			if (m.ready) { this.meta = m.info; this.text = null; this.resolveReady(); return; }
			const p = this.pending.get(m.id);
			if (!p) return;
			this.pending.delete(m.id);
			if (m.ok) p.resolve(m.result);
			else p.reject(fail(m.status || 500, m.message));
		};
		worker.onerror = (e) => {
			if (this.fallback === undefined && !this.meta) {
				// the worker did not start: answer on the main thread instead
				this.fallback = localClient(this.text);
				this.meta = this.fallback.info();
				this.resolveReady();
				return;
			}
			const err = fail(500, `the static viewer's worker failed: ${e.message || 'unknown error'}`);
			for (const p of this.pending.values()) p.reject(err);
			this.pending.clear();
		};
		this.text = text; // until the worker has it parsed
		worker.postMessage({ init: text });
	}

	info() { return this.meta; }

	call(kind, path, q, t0) {
		return this.ready.then(() => (this.fallback ? (kind === 'tile' ? this.fallback.tile(q, t0) : this.fallback.query(path, q)) : new Promise((resolve, reject) => {
			if (this.meta && this.meta.error) { reject(fail(500, this.meta.error)); return; }
			const id = this.nextId++;
			this.pending.set(id, { resolve, reject });
			this.worker.postMessage({ id, kind, path, q, t0 });
		})));
	}

	query(path, q) { return this.call('query', path, q); }
	tile(q, t0) { return this.call('tile', 'api/viewport', q, t0); }
}

/* The worker side: this module, loaded as a module worker by staticSource(). */
if (typeof window === 'undefined' && typeof self !== 'undefined' && typeof self.postMessage === 'function' && typeof document === 'undefined') {
	let sess = null;
	self.onmessage = (ev) => {
		const m = ev.data;
		if (m.init !== undefined) {
			let data = null, error = null;
			try { data = parseData(m.init); } catch (e) { error = `the inlined session data is damaged (${e.message})`; }
			sess = new StaticSession(data, error);
			self.postMessage({ ready: true, info: sess.info() });
			return;
		}
		try {
			if (m.kind === 'tile') {
				const d = decodeViewport(sess.query(m.path, m.q), m.t0);
				const transfer = d.transfer;
				delete d.transfer;
				self.postMessage({ id: m.id, ok: true, result: d }, transfer);
			} else {
				self.postMessage({ id: m.id, ok: true, result: sess.query(m.path, m.q) });
			}
		} catch (e) {
			self.postMessage({ id: m.id, ok: false, status: e.status || 500, message: String((e && e.message) || e) });
		}
	};
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

class StaticSession {
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
		// graph nodes (GraphDef, CostGraphDef rows) by name, when the session has any
		this.graph = null;
		this.graphTruncated = Number(d.graph_truncated) || 0; // rows the exporter's cap left out
		if (Array.isArray(d.graph)) {
			this.graph = new Map();
			for (const g of d.graph) {
				if (!g || typeof g !== 'object' || typeof g.name !== 'string') continue;
				const l = this.graph.get(g.name);
				if (l) l.push(g); else this.graph.set(g.name, [g]);
			}
		}
		this.flows = [];
		for (const f of Array.isArray(d.flows) ? d.flows : []) {
			if (!f || typeof f !== 'object') continue;
			const has = (k) => present(f[k]);
			this.flows.push({
				id: f.id ?? 0, name: +f.name || 0, cat: +f.cat || 0, flags: +f.flags || 0,
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

	/* First position in a depth list whose running max end reaches t. */
	static firstReaching(p, t) {
		let lo = 0, hi = p.n;
		while (lo < hi) { const m = (lo + hi) >> 1; if (p.maxEnd[m] < t) lo = m + 1; else hi = m; }
		return lo;
	}

	/* ---- /api/viewport -------------------------------------------------------- */

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
			for (let j = StaticSession.firstReaching(p, t0); j < p.n; j++) {
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

	/* ---- /api/slice ------------------------------------------------------------ */

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

	/* First position in a depth list whose event starts at or after `at` (after it: `after`). */
	static startBound(t, p, at, after) {
		let lo = 0, hi = p.n;
		while (lo < hi) { const m = (lo + hi) >> 1; const s = t.ts[p.ids[m]]; if (s < at || (after && s === at)) lo = m + 1; else hi = m; }
		return lo;
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
		const lo = StaticSession.startBound(t, p, at, false), hi = StaticSession.startBound(t, p, at, true);
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
		const lo = StaticSession.startBound(t, p, at, false), hi = StaticSession.startBound(t, p, at, true);
		return seq < hi - lo ? p.ids[lo + seq] : -1;
	}

	/* The seq of event i: its ordinal among the events of its depth starting when it starts. */
	seqOf(t, i) {
		const p = this.index(t).get(t.depth[i]);
		let lo = 0, hi = p.n;
		while (lo < hi) { const m = (lo + hi) >> 1; if (p.ids[m] < i) lo = m + 1; else hi = m; } // ids ascend
		return lo - StaticSession.startBound(t, p, t.ts[i], false);
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
		for (let j = StaticSession.firstReaching(p, s); j < p.n; j++) {
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
			args: (t.args && t.args[i] && typeof t.args[i] === 'object') ? t.args[i] : {},
			step: this.stepOf(info.process, s),
			flows_out: out,
			flows_in: inn,
			...(this.graph ? { graph: this.graphOf(this.str(t.name[i]), t.args && t.args[i], this.stepRowOf(info.process, s)) } : {}),
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
			const rows = k && !k.includes('\0') && new TextEncoder().encode(k).length < 1024 ? this.graph.get(k) : null;
			if (rows && rows.length) return step ? [...rows.filter(own), ...rows.filter((g) => !own(g))].slice(0, 16) : rows.slice(0, 16);
		}
		return [];
	}

	/* ---- /api/search ------------------------------------------------------------ */

	matcher(q, regex, exact) {
		if (exact) return (s) => s === q;
		if (regex) {
			let re;
			try { re = new RegExp(q, 'i'); } catch { throw fail(400, 'not a valid POSIX extended regular expression'); }
			return (s) => re.test(s);
		}
		const lc = q.toLowerCase();
		return (s) => s.toLowerCase().includes(lc);
	}

	/*
	 * An argument value as the server matches it: strings as they are, numbers as their
	 * decimal text, arrays and objects as their compact JSON text; booleans and null never.
	 */
	static argMatch(v, test) {
		if (typeof v === 'string') return test(v);
		if (typeof v === 'number') return Number.isFinite(v) && test(String(v));
		if (typeof v === 'bigint') return test(String(v));
		if (v !== null && typeof v === 'object') {
			try { return test(JSON.stringify(v)); } catch { return false; }
		}
		return false;
	}

	/*
	 * Every match of a query, per track: [{id, ids: Int32Array, field: Uint8Array}] and the
	 * exact total. field: the first of name (1), cat (2), args (3), track (4) that matched;
	 * every event of a track whose name or process name matches is a match, and with
	 * in=track alone each such track gives one: its first event.
	 */
	matches(q, regex, fields, exact) {
		const key = `${regex ? 1 : 0}${exact ? 1 : 0}\u0000${[...fields].sort().join(',')}\u0000${q}`;
		if (this.searchCache && this.searchCache.key === key) return this.searchCache;
		const test = this.matcher(q, regex, exact);
		const byName = fields.has('name'), byCat = fields.has('cat'), byArgs = fields.has('args'), byTrack = fields.has('track');
		const strHit = new Uint8Array(this.strings.length); // names and categories: each string matched once
		if (byName || byCat) for (let k = 0; k < this.strings.length; k++) strHit[k] = test(this.strings[k]) ? 1 : 0;
		const per = [];
		let total = 0;
		for (const [tid, t] of [...this.tracks].sort((a, b) => a[0] - b[0])) {
			if (t.counter || !t.n) continue;
			const info = this.trackInfo.get(tid) || {};
			const proc = this.procs.get(info.process);
			const trackHit = byTrack && (test(String(info.name ?? '')) || (!!proc && test(String(proc.name ?? ''))));
			if (trackHit && fields.size === 1) {
				per.push({ id: tid, t, ids: Int32Array.of(0), field: Uint8Array.of(4) });
				total++;
				continue;
			}
			const ids = [], fld = [];
			for (let i = 0; i < t.n; i++) {
				let f = 0;
				if (byName && strHit[t.name[i]]) f = 1;
				else if (byCat && strHit[t.cat ? t.cat[i] : 0]) f = 2; // no "cat" array: every category is ""
				else if (byArgs && t.args && t.args[i] && typeof t.args[i] === 'object' &&
					 Object.values(t.args[i]).some((v) => StaticSession.argMatch(v, test))) f = 3;
				else if (trackHit) f = 4;
				if (f) { ids.push(i); fld.push(f); }
			}
			if (ids.length) { per.push({ id: tid, t, ids: Int32Array.from(ids), field: Uint8Array.from(fld) }); total += ids.length; }
		}
		this.searchCache = { key, per, total };
		return this.searchCache;
	}

	search(q) {
		// checked as the server checks them (src/server/api_search.c), in its order, with its texts
		const text = present(q.q) ? String(q.q) : '';
		if (!text.length) throw fail(400, 'q is required');
		const exactB = queryInt(q.exact, 0n, 1n, 0n);
		if (exactB === null) throw fail(400, 'exact must be 0 or 1');
		const exact = exactB === 1n;
		// exact=1: a whole name, case included (of up to 4096 bytes)
		if (new TextEncoder().encode(text).length > (exact ? 4096 : 256) || text.includes('\0'))
			throw fail(400, exact ? 'q is limited to 4096 bytes with exact=1' : 'q is limited to 256 bytes of text');
		const regexB = queryInt(q.regex, 0n, 1n, 0n), limitB = queryInt(q.limit, 1n, BigInt(MAX_LIMIT), 1000n);
		const cursor = [queryInt(q.after_ts, I64_MIN, I64_MAX, 0n), queryInt(q.after_track, 0n, U32_MAX, 0n),
			queryInt(q.after_depth, 0n, U32_MAX, 0n), queryInt(q.after_seq, 0n, U32_MAX - 1n, 0n)];
		if (regexB === null || limitB === null || cursor.includes(null))
			throw fail(400, 'regex, limit, after_ts, after_track, after_depth, after_seq must be integers in range');
		// in=: the fields searched, in the order a result reports the first that matched
		const FIELDS = ['name', 'cat', 'args', 'track'];
		const inList = present(q.in) ? String(q.in).split(',') : ['name'];
		if (inList.some((f) => !FIELDS.includes(f))) throw fail(400, 'in must be a comma-separated list of name, cat, args, track');
		const regex = regexB === 1n, limit = Number(limitB);
		if (exact && regex) throw fail(400, 'exact=1 and regex=1 exclude each other');
		// (a backslash before 1..9, escaped backslashes aside: the server refuses back-references)
		if (regex && /(^|[^\\])(\\\\)*\\[1-9]/.test(text)) throw fail(400, 'back-references (\\1 to \\9) are not supported in a regex');
		const fields = new Set(inList);
		const m = this.matches(text, regex, fields, exact);
		// an omitted after_track, after_depth or after_seq: past all of them
		const hasAfter = present(q.after_ts);
		const aTs = hasAfter ? Number(cursor[0] - this.T0) : -Infinity;
		const [aTrack, aDepth, aSeq] = [q.after_track, q.after_depth, q.after_seq].map((v, k) => (present(v) ? Number(cursor[k + 1]) : Infinity));
		// (ts, track, depth, seq) order, seq the ordinal among those starting together (the server's)
		const after = (ts, track, depth, seq) => !hasAfter || ts > aTs || (ts === aTs && (track > aTrack ||
			(track === aTrack && (depth > aDepth || (depth === aDepth && seq > aSeq)))));
		const cand = [];
		for (const e of m.per) {
			const { t, ids } = e;
			// first match not before the cursor's time, then up to limit+1 after it
			let lo = 0, hi = ids.length;
			if (hasAfter) while (lo < hi) { const mid = (lo + hi) >> 1; if (t.ts[ids[mid]] < aTs) lo = mid + 1; else hi = mid; }
			let taken = 0;
			for (let j = lo; j < ids.length && taken <= limit; j++) {
				const i = ids[j];
				const seq = this.seqOf(t, i);
				if (!after(t.ts[i], e.id, t.depth[i], seq)) continue;
				cand.push({ ts: t.ts[i], track: e.id, depth: t.depth[i], seq, i, t, f: e.field[j] });
				taken++;
			}
		}
		cand.sort((a, b) => a.ts - b.ts || a.track - b.track || a.depth - b.depth || a.seq - b.seq);
		const results = cand.slice(0, limit).map((c) => ({
			track: c.track, ts: this.abs(c.ts), dur: c.t.dur[c.i], depth: c.depth, seq: c.seq, name: this.str(c.t.name[c.i]), field: FIELDS[c.f - 1],
		}));
		return { total: m.total, results, more: cand.length > limit };
	}

	/* ---- /api/stats ---------------------------------------------------------------- */

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
