// SPDX-License-Identifier: MIT
// The static HTML export answers as the server does: the same session served by
// `tftracer serve` and exported by `tftracer export -f html` (opened from file://), the
// same API queries asked in each page through the UI's own client (web/api.js getJSON:
// HTTP when served, web/staticapi.js in the export's worker when static), the answers
// compared as JSON (key order aside; integers exact, those beyond 2^53 too, and of the
// same type: BigInt in both; fractions to 1e-9 relative).
// Queries: the session and steps; viewport windows (the whole session, a step, a window
// of a few microseconds around a slice) of every track; /api/slice for slices taken
// from those windows (at their depth, the deepest, next and previous, the seq-th of
// those starting together) and for bad parameters (the error status and text); search
// (substring, in=name,cat,args,track, regex, exact, a page after a cursor, bad
// queries); stats (by name, category and track; a window, clipped and not; top).
// Prints TAP; each difference is named by query and JSON path.
//
// With --expect-big, the answers must hold integers beyond 2^53 (an XSpace session's
// 64-bit ids), so that their comparison is not vacuous.
//
//   node static-live.test.mjs http://127.0.0.1:PORT/ --static FILE.html [--tag NAME] [--expect-big]
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const base = new URL(args.find((a) => /^https?:/.test(a)) || 'http://127.0.0.1:9999/');
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const staticFile = opt('--static', null);
const tag = opt('--tag', 'static-live');
const expectBig = args.includes('--expect-big');
const WAIT = 60000;

let n = 0, failed = 0;
console.log('TAP version 13');
function ok(cond, name, detail) {
	n++;
	if (cond) console.log(`ok ${n} - ${name}`);
	else { failed++; console.log(`not ok ${n} - ${name}${detail ? ` # ${String(detail).replace(/\n/g, ' ')}` : ''}`); }
	return cond;
}
function note(s) { console.log(`# ${s}`); }
function finish() {
	console.log(`1..${n}`);
	process.exit(failed ? 1 : 0);
}

if (!staticFile || !fs.existsSync(staticFile)) {
	ok(false, `${tag}: the static export`, `no --static FILE (${staticFile})`);
	finish();
}

const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tft-sl-profile-'));
const ctx = await chromium.launchPersistentContext(userDir, {
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
		'--no-first-run', '--disable-sync'],
	viewport: { width: 1200, height: 800 },
});

/* A page of the UI, loaded (the session read), with its console errors collected. */
async function open(url) {
	const p = await ctx.newPage();
	const errs = [];
	p.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
	p.on('pageerror', (e) => errs.push(`pageerror: ${e.message}`));
	await p.goto(url);
	await p.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
	return { p, errs };
}

/*
 * Ask `queries` ([path, query]) in page p through the UI's client; each answer in a
 * canonical form: objects with sorted keys, BigInt as a Number when exact (else
 * "bigint:" and its digits), an error as {error: {status, message}}.
 */
function ask(p, queries) {
	return p.evaluate(async (qs) => {
		const canon = (v) => {
			if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : `bigint:${v}`;
			if (Array.isArray(v)) return v.map(canon);
			if (v && typeof v === 'object') {
				const o = {};
				for (const k of Object.keys(v).sort()) if (v[k] !== undefined) o[k] = canon(v[k]);
				return o;
			}
			return v;
		};
		const out = [];
		for (const [path, q] of qs) {
			try {
				out.push(canon(await window.__tft.api(path, q)));
			} catch (e) {
				out.push({ error: { status: e.status, message: e.message } });
			}
		}
		return out;
	}, queries);
}

/* Integers beyond 2^53 compared and equal outside "session" (absolute times), by path. */
const bigSeen = new Map();
let bigArg = null; // one such argument value served (its digits), for a search

/* A canonical integer (a number, or "bigint:" and digits) as BigInt. */
const bigOf = (v) => BigInt(typeof v === 'string' ? v.replace(/^bigint:/, '') : v);

/* Differences between two canonical answers: ["path: served X, static Y", ...]. */
function diff(a, b, at, out) {
	if (out.length >= 8) return out;
	const num = (x) => typeof x === 'number';
	if (typeof a === 'string' && a.startsWith('bigint:') && !at.startsWith('api/session?')) {
		if (!bigArg && /\.args\./.test(at)) bigArg = a.slice('bigint:'.length);
		const where = at.replace(/\[\d+\]/g, '[]').replace(/\?[^.[]*/, '');
		if (a === b) bigSeen.set(where, (bigSeen.get(where) || 0) + 1);
	}
	if (num(a) && num(b)) {
		if (a !== b && !(Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)))) out.push(`${at}: served ${a}, static ${b}`);
		return out;
	}
	if (Array.isArray(a) && Array.isArray(b)) {
		if (a.length !== b.length) out.push(`${at}: served ${a.length} items, static ${b.length}`);
		for (let i = 0; i < Math.min(a.length, b.length); i++) diff(a[i], b[i], `${at}[${i}]`, out);
		return out;
	}
	if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
		for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
			if (!(k in a)) out.push(`${at}.${k}: not served, static ${JSON.stringify(b[k]).slice(0, 80)}`);
			else if (!(k in b)) out.push(`${at}.${k}: served ${JSON.stringify(a[k]).slice(0, 80)}, not static`);
			else diff(a[k], b[k], `${at}.${k}`, out);
		}
		return out;
	}
	if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${at}: served ${JSON.stringify(a).slice(0, 80)}, static ${JSON.stringify(b).slice(0, 80)}`);
	return out;
}

const served = await open(new URL('#/timeline', base).href);
const stat = await open(`file://${path.resolve(staticFile)}#/timeline`);
ok(await stat.p.evaluate(() => window.__tft.state().static), `${tag}: the export opens as a static page`);

/*
 * A viewport answer with its string ids as their texts: the export numbers the session's
 * strings afresh (its "strings" table), so only the texts can agree. The server leaves
 * `cat` out of a track without categories; the export gives it, every one "".
 */
function texts(v) {
	if (!v || !Array.isArray(v.tracks) || !v.strings) return v;
	const str = (id) => v.strings[id] ?? `(string ${id} not in the answer)`;
	const tracks = v.tracks.map((t) => {
		const o = { ...t };
		if (Array.isArray(t.name)) o.name = t.name.map(str);
		if (Array.isArray(t.cat)) o.cat = t.cat.map(str);
		if (Array.isArray(o.cat) && o.cat.every((c) => c === '')) delete o.cat;
		return o;
	});
	const { strings, ...rest } = v;
	void strings;
	return { ...rest, tracks };
}

/*
 * The server answers a coarse window of a big track from the store's summary levels
 * (`lod` > 0, docs/http-api.md "Level of detail"), the export from the events: those
 * tracks' items differ by design. Of them only the events they stand for are compared
 * (the sum of `count`, which over a whole track is its slices and instants), and only
 * when the window holds the whole session.
 */
let summarized = 0;
function byLevel(a, b, whole) {
	if (!a || !b || !Array.isArray(a.tracks) || !Array.isArray(b.tracks)) return;
	a.tracks.forEach((t, i) => {
		if (!(t.lod > 0) || !b.tracks[i]) return;
		summarized++;
		const sum = (x) => (Array.isArray(x.count) ? x.count.reduce((u, v) => u + v, 0) : null);
		a.tracks[i] = { id: t.id, summary_level: 'any', events: whole ? sum(t) : 'not compared' };
		b.tracks[i] = { id: b.tracks[i].id, summary_level: 'any', events: whole ? sum(b.tracks[i]) : 'not compared' };
	});
}

/* Ask both pages; one TAP line per group of queries (`whole`: which of them span the session). */
async function compare(name, queries, whole = []) {
	const [a, b] = [(await ask(served.p, queries)).map(texts), (await ask(stat.p, queries)).map(texts)];
	queries.forEach(([p], i) => { if (p === 'api/viewport') byLevel(a[i], b[i], whole.includes(i)); });
	const bad = [];
	for (let i = 0; i < queries.length && bad.length < 8; i++) {
		const d = diff(a[i], b[i], `${queries[i][0]}?${new URLSearchParams(queries[i][1] || {})}`, []);
		bad.push(...d);
	}
	const errors = a.filter((x) => x && x.error).length;
	ok(!bad.length, `${tag}: ${name}: ${queries.length} queries answer the same (${errors} of them errors)`, bad.join(' | '));
	return a;
}

const [session] = await ask(served.p, [['api/session', {}]]);
const T0 = bigOf(session.start_ns), T1 = bigOf(session.end_ns);
const span = T1 - T0;
const tracks = session.track_list.map((t) => t.id);
const ids = tracks.join(',');
note(`${tag}: ${tracks.length} tracks, ${span} ns, ${Number(session.slices)} slices`);
await compare('session and steps', [['api/session', {}], ['api/steps', {}]]);

// viewport: the whole session; the first step (or the middle tenth); a few us around a slice
const step0 = (session.step_list || [])[0];
const s0 = step0 ? bigOf(step0.start_ns) : T0 + span * 45n / 100n;
const s1 = step0 ? s0 + bigOf(step0.dur_ns) : T0 + span * 55n / 100n;
const [whole, stepWin] = await compare('viewport: the whole session and a step, every track', [
	['api/viewport', { tracks: ids, t0: `${T0}`, t1: `${T1}`, width: 1000, rel: 1 }],
	['api/viewport', { tracks: ids, t0: `${s0}`, t1: `${s1}`, width: 1500, rel: 1 }],
	['api/viewport', { t0: `${T0}`, t1: `${T1}`, width: 300 }],
], [0, 2]);
note(`${tag}: ${summarized} tracks answered from the store's summary levels: their events counted, not their items`);
// slices of the step's window, unmerged (count 1), spread over its tracks and depths
const picks = [];
for (const t of (stepWin && stepWin.tracks) || []) {
	if (!Array.isArray(t.dur)) continue;
	const mine = [];
	for (let i = 0; i < t.ts.length; i++) if (t.count[i] === 1) mine.push(i);
	for (let j = 0; j < Math.min(6, mine.length); j++) {
		const i = mine[Math.floor(j * mine.length / 6)];
		picks.push({ track: t.id, ts: BigInt(s0) + BigInt(t.ts[i]), dur: t.dur[i], depth: t.depth[i] });
	}
}
note(`${tag}: ${picks.length} slices picked from the step's window`);
ok(picks.length >= 10, `${tag}: slices to ask about`, `${picks.length} picked`);
const fine = picks.slice(0, 4).map((s) => ['api/viewport', { tracks: `${s.track}`, t0: `${s.ts - 2000n}`, t1: `${s.ts + 3000n}`, width: 800, rel: 1 }]);
await compare('viewport: windows of a few microseconds', fine);

const sliceQs = [];
for (const s of picks) {
	const mid = s.ts + BigInt(Math.floor(s.dur / 2));
	sliceQs.push(['api/slice', { track: s.track, ts: `${s.ts}`, depth: s.depth }]);
	sliceQs.push(['api/slice', { track: s.track, ts: `${mid}`, deepest: 1 }]);
	sliceQs.push(['api/slice', { track: s.track, ts: `${s.ts}`, depth: s.depth, nav: 'next' }]);
	sliceQs.push(['api/slice', { track: s.track, ts: `${s.ts}`, depth: s.depth, nav: 'prev' }]);
	sliceQs.push(['api/slice', { track: s.track, ts: `${s.ts}`, depth: s.depth, seq: 0 }]);
}
await compare('slice: at a depth, the deepest, next, previous, the seq-th', sliceQs);
const p0 = picks[0] || { track: tracks[0], ts: T0, depth: 0 };
await compare('slice: bad parameters and misses', [
	['api/slice', { track: p0.track }],
	['api/slice', { track: p0.track, ts: 'abc' }],
	['api/slice', { track: p0.track, ts: `${p0.ts}`, depth: -1 }],
	['api/slice', { track: p0.track, ts: `${p0.ts}`, deepest: 2 }],
	['api/slice', { track: p0.track, ts: `${p0.ts}`, deepest: 1, nav: 'next' }],
	['api/slice', { track: p0.track, ts: `${p0.ts}`, nav: 'sideways' }],
	['api/slice', { track: 4000000000, ts: `${p0.ts}` }],
	['api/slice', { track: p0.track, ts: `${T0 - 1000000n}`, depth: 0 }],
	['api/slice', { track: p0.track, ts: `${T1 + 1000000n}`, depth: 0, nav: 'next' }],
]);

// search: an argument value beyond 2^53 by its digits (all of them; its last six, which
// a rounded value does not end with)
if (bigArg) {
	const tail = bigArg.slice(-6);
	await compare('search: an argument beyond 2^53 by its digits', [
		['api/search', { q: bigArg, in: 'args', limit: 50 }],
		['api/search', { q: tail, in: 'args', limit: 50 }],
	]);
}

// search: words of the slices' names
const names = (await ask(served.p, picks.slice(0, 3).map((s) => ['api/slice', { track: s.track, ts: `${s.ts}`, depth: s.depth }])))
	.map((d) => (d && d.name) || '').filter(Boolean);
const word = (names.map((x) => (/[A-Za-z_]{4,}/.exec(x) || [''])[0]).find(Boolean) || 'a').toLowerCase();
const exact = names[0] || 'a';
const first = await compare('search: substring, fields, regex, exact', [
	['api/search', { q: word, limit: 200 }],
	['api/search', { q: word, in: 'name,cat,args,track', limit: 200 }],
	['api/search', { q: word.slice(0, 3), in: 'track' }],
	['api/search', { q: `^${word.slice(0, 3)}.*`, regex: 1, limit: 100 }],
	['api/search', { q: exact, exact: 1 }],
	['api/search', { q: 'no such name anywhere 1f3e' }],
]);
const page1 = first[0] && first[0].results ? first[0].results : [];
const last = page1[Math.min(page1.length - 1, 49)];
const cursor = last ? { after_ts: `${bigOf(last.ts)}`, after_track: last.track, after_depth: last.depth, after_seq: last.seq } : {};
await compare('search: a page after a cursor, bad queries', [
	['api/search', { q: word, limit: 50, ...cursor }],
	['api/search', { q: '' }],
	['api/search', { q: '(', regex: 1 }],
	['api/search', { q: word, regex: 1, exact: 1 }],
	['api/search', { q: word, in: 'name,colour' }],
]);

await compare('stats: by name, category, track; a window, clipped or not; top', [
	['api/stats', {}],
	['api/stats', { by: 'category' }],
	['api/stats', { by: 'track' }],
	['api/stats', { by: 'name', t0: `${s0}`, t1: `${s1}` }],
	['api/stats', { by: 'name', t0: `${s0}`, t1: `${s1}`, clip: 1 }],
	['api/stats', { by: 'name', top: 5, track: `${picks.length ? picks[0].track : tracks[0]}` }],
	['api/stats', { by: 'colour' }],
]);
void whole;

const bigs = [...bigSeen].map(([k, c]) => `${k} x${c}`);
note(`${tag}: integers beyond 2^53 compared (exact, BigInt in both): ${bigs.length ? bigs.join(', ') : 'none'}`);
if (expectBig) ok(bigSeen.size > 0, `${tag}: the answers hold integers beyond 2^53 (--expect-big), compared above`, 'none seen');
// (the queries meant to fail are logged as failed loads in the served page)
const servedErrs = served.errs.filter((e) => !/^Failed to load resource: the server responded with a status of 40[04]\b/.test(e));
ok(servedErrs.length === 0, `${tag}: no console error (served)`, servedErrs.slice(0, 3).join(' | '));
ok(stat.errs.length === 0, `${tag}: no console error (static)`, stat.errs.slice(0, 3).join(' | '));
await ctx.close();
fs.rmSync(userDir, { recursive: true, force: true });
finish();
