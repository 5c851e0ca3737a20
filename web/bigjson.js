// SPDX-License-Identifier: MIT
// Exact 64-bit integers (nanosecond times, ids) in the UI: BigInt from a number or a
// digit string, JSON parsing that keeps integers beyond 2^53 exact, JSON text that
// writes BigInt as plain digits. Used by api.js and the static export's queries
// (staticapi.js, which its worker loads too: plain declarations only).

/* An integer-ish value (BigInt, finite number, digit string) as BigInt; anything else 0n. */
export function big(v) {
	if (typeof v === 'bigint') return v;
	if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.round(v));
	if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
	return 0n;
}

/* A JSON.parse reviver: integers beyond 2^53 keep every digit, as BigInt (needs the
 * reviver's source access). */
export function exactReviver(key, value, ctx) {
	if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) &&
	    ctx && typeof ctx.source === 'string' && /^-?\d+$/.test(ctx.source))
		return BigInt(ctx.source);
	return value;
}

/*
 * Whether JSON text holds an integer beyond 2^53 - 1 (that JSON.parse would round): a run
 * of digits beyond it with no '.', 'e' or 'E' next to it; one inside a string counts too
 * (the exporter's rule, src/export/export_html.c has_unsafe_int).
 */
export function hasUnsafeInt(text) {
	for (const m of text.matchAll(/(?<![.\d])\d{16,}(?![.\deE])/g))
		if (m[0].length > 16 || m[0] > '9007199254740991') return true;
	return false;
}

/* JSON.parse keeping integers beyond 2^53 exact (as BigInt). */
export function parseExact(text) {
	return JSON.parse(text, exactReviver);
}

/* JSON.stringify that writes BigInt as plain digits. */
export function toJSONText(o, indent) {
	const marks = [];
	const s = JSON.stringify(o, (k, v) => {
		if (typeof v === 'bigint') {
			marks.push(v.toString());
			return `\u0000big${marks.length - 1}\u0000`;
		}
		return v;
	}, indent);
	return s.replace(/"\\u0000big(\d+)\\u0000"/g, (m, i) => marks[+i]);
}
