// SPDX-License-Identifier: MIT
// Static mode: a standalone HTML export (`tftracer export -f html`, docs/http-api.md
// "Static HTML export") inlines the session; this module answers the UI's API queries
// (session, steps, viewport with per-pixel merging, slice, search, stats) in the page:
// this file is the client (the data parsed, a worker or the main thread answering);
// static-session.js the loaded session and the endpoints' dispatch, and one file per
// endpoint as the server has (static-viewport.js, static-slice.js, static-search.js,
// static-stats.js), their methods mixed into StaticSession here.
// The data is parsed and queried in a Web Worker (this module and the modules it
// imports, taken from the page's inlined module texts and run as one classic worker
// script, which file:// pages allow) so a big export never blocks drawing; failing
// that, on the main thread. So this module and its imports declare plain functions,
// classes and constants only, each top-level name once across them.
import { decodeViewport } from './tiledata.js';
import { exactReviver, hasUnsafeInt } from './bigjson.js';
import { StaticSession, fail } from './static-session.js';
import { StaticViewport } from './static-viewport.js';
import { StaticSlice } from './static-slice.js';
import { StaticSearch } from './static-search.js';
import { StaticStats } from './static-stats.js';

/*
 * [start, end) of the value of top-level key `key` in the JSON object `text`, or
 * null. Walks only the keys before it, and stops at "tracks" (the exporter writes
 * the keys looked up before it), so the big event arrays are never scanned twice.
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
		if (k === 'tracks' && key !== 'tracks') return null; // the event arrays: what is sought comes before them
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

/*
 * DATA parsed: fast (JSON.parse without a reviver), then the few top-level values that
 * may hold integers beyond 2^53 parsed again keeping them exact: "session" and "advise"
 * (absolute nanosecond times) always, "prof" (they follow "session", before the event
 * arrays) when it holds such an integer (hasUnsafeInt). The events' arguments, graph rows and flow
 * ids with such integers the exporter writes as their JSON text, parsed exactly when
 * asked for (static-session.js exactText).
 */
function parseData(text) {
	const data = JSON.parse(text);
	for (const key of ['session', 'advise', 'prof']) {
		const r = findTopLevel(text, key);
		if (!r || !data || typeof data !== 'object') continue;
		const part = text.slice(r[0], r[1]);
		if (key === 'prof' && !hasUnsafeInt(part)) continue;
		try { data[key] = JSON.parse(part, exactReviver); } catch { /* keep the rounded copy */ }
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

/* Each endpoint's methods on StaticSession's prototype; a name defined twice is a mistake. */
for (const Part of [StaticViewport, StaticSlice, StaticSearch, StaticStats]) {
	for (const name of Object.getOwnPropertyNames(Part.prototype)) {
		if (name === 'constructor') continue;
		if (Object.prototype.hasOwnProperty.call(StaticSession.prototype, name)) throw new Error(`StaticSession.${name} is defined twice`);
		Object.defineProperty(StaticSession.prototype, name, Object.getOwnPropertyDescriptor(Part.prototype, name));
	}
}
