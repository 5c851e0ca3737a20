// SPDX-License-Identifier: MIT
// Builds a static HTML export (docs/http-api.md "Static HTML export") from a running
// `tftracer serve`, independently of src/export/export_html.c: DATA from the JSON API
// (session; every named slice and instant by paging /api/search; counters from
// /api/viewport), the document from web/index.html by the documented marker
// substitution. Used by the browser tests when `tftracer export -f html` is missing,
// and as a cross-check of the exporter's document layout.
//
//   node make-static.mjs http://127.0.0.1:PORT/ OUT.html [--web DIR] [--with-args N]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const base = new URL(args.find((a) => /^https?:/.test(a)));
const positional = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
const out = positional.find((a) => !/^https?:/.test(a));
const webDir = path.resolve(opt('--web', path.join(here, '../../web')));
const withArgs = +opt('--with-args', '200');
if (!out) { console.error('usage: make-static.mjs URL OUT.html'); process.exit(2); }

/* Integers of 16+ digits become strings before JSON.parse, so none is rounded. */
const exactText = (t) => t.replace(/(:\s*|\[\s*|,\s*)(-?\d{16,})(?=\s*[,}\]])/g, '$1"$2"');
async function get(p, q) {
	const u = new URL(p, base);
	for (const [k, v] of Object.entries(q || {})) u.searchParams.set(k, String(v));
	const r = await fetch(u);
	const text = await r.text();
	if (!r.ok) throw new Error(`${u.pathname}: ${r.status} ${text.slice(0, 200)}`);
	return { text, json: JSON.parse(exactText(text)) };
}

function assemble(webDirectory, data, wasm) {
	const html = fs.readFileSync(path.join(webDirectory, 'index.html'), 'utf8');
	const a = html.indexOf('<!--tft:assets-->'), b = html.indexOf('<!--/tft:assets-->');
	if (a < 0 || b < a) throw new Error('index.html lacks the tft:assets markers');
	const js = fs.readdirSync(webDirectory).filter((f) => f.endsWith('.js') && f !== 'static-boot.js' && f !== 'tileworker.js').sort();
	const read = (f) => {
		const t = fs.readFileSync(path.join(webDirectory, f), 'utf8');
		if (/<\/script|<!--/i.test(t)) throw new Error(`${f} contains "</script" or "<!--"`);
		return t;
	};
	const parts = [
		`<style>${read('style.css')}</style>`,
		`<script type="application/json" id="tft-data">${data.replace(/</g, '\\u003c')}</script>`,
		`<script type="application/octet-stream" id="tft-wasm">${wasm.toString('base64')}</script>`,
		...js.map((f) => `<script type="text/plain" data-tft-module="${f}">${read(f)}</script>`),
		`<script>${read('static-boot.js')}</script>`,
	];
	return html.slice(0, a) + parts.join('\n') + html.slice(b + '<!--/tft:assets-->'.length);
}

const sess = await get('api/session');
const T0 = BigInt(sess.json.start_ns);
const strings = [''];
const sid = new Map([['', 0]]);
const S = (s) => { s = s ?? ''; let i = sid.get(s); if (i === undefined) { i = strings.length; strings.push(s); sid.set(s, i); } return i; };
const per = new Map();
let after = null, pages = 0;
for (;;) {
	const q = { q: '.', regex: 1, limit: 10000 };
	if (after) Object.assign(q, after);
	const { json } = await get('api/search', q);
	for (const r of json.results) {
		let t = per.get(r.track);
		if (!t) { t = []; per.set(r.track, t); }
		t.push({ ts: Number(BigInt(r.ts) - T0), dur: Number(r.dur), depth: r.depth, name: S(r.name) });
	}
	pages++;
	if (!json.more || !json.results.length || pages > 500) break;
	const last = json.results[json.results.length - 1];
	after = { after_ts: String(last.ts), after_track: last.track, after_depth: last.depth };
}
const tracks = [];
let withArgsLeft = withArgs;
for (const t of sess.json.track_list) {
	if (t.kind === 'counter') {
		const { json } = await get('api/viewport', { tracks: t.id, t0: String(T0), t1: String(BigInt(sess.json.end_ns)), width: 10000, rel: 1 });
		const c = json.tracks[0];
		if (c && c.ts.length) tracks.push({ id: t.id, ts: c.ts, value: c.value });
		continue;
	}
	const ev = per.get(t.id);
	if (!ev) continue;
	ev.sort((a, b) => a.ts - b.ts || a.depth - b.depth);
	const o = { id: t.id, ts: ev.map((e) => e.ts), dur: ev.map((e) => e.dur), depth: ev.map((e) => e.depth), name: ev.map((e) => e.name) };
	// categories and arguments of the first few events (the rest stay null)
	if (withArgsLeft > 0) {
		o.cat = new Array(ev.length).fill(0);
		o.args = new Array(ev.length).fill(null);
		for (let i = 0; i < ev.length && withArgsLeft > 0; i++, withArgsLeft--) {
			const { json } = await get('api/slice', { track: t.id, ts: String(T0 + BigInt(ev[i].ts)), depth: ev[i].depth });
			o.cat[i] = S(json.cat || '');
			o.args[i] = json.args && Object.keys(json.args).length ? json.args : null;
		}
	}
	tracks.push(o);
}
const data = `{"tft_static": 1, "session": ${sess.text}, "strings": ${JSON.stringify(strings)}, "tracks": ${JSON.stringify(tracks)}, "flows": [], "truncated": 0}`;
// the query engine, as the server serves it (an embedded asset)
const wasmRes = await fetch(new URL('assets/tftracer.wasm', base));
if (!wasmRes.ok) throw new Error(`assets/tftracer.wasm: ${wasmRes.status}`);
fs.writeFileSync(out, assemble(webDir, data, Buffer.from(await wasmRes.arrayBuffer())));
const n = tracks.reduce((a, t) => a + t.ts.length, 0);
console.error(`# make-static: ${n} events on ${tracks.length} tracks, ${strings.length} strings, ${(fs.statSync(out).size / 1e6).toFixed(1)} MB -> ${out}`);
