// SPDX-License-Identifier: MIT
// Tile cache for the timeline: windows quantised to power-of-two resolutions and
// fixed-width tiles, so panning reuses what was fetched; an LRU bounds memory; a
// small queue bounds concurrent requests and drops answers nobody needs any more.
import { apiUrl, authHeaders, isStatic, isServerGone, staticTile } from './api.js';
import { decodeViewport } from './tiledata.js';

export const TILE_PX = 512;      // buckets per tile
const MAX_TRACKS_PER_REQ = 24;
const MAX_INFLIGHT = 4;
const MAX_TILES = 6000;          // cached (track, level, tile) entries
const MAX_CANVASES = 700;        // pre-rendered tile canvases kept

export function tileSpan(L) { return TILE_PX * 2 ** L; }

/* One decoding worker, started when the module loads so it is warm before the
 * session arrives; until it says ready, tiles are fetched on the main thread. */
let sharedWorker = null;
let workerReady = false;
let workerListener = null;
try {
	if (isStatic()) throw new Error('static export: tiles are answered in the page');
	sharedWorker = new Worker(new URL('./tileworker.js', import.meta.url), { type: 'module' });
	sharedWorker.onmessage = (ev) => {
		if (ev.data && ev.data.ready) { workerReady = true; return; }
		if (workerListener) workerListener(ev.data);
	};
	sharedWorker.onerror = () => { workerReady = false; };
} catch {
	sharedWorker = null;
}

export class TileStore {
	/* base: BigInt absolute ns of relative time 0; onChange(): new data or state. */
	constructor(base, spanNs, onChange, onError) {
		this.base = base;
		this.spanNs = spanNs;
		this.onChange = onChange;
		this.onError = onError;
		this.tiles = new Map();      // key -> tile; Map order is the LRU order
		this.strings = new Map();    // string id -> text
		this.queue = [];             // planned requests not yet sent
		this.inflight = new Map();   // req id -> {keys, L, k}
		this.nextId = 1;
		this.canvasCount = 0;
		this.stats = { requests: 0, bytes: 0, aborted: 0, errors: 0 };
		this.worker = sharedWorker;
		workerListener = (m) => this._answer(m);
		this.mainCtl = new Map();
	}

	static key(L, k, track) { return `${L}:${k}:${track}`; }

	/* A cached tile (touching it in the LRU), or undefined. */
	get(L, k, track) {
		const key = TileStore.key(L, k, track);
		const t = this.tiles.get(key);
		if (t) {
			this.tiles.delete(key);
			this.tiles.set(key, t);
		}
		return t;
	}

	peek(L, k, track) { return this.tiles.get(TileStore.key(L, k, track)); }

	busy() { return this.inflight.size + this.queue.length; }

	/*
	 * want: [{L, k, tracks: [id...], prio}] for the current view, most urgent
	 * first. Missing tiles are queued; queued or in-flight work for tiles no
	 * longer wanted is dropped (in-flight requests are aborted).
	 */
	plan(want) {
		const wanted = new Set();
		const fresh = [];
		const maxK = Math.ceil(this.spanNs / tileSpan(0));
		for (const w of want) {
			if (w.k < 0 || w.k * tileSpan(w.L) >= this.spanNs) continue;
			const missing = [];
			for (const id of w.tracks) {
				const key = TileStore.key(w.L, w.k, id);
				wanted.add(key);
				const t = this.tiles.get(key);
				if (!t || (t.state === 'error' && performance.now() - t.when > 5000) || (t.stale && !t.refetch)) missing.push(id);
			}
			for (let i = 0; i < missing.length; i += MAX_TRACKS_PER_REQ)
				fresh.push({ L: w.L, k: w.k, tracks: missing.slice(i, i + MAX_TRACKS_PER_REQ), prio: w.prio });
		}
		void maxK;
		for (const r of fresh)
			for (const id of r.tracks) {
				const key = TileStore.key(r.L, r.k, id);
				const t = this.tiles.get(key);
				// a stale tile stays drawn until its replacement arrives
				if (t && t.stale && t.state === 'ok') t.refetch = true;
				else this.tiles.set(key, { L: r.L, k: r.k, track: id, state: 'queued' });
			}
		// Drop queued requests that nobody wants now.
		const keep = [];
		for (const r of this.queue) {
			const still = r.tracks.filter((id) => wanted.has(TileStore.key(r.L, r.k, id)));
			for (const id of r.tracks) {
				if (still.includes(id)) continue;
				const key = TileStore.key(r.L, r.k, id);
				const t = this.tiles.get(key);
				if (t && t.state === 'ok') t.refetch = false; else this.tiles.delete(key);
			}
			if (still.length) keep.push({ ...r, tracks: still });
		}
		this.queue = keep.concat(fresh).sort((a, b) => a.prio - b.prio);
		// Abort in-flight requests whose tiles are all unwanted.
		for (const [id, r] of this.inflight) {
			if (r.keys.some((key) => wanted.has(key))) continue;
			this._abort(id);
			for (const key of r.keys) {
				const t = this.tiles.get(key);
				if (t && t.state === 'loading') this.tiles.delete(key);
				else if (t && t.state === 'ok') t.refetch = false;
			}
			this.inflight.delete(id);
			this.stats.aborted++;
		}
		this._pump();
	}

	_abort(id) {
		if (this.worker && workerReady) this.worker.postMessage({ abort: id });
		const c = this.mainCtl.get(id);
		if (c) c.abort();
	}

	_pump() {
		while (this.inflight.size < MAX_INFLIGHT && this.queue.length) {
			const r = this.queue.shift();
			const span = BigInt(tileSpan(r.L));
			const t0 = this.base + BigInt(r.k) * span;
			const t1 = t0 + span;
			const url = apiUrl('api/viewport', { tracks: r.tracks.join(','), t0: t0.toString(), t1: t1.toString(), width: TILE_PX, rel: 1 });
			const id = this.nextId++;
			const keys = r.tracks.map((tid) => TileStore.key(r.L, r.k, tid));
			for (const key of keys) {
				const t = this.tiles.get(key);
				if (t && t.state !== 'ok') t.state = 'loading';
			}
			this.inflight.set(id, { keys, L: r.L, k: r.k, t0 });
			this.stats.requests++;
			if (isStatic()) {
				this._answerStatic(id, r, t0, t1);
			} else if (isServerGone()) {
				// (as a failed fetch, without the request: the live server has stopped)
				queueMicrotask(() => this._answer({ id, ok: false, status: 0, error: 'the live server has stopped' }));
			} else if (this.worker && workerReady) {
				this.worker.postMessage({ id, url: url.href, headers: authHeaders(), t0: t0.toString() });
			} else {
				this._fetchMain(id, url, t0);
			}
		}
	}

	/* Static export: the window is merged by staticapi.js (in its worker). */
	async _answerStatic(id, r, t0, t1) {
		try {
			const d = await staticTile({ tracks: r.tracks.join(','), t0: t0.toString(), t1: t1.toString(), width: TILE_PX, rel: 1 }, t0.toString());
			this._answer({ id, ok: true, data: d, bytes: 0 });
		} catch (e) {
			this._answer({ id, ok: false, status: e.status || 500, error: e.message });
		}
	}

	async _fetchMain(id, url, t0) {
		const ctl = new AbortController();
		this.mainCtl.set(id, ctl);
		try {
			const res = await fetch(url, { headers: authHeaders(), signal: ctl.signal });
			const text = await res.text();
			if (!res.ok) {
				let msg = `${res.status} ${res.statusText}`;
				try { const j = JSON.parse(text); if (j.error) msg = j.error; } catch { /* keep */ }
				this._answer({ id, ok: false, status: res.status, error: msg });
				return;
			}
			const d = decodeViewport(JSON.parse(text), t0.toString());
			delete d.transfer;
			this._answer({ id, ok: true, data: d, bytes: text.length });
		} catch (e) {
			if (e && e.name === 'AbortError') this._answer({ id, ok: false, aborted: true });
			else this._answer({ id, ok: false, status: 0, error: String((e && e.message) || e) });
		} finally {
			this.mainCtl.delete(id);
		}
	}

	_answer(m) {
		const r = this.inflight.get(m.id);
		this.inflight.delete(m.id);
		if (!r) { this._pump(); return; } // dropped as stale
		if (m.aborted) { this._pump(); return; }
		const now = performance.now();
		if (!m.ok) {
			this.stats.errors++;
			for (const key of r.keys) {
				const t = this.tiles.get(key);
				if (t) { t.state = 'error'; t.error = m.error; t.when = now; }
			}
			if (this.onError) this.onError(m.error, m.status);
		} else {
			this.stats.bytes += m.bytes || 0;
			for (const [id, s] of Object.entries(m.data.strings || {})) this.strings.set(+id, s);
			const got = new Map();
			for (const d of m.data.tracks) got.set(d.id, d);
			for (const key of r.keys) {
				const track = +key.slice(key.lastIndexOf(':') + 1);
				const d = got.get(track) || { id: track, n: 0, counter: false };
				const prev = this.tiles.get(key);
				if (prev && prev.canvas) { this._free(prev.canvas); this.canvasCount--; }
				const tile = { L: r.L, k: r.k, track, state: 'ok', data: d, when: now, canvas: null, canvasGen: -1,
					absStart: r.t0, relStart: r.k * tileSpan(r.L), res: 2 ** r.L, wide: null };
				if (prev) this.tiles.delete(key);
				this.tiles.set(key, tile);
			}
		}
		this._evict();
		this._pump();
		this.onChange();
	}

	/*
	 * A live session got data after `rel` (ns from the trace start): tiles reaching
	 * past it become stale (still drawn, fetched again when wanted); requests in
	 * flight over that range are forgotten (their answers would be older).
	 */
	invalidateAfter(rel) {
		for (const t of this.tiles.values()) {
			if ((t.k + 1) * tileSpan(t.L) <= rel) continue;
			if (t.state === 'ok') { t.stale = true; t.refetch = false; }
		}
		for (const [id, r] of this.inflight) {
			if ((r.k + 1) * tileSpan(r.L) <= rel) continue;
			this._abort(id);
			this.inflight.delete(id);
			for (const key of r.keys) {
				const t = this.tiles.get(key);
				if (t && t.state === 'loading') this.tiles.delete(key);
				else if (t) t.refetch = false;
			}
		}
		this.queue = this.queue.filter((r) => {
			if ((r.k + 1) * tileSpan(r.L) <= rel) return true;
			for (const id of r.tracks) {
				const key = TileStore.key(r.L, r.k, id);
				const t = this.tiles.get(key);
				if (t && t.state === 'queued') this.tiles.delete(key);
				else if (t) t.refetch = false;
			}
			return false;
		});
	}

	_evict() {
		if (this.tiles.size <= MAX_TILES) return;
		for (const [key, t] of this.tiles) {
			if (this.tiles.size <= MAX_TILES * 0.9) break;
			if (t.state === 'loading' || t.state === 'queued') continue;
			if (t.canvas) { this.canvasCount--; this._free(t.canvas); }
			this.tiles.delete(key);
		}
	}

	/* Called after a canvas was attached to a tile; frees the oldest canvases. */
	noteCanvas() {
		this.canvasCount++;
		if (this.canvasCount <= MAX_CANVASES) return;
		for (const t of this.tiles.values()) {
			if (this.canvasCount <= MAX_CANVASES * 0.8) break;
			if (t.canvas) { this._free(t.canvas); t.canvas = null; t.canvasGen = -1; this.canvasCount--; }
		}
	}

	/* Freed canvases go back to the owner's pool (onCanvasFree) for reuse. */
	_free(c) {
		if (this.onCanvasFree) this.onCanvasFree(c);
	}

	/* Drop every cached canvas (theme, highlight or size changed). */
	dropCanvases() {
		for (const t of this.tiles.values()) {
			if (t.canvas) this._free(t.canvas);
			t.canvas = null;
			t.canvasGen = -1;
		}
		this.canvasCount = 0;
	}
}
