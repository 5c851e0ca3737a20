// SPDX-License-Identifier: MIT
// Number and time formatting shared by every page; the time format setting
// (auto, ms, us, ns) is kept in localStorage.

const KEY = 'tft.timefmt';
let mode = 'auto';
try {
	mode = localStorage.getItem(KEY) || 'auto';
} catch { /* storage disabled */ }

export function timeFormat() { return mode; }
export function setTimeFormat(m) {
	mode = ['auto', 'ms', 'us', 'ns'].includes(m) ? m : 'auto';
	try { localStorage.setItem(KEY, mode); } catch { /* ignore */ }
}

function sig3(v) {
	const a = Math.abs(v);
	if (a >= 100) return v.toFixed(0);
	if (a >= 10) return v.toFixed(1);
	return v.toFixed(2);
}

/* A duration in ns, human-readable in the chosen format. */
export function fmtDur(ns, m = mode) {
	if (ns === null || ns === undefined || Number.isNaN(ns)) return '–';
	ns = Number(ns);
	if (m === 'ms') return `${(ns / 1e6).toFixed(3)} ms`;
	if (m === 'us') return `${(ns / 1e3).toFixed(3)} µs`;
	if (m === 'ns') return `${fmtInt(ns)} ns`;
	const a = Math.abs(ns);
	if (a < 1e3) return `${Math.round(ns)} ns`;
	if (a < 1e6) return `${sig3(ns / 1e3)} µs`;
	if (a < 1e9) return `${sig3(ns / 1e6)} ms`;
	return `${sig3(ns / 1e9)} s`;
}

/* Full precision: "1,234,567 ns (1.23 ms)". */
export function fmtDurFull(ns) {
	if (ns === null || ns === undefined) return '–';
	const n = Number(ns);
	const s = `${fmtInt(ns)} ns`;
	return Math.abs(n) >= 1000 ? `${s} (${fmtDur(n, 'auto')})` : s;
}

/* A time offset from the trace start, "+12.345 ms". */
export function fmtOffset(ns) {
	const sign = ns < 0 ? '−' : '+';
	return sign + fmtDur(Math.abs(ns));
}

/* 1234567 -> "1,234,567" (no Intl: its first use costs ~50 ms). */
export function fmtInt(v) {
	if (v === null || v === undefined) return '–';
	let s;
	if (typeof v === 'bigint') s = v.toString();
	else {
		const x = Number(v);
		if (!Number.isFinite(x)) return '–';
		s = Math.round(x).toString();
	}
	const neg = s[0] === '-';
	if (neg) s = s.slice(1);
	let out = '';
	while (s.length > 3) { out = ',' + s.slice(-3) + out; s = s.slice(0, -3); }
	return (neg ? '-' : '') + s + out;
}

export function fmtCount(v) { return fmtInt(v); }

export function fmtPct(f) {
	if (f === null || f === undefined || Number.isNaN(f)) return '–';
	const p = f * 100;
	return `${p >= 10 ? p.toFixed(1) : p.toFixed(2)}%`;
}

export function fmtBytes(b) {
	b = Number(b);
	if (!Number.isFinite(b)) return '–';
	const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
	let i = 0;
	while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
	return `${i ? b.toFixed(b >= 100 ? 0 : 1) : b} ${u[i]}`;
}

/*
 * Ruler ticks for a window of `span` ns over `px` pixels: a 1-2-5 step giving
 * at least `minPx` between ticks, and a label formatter with enough digits.
 */
export function tickStep(span, px, minPx = 90) {
	const raw = span / Math.max(1, px) * minPx;
	const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-3))));
	for (const m of [1, 2, 5, 10]) if (p * m >= raw) return Math.max(1, p * m);
	return Math.max(1, p * 10);
}

export function fmtTick(ns, step) {
	const a = Math.abs(ns);
	let unit = 'ns', div = 1;
	if (step >= 1e9 || a >= 1e10) { unit = 's'; div = 1e9; }
	else if (step >= 1e6 || a >= 1e7) { unit = 'ms'; div = 1e6; }
	else if (step >= 1e3 || a >= 1e4) { unit = 'µs'; div = 1e3; }
	const digits = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / div) - 1e-9)));
	return `${(ns / div).toFixed(digits)} ${unit}`;
}

export function escapeHtml(s) {
	return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
