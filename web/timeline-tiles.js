// SPDX-License-Identifier: MIT
// The Timeline's tile renderer: a tile's slices (packed into lanes, runs of tiny ones
// folded into hatched blocks, unclosed ones fading out, instants as chevrons) or its
// counter (a stepped area, its min/max band) drawn once into a canvas of the tile's
// 512 buckets, colour by name, category or duration, dimmed outside a highlight;
// then copied to the screen per frame, at the wanted level or, while that loads,
// from a coarser or finer one (the loading rest hatched), within a render budget.
// Methods of Timeline (timeline.js mixes them in; `this` is the Timeline). State:
// canvasPool, colorCache, catSeen, hatchTile, renderGen (canvases of an older one are
// drawn again), rendered, incomplete, drawnCount, drawn (the tiles of the last frame).
import { TILE_PX, tileSpan } from './tiles.js';
import { palette, colorIndex, counterColor, durationIndex } from './colors.js';
import { EVF_UNCLOSED, TILE_INSTANT } from './kinds.js';
import { GUTTER, LANE_H, SLICE_H, SUMMARY_H, MAX_LANES } from './timeline-layout.js';

export const STRETCH_MAX = 1.5;      // device px per tile bucket above which chevrons are drawn on screen
const FOLD_PX = 3;            // runs of slices under this fold into one box
const RENDER_BUDGET_MS = 9;   // tile canvases rendered per frame, beyond the first

export function makeCanvas(w, h) {
	if (typeof OffscreenCanvas !== 'undefined') return new OffscreenCanvas(w, h);
	const c = document.createElement('canvas');
	c.width = w; c.height = h;
	return c;
}

/* Is item i of a tile's data drawn as a chevron: an instant, or a slice of no length? */
export function chevron(d, i) { return (d.flags[i] & TILE_INSTANT) !== 0 || d.dur[i] === 0; }

export class TimelineTiles {
	/*
	 * Palette index of item i of a tile: by name, category or duration. The server
	 * leaves `cat` out of a track whose items have no category, so once some tile had
	 * categories a tile without them is uncategorised ("", as a static export's zeros);
	 * until then the server may predate categories and names stand in (the toolbar says so).
	 */
	colorKey(d, i) {
		if (this.colorBy === 'duration') return durationIndex(d.dur[i]);
		if (this.colorBy === 'category') {
			if (d.cat) return this.colorOf(d.cat[i]);
			if (this.catSeen) return this.colorOf(0);
		}
		return this.colorOf(d.name[i]);
	}

	nameText(id) { return this.store.strings.get(id) ?? ''; }

	colorOf(id) {
		let m = this.colorCache || (this.colorCache = new Map());
		let c = m.get(id);
		if (c === undefined) {
			c = colorIndex(this.nameText(id));
			if (this.store.strings.has(id)) m.set(id, c);
		}
		return c;
	}

	highlighted(id) {
		const h = this.highlight;
		if (!h) return true;
		let v = h.ids.get(id);
		if (v === undefined) {
			const s = this.store.strings.get(id);
			if (s === undefined) return false;
			v = h.exact ? s === h.name : h.re ? h.re.test(s) : s === h.name;
			h.ids.set(id, v);
		}
		return v;
	}

	/* Is item i of a tile's data (of track `track`) highlighted (or nothing is)? */
	lit(d, i, track) {
		const h = this.highlight;
		if (!h) return true;
		if (h.field === 'track') return track === h.track;
		return this.highlighted(h.field === 'cat' ? (d.cat ? d.cat[i] : 0) : d.name[i]);
	}

	/* A tile's canvas; `bare`: without the instants' chevrons (drawn on screen instead). */
	tileCanvas(tile, t, bare = false) {
		const key = this.canvasKey(t, bare);
		if (tile.canvas && tile.canvasGen === key) return tile.canvas;
		const had = !!tile.canvas;
		const old = tile.canvas;
		tile.canvas = null;
		this.reuse = old;
		this.bare = bare;
		tile.canvas = t.counter ? this.renderCounterTile(tile, t) : this.renderSliceTile(tile, t);
		this.bare = false;
		this.reuse = null;
		tile.canvasGen = key;
		if (!had) this.store.noteCanvas();
		return tile.canvas;
	}

	/* A w x h canvas for a tile: the tile's previous one, a pooled one, or new. */
	tileSurface(w, h) {
		let c = null;
		if (this.reuse && this.reuse.width === w && this.reuse.height === h) c = this.reuse;
		else {
			const list = this.canvasPool && this.canvasPool.get(`${w}x${h}`);
			if (list && list.length) c = list.pop();
		}
		if (!c) return makeCanvas(w, h);
		const ctx = c.getContext('2d');
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		ctx.globalAlpha = 1;
		ctx.clearRect(0, 0, w, h);
		return c;
	}

	renderSliceTile(tile, t) {
		const d = tile.data;
		if (d.cat && !this.catSeen) {
			this.catSeen = true;
			// tiles drawn so far in category mode used name colours: draw them again
			if (this.colorBy === 'category') { this.renderGen++; this.invalidate(true); }
			this.app.catsSeen && this.app.catsSeen();
		}
		const dpr = this.dpr;
		const ch = Math.max(1, Math.round(t.h * dpr));
		const c = this.tileSurface(TILE_PX, ch);
		const ctx = c.getContext('2d');
		ctx.scale(1, dpr);
		const res = tile.res;
		const batches = new Map(); // colour key -> [x, y, w, ...]
		const hatch = [];
		const chevrons = [];
		const unclosed = [];
		const runs = new Map(); // depth -> {x0, x1, count, key, summary}
		const lanes = t.lanes;
		let deepest = t.deepest;
		const push = (key, x, y, w) => {
			let b = batches.get(key);
			if (!b) { b = []; batches.set(key, b); }
			b.push(x, y, w);
		};
		const flush = (dep) => {
			const r = runs.get(dep);
			if (!r) return;
			runs.delete(dep);
			const y = dep * LANE_H + 1;
			const w = Math.max(1, r.x1 - r.x0);
			push(r.key, r.x0, y, w);
			if (r.count > 1) hatch.push(r.x0, y, w);
		};
		const hl = !!this.highlight;
		for (let i = 0; i < d.n; i++) {
			const dep = d.depth[i];
			if (dep > deepest) deepest = dep;
			if (dep >= lanes) continue;
			const x = d.off[i] / res;
			const w = d.dur[i] / res;
			if (x > TILE_PX + 1 || x + w < -1) continue;
			const ci = this.colorKey(d, i);
			const dim = hl && !this.lit(d, i, t.id);
			const key = dim ? ci + 1000 : ci;
			const cnt = d.count[i];
			if (chevron(d, i) && cnt <= 1) {
				if (!this.bare) chevrons.push(x, dep * LANE_H + 1, key);
				continue;
			}
			const x0 = Math.max(-1, x), x1 = Math.min(TILE_PX + 1, x + w);
			if ((d.flags[i] & EVF_UNCLOSED) && cnt <= 1) { unclosed.push(x0, dep * LANE_H + 1, x1 - x0, key, x, x + w); continue; }
			const small = x1 - x0 < FOLD_PX || cnt > 1;
			const r = runs.get(dep);
			if (small) {
				if (r && x0 - r.x1 < FOLD_PX && x0 >= r.x0) {
					r.x1 = Math.max(r.x1, x1);
					r.count += cnt;
					continue;
				}
				flush(dep);
				runs.set(dep, { x0, x1, count: cnt, key });
				continue;
			}
			if (r) flush(dep);
			push(key, x0, dep * LANE_H + 1, x1 - x0);
		}
		for (const dep of [...runs.keys()]) flush(dep);
		if (deepest > t.deepest) {
			t.deepest = deepest;
			const want = Math.min(MAX_LANES, deepest + 1);
			if (want > t.lanes) { t.lanes = want; this.needLayout = true; }
		}
		for (const [key, b] of batches) {
			const p = palette[key >= 1000 ? key - 1000 : key];
			ctx.fillStyle = key >= 1000 ? this.colors.dim : p.fill;
			if (key >= 1000) ctx.fillStyle = p.dim;
			ctx.beginPath();
			for (let j = 0, n = 0; j < b.length; j += 3, n++) {
				if (n === 1000) { ctx.fill(); ctx.beginPath(); n = 0; }
				ctx.rect(b[j], b[j + 1], b[j + 2], SLICE_H);
			}
			ctx.fill();
		}
		if (hatch.length) {
			ctx.fillStyle = this.hatchPattern(ctx);
			ctx.beginPath();
			for (let j = 0; j < hatch.length; j += 3) ctx.rect(hatch[j], hatch[j + 1], hatch[j + 2], SLICE_H);
			ctx.fill();
		}
		for (let j = 0; j < unclosed.length; j += 6) {
			const x = unclosed[j], y = unclosed[j + 1], w = unclosed[j + 2], key = unclosed[j + 3];
			const p = palette[key >= 1000 ? key - 1000 : key];
			// one gradient over the whole slice (its start to its end, in this tile's
			// coordinates), so that the tiles it spans join up
			const g = ctx.createLinearGradient(unclosed[j + 4], 0, Math.max(unclosed[j + 5], unclosed[j + 4] + 1), 0);
			g.addColorStop(0, key >= 1000 ? p.dim : p.fill);
			g.addColorStop(1, 'rgba(128,128,128,0.1)');
			ctx.fillStyle = g;
			ctx.fillRect(x, y, w, SLICE_H);
		}
		for (let j = 0; j < chevrons.length; j += 3) {
			const x = chevrons[j], y = chevrons[j + 1], key = chevrons[j + 2];
			const p = palette[key >= 1000 ? key - 1000 : key];
			ctx.fillStyle = key >= 1000 ? p.dim : p.fill;
			ctx.beginPath();
			ctx.moveTo(x, y);
			ctx.lineTo(x + 4, y + SLICE_H / 2);
			ctx.lineTo(x, y + SLICE_H);
			ctx.lineTo(x - 4, y + SLICE_H / 2);
			ctx.closePath();
			ctx.fill();
		}
		return c;
	}

	hatchPattern(ctx) {
		if (!this.hatchTile) this.hatchTile = this.makeHatch();
		return ctx.createPattern(this.hatchTile, 'repeat');
	}

	makeHatch() {
		const p = makeCanvas(6, 6);
		const pc = p.getContext('2d');
		pc.strokeStyle = 'rgba(255,255,255,0.32)';
		pc.lineWidth = 1;
		pc.beginPath();
		pc.moveTo(0, 6); pc.lineTo(6, 0);
		pc.moveTo(-1, 1); pc.lineTo(1, -1);
		pc.moveTo(5, 7); pc.lineTo(7, 5);
		pc.stroke();
		return p;
	}

	renderCounterTile(tile, t) {
		const d = tile.data;
		const dpr = this.dpr;
		const ch = Math.max(1, Math.round(t.h * dpr));
		const c = this.tileSurface(TILE_PX, ch);
		const ctx = c.getContext('2d');
		ctx.scale(1, dpr);
		if (!d.n) return c;
		const res = tile.res;
		const lo = Math.min(0, t.cmin), hi = Math.max(t.cmax, lo + 1e-9);
		const top = 4, bottom = t.h - 3;
		const y = (v) => bottom - (v - lo) / (hi - lo) * (bottom - top);
		const col = counterColor(t.id);
		const endX = Math.min(TILE_PX, (t.maxRel - tile.relStart) / res);
		// the first item may be the sample in force at the tile's start (before it: x 0);
		// a value holds until the next sample, the last one until the track's last sample
		const xAt = (i) => Math.max(0, d.off[i] / res);
		const xNext = (i) => (i + 1 < d.n ? Math.max(0, d.off[i + 1] / res)
			: d.off[i] >= 0 ? Math.max(xAt(i) + 1, endX) : Math.max(0, endX));
		if (d.min && d.max) {
			ctx.fillStyle = col.fill;
			ctx.globalAlpha = 0.3;
			ctx.beginPath();
			for (let i = 0; i < d.n; i++) {
				const x0 = xAt(i), x1 = Math.min(TILE_PX, xNext(i));
				if (x1 <= 0 || x0 >= TILE_PX) continue;
				const y0 = y(d.max[i]), y1 = y(d.min[i]);
				ctx.rect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
			}
			ctx.fill();
			ctx.globalAlpha = 1;
		}
		ctx.beginPath();
		ctx.moveTo(xAt(0), bottom);
		for (let i = 0; i < d.n; i++) {
			const x0 = xAt(i), x1 = Math.min(TILE_PX + 1, xNext(i));
			const yy = y(d.value[i]);
			ctx.lineTo(x0, yy);
			ctx.lineTo(x1, yy);
		}
		ctx.lineTo(Math.min(TILE_PX + 1, xNext(d.n - 1)), bottom);
		ctx.closePath();
		ctx.globalAlpha = 0.55;
		ctx.fillStyle = col.fill;
		ctx.fill();
		ctx.globalAlpha = 1;
		ctx.strokeStyle = col.fill;
		ctx.lineWidth = 1;
		ctx.beginPath();
		for (let i = 0; i < d.n; i++) {
			const x0 = xAt(i), x1 = Math.min(TILE_PX + 1, xNext(i));
			const yy = y(d.value[i]);
			if (i === 0) ctx.moveTo(x0, yy); else ctx.lineTo(x0, yy);
			ctx.lineTo(x1, yy);
		}
		ctx.stroke();
		return c;
	}

	/* Counter scale: grows as data arrives (y range over everything seen). */
	noteCounterRange(tile, t) {
		if (tile.scaled) return;
		tile.scaled = true;
		const d = tile.data;
		let lo = t.cmin, hi = t.cmax;
		const a = d.max || d.value, b = d.min || d.value;
		for (let i = 0; i < d.n; i++) { if (a[i] > hi) hi = a[i]; if (b[i] < lo) lo = b[i]; }
		if (hi > t.cmax || lo < t.cmin) {
			// grow with headroom so that arriving tiles rarely force a re-render
			const first = !isFinite(t.cmax);
			const span = Math.max(Math.abs(hi - lo), Math.abs(hi), 1e-9);
			if (hi > t.cmax) t.cmax = first ? hi : hi + span * 0.15;
			if (lo < t.cmin) t.cmin = first ? lo : lo - (lo < 0 ? span * 0.15 : 0);
			t.scaleGen++;
			// tiles already copied to the screen used the old scale: draw again
			this.dirty = true;
		}
	}

	/* Draw one track's tiles for [k0, k1] at level L, falling back to coarser
	 * or finer cached levels, and hatching what is still loading. */
	blitTrack(ctx, row, t, sy, L, k0, k1, span, r, summary) {
		const dpr = this.dpr;
		for (let k = k0; k <= k1; k++) {
			const relS = k * span;
			if (k < 0 || relS >= this.span) continue; // no data outside the session
			const x0 = GUTTER + (relS - this.view.s) / r, x1 = GUTTER + (relS + span - this.view.s) / r;
			const dx0 = Math.round(x0 * dpr), dx1 = Math.round(x1 * dpr);
			const hDest = summary ? SUMMARY_H : t.h;
			let done = false;
			const tile = this.store.get(L, k, t.id);
			if (tile && tile.state === 'ok') done = this.drawTileInto(ctx, tile, t, 0, TILE_PX, dx0, dx1, sy, summary, row, k);
			if (!done) {
				// stale detail while the right level loads (or renders): coarser, then finer
				for (let L2 = L + 1; L2 <= L + 12 && !done; L2++) {
					const span2 = tileSpan(L2);
					const k2 = Math.floor(relS / span2);
					const t2 = this.store.peek(L2, k2, t.id);
					if (t2 && t2.state === 'ok') {
						const sx = (relS - k2 * span2) / t2.res;
						done = this.drawTileInto(ctx, t2, t, sx, span / t2.res, dx0, dx1, sy, summary, row, k);
					}
				}
				if (!done && L > 0) {
					const a = this.store.peek(L - 1, 2 * k, t.id), b = this.store.peek(L - 1, 2 * k + 1, t.id);
					if (a && b && a.state === 'ok' && b.state === 'ok' && this.hasCanvas(a, t) && this.hasCanvas(b, t)) {
						const dm = Math.round(((x0 + x1) / 2) * dpr);
						this.drawTileInto(ctx, a, t, 0, TILE_PX, dx0, dm, sy, summary, row, k);
						this.drawTileInto(ctx, b, t, 0, TILE_PX, dm, dx1, sy, summary, row, k);
						done = true;
					}
				}
			}
			if (!done) {
				this.incomplete++;
				ctx.save();
				ctx.setTransform(1, 0, 0, 1, 0, 0);
				ctx.fillStyle = this.colors.hatch;
				ctx.fillRect(dx0, Math.round(sy * dpr), dx1 - dx0, Math.round(hDest * dpr));
				ctx.restore();
				if (tile && tile.state === 'error') this.tileErrors = (this.tileErrors || 0) + 1;
			}
		}
	}

	/* Copy a tile (its [sx, sx+sw) buckets) to device x [dx0, dx1). False when its
	 * canvas still has to be rendered and this frame's render budget is spent. */
	drawTileInto(ctx, tile, t, sx, sw, dx0, dx1, sy, summary, row, k) {
		if (tile.data.n) {
			if (t.counter) this.noteCounterRange(tile, t);
			if (this.firstDraw && !this.hasCanvas(tile, t) && performance.now() - this.frameStart > RENDER_BUDGET_MS && this.rendered > 0) {
				this.dirty = true; // finish in the next frame
				return false;
			}
		}
		this.drawnCount++;
		this.drawn.push({ row, tile, t, summary });
		if (!tile.data.n) return true;
		const dpr = this.dpr;
		// Zoomed past the finest tiles' 1 ns buckets, a tile is stretched: its
		// instants' chevrons would stretch with it, so they are drawn on screen.
		const stretched = !summary && !t.counter && dx1 - dx0 > STRETCH_MAX * dpr * sw;
		const had = this.hasCanvas(tile, t, stretched);
		const cv = this.tileCanvas(tile, t, stretched);
		if (!had) this.rendered++;
		ctx.save();
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		if (summary) {
			ctx.drawImage(cv, sx, 0, sw, Math.min(cv.height, Math.round(LANE_H * dpr)), dx0, Math.round(sy * dpr), dx1 - dx0, Math.round(SUMMARY_H * dpr));
		} else {
			ctx.drawImage(cv, sx, 0, sw, cv.height, dx0, Math.round(sy * dpr), dx1 - dx0, cv.height);
		}
		if (stretched) this.drawChevrons(ctx, tile, t, sx, sw, dx0, dx1, sy);
		ctx.restore();
		return true;
	}

	/* The chevrons of a stretched tile's instants in [sx, sx + sw), at their screen size. */
	drawChevrons(ctx, tile, t, sx, sw, dx0, dx1, sy) {
		const d = tile.data, dpr = this.dpr, f = (dx1 - dx0) / sw, res = tile.res;
		const hl = !!this.highlight, half = 4 * dpr, h = SLICE_H * dpr;
		ctx.beginPath();
		ctx.rect(dx0, Math.round(sy * dpr), dx1 - dx0, t.h * dpr);
		ctx.clip();
		for (let i = 0; i < d.n; i++) {
			if (!chevron(d, i) || d.count[i] > 1 || d.depth[i] >= t.lanes) continue;
			const b = d.off[i] / res;
			if (b < sx - 1 || b > sx + sw + 1) continue;
			const x = dx0 + (b - sx) * f, y = (sy + d.depth[i] * LANE_H + 1) * dpr;
			const p = palette[this.colorKey(d, i)];
			ctx.fillStyle = hl && !this.lit(d, i, t.id) ? p.dim : p.fill;
			ctx.beginPath();
			ctx.moveTo(x, y);
			ctx.lineTo(x + half, y + h / 2);
			ctx.lineTo(x, y + h);
			ctx.lineTo(x - half, y + h / 2);
			ctx.closePath();
			ctx.fill();
		}
	}

	canvasKey(t, bare) {
		return `${this.renderGen}:${t.scaleGen}:${t.h}:${this.dpr}${bare ? ':bare' : ''}`;
	}

	hasCanvas(tile, t, bare = false) {
		return !!tile.canvas && tile.canvasGen === this.canvasKey(t, bare);
	}

	wideIdx(tile) {
		if (tile.wide) return tile.wide;
		const d = tile.data, min = 12 * tile.res;
		const out = [];
		for (let i = 0; i < d.n; i++) if (d.dur[i] >= min) out.push(i);
		tile.wide = Int32Array.from(out);
		return tile.wide;
	}
}
