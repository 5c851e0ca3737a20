// SPDX-License-Identifier: MIT
// GET /api/search in a static export, as src/server/api_search.c answers it: the
// parameters read and refused as the server does; a case-insensitive substring, a regex
// (JavaScript's, case-insensitive, where the server compiles a POSIX extended one: the
// same for the usual patterns, not for POSIX classes or JavaScript-only syntax) or with
// exact=1 a whole name; over names, categories, argument values and track names; every
// match counted, a page of them in (ts, track, depth, seq) order after a cursor.
// Methods of StaticSession (static-session.js; staticapi.js mixes them in, `this` is the
// session). Loaded by the export's worker too: plain declarations only, each top-level
// name once across the modules staticapi.js imports.
import { present, queryInt, I64_MIN, I64_MAX, U32_MAX } from './query.js';
import { fail } from './static-session.js';

const MAX_LIMIT = 10000;

/*
 * An argument value as the server matches it: strings as they are, numbers as their
 * decimal text, arrays and objects as their compact JSON text; booleans and null never.
 */
function argMatch(v, test) {
	if (typeof v === 'string') return test(v);
	if (typeof v === 'number') return Number.isFinite(v) && test(String(v));
	if (typeof v === 'bigint') return test(String(v));
	if (v !== null && typeof v === 'object') {
		try { return test(JSON.stringify(v)); } catch { return false; }
	}
	return false;
}

export class StaticSearch {
	matcher(q, regex, exact) {
		if (exact) return (s) => s === q;
		if (regex) {
			let re;
			try { re = new RegExp(q, 'i'); } catch { throw fail(400, 'not a valid POSIX extended regular expression'); }
			return (s) => re.test(s);
		}
		const lc = q.toLowerCase();
		return (s) => s.toLowerCase().includes(lc);
	}

	/*
	 * Every match of a query, per track: [{id, ids: Int32Array, field: Uint8Array}] and the
	 * exact total. field: the first of name (1), cat (2), args (3), track (4) that matched;
	 * every event of a track whose name or process name matches is a match, and with
	 * in=track alone each such track gives one: its first event.
	 */
	matches(q, regex, fields, exact) {
		const key = `${regex ? 1 : 0}${exact ? 1 : 0}\u0000${[...fields].sort().join(',')}\u0000${q}`;
		if (this.searchCache && this.searchCache.key === key) return this.searchCache;
		const test = this.matcher(q, regex, exact);
		const byName = fields.has('name'), byCat = fields.has('cat'), byArgs = fields.has('args'), byTrack = fields.has('track');
		const strHit = new Uint8Array(this.strings.length); // names and categories: each string matched once
		if (byName || byCat) for (let k = 0; k < this.strings.length; k++) strHit[k] = test(this.strings[k]) ? 1 : 0;
		const per = [];
		let total = 0;
		for (const [tid, t] of [...this.tracks].sort((a, b) => a[0] - b[0])) {
			if (t.counter || !t.n) continue;
			const info = this.trackInfo.get(tid) || {};
			const proc = this.procs.get(info.process);
			const trackHit = byTrack && (test(String(info.name ?? '')) || (!!proc && test(String(proc.name ?? ''))));
			if (trackHit && fields.size === 1) {
				per.push({ id: tid, t, ids: Int32Array.of(0), field: Uint8Array.of(4) });
				total++;
				continue;
			}
			const ids = [], fld = [];
			for (let i = 0; i < t.n; i++) {
				let f = 0, a;
				if (byName && strHit[t.name[i]]) f = 1;
				else if (byCat && strHit[t.cat ? t.cat[i] : 0]) f = 2; // no "cat" array: every category is ""
				else if (byArgs && t.args && t.args[i] && (a = this.argsOf(t, i)) &&
					 Object.values(a).some((v) => argMatch(v, test))) f = 3;
				else if (trackHit) f = 4;
				if (f) { ids.push(i); fld.push(f); }
			}
			if (ids.length) { per.push({ id: tid, t, ids: Int32Array.from(ids), field: Uint8Array.from(fld) }); total += ids.length; }
		}
		this.searchCache = { key, per, total };
		return this.searchCache;
	}

	search(q) {
		// checked as the server checks them (src/server/api_search.c), in its order, with its texts
		const text = present(q.q) ? String(q.q) : '';
		if (!text.length) throw fail(400, 'q is required');
		const exactB = queryInt(q.exact, 0n, 1n, 0n);
		if (exactB === null) throw fail(400, 'exact must be 0 or 1');
		const exact = exactB === 1n;
		// exact=1: a whole name, case included (of up to 4096 bytes)
		if (new TextEncoder().encode(text).length > (exact ? 4096 : 256) || text.includes('\0'))
			throw fail(400, exact ? 'q is limited to 4096 bytes with exact=1' : 'q is limited to 256 bytes of text');
		const regexB = queryInt(q.regex, 0n, 1n, 0n), limitB = queryInt(q.limit, 1n, BigInt(MAX_LIMIT), 1000n);
		const cursor = [queryInt(q.after_ts, I64_MIN, I64_MAX, 0n), queryInt(q.after_track, 0n, U32_MAX, 0n),
			queryInt(q.after_depth, 0n, U32_MAX, 0n), queryInt(q.after_seq, 0n, U32_MAX - 1n, 0n)];
		if (regexB === null || limitB === null || cursor.includes(null))
			throw fail(400, 'regex, limit, after_ts, after_track, after_depth, after_seq must be integers in range');
		// in=: the fields searched, in the order a result reports the first that matched
		const FIELDS = ['name', 'cat', 'args', 'track'];
		const inList = present(q.in) ? String(q.in).split(',') : ['name'];
		if (inList.some((f) => !FIELDS.includes(f))) throw fail(400, 'in must be a comma-separated list of name, cat, args, track');
		const regex = regexB === 1n, limit = Number(limitB);
		if (exact && regex) throw fail(400, 'exact=1 and regex=1 exclude each other');
		// (a backslash before 1..9, escaped backslashes aside: the server refuses back-references)
		if (regex && /(^|[^\\])(\\\\)*\\[1-9]/.test(text)) throw fail(400, 'back-references (\\1 to \\9) are not supported in a regex');
		const fields = new Set(inList);
		const m = this.matches(text, regex, fields, exact);
		// an omitted after_track, after_depth or after_seq: past all of them
		const hasAfter = present(q.after_ts);
		const aTs = hasAfter ? Number(cursor[0] - this.T0) : -Infinity;
		const [aTrack, aDepth, aSeq] = [q.after_track, q.after_depth, q.after_seq].map((v, k) => (present(v) ? Number(cursor[k + 1]) : Infinity));
		// (ts, track, depth, seq) order, seq the ordinal among those starting together (the server's)
		const after = (ts, track, depth, seq) => !hasAfter || ts > aTs || (ts === aTs && (track > aTrack ||
			(track === aTrack && (depth > aDepth || (depth === aDepth && seq > aSeq)))));
		const cand = [];
		for (const e of m.per) {
			const { t, ids } = e;
			// first match not before the cursor's time, then up to limit+1 after it
			let lo = 0, hi = ids.length;
			if (hasAfter) while (lo < hi) { const mid = (lo + hi) >> 1; if (t.ts[ids[mid]] < aTs) lo = mid + 1; else hi = mid; }
			let taken = 0;
			for (let j = lo; j < ids.length && taken <= limit; j++) {
				const i = ids[j];
				const seq = this.seqOf(t, i);
				if (!after(t.ts[i], e.id, t.depth[i], seq)) continue;
				cand.push({ ts: t.ts[i], track: e.id, depth: t.depth[i], seq, i, t, f: e.field[j] });
				taken++;
			}
		}
		cand.sort((a, b) => a.ts - b.ts || a.track - b.track || a.depth - b.depth || a.seq - b.seq);
		const results = cand.slice(0, limit).map((c) => ({
			track: c.track, ts: this.abs(c.ts), dur: c.t.dur[c.i], depth: c.depth, seq: c.seq, name: this.str(c.t.name[c.i]), field: FIELDS[c.f - 1],
		}));
		return { total: m.total, results, more: cand.length > limit };
	}
}
