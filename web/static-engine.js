// SPDX-License-Identifier: MIT
// The static export's query engine: the server's own C code that answers GET
// /api/viewport, /api/slice, /api/search and /api/stats (src/query/), compiled to
// WebAssembly (src/wasm/wasm_query.c) and inlined by the exporter, base64, in
// <script type="application/octet-stream" id="tft-wasm"> (docs/http-api.md "Static HTML
// export"). It opens the page's DATA once (src/export/html_data.c) and answers each
// query with the bytes the server would send. Loaded by the export's worker too: plain
// declarations only, each top-level name once across the modules staticapi.js imports.
import { parseExact } from './bigjson.js';
import { fail } from './static-session.js';

/* The bytes of base64 text (the inlined module). */
function base64Bytes(text) {
	const bin = atob(String(text).replace(/\s+/g, ''));
	const b = new Uint8Array(bin.length);
	for (let i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i);
	return b;
}

/*
 * What the module asks of its host (WASI): an empty environment, no files (its C
 * code writes none: a call fails with EBADF), and exit as an error.
 */
function wasiImports(memory) {
	const EBADF = 8;
	return {
		environ_sizes_get(count, size) {
			const v = new DataView(memory().buffer);
			v.setUint32(count, 0, true);
			v.setUint32(size, 0, true);
			return 0;
		},
		environ_get() { return 0; },
		fd_close() { return EBADF; },
		fd_seek() { return EBADF; },
		fd_write() { return EBADF; },
		proc_exit(code) { throw new Error(`the query engine exited (${code})`); },
	};
}

export class QueryEngine {
	/* The engine with DATA (its JSON text) open; rejects with the reason it could not.
	 * wasm: the module's bytes, or their base64 text (the page's tft-wasm element). */
	static async create(wasm, text) {
		const bytes = typeof wasm === 'string' ? base64Bytes(wasm) : wasm;
		let inst = null;
		const { instance } = await WebAssembly.instantiate(bytes, { wasi_snapshot_preview1: wasiImports(() => inst.exports.memory) });
		inst = instance;
		return QueryEngine.opened(inst.exports, text);
	}

	/* The same, compiled synchronously (node, a worker: not a page's main thread). */
	static createSync(wasm, text) {
		const bytes = typeof wasm === 'string' ? base64Bytes(wasm) : wasm;
		let inst = null;
		inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { wasi_snapshot_preview1: wasiImports(() => inst.exports.memory) });
		return QueryEngine.opened(inst.exports, text);
	}

	static opened(exports, text) {
		const e = new QueryEngine(exports);
		const [p, n] = e.putText(text);
		const rc = e.x.tft_wasm_open(p, n);
		if (rc !== 0) throw new Error(`the inlined session data is not usable: ${e.body()}`);
		return e;
	}

	constructor(exports) {
		this.x = exports;
		this.enc = new TextEncoder();
		this.dec = new TextDecoder();
	}

	/* b copied into the module's memory (room for the reader's padding after it). */
	put(b) {
		const p = this.x.tft_wasm_alloc(b.length);
		if (!p) throw fail(503, 'out of memory');
		new Uint8Array(this.x.memory.buffer, p, b.length).set(b);
		return p;
	}

	/* A meta value of the session (export/html_data.h), or null. */
	meta(key) {
		const kb = this.enc.encode(key + '\0');
		const kp = this.put(kb);
		try {
			const p = this.x.tft_wasm_meta(kp);
			if (!p) return null;
			const m = new Uint8Array(this.x.memory.buffer);
			let e = p;
			while (m[e]) e++;
			return this.dec.decode(m.subarray(p, e));
		} finally {
			this.x.tft_wasm_free(kp);
		}
	}

	/* text as UTF-8 straight into the module's memory (no copy of it in between): its
	 * place and length. Room for one byte a character first, grown while some is left. */
	putText(text) {
		let cap = text.length + 16, p = this.x.tft_wasm_alloc(cap), read = 0, written = 0;
		if (!p) throw fail(503, 'out of memory');
		for (;;) {
			const r = this.enc.encodeInto(read ? text.slice(read) : text, new Uint8Array(this.x.memory.buffer, p + written, cap - written));
			read += r.read;
			written += r.written;
			if (read >= text.length) return [p, written];
			cap = written + (text.length - read) * 3 + 16;
			const q = this.x.tft_wasm_realloc(p, cap);
			if (!q) { this.x.tft_wasm_free(p); throw fail(503, 'out of memory'); }
			p = q;
		}
	}

	body() {
		return this.dec.decode(new Uint8Array(this.x.memory.buffer, this.x.tft_wasm_body(), this.x.tft_wasm_body_len()));
	}

	/* The answer to GET `path` (api/NAME) with parameters q (name -> text: what a served
	 * request's URL would carry, api.js queryParams), parsed with exact integers as the
	 * served UI reads the server's; a refusal throws fail(status). */
	query(path, q) {
		const u = new URLSearchParams();
		for (const [k, v] of Object.entries(q || {})) if (v !== undefined && v !== null) u.append(k, String(v));
		const pb = this.enc.encode(path), qb = this.enc.encode(u.toString());
		const pp = this.put(pb), qp = this.put(qb);
		let status;
		try {
			status = this.x.tft_wasm_query(pp, pb.length, qp, qb.length);
		} finally {
			this.x.tft_wasm_free(pp);
			this.x.tft_wasm_free(qp);
		}
		const text = this.body();
		if (status !== 200) throw fail(status, text);
		if (path === 'api/viewport' && String(q && q.rel) === '1') {
			// a tile (times from t0): parsed plainly, as the served tiles are (tileworker.js),
			// which is 10x faster than the exact parse; its window exact all the same
			const v = JSON.parse(text);
			const m = /^\{"t0":(-?\d+),"t1":(-?\d+),/.exec(text);
			if (m) { v.t0 = BigInt(m[1]); v.t1 = BigInt(m[2]); }
			return v;
		}
		return parseExact(text);
	}
}
