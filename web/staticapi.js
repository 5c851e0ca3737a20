// SPDX-License-Identifier: MIT
// Static mode: a standalone HTML export (`tftracer export -f html`, docs/http-api.md
// "Static HTML export") inlines the session and the query engine (the server's C code
// as WebAssembly); this module answers the UI's API queries in the page: this file is
// the client (a worker or the main thread answering), static-session.js the session and
// the endpoints' dispatch, static-engine.js the engine that answers viewport, slice,
// search and stats exactly as the server does.
// The data is opened and queried in a Web Worker (this module and the modules it
// imports, taken from the page's inlined module texts and run as one classic worker
// script, which file:// pages allow) so a big export never blocks drawing; failing
// that, on the main thread. So this module and its imports declare plain functions,
// classes and constants only, each top-level name once across them.
import { decodeViewport } from './tiledata.js';
import { hasUnsafeInt, parseExact } from './bigjson.js';
import { StaticSession, fail } from './static-session.js';
import { QueryEngine } from './static-engine.js';

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
 * The values of DATA the page answers as they are, parsed: "session" and "advise"
 * (absolute nanosecond times) keeping integers beyond 2^53 exact, "prof" too when it
 * holds such an integer (hasUnsafeInt). They come before the event arrays, which only
 * the engine reads.
 */
function parseData(text) {
	const data = {};
	for (const key of ['session', 'advise', 'prof']) {
		const r = findTopLevel(text, key);
		if (!r) {
			if (key === 'session') throw new Error('no "session" object');
			continue;
		}
		const part = text.slice(r[0], r[1]);
		data[key] = key === 'prof' && !hasUnsafeInt(part) ? JSON.parse(part) : parseExact(part);
	}
	return data;
}

/* The session of DATA `text` with the engine `wasm` (bytes or base64), answering; or one
 * that answers every query with the reason it could not open. */
function openedSession(data, engine) {
	data.start_ns = engine.meta('static_start_ns'); // exact, whatever this JSON.parse reads
	data.truncated = Number(engine.meta('static_truncated')) || 0;
	data.graph_truncated = Number(engine.meta('static_graph_truncated')) || 0;
	return new StaticSession(data, engine, null);
}

function failedSession(e) {
	const msg = String((e && e.message) || e);
	return new StaticSession(null, null, /inlined session data/.test(msg) ? msg : `the inlined session data is damaged (${msg})`);
}

async function openSession(text, wasm) {
	try {
		if (!wasm) throw new Error('the query engine is not in the page (export it again)');
		const data = parseData(text);
		return openedSession(data, await QueryEngine.create(wasm, text));
	} catch (e) {
		return failedSession(e);
	}
}

/* The same, synchronously (node: the tests load the page's modules this way). */
function openSessionSync(text, wasm) {
	try {
		const data = parseData(text);
		return openedSession(data, QueryEngine.createSync(wasm, text));
	} catch (e) {
		return failedSession(e);
	}
}

/*
 * The inlined data of this page (window.__TFT_STATIC__ or <script id="tft-data">) as a
 * client: {query(path, q) -> Promise, tile(q, t0) -> Promise of decoded tracks, info()},
 * or null when the page is served.
 */
export function staticSource() {
	if (typeof window === 'undefined' || typeof document === 'undefined') return null;
	const el = document.getElementById('tft-data');
	if (!el) return null;
	const text = el.textContent || '';
	el.textContent = ''; // the worker (or the local session) keeps the only copy
	const we = document.getElementById('tft-wasm');
	const wasm = we ? we.textContent : null;
	if (we) we.textContent = '';
	const src = workerSource();
	if (src) {
		try {
			const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
			return new WorkerClient(new Worker(url, { name: 'tftracer-static' }), text, wasm);
		} catch { /* no workers here: answer on the main thread */ }
	}
	return new LocalClient(openSession(text, wasm));
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

/* Queries answered on the main thread (no worker): sess, a promise of the session. */
class LocalClient {
	constructor(sess) {
		this.sess = null;
		this.ready = sess.then((s) => { this.sess = s; });
	}
	info() { return this.sess ? this.sess.info() : null; }
	async query(path, q) { await this.ready; return this.sess.query(path, q); }
	async tile(q, t0) {
		await this.ready;
		const d = decodeViewport(this.sess.query('api/viewport', q), t0);
		delete d.transfer;
		return d;
	}
}

/* Queries posted to the worker; answers come back by id (BigInt and typed arrays survive the copy). */
class WorkerClient {
	constructor(worker, text, wasm) {
		this.worker = worker;
		this.pending = new Map();
		this.nextId = 1;
		this.meta = null;
		this.ready = new Promise((resolve) => { this.resolveReady = resolve; });
		worker.onmessage = (ev) => {
			const m = ev.data;
			if (m.ready) { this.meta = m.info; this.text = this.wasm = null; this.resolveReady(); return; }
			const p = this.pending.get(m.id);
			if (!p) return;
			this.pending.delete(m.id);
			if (m.ok) p.resolve(m.result);
			else p.reject(fail(m.status || 500, m.message));
		};
		worker.onerror = (e) => {
			if (this.fallback === undefined && !this.meta) {
				// the worker did not start: answer on the main thread instead
				this.fallback = new LocalClient(openSession(this.text, this.wasm));
				this.fallback.ready.then(() => { this.meta = this.fallback.info(); this.resolveReady(); });
				return;
			}
			const err = fail(500, `the static viewer's worker failed: ${e.message || 'unknown error'}`);
			for (const p of this.pending.values()) p.reject(err);
			this.pending.clear();
		};
		this.text = text; // until the worker has it open
		this.wasm = wasm;
		worker.postMessage({ init: text, wasm });
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
	self.onmessage = async (ev) => {
		const m = ev.data;
		if (m.init !== undefined) {
			sess = await openSession(m.init, m.wasm);
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
