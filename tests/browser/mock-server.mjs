// SPDX-License-Identifier: MIT
// Development-only stand-in for `tftracer serve`: implements docs/http-api.md over a
// Chrome/Kineto trace (or a synthetic N-event session) so the web UI can be built and
// profiled before or without the C server. The real browser tests use the C server.
//
//   node mock-server.mjs --port 8123 --trace FILE.json[.gz]
//   node mock-server.mjs --port 8123 --synthetic 10000000
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const opts = { port: 8123, web: path.resolve(here, '../../web'), trace: null, synthetic: 0, delay: 0 };
for (let i = 2; i < process.argv.length; i++) {
	const a = process.argv[i];
	if (a === '--port') opts.port = +process.argv[++i];
	else if (a === '--trace') opts.trace = process.argv[++i];
	else if (a === '--synthetic') opts.synthetic = +process.argv[++i];
	else if (a === '--web') opts.web = process.argv[++i];
	else if (a === '--delay') opts.delay = +process.argv[++i];
}

/* ---- the in-memory session ------------------------------------------------ */
const strings = [''];
const strIds = new Map([['', 0]]);
function sid(s) {
	s = s == null ? '' : String(s);
	let id = strIds.get(s);
	if (id === undefined) { id = strings.length; strings.push(s); strIds.set(s, id); }
	return id;
}
const processes = []; // {id, name, pid, rank, host}
const tracks = [];    // {id, process, kind, name, tid, ev: {...}}
const flows = [];     // {flow_id, name, cat, st, sts, dt, dts}
const steps = [];
let baseAbs = 0n;     // absolute ns of rel 0
let spanNs = 0;
let format = 'chrome-json', producer = 'mock';

function newTrack(proc, kind, name, tid) {
	const t = { id: tracks.length, process: proc.id, kind, name, tid, sort_index: tracks.length,
		raw: [], counters: [] };
	tracks.push(t);
	return t;
}

/* Columnar events per track after finish(): ts, dur (Float64), name, cat, depth,
 * flags, self; args kept by index for real traces. */
function finishTrack(t) {
	const n = t.raw.length;
	t.raw.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
	const ts = new Float64Array(n), dur = new Float64Array(n), self = new Float64Array(n);
	const name = new Uint32Array(n), cat = new Uint32Array(n), depth = new Uint16Array(n);
	const flags = new Uint8Array(n);
	const args = new Array(n);
	const stack = [];
	let maxDepth = 0;
	for (let i = 0; i < n; i++) {
		const e = t.raw[i];
		while (stack.length && ts[stack[stack.length - 1]] + dur[stack[stack.length - 1]] <= e.ts) stack.pop();
		ts[i] = e.ts; dur[i] = e.dur; name[i] = e.name; cat[i] = e.cat; flags[i] = e.flags || 0;
		args[i] = e.args; self[i] = e.dur;
		if (stack.length) self[stack[stack.length - 1]] -= e.dur;
		depth[i] = stack.length;
		if (stack.length > maxDepth) maxDepth = stack.length;
		if (e.dur > 0) stack.push(i);
	}
	t.raw = null;
	t.ev = { n, ts, dur, self, name, cat, depth, flags, args };
	t.max_depth = maxDepth;
	buildLod(t);
}

/* Per depth, a pyramid of merged blocks: level j merges runs of events shorter
 * than 2^(8+2j) ns whose gaps are shorter too. Queries start from the coarsest
 * level finer than the requested resolution. */
function buildLod(t) {
	const E = t.ev;
	const perDepth = [];
	for (let i = 0; i < E.n; i++) {
		const d = E.depth[i];
		(perDepth[d] || (perDepth[d] = [])).push(i);
	}
	t.lod = perDepth.map((idx) => {
		const base = { ts: new Float64Array(idx.length), end: new Float64Array(idx.length),
			name: new Uint32Array(idx.length), count: new Uint32Array(idx.length),
			ev: Int32Array.from(idx), n: idx.length, bucket: 0, longest: new Float64Array(idx.length) };
		idx.forEach((i, k) => { base.ts[k] = E.ts[i]; base.end[k] = E.ts[i] + E.dur[i];
			base.name[k] = E.name[i]; base.count[k] = 1; base.longest[k] = E.dur[i]; });
		const levels = [base];
		let prev = base;
		for (let j = 0; j < 24 && prev.n > 64; j++) {
			const b = 2 ** (8 + 2 * j);
			const L = mergeLevel(prev, b);
			L.bucket = b;
			if (L.n === prev.n && j > 0) { prev = L; levels.push(L); continue; }
			levels.push(L);
			prev = L;
		}
		return levels;
	});
}

function mergeLevel(P, b) {
	const ts = [], end = [], name = [], count = [], ev = [], longest = [];
	let i = 0;
	while (i < P.n) {
		let s = P.ts[i], e = P.end[i], c = P.count[i], nm = P.name[i], lg = P.longest[i], first = P.ev[i];
		if (e - s < b) {
			let j = i + 1;
			while (j < P.n && P.end[j] - P.ts[j] < b && P.ts[j] - e < b) {
				if (P.longest[j] > lg) { lg = P.longest[j]; nm = P.name[j]; }
				e = Math.max(e, P.end[j]); c += P.count[j]; j++;
			}
			i = j;
		} else i++;
		ts.push(s); end.push(e); name.push(nm); count.push(c); ev.push(c === 1 ? first : -1); longest.push(lg);
	}
	return { ts: Float64Array.from(ts), end: Float64Array.from(end), name: Uint32Array.from(name),
		count: Uint32Array.from(count), ev: Int32Array.from(ev), longest: Float64Array.from(longest), n: ts.length };
}

function lowerBound(arr, n, x) {
	let lo = 0, hi = n;
	while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < x) lo = m + 1; else hi = m; }
	return lo;
}

/* ---- import a Chrome / Kineto trace --------------------------------------- */
function importChrome(file) {
	let buf = fs.readFileSync(file);
	if (buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
	const doc = JSON.parse(buf.toString('utf8'));
	const evs = Array.isArray(doc) ? doc : doc.traceEvents || [];
	if (!Array.isArray(doc) && (doc.schemaVersion || doc.deviceProperties)) { format = 'kineto'; producer = 'PyTorch profiler (Kineto)'; }
	const rank = doc.distributedInfo && doc.distributedInfo.rank != null ? doc.distributedInfo.rank : -1;
	let minTs = Infinity;
	for (const e of evs) if (e.ph !== 'M' && typeof e.ts === 'number' && e.ts < minTs) minTs = e.ts;
	if (!isFinite(minTs)) minTs = 0;
	const baseUs = Math.floor(minTs);
	baseAbs = BigInt(baseUs) * 1000n;
	const rel = (us) => Math.round((us - baseUs) * 1000);
	const procByPid = new Map();
	const proc = (pid) => {
		let p = procByPid.get(pid);
		if (!p) { p = { id: processes.length, name: '', pid: typeof pid === 'number' ? pid : processes.length, rank, host: '', threads: new Map(), tnames: new Map() }; processes.push(p); procByPid.set(pid, p); }
		return p;
	};
	const isGpuCat = (c) => /^(kernel|gpu_memcpy|gpu_memset|memcpy|memset|cuda_driver_kernel)$/i.test(c || '');
	const isComm = (n) => /nccl|all_?reduce|allgather|all_to_all|alltoall|reduce_scatter|broadcast|send|recv|gloo/i.test(n || '');
	const trackFor = (p, tid, kind, suffix) => {
		const key = `${tid}|${kind}`;
		let t = p.threads.get(key);
		if (!t) { t = newTrack(p, kind, String(tid) + (suffix || ''), typeof tid === 'number' ? tid : parseInt(String(tid).replace(/\D+/g, '')) || 0); p.threads.set(key, t); }
		return t;
	};
	const open = new Map();
	const flowStarts = new Map();
	let end = 0;
	for (const e of evs) {
		const ph = e.ph;
		if (ph === 'M') {
			const p = proc(e.pid);
			if (e.name === 'process_name' && e.args) p.name = String(e.args.name);
			if (e.name === 'thread_name' && e.args) p.tnames.set(String(e.tid), String(e.args.name));
			continue;
		}
		if (typeof e.ts !== 'number') continue;
		const p = proc(e.pid);
		const ts = rel(e.ts);
		if (ph === 'X' || ph === 'B' || ph === 'E' || ph === 'i' || ph === 'I') {
			let kind = isGpuCat(e.cat) || /stream/i.test(String(e.tid)) ? 'gpu_stream' : 'thread';
			if (/Compute$/.test(p.name)) kind = 'device';
			let t;
			if (kind === 'gpu_stream' && isComm(e.name)) t = trackFor(p, e.tid, 'comm', ' (comm)');
			else t = trackFor(p, e.tid, kind);
			if (ph === 'X') {
				const d = Math.max(0, Math.round((e.dur || 0) * 1000));
				t.raw.push({ ts, dur: d, name: sid(e.name), cat: sid(e.cat), args: e.args });
				end = Math.max(end, ts + d);
			} else if (ph === 'B') {
				const k = `${e.pid}|${e.tid}`;
				(open.get(k) || open.set(k, []).get(k)).push({ t, ts, e });
			} else if (ph === 'E') {
				const st = open.get(`${e.pid}|${e.tid}`);
				const b = st && st.pop();
				if (b) { b.t.raw.push({ ts: b.ts, dur: ts - b.ts, name: sid(b.e.name), cat: sid(b.e.cat), args: Object.assign({}, b.e.args, e.args) }); end = Math.max(end, ts); }
			} else {
				t.raw.push({ ts, dur: 0, name: sid(e.name), cat: sid(e.cat), args: e.args, flags: 0 });
				end = Math.max(end, ts);
			}
		} else if (ph === 'C') {
			for (const [k, v] of Object.entries(e.args || {})) {
				const key = `C|${e.name}|${k}`;
				let t = p.threads.get(key);
				if (!t) { t = newTrack(p, 'counter', k === 'value' ? e.name : `${e.name}.${k}`, 0); p.threads.set(key, t); }
				t.counters.push([ts, +v]);
			}
			end = Math.max(end, ts);
		} else if (ph === 's' || ph === 'f' || ph === 't') {
			const key = `${e.cat}|${e.name}|${e.id}`;
			const t = trackFor(p, e.tid, isGpuCat(e.cat) || /stream/i.test(String(e.tid)) ? 'gpu_stream' : 'thread');
			if (ph === 's') flowStarts.set(key, { t, ts, e });
			else if (ph === 'f') {
				const s = flowStarts.get(key);
				if (s) { flows.push({ flow_id: e.id, name: sid(e.name), cat: sid(e.cat), st: s.t, sts: s.ts, dt: t, dts: ts, bpe: e.bp === 'e' }); flowStarts.delete(key); }
			}
		}
	}
	for (const [, st] of open) for (const b of st) { b.t.raw.push({ ts: b.ts, dur: end - b.ts, name: sid(b.e.name), cat: sid(b.e.cat), args: b.e.args, flags: 1 }); }
	spanNs = end;
	for (const p of processes) {
		if (!p.name) p.name = `pid ${p.pid}`;
		for (const [k, t] of p.threads) {
			if (t.kind !== 'counter') { const tn = p.tnames.get(k.split('|')[0]); if (tn) t.name = tn + (t.kind === 'comm' ? ' (comm)' : ''); else if (t.kind === 'thread') t.name = `thread ${t.name}`; }
		}
	}
	for (const t of tracks) finishTrack(t);
	for (const t of tracks) if (t.kind === 'counter') { t.counters.sort((a, b) => a[0] - b[0]); }
	// steps
	for (const t of tracks) {
		const E = t.ev;
		for (let i = 0; i < E.n; i++) {
			const m = /^ProfilerStep#(\d+)$/.exec(strings[E.name[i]]);
			if (m) steps.push({ index: +m[1], name: strings[E.name[i]], start_ns: E.ts[i], dur_ns: E.dur[i], traced: true });
		}
	}
	steps.sort((a, b) => a.start_ns - b.start_ns);
	bindFlows();
}

function bindFlows() {
	for (const f of flows) {
		f.si = sliceAt(f.st, f.sts, false);
		f.di = sliceAt(f.dt, f.dts, !f.bpe);
		(f.st.out || (f.st.out = new Map())).set(f.si, [...((f.st.out.get(f.si)) || []), f]);
		(f.dt.in || (f.dt.in = new Map())).set(f.di, [...((f.dt.in.get(f.di)) || []), f]);
	}
}

/* Deepest slice containing ts (or, if next, the first one starting at/after ts). */
function sliceAt(t, ts, next) {
	const E = t.ev;
	if (!E || !E.n) return -1;
	let i = lowerBound(E.ts, E.n, ts + 1) - 1;
	let best = -1;
	for (let k = i; k >= 0 && k > i - 2000; k--) {
		if (E.ts[k] <= ts && E.ts[k] + E.dur[k] >= ts) { if (best < 0 || E.depth[k] > E.depth[best]) best = k; }
	}
	if (best < 0 && next) { const j = lowerBound(E.ts, E.n, ts); if (j < E.n) best = j; }
	return best;
}

/* ---- synthetic large session ---------------------------------------------- */
function synthesize(N) {
	format = 'synthetic'; producer = 'mock-server --synthetic';
	baseAbs = 1700000000000000000n;
	const names = [];
	const ops = ['aten::conv2d', 'aten::mm', 'aten::addmm', 'aten::relu', 'aten::add_', 'aten::copy_', 'aten::empty',
		'aten::batch_norm', 'aten::linear', 'aten::matmul', 'aten::max_pool2d', 'aten::softmax', 'aten::cat', 'aten::view'];
	for (let i = 0; i < 300; i++) names.push(sid(i < ops.length ? ops[i] : `op_${i}/${['MatMul', 'Conv2D', 'Relu', 'BiasAdd', 'Sum'][i % 5]}`));
	const kern = [];
	for (let i = 0; i < 60; i++) kern.push(sid(`void kernel_${i}<float, ${i % 7}>(int, float const*)`));
	const nccl = [sid('ncclKernel_AllReduce_RING_LL_Sum_float'), sid('ncclKernel_AllGather_RING_LL')];
	const catOp = sid('cpu_op'), catK = sid('kernel');
	const P = 4;
	const specs = [];
	for (let p = 0; p < P; p++) {
		const proc = { id: p, name: `worker${p}`, pid: 1000 + p, rank: p, host: `host${p >> 1}` };
		processes.push(proc);
		specs.push({ t: newTrack(proc, 'thread', 'python main thread', 1), kind: 'cpu', w: 3 });
		specs.push({ t: newTrack(proc, 'thread', 'autograd thread', 2), kind: 'cpu', w: 2 });
		specs.push({ t: newTrack(proc, 'gpu_stream', 'stream 7', 7), kind: 'gpu', w: 3 });
		specs.push({ t: newTrack(proc, 'gpu_stream', 'stream 13', 13), kind: 'gpu', w: 1 });
		specs.push({ t: newTrack(proc, 'comm', 'stream 21 (nccl)', 21), kind: 'comm', w: 1 });
		const c = newTrack(proc, 'counter', 'GPU memory allocated', 0);
		specs.push({ t: c, kind: 'counter', w: 0 });
	}
	const wsum = specs.reduce((a, s) => a + s.w, 0);
	let seed = 12345;
	const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
	const stepNs = 50e6; // 50 ms steps
	let maxEnd = 0;
	for (const s of specs) {
		const t = s.t;
		if (s.kind === 'counter') {
			let v = 1e9;
			const n = 20000;
			for (let i = 0; i < n; i++) { v = Math.max(1e8, v + (rnd() - 0.5) * 2e8); t.counters.push([i * 5e5, v]); }
			continue;
		}
		const n = Math.floor(N * s.w / wsum);
		const ts = new Float64Array(n), dur = new Float64Array(n), self = new Float64Array(n);
		const name = new Uint32Array(n), cat = new Uint32Array(n), depth = new Uint16Array(n), flags = new Uint8Array(n);
		let i = 0, clock = 0;
		let md = 0;
		const emit = (t0, d, dep, nm, ct) => {
			if (i >= n) return;
			ts[i] = t0; dur[i] = d; depth[i] = dep; name[i] = nm; cat[i] = ct; self[i] = d; i++;
			if (dep > md) md = dep;
		};
		while (i < n) {
			const nm = s.kind === 'cpu' ? names[Math.floor(rnd() * rnd() * names.length)] : s.kind === 'gpu' ? kern[Math.floor(rnd() * rnd() * kern.length)] : nccl[Math.floor(rnd() * 2)];
			const kids = s.kind === 'cpu' ? Math.floor(rnd() * 4) : 0;
			const d = 800 + Math.floor(rnd() * rnd() * 40000) * (kids + 1);
			const top = i;
			emit(clock, d, 0, nm, s.kind === 'cpu' ? catOp : catK);
			let c = clock + 100;
			for (let k = 0; k < kids && i < n; k++) {
				const kd = Math.floor((d - 200) / kids) - 100;
				if (kd <= 50) break;
				emit(c, kd, 1, names[Math.floor(rnd() * names.length)], catOp);
				self[top] -= kd;
				if (kd > 2000 && i < n) { emit(c + 50, kd - 100, 2, names[Math.floor(rnd() * names.length)], catOp); self[i - 2] -= kd - 100; }
				c += kd + 100;
			}
			clock += d + 200 + Math.floor(rnd() * 3000);
		}
		t.ev = { n, ts, dur, self, name, cat, depth, flags, args: null };
		t.max_depth = md;
		t.raw = null;
		maxEnd = Math.max(maxEnd, clock);
	}
	spanNs = maxEnd;
	for (const s of specs) {
		if (s.kind === 'counter') { const sc = spanNs / (s.t.counters.length * 5e5); for (const c of s.t.counters) c[0] *= sc; s.t.ev = { n: 0 }; s.t.max_depth = 0; }
		else buildLod(s.t);
	}
	for (let k = 0, t = 0; t < spanNs; k++, t += stepNs) steps.push({ index: k, name: `ProfilerStep#${k}`, start_ns: t, dur_ns: Math.min(stepNs * (0.9 + 0.2 * rnd()), spanNs - t), traced: k % 3 !== 2 });
}

/* ---- JSON with exact big integers ----------------------------------------- */
function toJson(o) {
	return JSON.stringify(o, (k, v) => typeof v === 'bigint' ? `__BIG__${v}` : v).replace(/"__BIG__(-?\d+)"/g, '$1');
}
const abs = (rel) => baseAbs + BigInt(Math.round(rel));

function sessionJson() {
	let slices = 0, counters = 0;
	for (const t of tracks) { slices += t.ev.n || 0; counters += t.counters.length; }
	return {
		format, producer, processes: processes.length, tracks: tracks.length, slices, instants: 0,
		flows: flows.length, counters, steps: steps.length,
		start_ns: abs(0), end_ns: abs(spanNs), duration_ns: spanNs,
		dropped: 0, unmatched_flows: 0, unclosed_slices: 0,
		process_list: processes.map((p) => ({ id: p.id, name: p.name, host: p.host, pid: p.pid, rank: p.rank, sort_index: p.id })),
		track_list: tracks.map((t) => ({ id: t.id, process: t.process, kind: t.kind, name: t.name, tid: t.tid, sort_index: t.sort_index,
			slices: t.ev.n || 0, instants: 0, counters: t.counters.length, max_depth: t.max_depth || 0,
			min_ts_ns: abs(t.ev.n ? t.ev.ts[0] : 0), max_ts_ns: abs(spanNs) })),
		step_list: stepsJson(),
	};
}
function stepsJson() { return steps.map((s) => ({ index: s.index, name: s.name, start_ns: abs(s.start_ns), dur_ns: s.dur_ns, traced: s.traced })); }

function viewport(q) {
	const t0 = BigInt(q.get('t0') ?? String(baseAbs)), t1 = BigInt(q.get('t1') ?? String(abs(spanNs)));
	const width = Math.min(10000, Math.max(1, +(q.get('width') || 1000)));
	const relMode = q.get('rel') === '1';
	const r0 = Number(t0 - baseAbs), r1 = Number(t1 - baseAbs);
	const res = Math.max(1, (r1 - r0) / width);
	const ids = q.get('tracks') ? q.get('tracks').split(',').map(Number) : tracks.map((t) => t.id);
	const used = new Set();
	const out = [];
	const tsOut = (x) => relMode ? x - r0 : abs(x);
	for (const id of ids) {
		const t = tracks[id];
		if (!t) continue;
		if (t.kind === 'counter') {
			const ts = [], value = [], mn = [], mx = [];
			const C = t.counters;
			let i = Math.max(0, lowerBoundPairs(C, r0) - 1);
			while (i < C.length && C[i][0] <= r1) {
				const b0 = C[i][0];
				let lo = C[i][1], hi = lo, last = lo, j = i + 1;
				while (j < C.length && C[j][0] < b0 + res) { const v = C[j][1]; if (v < lo) lo = v; if (v > hi) hi = v; last = v; j++; }
				ts.push(tsOut(b0)); value.push(last); mn.push(lo); mx.push(hi);
				i = j;
			}
			out.push({ id, kind: 'counter', ts, value, min: mn, max: mx });
			continue;
		}
		const ts = [], dur = [], depth = [], name = [], count = [], flags = [];
		(t.lod || []).forEach((levels, d) => {
			let L = levels[0];
			for (const l of levels) if (l.bucket <= res) L = l;
			let i = lowerBound(L.end, L.n, r0);
			while (i < L.n && L.ts[i] <= r1) {
				let s = L.ts[i], e = L.end[i], c = L.count[i], nm = L.name[i], lg = L.longest[i], ev = L.ev[i];
				let j = i + 1;
				if (e - s < res) {
					while (j < L.n && L.end[j] - L.ts[j] < res && L.ts[j] - e < res && L.ts[j] <= r1) {
						if (L.longest[j] > lg) { lg = L.longest[j]; nm = L.name[j]; }
						e = Math.max(e, L.end[j]); c += L.count[j]; j++;
					}
				}
				i = j;
				ts.push(tsOut(s)); dur.push(e - s); depth.push(d); name.push(nm); count.push(c);
				flags.push(c > 1 ? 2 : (ev >= 0 && t.ev.flags[ev]) || 0);
				used.add(nm);
			}
		});
		out.push({ id, kind: t.kind, lod: 0, ts, dur, depth, name, count, flags });
	}
	const str = {};
	for (const s of used) str[s] = strings[s];
	const o = { t0, t1, resolution_ns: Math.round(res), tracks: out, strings: str };
	if (relMode) o.rel = 1;
	return o;
}
function lowerBoundPairs(C, x) { let lo = 0, hi = C.length; while (lo < hi) { const m = (lo + hi) >> 1; if (C[m][0] < x) lo = m + 1; else hi = m; } return lo; }

function kindName(t) { return t.kind; }
function sliceJson(q) {
	const t = tracks[+q.get('track')];
	if (!t || !t.ev || !t.ev.n) return null;
	const ts = Number(BigInt(q.get('ts')) - baseAbs), depth = +q.get('depth');
	const E = t.ev;
	let best = -1;
	let i = lowerBound(E.ts, E.n, ts + 1) - 1;
	for (let k = i; k >= 0 && k > i - 5000; k--) {
		if (E.depth[k] === depth && E.ts[k] <= ts && E.ts[k] + E.dur[k] >= ts) { best = k; break; }
	}
	if (best < 0) return null;
	const p = processes[t.process];
	let args = E.args ? E.args[best] || {} : { synthetic: true, 'Input dims': [[64, 3, 224, 224], [64, 3, 7, 7]], 'Input type': ['float', 'float'], bytes: 1234567 };
	const stepIdx = steps.findIndex((s) => s.start_ns <= E.ts[best] && E.ts[best] < s.start_ns + s.dur_ns);
	const fl = (m, out) => ((m && m.get(best)) || []).map((f) => ({ flow_id: f.flow_id, name: strings[f.name], cat: strings[f.cat],
		track: out ? f.dt.id : f.st.id, ts: abs(out ? f.dts : f.sts) }));
	return { name: strings[E.name[best]], cat: strings[E.cat[best]], ts: abs(E.ts[best]), dur: E.dur[best], depth: E.depth[best],
		self_ns: E.self[best], flags: E.flags[best], track: { id: t.id, name: t.name, kind: kindName(t) },
		process: { id: p.id, name: p.name, pid: p.pid, rank: p.rank }, args,
		step: stepIdx >= 0 ? steps[stepIdx].index : null, flows_out: fl(t.out, true), flows_in: fl(t.in, false) };
}

function search(q) {
	const text = q.get('q') || '';
	const limit = Math.max(1, Math.min(100000, +(q.get('limit') || 1000)));
	let re;
	if (q.get('regex') === '1') { try { re = new RegExp(text); } catch { throw new Error(`bad regex: ${text}`); } }
	const lc = text.toLowerCase();
	// names are the only field searched here: in=... without "name" matches nothing
	const byName = (q.get('in') || 'name').split(',').includes('name');
	const match = new Uint8Array(strings.length);
	if (byName) strings.forEach((s, i) => { match[i] = re ? re.test(s) : s.toLowerCase().includes(lc) ? 1 : 0; });
	const afterTrack = q.get('after_track') != null ? +q.get('after_track') : -1;
	const afterTs = q.get('after_ts') != null ? Number(BigInt(q.get('after_ts')) - baseAbs) : -Infinity;
	const hits = [];
	let total = 0;
	for (const t of tracks) {
		const E = t.ev;
		for (let i = 0; i < (E.n || 0); i++) if (match[E.name[i]]) {
			total++;
			if (E.ts[i] < afterTs || (E.ts[i] === afterTs && t.id <= afterTrack)) continue;
			hits.push([E.ts[i], t.id, i]);
		}
	}
	hits.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
	return { total, results: hits.slice(0, limit).map(([ts, id, i]) => ({ track: id, ts: abs(ts), dur: tracks[id].ev.dur[i], depth: tracks[id].ev.depth[i], name: strings[tracks[id].ev.name[i]], field: 'name' })) };
}

const statsCache = new Map();
function stats(q) {
	const key = q.toString();
	if (statsCache.has(key)) return statsCache.get(key);
	const by = q.get('by') || 'name';
	const trk = q.get('track') ? new Set(q.get('track').split(',').map(Number)) : null;
	const t0 = q.get('t0') ? Number(BigInt(q.get('t0')) - baseAbs) : -Infinity;
	const t1 = q.get('t1') ? Number(BigInt(q.get('t1')) - baseAbs) : Infinity;
	const top = +(q.get('top') || 0);
	const groups = new Map();
	let grand = 0;
	for (const t of tracks) {
		if (trk && !trk.has(t.id)) continue;
		const E = t.ev;
		for (let i = 0; i < (E.n || 0); i++) {
			if (E.ts[i] < t0 || E.ts[i] > t1) continue;
			const k = by === 'track' ? `${t.name}` : by === 'category' ? strings[E.cat[i]] : strings[E.name[i]];
			let g = groups.get(k);
			if (!g) { g = { name: k, count: 0, total_ns: 0, self_ns: 0, min_ns: Infinity, max_ns: 0, d: [] }; groups.set(k, g); }
			const d = E.dur[i];
			g.count++; g.total_ns += d; g.self_ns += E.self[i]; if (d < g.min_ns) g.min_ns = d; if (d > g.max_ns) g.max_ns = d;
			if (g.d.length < 200000) g.d.push(d);
			grand += E.self[i];
		}
	}
	let rows = [...groups.values()].map((g) => {
		g.d.sort((a, b) => a - b);
		const pct = (p) => g.d[Math.min(g.d.length - 1, Math.floor(p * g.d.length))];
		const r = { name: g.name, count: g.count, total_ns: g.total_ns, self_ns: g.self_ns, mean_ns: g.total_ns / g.count,
			min_ns: g.min_ns, max_ns: g.max_ns, p50_ns: pct(0.5), p99_ns: pct(0.99), share: grand ? g.self_ns / grand : 0 };
		return r;
	});
	rows.sort((a, b) => b.self_ns - a.self_ns);
	if (top > 0) rows = rows.slice(0, top);
	const o = { by, total_ns: grand, rows };
	statsCache.set(key, o);
	return o;
}

/* ---- HTTP ----------------------------------------------------------------- */
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml' };
function send(res, code, body, type = 'application/json; charset=utf-8', extra = {}) {
	res.writeHead(code, { 'Content-Type': type, 'Cache-Control': 'no-store', ...extra });
	res.end(body);
}
const server = http.createServer((req, res) => {
	const u = new URL(req.url, 'http://x');
	const go = () => {
		try {
			if (u.pathname === '/' || u.pathname === '/index.html') return send(res, 200, fs.readFileSync(path.join(opts.web, 'index.html')), types['.html']);
			if (u.pathname.startsWith('/assets/')) {
				const name = path.basename(u.pathname);
				const f = path.join(opts.web, name);
				if (!fs.existsSync(f)) return send(res, 404, toJson({ error: 'no such asset' }));
				return send(res, 200, fs.readFileSync(f), types[path.extname(name)] || 'application/octet-stream');
			}
			if (u.pathname === '/api/session') return send(res, 200, toJson(sessionJson()));
			if (u.pathname === '/api/viewport') return send(res, 200, toJson(viewport(u.searchParams)));
			if (u.pathname === '/api/slice') { const s = sliceJson(u.searchParams); return s ? send(res, 200, toJson(s)) : send(res, 404, toJson({ error: 'no slice there' })); }
			if (u.pathname === '/api/search') return send(res, 200, toJson(search(u.searchParams)));
			if (u.pathname === '/api/stats') return send(res, 200, toJson(stats(u.searchParams)));
			if (u.pathname === '/api/steps') return send(res, 200, toJson({ steps: stepsJson() }));
			if (u.pathname === '/download/session') return send(res, 200, 'mock session file', 'application/octet-stream', { 'Content-Disposition': 'attachment; filename="session.tft"' });
			if (u.pathname === '/download/chrome') return send(res, 200, toJson({ traceEvents: [] }), 'application/json', { 'Content-Disposition': 'attachment; filename="session.json"' });
			send(res, 404, toJson({ error: `no such path: ${u.pathname}` }));
		} catch (e) {
			send(res, 400, toJson({ error: String(e.message || e) }));
		}
	};
	if (opts.delay && u.pathname.startsWith('/api/')) setTimeout(go, opts.delay); else go();
});

const t0 = Date.now();
if (opts.synthetic) synthesize(opts.synthetic);
else if (opts.trace) importChrome(opts.trace);
else { console.error('need --trace FILE or --synthetic N'); process.exit(2); }
let total = 0;
for (const t of tracks) total += t.ev.n || 0;
server.listen(opts.port, '127.0.0.1', () => {
	console.log(`mock-server: ${total} slices, ${tracks.length} tracks, loaded in ${Date.now() - t0} ms; http://127.0.0.1:${opts.port}/`);
});
