// SPDX-License-Identifier: MIT
// Decodes a /api/viewport answer into typed arrays per track, with times as offsets
// from the requested t0 (exact when the server honours rel=1). Used by the tile
// worker and, when workers are unavailable, by the main thread; in a static export,
// in its worker (staticapi.js): plain declarations only.
import { kindName, TILE_EVF_MASK, TILE_INSTANT, EV_INSTANT } from './kinds.js';

/* An array of n numbers as a typed array of `Type` (anything not a number: 0); `a` not an
 * array: zeros. Shared with the static export's session loading (staticapi.js). */
export function numbers(a, n, Type = Float64Array) {
	const out = new Type(n);
	if (Array.isArray(a)) for (let i = 0; i < n; i++) out[i] = +a[i] || 0;
	return out;
}

function u32(a, n, dflt) {
	if (!Array.isArray(a) && dflt) return new Uint32Array(n).fill(dflt);
	return numbers(a, n, Uint32Array);
}

/*
 * json: the parsed answer; t0: the t0 we asked for, as a decimal string.
 * Returns { tracks: [...], strings: {id: text}, transfer: [ArrayBuffer...] }.
 */
export function decodeViewport(json, t0) {
	const rel = json && (json.rel === 1 || json.rel === true);
	const t0n = Number(t0);
	const out = [];
	const transfer = [];
	for (const t of (json && json.tracks) || []) {
		const ts = Array.isArray(t.ts) ? t.ts : [];
		const n = ts.length;
		const off = new Float64Array(n);
		if (rel) for (let i = 0; i < n; i++) off[i] = +ts[i];
		else for (let i = 0; i < n; i++) off[i] = Number(ts[i]) - t0n; // (BigInt from the static export)
		if (kindName(t.kind) === 'counter' || (Array.isArray(t.value) && !Array.isArray(t.dur))) {
			const value = numbers(t.value, n);
			const hasBand = Array.isArray(t.min) && Array.isArray(t.max) && t.min.length === n && t.max.length === n;
			const min = hasBand ? numbers(t.min, n) : null;
			const max = hasBand ? numbers(t.max, n) : null;
			out.push({ id: t.id, counter: true, n, off, value, min, max });
			transfer.push(off.buffer, value.buffer);
			if (hasBand) transfer.push(min.buffer, max.buffer);
			continue;
		}
		const dur = numbers(t.dur, n);
		const depth = new Uint16Array(n);
		if (Array.isArray(t.depth)) for (let i = 0; i < n; i++) depth[i] = Math.min(65535, t.depth[i] >>> 0);
		const name = u32(t.name, n, 0);
		const count = u32(t.count, n, 1);
		// flags: TFT_EVF_* (1 unclosed, 2 summary, ...); bit 7 marks an instant (ekind 1)
		const flags = new Uint8Array(n);
		if (Array.isArray(t.flags)) for (let i = 0; i < n; i++) flags[i] = t.flags[i] & TILE_EVF_MASK;
		if (Array.isArray(t.ekind)) for (let i = 0; i < n; i++) if (t.ekind[i] === EV_INSTANT) flags[i] |= TILE_INSTANT;
		// categories (string ids) for colour by category; the server leaves them out of a
		// track without any (and an older server everywhere): null, see Timeline.colorKey
		const cat = Array.isArray(t.cat) && t.cat.length === n ? u32(t.cat, n, 0) : null;
		out.push({ id: t.id, counter: false, n, off, dur, depth, name, count, flags, cat });
		transfer.push(off.buffer, dur.buffer, depth.buffer, name.buffer, count.buffer, flags.buffer);
		if (cat) transfer.push(cat.buffer);
	}
	return { tracks: out, strings: (json && json.strings) || {}, rel, transfer };
}
