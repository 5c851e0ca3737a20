// SPDX-License-Identifier: MIT
// Stable colours per op name: digits stripped, hashed to a palette index; text colour
// by perceived brightness; loud pink for "no name", never grey (grey means idle/dimmed).
// A heat scale (blue = short to red = long) for colouring by duration.

export const PALETTE_SIZE = 96;
export const UNKNOWN = PALETTE_SIZE; // index of the "no name" colour

function hslToRgb(h, s, l) {
	s /= 100; l /= 100;
	const k = (n) => (n + h / 30) % 12;
	const a = s * Math.min(l, 1 - l);
	const f = (n) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
	return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

function hex(rgb) {
	return '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('');
}

/*
 * The palette: hues spread by the golden angle so neighbouring indices differ,
 * lightness from a second sequence, and a lightness correction per hue band so
 * yellows and greens do not glare next to blues (a cheap perceptual balance).
 */
export const palette = [];
for (let i = 0; i < PALETTE_SIZE; i++) {
	const h = (i * 137.508) % 360;
	let l = 44 + ((i * 7) % 5) * 6; // 44..68
	if (h > 40 && h < 180) l -= 8;   // yellow/green read brighter
	if (h > 200 && h < 280) l += 6;  // blue/violet read darker
	const s = 52 + ((i * 3) % 4) * 8;
	const rgb = hslToRgb(h, s, l);
	const bright = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2];
	const dim = rgb.map((v) => Math.round(v * 0.25 + 200 * 0.75));
	palette.push({ fill: hex(rgb), text: bright >= 150 ? '#101010' : '#ffffff', dim: hex(dim), rgb });
}
palette.push({ fill: '#ff3ea5', text: '#101010', dim: '#f4c6de', rgb: [255, 62, 165] });

/* Duration heat scale: HEAT_N steps from 100 ns (blue) to 1 s and more (red), log scale. */
export const HEAT_N = 16;
export const HEAT0 = palette.length;
for (let i = 0; i < HEAT_N; i++) {
	const f = i / (HEAT_N - 1);
	const h = 230 - 230 * f;                 // blue -> cyan -> green -> yellow -> red
	const l = 48 + 10 * Math.sin(f * Math.PI);
	const rgb = hslToRgb(h, 70, l);
	const bright = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2];
	const dim = rgb.map((v) => Math.round(v * 0.25 + 200 * 0.75));
	palette.push({ fill: hex(rgb), text: bright >= 150 ? '#101010' : '#ffffff', dim: hex(dim), rgb });
}
export const HEAT_LO = 2, HEAT_HI = 9; // log10 ns of the first and last step

/* Palette index of a duration (ns) on the heat scale. */
export function durationIndex(ns) {
	const l = Math.log10(Math.max(1, ns));
	const f = (l - HEAT_LO) / (HEAT_HI - HEAT_LO);
	return HEAT0 + Math.max(0, Math.min(HEAT_N - 1, Math.floor(f * HEAT_N)));
}

/* FNV-1a over UTF-16 units, digits removed ("step 12" and "step 13" share a colour). */
export function colorIndex(name) {
	if (!name) return UNKNOWN;
	let h = 0x811c9dc5;
	let any = false;
	for (let i = 0; i < name.length; i++) {
		const c = name.charCodeAt(i);
		if (c >= 48 && c <= 57) continue;
		any = true;
		h ^= c;
		h = Math.imul(h, 0x01000193) >>> 0;
	}
	if (!any) return UNKNOWN;
	h ^= h >>> 15;
	h = Math.imul(h, 0x2c1b3c6d) >>> 0;
	return h % PALETTE_SIZE;
}

export function colorFor(name) {
	return palette[colorIndex(name)];
}

/* Colours of the counter area charts, by track id. */
export function counterColor(id) {
	return palette[(id * 29 + 11) % PALETTE_SIZE];
}

/*
 * The colours of steps in the step charts of every page (Overview, Runs): traced steps
 * (orange), steps without op-level events, slow steps, and the compute / communication
 * split of a step. Defined once, per theme, as the --step-* properties of style.css.
 */
export function stepColors() {
	const cs = getComputedStyle(document.documentElement);
	const v = (n, d) => cs.getPropertyValue(n).trim() || d;
	return {
		traced: v('--step-traced', '#e36209'), untraced: v('--step-untraced', '#0969da'), slow: v('--step-slow', '#cf222e'),
		compute: v('--step-compute', '#2da44e'), comm: v('--step-comm', '#8250df'),
	};
}
