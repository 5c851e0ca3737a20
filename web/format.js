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

/*
 * The unit fmtDur writes a time of this size in: the one chosen in the settings, or
 * (auto) the largest one the time is at least 1 of. [name, ns per unit].
 */
export function unitOf(ns, m = mode) {
	if (m === 'ms') return ['ms', 1e6];
	if (m === 'us') return ['µs', 1e3];
	if (m === 'ns') return ['ns', 1];
	const a = Math.abs(Number(ns)) || 0;
	if (a >= 1e9) return ['s', 1e9];
	if (a >= 1e6) return ['ms', 1e6];
	if (a >= 1e3) return ['µs', 1e3];
	return ['ns', 1];
}

/*
 * A time in the unit of `like` (the largest time of the same range or axis: every
 * time written together shares one unit), with fmtDur's digits for `like` and more
 * where times `res` ns apart must read differently.
 */
export function fmtTime(ns, like = ns, res = 0, m = mode) {
	ns = Number(ns);
	if (!Number.isFinite(ns)) return '–';
	const [u, div] = unitOf(like, m);
	if (u === 'ns') return `${m === 'ns' ? fmtInt(ns) : Math.round(ns)} ns`;
	const l = Math.abs(Number(like)) / div;
	let digits = m === 'auto' ? (l >= 100 ? 0 : l >= 10 ? 1 : 2) : 3;
	if (res > 0) digits = Math.max(digits, Math.ceil(-Math.log10(res / div) - 1e-9));
	return `${(ns / div).toFixed(Math.max(0, Math.min(9, digits)))} ${u}`;
}

/* A time offset from the trace start, "+12.3 ms", "−16 ns"; `res` and `like` as fmtTime. */
export function fmtOffset(ns, res = 0, like = ns) {
	const sign = ns < 0 ? '−' : '+';
	return sign + fmtTime(Math.abs(ns), Math.abs(like), res);
}

/* The two ends of a range [s, e] as offsets in one unit, to 1% of its length. */
export function fmtRange(s, e) {
	const like = Math.max(Math.abs(s), Math.abs(e));
	const res = Math.max(1, (e - s) / 100);
	return `${fmtOffset(s, res, like)} – ${fmtOffset(e, res, like)}`;
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
 * at least `minPx` between ticks.
 */
export function tickStep(span, px, minPx = 90) {
	const raw = span / Math.max(1, px) * minPx;
	const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-3))));
	for (const m of [1, 2, 5, 10]) if (p * m >= raw) return Math.max(1, p * m);
	return Math.max(1, p * 10);
}

/*
 * A ruler tick: every tick of the ruler in one unit, that of the largest time shown
 * (`maxAbs`) as fmtDur would write it (or the one chosen in the settings), with the
 * decimals the step needs.
 */
export function fmtTick(ns, step, maxAbs = Math.abs(ns), m = mode) {
	const [u, div] = unitOf(Math.max(maxAbs, step), m);
	if (u === 'ns') return `${m === 'ns' ? fmtInt(ns) : Math.round(ns)} ns`;
	const digits = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / div) - 1e-9)));
	return `${(ns / div).toFixed(digits)} ${u}`;
}

export function escapeHtml(s) {
	return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

/* A counter's value, short: 1.23G, 4.56M, 7.89k, an integer as it is, else 3 decimals. */
export function fmtValue(v) {
	const a = Math.abs(v);
	if (a >= 1e9) return `${(v / 1e9).toFixed(2)}G`;
	if (a >= 1e6) return `${(v / 1e6).toFixed(2)}M`;
	if (a >= 1e3) return `${(v / 1e3).toFixed(2)}k`;
	return Number.isInteger(v) ? String(v) : v.toFixed(3);
}
