// SPDX-License-Identifier: MIT
// Fitting a name into a width on a canvas, measured in the canvas's own font: cut
// from the middle, keeping the part that tells the name apart from the others it is
// shown with ("/job:lo…GPU:0/stream:14", not "/job:localhost/replic…" for every device
// of a TF session). What is cut is in a tooltip wherever such a label is drawn.

const ELL = '…';
/* Where a name's segments start: after these (paths, "key:value", words, "f(x)"). */
const SEP = new Set(['/', ':', ' ', '.', ',', '(', '[', '#', '|', '\\', '@']);

/*
 * For each of `names`, the index where the part that tells it apart from every other
 * name begins: past the longest prefix it shares with another one, moved back to the
 * start of that segment (at most 16 characters back). 0 when no other name starts like
 * it. A Map name -> index.
 */
export function distinctStarts(names) {
	const u = [...new Set(names.map((x) => String(x ?? '')))].sort();
	const lcp = (a, b) => { let i = 0; while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++; return i; };
	const out = new Map();
	for (let i = 0; i < u.length; i++) {
		const s = u[i];
		let k = Math.max(i > 0 ? lcp(s, u[i - 1]) : 0, i + 1 < u.length ? lcp(s, u[i + 1]) : 0);
		if (k > 0) {
			const floor = Math.max(0, k - 16);
			let j = Math.min(k, s.length);
			while (j > floor && !SEP.has(s[j - 1])) j--;
			if (j === 0 || SEP.has(s[j - 1])) k = j;
		}
		out.set(s, k);
	}
	return out;
}

const cache = new Map();

/*
 * `text` cut to at most `maxPx` as `measure(str)` measures it: whole when it fits;
 * else head + "…" + tail with the tail (60% of what is kept) covering `text` from
 * `keep` on, the part that tells it apart; when even that does not fit, "…" and the
 * start of that part. `key` (the font) caches the answer.
 */
export function elide(text, maxPx, measure, keep = 0, key = '') {
	text = String(text ?? '');
	if (maxPx <= 0) return '';
	const ck = `${key}\u0000${Math.round(maxPx * 4)}\u0000${keep}\u0000${text}`;
	const hit = cache.get(ck);
	if (hit !== undefined) return hit;
	const r = elide1(text, maxPx, measure, keep);
	if (cache.size > 20000) cache.clear();
	cache.set(ck, r);
	return r;
}

/* The longest start of `text` that fits with "…" after it. */
function cutEnd(text, maxPx, measure) {
	let lo = 0, hi = text.length - 1;
	while (lo < hi) {
		const m = (lo + hi + 1) >> 1;
		if (measure(text.slice(0, m) + ELL) <= maxPx) lo = m; else hi = m - 1;
	}
	return lo ? text.slice(0, lo) + ELL : '';
}

function elide1(text, maxPx, measure, keep) {
	if (measure(text) <= maxPx) return text;
	const n = text.length;
	if (measure(ELL) > maxPx) return '';
	keep = Math.max(0, Math.min(keep | 0, n));
	const need = keep > 0 ? n - keep : 0;
	// the telling part alone is too long: where it starts (the names differ there)
	if (need > 0 && measure(ELL + text.slice(keep)) > maxPx) return ELL + cutEnd(text.slice(keep), maxPx - measure(ELL), measure);
	// the most characters kept (head + tail) that fit: a binary search
	const build = (k) => {
		const tail = Math.min(k, Math.max(need, Math.ceil(k * 0.6)));
		return text.slice(0, k - tail) + ELL + text.slice(n - tail);
	};
	let lo = Math.min(need, n - 1), hi = n - 1;
	if (measure(build(lo)) > maxPx) return lo ? ELL + text.slice(n - lo) : ELL;
	while (lo < hi) {
		const m = (lo + hi + 1) >> 1;
		if (measure(build(m)) <= maxPx) lo = m; else hi = m - 1;
	}
	return build(lo);
}
