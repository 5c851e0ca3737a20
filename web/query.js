// SPDX-License-Identifier: MIT
// The query parameters of an API request as the server receives them: what a request
// carries (queryParams: absent, null and empty values left out, the others as text).
// api.js builds served requests' URLs with it; the static export's engine
// (static-engine.js, in its worker too: plain declarations only) hands the same text to
// the server's own parameter parsing (src/query/params.c), so both see the same.

/* [name, text] of each parameter a request carries (URLSearchParams writes String(v)). */
export function queryParams(query) {
	const out = [];
	if (query) {
		for (const [k, v] of Object.entries(query))
			if (v !== undefined && v !== null && v !== '') out.push([k, String(v)]);
	}
	return out;
}
