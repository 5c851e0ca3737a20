// SPDX-License-Identifier: MIT
// Writes a synthetic Kineto-style Chrome trace with N complete events (nested CPU
// ops, GPU kernels on streams, NCCL kernels, ProfilerStep#K markers, ac2g flows,
// a memory counter) for the large-session UI performance run. Deterministic.
//
//   node gen-trace.mjs N OUT.json
import fs from 'node:fs';

const N = Math.max(1000, parseInt(process.argv[2] || '1000000', 10));
const out = process.argv[3] || 'big.json';
const fd = fs.openSync(out, 'w');
let buf = [];
let bytes = 0;
const flush = (force) => {
	if (!force && buf.length < 20000) return;
	const s = buf.join('');
	bytes += s.length;
	fs.writeSync(fd, s);
	buf = [];
};
let first = true;
const emit = (o) => { buf.push((first ? '' : ',\n') + JSON.stringify(o)); first = false; flush(false); };

let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
const ops = ['aten::conv2d', 'aten::convolution', 'aten::cudnn_convolution', 'aten::addmm', 'aten::mm', 'aten::relu', 'aten::add_',
	'aten::copy_', 'aten::empty', 'aten::batch_norm', 'aten::linear', 'aten::matmul', 'aten::max_pool2d', 'aten::softmax',
	'aten::cat', 'aten::view', 'aten::to', 'aten::zero_', 'aten::mul', 'aten::sum', 'cudaLaunchKernel', 'cudaMemcpyAsync'];
for (let i = 0; i < 180; i++) ops.push(`model/layer_${i}/${['MatMul', 'Conv2D', 'Relu', 'BiasAdd', 'Sum', 'Mean'][i % 6]}`);
const kernels = [];
for (let i = 0; i < 60; i++) kernels.push(`void kernel_${i}<float, ${i % 7}>(int, float const*, float*)`);
const nccl = ['ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)', 'ncclKernel_AllGather_RING_LL_Sum_float(ncclWorkElem)'];

fs.writeSync(fd, '{"schemaVersion": 1, "deviceProperties": [], "traceEvents": [\n');
const P = 4;
for (let p = 0; p < P; p++) {
	emit({ ph: 'M', name: 'process_name', pid: 1000 + p, args: { name: `worker${p}` } });
	emit({ ph: 'M', name: 'thread_name', pid: 1000 + p, tid: 1, args: { name: 'python main thread' } });
	emit({ ph: 'M', name: 'thread_name', pid: 1000 + p, tid: 2, args: { name: 'autograd thread' } });
	emit({ ph: 'M', name: 'process_name', pid: p, args: { name: `GPU ${p}` } });
}
const base = 1700000000000000; // us
const perLane = Math.floor(N / (P * 5));
let total = 0;
const stepUs = 50000;
for (let p = 0; p < P; p++) {
	const lanes = [
		{ pid: 1000 + p, tid: 1, kind: 'cpu' }, { pid: 1000 + p, tid: 2, kind: 'cpu' },
		{ pid: p, tid: 'stream 7', kind: 'gpu' }, { pid: p, tid: 'stream 13', kind: 'gpu' }, { pid: p, tid: 'stream 21', kind: 'nccl' },
	];
	for (const L of lanes) {
		let t = base + 10, n = 0, step = 0, stepEnd = base;
		const steps = L.kind === 'cpu' && L.tid === 1;
		while (n < perLane) {
			const kids = L.kind === 'cpu' ? Math.floor(rnd() * 4) : 0;
			const d = +(1 + rnd() * rnd() * 60 * (kids + 1)).toFixed(3);
			if (steps && t + d + 1 >= stepEnd) {
				// ops never straddle a step: start the next ProfilerStep#K here
				if (t < stepEnd) t = stepEnd;
				emit({ ph: 'X', cat: 'cpu_op', name: `ProfilerStep#${step}`, pid: L.pid, tid: L.tid, ts: +t.toFixed(3), dur: stepUs - 1 });
				stepEnd = t + stepUs - 1;
				t += 0.5;
				step++; n++;
			}
			const name = L.kind === 'cpu' ? ops[Math.floor(rnd() * rnd() * ops.length)] : L.kind === 'gpu' ? kernels[Math.floor(rnd() * rnd() * kernels.length)] : nccl[n % 2];
			const ev = { ph: 'X', cat: L.kind === 'cpu' ? 'cpu_op' : 'kernel', name, pid: L.pid, tid: L.tid, ts: +t.toFixed(3), dur: d };
			if (L.kind === 'cpu') ev.args = { 'Input Dims': [[64, 3, 224, 224]], 'Input type': ['float'] };
			else ev.args = { stream: 7, correlation: n, grid: [128, 1, 1], block: [256, 1, 1] };
			emit(ev);
			n++;
			let c = t + 0.1;
			for (let k = 0; k < kids && n < perLane; k++) {
				const kd = +((d - 0.2) / kids - 0.1).toFixed(3);
				if (kd <= 0.05) break;
				emit({ ph: 'X', cat: 'cpu_op', name: ops[Math.floor(rnd() * ops.length)], pid: L.pid, tid: L.tid, ts: +c.toFixed(3), dur: kd });
				n++;
				c += kd + 0.1;
			}
			if (L.kind === 'cpu' && n % 5000 === 0) {
				emit({ ph: 'C', name: 'GPU memory', pid: L.pid, tid: L.tid, ts: +t.toFixed(3), args: { allocated: Math.round(1e9 + rnd() * 5e8) } });
			}
			t += d + 0.2 + rnd() * 3;
		}
		total += n;
	}
}
flush(true);
fs.writeSync(fd, '\n]}\n');
fs.closeSync(fd);
console.error(`gen-trace: ${total} events, ${(bytes / 1e6).toFixed(0)} MB -> ${out}`);
