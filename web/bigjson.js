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

/* Whether JSON.parse hands revivers the source text (Chromium 114+, Firefox 135+, node 21+). */
let sourceAccess = null;
function hasSourceAccess() {
	if (sourceAccess === null) {
		sourceAccess = false;
		JSON.parse('1', (k, v, c) => { sourceAccess = !!(c && typeof c.source === 'string'); return v; });
	}
	return sourceAccess;
}

/*
 * JSON.parse keeping integers beyond 2^53 exact (as BigInt). Where the reviver has no
 * source text, the integers are found by a scan of the text outside strings, replaced
 * by a marked string for the parse and revived from their digits.
 */
export function parseExact(text) {
	if (hasSourceAccess() || !hasUnsafeInt(text)) return JSON.parse(text, exactReviver);
	const marks = [];
	let out = '', last = 0;
	for (let i = 0, n = text.length; i < n; i++) {
		const c = text.charCodeAt(i);
		if (c === 34) { // a string: to its closing quote
			for (i++; i < n; i++) {
				const d = text.charCodeAt(i);
				if (d === 92) i++;
				else if (d === 34) break;
			}
			continue;
		}
		if (c !== 45 && (c < 48 || c > 57)) continue;
		let j = i + 1;
		while (j < n && /[0-9.eE+-]/.test(text[j])) j++;
		const num = text.slice(i, j);
		if (/^-?\d{16,}$/.test(num) && !Number.isSafeInteger(Number(num))) {
			out += text.slice(last, i) + `"\\u0000\\u0001${marks.length}"`;
			marks.push(BigInt(num));
			last = j;
		}
		i = j - 1;
	}
	out += text.slice(last);
	return JSON.parse(out, (k, v) => {
		if (typeof v === 'string' && v.charCodeAt(0) === 0 && v.charCodeAt(1) === 1) {
			const m = marks[+v.slice(2)];
			if (m !== undefined) return m;
		}
		return v;
	});
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
