// SPDX-License-Identifier: MIT
// The standalone HTML export's query engine (src/wasm/wasm_query.c, run as the page runs
// it: web/static-engine.js under node's V8) against its peer, the server answering the
// same queries over HTTP (`tftracer serve`), in the same script: the engine's open time
// (DATA read into the session) and, per endpoint, the median time of the same requests,
// and that every answer is the server's after parsing, as tests/browser/static-live
// compares them: string ids as their texts (the page numbers its strings afresh), and a
// track the server answers from its stored summary levels (`lod` > 0) left out.
//
//   node bench/bench_static.mjs TFTRACER SESSION.tft [REPS]
// One JSON line per result on stdout (bench/run.sh emits them), a summary on stderr.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [bin, session, repsArg] = process.argv.slice(2);
if (!bin || !session) { console.error('usage: bench_static.mjs TFTRACER SESSION.tft [REPS]'); process.exit(2); }
const reps = +(repsArg || 5);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tft-bstatic-'));
const page = path.join(tmp, 'page.html');
execFileSync(bin, ['export', session, '-f', 'html', '-o', page, '-q']);
const html = fs.readFileSync(page, 'utf8');
const data = html.match(/<script type="application\/json" id="tft-data">([\s\S]*?)<\/script>/)[1];
const wasm = html.match(/<script type="application\/octet-stream" id="tft-wasm">([\s\S]*?)<\/script>/)[1];
const { QueryEngine } = await import(pathToFileURL(path.join(root, 'web', 'static-engine.js')));
const { parseExact, toJSONText } = await import(pathToFileURL(path.join(root, 'web', 'bigjson.js')));

const now = () => Number(process.hrtime.bigint()) / 1e6;
let t = now();
const engine = await QueryEngine.create(wasm, data);
const openMs = now() - t;

// the server, on a free port
const srv = spawn(bin, ['serve', session, '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve, reject) => {
	let out = '';
	srv.stdout.on('data', (b) => { out += b; const m = out.match(/https?:\/\/\S+/); if (m) resolve(m[0]); });
	srv.on('exit', () => reject(new Error('tftracer serve exited')));
});
async function served(p, q) {
	const u = new URL(p, base);
	for (const [k, v] of Object.entries(q)) u.searchParams.set(k, String(v));
	const r = await fetch(u);
	const text = await r.text();
	return { status: r.status, body: r.ok ? parseExact(text) : JSON.parse(text).error };
}

// the queries: the whole session and 20x, 400x zooms at several places, every track;
// slices along the busiest track; searches; statistics
const sess = (await served('api/session', {})).body;
const S = BigInt(sess.start_ns), E = BigInt(sess.end_ns), span = E - S;
const tracks = sess.track_list.filter((tr) => tr.min_ts_ns !== null);
const busiest = tracks.reduce((a, b) => ((b.slices || 0) > (a.slices || 0) ? b : a), tracks[0]);
const qs = { 'api/viewport': [], 'api/slice': [], 'api/search': [], 'api/stats': [] };
for (const zoom of [1n, 20n, 400n])
	for (const at of [1n, 3n, 5n, 7n]) {
		const w = span / zoom, c = S + (span * at) / 8n;
		qs['api/viewport'].push({ t0: String(c - w / 2n), t1: String(c + w / 2n), width: 1500, rel: 1 }); // as the Timeline's tiles
	}
for (let k = 1; k <= 40; k++)
	qs['api/slice'].push({ track: busiest.id, ts: String(BigInt(busiest.min_ts_ns) + ((BigInt(busiest.max_ts_ns) - BigInt(busiest.min_ts_ns)) * BigInt(k)) / 41n), depth: 0 });
for (const q of ['a', 'conv', 'nccl', 'step', 'zz_none']) qs['api/search'].push({ q, limit: 200 });
qs['api/search'].push({ q: '1', in: 'args', limit: 200 });
for (const by of ['name', 'category', 'track']) qs['api/stats'].push({ by });
qs['api/stats'].push({ by: 'name', t0: String(S + span / 4n), t1: String(S + span / 2n), clip: 1 });

/* A viewport answer as static-live.test.mjs compares it (texts, summary-level tracks out). */
function comparable(p, body, other) {
	if (p !== 'api/viewport' || !body || !Array.isArray(body.tracks)) return body;
	const str = (id) => body.strings[id];
	const tracks = body.tracks.map((t, i) => {
		if (t.lod > 0 || (other.tracks[i] && other.tracks[i].lod > 0)) return { id: t.id, summary_level: 'any' };
		const o = { ...t };
		if (Array.isArray(t.name)) o.name = t.name.map(str);
		if (Array.isArray(t.cat)) o.cat = t.cat.map(str);
		if (Array.isArray(o.cat) && o.cat.every((c) => c === '')) delete o.cat;
		return o;
	});
	const { strings, ...rest } = body;
	void strings;
	return { ...rest, tracks };
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
const rows = [];
let differ = 0, asked = 0;
for (const [p, list] of Object.entries(qs)) {
	const te = [], ts = [];
	for (let r = 0; r < reps; r++) {
		for (const q of list) {
			let e, s;
			t = now();
			try { e = { status: 200, body: engine.query(p, q) }; } catch (x) { e = { status: x.status, body: x.message }; }
			te.push(now() - t);
			t = now();
			s = await served(p, q);
			ts.push(now() - t);
			if (r === 0) {
				asked++;
				if (e.status !== s.status ||
				    toJSONText(comparable(p, e.body, s.body)) !== toJSONText(comparable(p, s.body, e.body))) {
					if (differ++ < 3) console.error(`# differ: ${p} ${JSON.stringify(q)}: ${e.status} vs ${s.status}`);
				}
			}
		}
	}
	const row = { bench: `static_${p.slice(4)}`, queries: list.length * reps, engine_p50_ms: +median(te).toFixed(3),
		server_p50_ms: +median(ts).toFixed(3), ratio: +(median(te) / median(ts)).toFixed(2) };
	rows.push(row);
}
srv.kill();
console.log(JSON.stringify({ bench: 'static_open', page_mb: +(html.length / 1e6).toFixed(2), data_mb: +(data.length / 1e6).toFixed(2),
	wasm_kb: Math.round(wasm.replace(/\s/g, '').length * 3 / 4 / 1024), open_ms: +openMs.toFixed(1), answers: asked, differ }));
for (const r of rows) console.log(JSON.stringify(r));
console.error(`# engine opened ${(data.length / 1e6).toFixed(1)} MB of DATA in ${openMs.toFixed(0)} ms; ${asked} queries, ${differ} answers differ from the server's`);
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(differ ? 1 : 0);
