// SPDX-License-Identifier: MIT
// The query parameters of an API request as the server receives and reads them
// (src/server/query.c): what a request carries (queryParams: absent, null and empty
// values left out, the others as text), and an integer parameter read the way
// tft_query_get_i64 reads it. api.js builds served requests' URLs with it; the static
// export (staticapi.js, in its worker too: plain declarations only) reads the same
// parameters from the same text, so both see what the server would see.

/* [name, text] of each parameter a request carries (URLSearchParams writes String(v)). */
export function queryParams(query) {
	const out = [];
	if (query) {
		for (const [k, v] of Object.entries(query))
			if (v !== undefined && v !== null && v !== '') out.push([k, String(v)]);
	}
	return out;
}

export const I64_MIN = -(2n ** 63n), I64_MAX = 2n ** 63n - 1n, U32_MAX = 2n ** 32n - 1n;

/* A query parameter given (an empty value too: the server sees `name=` as given). */
export function present(v) { return v !== undefined && v !== null; }

/*
 * An integer parameter as the server reads it (tft_query_get_i64): absent, `dflt`;
 * given, a decimal integer (an optional '-', digits only, at most 21 characters) in
 * [min, max] as a BigInt, otherwise null.
 */
export function queryInt(v, min, max, dflt) {
	if (!present(v)) return dflt;
	const s = String(v);
	if (s.length > 21 || !/^-?\d+$/.test(s)) return null;
	const b = BigInt(s);
	return b < min || b > max ? null : b;
}

/*
 * A list of ids as the server reads one (tft_query_parse_u32_list): comma-separated
 * integers in [0, 2^32), at most `max`, each of them known (known(id)); duplicates
 * dropped, the first kept. {ids} or {error: 'malformed' | 'too many' | 'unknown'} (a
 * malformed item anywhere wins over an unknown id).
 */
export function queryIdList(v, known, max) {
	const s = String(v);
	const ids = [], seen = new Set();
	let unknown = false;
	if (!s.length) return { ids };
	for (const item of s.split(',')) {
		const b = item.length ? queryInt(item, 0n, U32_MAX, null) : null;
		if (b === null) return { error: 'malformed' };
		if (ids.length === max) return { error: 'too many' };
		const id = Number(b);
		if (!known(id)) unknown = true;
		else if (!seen.has(id)) { seen.add(id); ids.push(id); }
	}
	return unknown ? { error: 'unknown' } : { ids };
}
