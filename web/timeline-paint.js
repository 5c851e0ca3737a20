// SPDX-License-Identifier: MIT
// The Timeline's frame painter, around the tiles (timeline-tiles.js): the base canvas
// (background, grid, process headers with their collapsed strips, the track rows, the
// pinned area's rule), the gutter's track names cut to fit (textfit.js), the ruler
// (steps band, ticks, window size); and the overlay canvas: slice labels, outlines of
// the hovered name, the area selection, the selected slice, its flows, the crosshair,
// search ticks, the gutter's pin and hide buttons.
// Methods of Timeline (timeline.js mixes them in; `this` is the Timeline). State:
// colors (the theme's), gutterImg and gutterSig (the gutter drawn once per layout).
import { tileSpan } from './tiles.js';
import { palette } from './colors.js';
import { fmtDur, fmtTick, tickStep, fmtOffset, fmtInt, fmtValue } from './format.js';
import { elide } from './textfit.js';
import { KIND_LABEL, EVF_UNCLOSED } from './kinds.js';
import { GUTTER, RULER_H, SCROLLBAR_W, LANE_H, SLICE_H, GROUP_H, TRACK_PAD, SUMMARY_H, MAX_SUMMARY_TRACKS } from './timeline-layout.js';
import { makeCanvas } from './timeline-tiles.js';

const LABEL_MIN_PX = 22;      // labels only on slices at least this wide

export class TimelinePaint {
	readColors() {
		const cs = getComputedStyle(document.documentElement);
		const v = (n, d) => (cs.getPropertyValue(n) || d).trim() || d;
		this.colors = {
			bg: v('--tl-bg', '#ffffff'), fg: v('--fg', '#1b1f24'), muted: v('--muted', '#6a737d'),
			grid: v('--tl-grid', 'rgba(0,0,0,0.08)'), alt: v('--tl-alt', 'rgba(0,0,0,0.025)'),
			group: v('--tl-group', '#eef1f5'), gutter: v('--tl-gutter', '#f7f8fa'), border: v('--border', '#d0d7de'),
			accent: v('--accent', '#0969da'), sel: v('--tl-sel', '#000000'), hatch: v('--tl-loading', 'rgba(128,128,128,0.18)'),
			ruler: v('--tl-ruler', '#fbfbfc'), area: v('--tl-area', 'rgba(9,105,218,0.12)'), hl: v('--tl-hl', '#ff9900'),
			dim: '#cccccc',
		};
		this.renderGen++;
		if (this.store) this.store.dropCanvases();
	}

	drawBase() {
		if (!this.colors) this.readColors();
		const C = this.colors;
		const ctx = this.bctx;
		const dpr = this.dpr;
		const W = this.W, H = this.H;
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.imageSmoothingEnabled = false;
		ctx.fillStyle = C.bg;
		ctx.fillRect(0, 0, W, H);
		this.drawn = [];
		this.incomplete = 0;
		this.drawnCount = 0;
		if (!this.session) return;
		if (!this.rows.length) {
			ctx.fillStyle = C.muted;
			ctx.font = '13px system-ui, sans-serif';
			ctx.fillText(this.tracks.size ? 'Every track is hidden by the filter.' : 'This session has no tracks.', GUTTER + 16, RULER_H + 30);
		}
		const L = this.level();
		const span = tileSpan(L);
		const r = this.res();
		const k0 = Math.floor(this.view.s / span), k1 = Math.floor(this.view.e / span);
		const rows = this.visibleRows();
		// counter scales first, so that every tile of a track is drawn to the same scale
		for (const row of rows) {
			if (row.type !== 'track' || !row.t.counter) continue;
			for (let k = Math.max(0, k0); k <= k1; k++) {
				const tile = this.store.peek(L, k, row.t.id);
				if (tile && tile.state === 'ok' && tile.data.n) this.noteCounterRange(tile, row.t);
			}
		}
		this.dirty = false;
		// grid lines under everything
		const step = tickStep(this.view.e - this.view.s, this.PW);
		ctx.strokeStyle = C.grid;
		ctx.lineWidth = 1;
		ctx.beginPath();
		for (let t = Math.ceil(this.view.s / step) * step; t <= this.view.e; t += step) {
			const x = Math.round(this.xOf(t)) + 0.5;
			ctx.moveTo(x, RULER_H); ctx.lineTo(x, H);
		}
		ctx.stroke();
		for (const pin of [false, true]) {
		if (pin && !this.pinH) break;
		ctx.save();
		this.clipArea(ctx, pin);
		for (const row of rows) {
			if (!!row.pin !== pin) continue;
			const sy = this.rowTop(row);
			if (row.type === 'group') {
				ctx.fillStyle = C.group;
				ctx.fillRect(0, sy, W, row.h);
				ctx.fillStyle = C.border;
				ctx.fillRect(0, sy, W, 1);
				if (row.g.collapsed) {
					ctx.save();
					ctx.beginPath();
					ctx.rect(GUTTER, sy, this.PW, row.h);
					ctx.clip();
					for (const t of row.vis.slice(0, MAX_SUMMARY_TRACKS)) {
						if (t.counter) continue;
						this.blitTrack(ctx, row, t, sy + GROUP_H, L, k0, k1, span, r, true);
					}
					ctx.restore();
				}
				continue;
			}
			const t = row.t;
			if (row.t.id % 2) { ctx.fillStyle = C.alt; ctx.fillRect(GUTTER, sy, this.PW, row.h); }
			ctx.fillStyle = C.grid;
			ctx.fillRect(GUTTER, sy + row.h - 1, this.PW, 1);
			ctx.save();
			ctx.beginPath();
			ctx.rect(GUTTER, sy, this.PW, row.h);
			ctx.clip();
			this.blitTrack(ctx, row, t, sy, L, k0, k1, span, r, false);
			ctx.restore();
		}
		ctx.restore();
		}
		if (this.pinH) {
			// the rule under the pinned tracks
			ctx.fillStyle = C.accent;
			ctx.fillRect(0, RULER_H + this.pinH - 2, W, 2);
			// taller than their area: where its view is (the wheel over them scrolls it)
			const ph = this.pinH - 2;
			if (this.pinContentH > ph) {
				ctx.fillStyle = C.muted;
				const th = Math.max(12, ph * ph / this.pinContentH);
				ctx.fillRect(W - SCROLLBAR_W + 5, RULER_H + (ph - th) * this.pinScrollY / (this.pinContentH - ph), 4, th);
			}
		}
		this.drawGutterCached(ctx, rows);
		this.drawRuler(ctx);
	}

	/* The track names change only with scrolling, layout or theme: reuse an image. */
	drawGutterCached(ctx, rows) {
		let sig = `${this.scrollY}:${this.pinScrollY}:${this.layoutGen}:${this.H}:${this.dpr}:${this.renderGen}:${this.pinH}`;
		for (const r of rows) if (r.type === 'track' && (r.t.counter || r.t.deepest >= r.t.lanes)) sig += `:${r.t.cmax}:${r.t.deepest}:${r.t.lanes}`;
		const dpr = this.dpr;
		const w = Math.round(GUTTER * dpr), h = Math.round(this.H * dpr);
		if (!this.gutterImg || this.gutterSig !== sig || this.gutterImg.width !== w || this.gutterImg.height !== h) {
			if (!this.gutterImg || this.gutterImg.width !== w || this.gutterImg.height !== h) this.gutterImg = makeCanvas(w, h);
			const g = this.gutterImg.getContext('2d');
			g.setTransform(1, 0, 0, 1, 0, 0);
			g.clearRect(0, 0, w, h);
			g.setTransform(dpr, 0, 0, dpr, 0, 0);
			this.drawGutter(g, rows);
			this.gutterSig = sig;
		}
		ctx.save();
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		ctx.drawImage(this.gutterImg, 0, 0);
		ctx.restore();
	}

	drawGutter(ctx, rows) {
		const C = this.colors;
		ctx.fillStyle = C.gutter;
		ctx.fillRect(0, RULER_H, GUTTER, this.H - RULER_H);
		ctx.fillStyle = C.border;
		ctx.fillRect(GUTTER - 1, RULER_H, 1, this.H - RULER_H);
		for (const pin of [false, true]) {
		if (pin && !this.pinH) break;
		ctx.save();
		this.clipArea(ctx, pin, 0, GUTTER);
		if (pin) { ctx.fillStyle = C.gutter; ctx.fillRect(0, RULER_H, GUTTER, this.pinH); }
		ctx.textBaseline = 'middle';
		for (const row of rows) {
			if (!!row.pin !== pin) continue;
			const sy = this.rowTop(row);
			if (row.type === 'group') {
				ctx.fillStyle = C.group;
				ctx.fillRect(0, sy, GUTTER, row.h);
				ctx.fillStyle = C.border;
				ctx.fillRect(0, sy, GUTTER, 1);
				ctx.fillStyle = C.fg;
				ctx.beginPath();
				const cx = 10, cy = sy + GROUP_H / 2;
				if (row.g.collapsed) { ctx.moveTo(cx - 3, cy - 5); ctx.lineTo(cx + 4, cy); ctx.lineTo(cx - 3, cy + 5); }
				else { ctx.moveTo(cx - 5, cy - 3); ctx.lineTo(cx + 5, cy - 3); ctx.lineTo(cx, cy + 4); }
				ctx.fill();
				ctx.font = '600 12px system-ui, sans-serif';
				const p = row.g.proc;
				ctx.fillText(this.label(ctx, this.groupLabel(row.g), GUTTER - 30, this.groupKeep), 20, cy);
				ctx.font = '10px system-ui, sans-serif';
				ctx.fillStyle = C.muted;
				const sub = [p.pid !== undefined ? `pid ${p.pid}` : '', p.rank >= 0 ? `rank ${p.rank}` : '', p.host || '', `${row.vis.length} tracks`].filter(Boolean).join(' · ');
				if (row.g.collapsed) ctx.fillText(this.label(ctx, sub, GUTTER - 24), 20, sy + GROUP_H + SUMMARY_H / 2 + 1);
				continue;
			}
			const t = row.t;
			ctx.fillStyle = C.grid;
			ctx.fillRect(0, sy + row.h - 1, GUTTER, 1);
			// the name stays in view while the rest of a tall track is (a deep stack)
			const ly = this.labelTop(row, sy);
			const ty = ly + Math.min(row.h, LANE_H + 2) / 2 + 1;
			ctx.font = '10px system-ui, sans-serif';
			const tag = KIND_LABEL[t.kind] || t.kind;
			const tagW = ctx.measureText(tag).width;
			ctx.fillStyle = t.kind === 'comm' ? C.hl : C.muted;
			ctx.fillText(tag, GUTTER - 8 - tagW, ty);
			ctx.font = '12px system-ui, sans-serif';
			ctx.fillStyle = C.fg;
			// names cut in the middle, keeping what tells them apart (the whole in the tooltip)
			const room = GUTTER - 8 - tagW - 6 - 14;
			if (row.pin) {
				// pinned: an accent mark, and the process in the label
				ctx.fillStyle = C.accent;
				ctx.fillRect(3, ly + 3, 3, Math.min(row.h, LANE_H) - 4);
				ctx.fillStyle = C.fg;
				// (the track's name first; its process after it if there is room, else under
				// it in a tall track; always in the tooltip)
				const full = row.g ? this.groupLabel(row.g) : '';
				const nm = this.label(ctx, t.name, room, this.nameKeep);
				const left = room - ctx.measureText(`${nm} · `).width;
				const pn = full && left >= 30 ? this.label(ctx, full, left, this.groupKeep) : '';
				ctx.fillText(pn ? `\u2068${nm}\u2069 · \u2068${pn}\u2069` : nm, 14, ty);
				if (full && !pn && row.h >= 2 * LANE_H + TRACK_PAD && !(t.deepest >= t.lanes)) {
					ctx.font = '10px system-ui, sans-serif';
					ctx.fillStyle = C.muted;
					ctx.fillText(this.label(ctx, full, room, this.groupKeep), 14, ty + 14);
				}
			} else {
				ctx.fillText(this.label(ctx, t.name, room, this.nameKeep), 14, ty);
			}
			ctx.font = '10px system-ui, sans-serif';
			if (t.counter && isFinite(t.cmax)) {
				ctx.fillStyle = C.muted;
				ctx.fillText(`max ${fmtValue(t.cmax)}`, 14, sy + 30);
			}
			if (t.deepest >= t.lanes && ly + 30 < sy + row.h) {
				ctx.fillStyle = C.accent;
				ctx.fillText(`levels ${t.lanes}–${t.deepest} hidden: show`, 14, ly + 30);
			}
		}
		ctx.restore();
		}
	}

	/* `text` fitted to `px` in ctx's font, cut in the middle (textfit.js); `keep`: a
	 * distinctStarts map of the names it is shown with. */
	label(ctx, text, px, keep) {
		return elide(text, px, (x) => ctx.measureText(x).width, keep ? keep.get(text) ?? 0 : 0, ctx.font);
	}


	drawRuler(ctx) {
		const C = this.colors;
		ctx.fillStyle = C.ruler;
		ctx.fillRect(0, 0, this.W, RULER_H);
		ctx.fillStyle = C.border;
		ctx.fillRect(0, RULER_H - 1, this.W, 1);
		// steps band (upper half)
		ctx.save();
		ctx.beginPath();
		ctx.rect(GUTTER, 0, this.PW, RULER_H);
		ctx.clip();
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		for (const st of this.steps || []) {
			if (st.rel > this.view.e || st.rel + st.dur < this.view.s) continue;
			const x0 = this.xOf(st.rel), x1 = this.xOf(st.rel + st.dur);
			ctx.fillStyle = st.index % 2 ? 'rgba(127,127,127,0.16)' : 'rgba(127,127,127,0.08)';
			ctx.fillRect(x0, 0, Math.max(1, x1 - x0), 12);
			if (!st.traced) { ctx.fillStyle = 'rgba(127,127,127,0.35)'; ctx.fillRect(x0, 10, Math.max(1, x1 - x0), 2); }
			ctx.fillStyle = C.muted;
			ctx.fillRect(x0, 0, 1, 12);
			if (x1 - x0 > 50) {
				ctx.fillStyle = C.fg;
				const lx = Math.max(x0, GUTTER) + 3;
				ctx.fillText(this.label(ctx, `step ${st.index}`, Math.min(x1, GUTTER + this.PW) - lx - 4, this.stepKeep), lx, 6.5);
			}
		}
		// ticks (lower half), all in the unit of the largest (format.js fmtTick)
		const span = this.view.e - this.view.s;
		const step = tickStep(span, this.PW);
		const maxAbs = Math.max(Math.abs(this.view.s), Math.abs(this.view.e));
		ctx.fillStyle = C.fg;
		ctx.strokeStyle = C.muted;
		ctx.beginPath();
		for (let t = Math.ceil(this.view.s / step) * step; t <= this.view.e; t += step) {
			const x = Math.round(this.xOf(t)) + 0.5;
			ctx.moveTo(x, RULER_H - 9); ctx.lineTo(x, RULER_H - 1);
			ctx.fillText(fmtTick(t, step, maxAbs), x + 3, RULER_H - 11);
		}
		ctx.stroke();
		ctx.restore();
		ctx.fillStyle = C.muted;
		ctx.font = '10px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		ctx.fillText(`${fmtDur(span)} window`, 8, 9);
		ctx.fillText(fmtOffset(Math.max(0, this.view.s), this.res()), 8, RULER_H - 10);
	}

	/* Overlay: labels, highlights, selection, flows, area, crosshair, ticks. */
	drawOver() {
		const ctx = this.octx;
		const dpr = this.dpr;
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, this.W, this.H);
		if (!this.session) return;
		const C = this.colors;
		const r = this.res();
		// per area (scrolling tracks, then the pinned ones above them)
		const selRow = this.sel ? this.rowOfTrack(this.sel.track) : null;
		for (const pin of [false, true]) {
			if (pin && !this.pinH) break;
			ctx.save();
			this.clipArea(ctx, pin, GUTTER, this.PW);
			this.drawLabels(ctx, r, pin);
			if (this.hover && !this.drag) this.drawSameName(ctx, this.hover.name, C.fg, 1, pin);
			if (this.area) {
				const x0 = Math.max(GUTTER, this.xOf(this.area.s)), x1 = Math.min(GUTTER + this.PW, this.xOf(this.area.e));
				ctx.fillStyle = C.area;
				for (const row of this.visibleRows()) {
					if (!!row.pin !== pin) continue;
					if (this.area.tracks && (row.type !== 'track' || !this.area.tracks.has(row.t.id))) continue;
					ctx.fillRect(x0, this.rowTop(row), Math.max(1, x1 - x0), row.h);
				}
			}
			if (this.sel && selRow && !!selRow.pin === pin) this.drawSelection(ctx);
			ctx.restore();
		}
		ctx.save();
		ctx.beginPath();
		ctx.rect(GUTTER, RULER_H, this.PW, this.H - RULER_H);
		ctx.clip();
		if (this.area) {
			const x0 = Math.max(GUTTER, this.xOf(this.area.s)), x1 = Math.min(GUTTER + this.PW, this.xOf(this.area.e));
			ctx.fillStyle = C.accent;
			ctx.fillRect(x0, RULER_H, 1, this.H);
			ctx.fillRect(x1, RULER_H, 1, this.H);
		}
		// flows cross between pinned and scrolling tracks
		if (this.flows.length && this.sel) this.drawFlows(ctx);
		if (this.mouse && this.mouse.x > GUTTER && !this.drag?.pan) {
			ctx.fillStyle = C.muted;
			ctx.fillRect(Math.round(this.mouse.x), RULER_H, 1, this.H);
		}
		ctx.restore();
		if (this.gutterHover) {
			// the pin and hide buttons of the hovered track name
			const gh = this.gutterHover;
			const sy = this.labelTop(gh, this.rowTop(gh));
			if (sy >= RULER_H && (gh.pin ? sy < RULER_H + this.pinH - 2 : sy >= RULER_H + this.pinH - 2)) {
				ctx.fillStyle = C.gutter;
				ctx.fillRect(GUTTER - 46, sy + 1, 45, 17);
				ctx.strokeStyle = C.muted;
				ctx.lineWidth = 1.5;
				ctx.beginPath();
				const cx = GUTTER - 12, cy = sy + 10;
				ctx.moveTo(cx - 4, cy - 4); ctx.lineTo(cx + 4, cy + 4);
				ctx.moveTo(cx + 4, cy - 4); ctx.lineTo(cx - 4, cy + 4);
				ctx.stroke();
				// a pin: head and needle; filled while pinned
				const px = GUTTER - 34;
				ctx.beginPath();
				ctx.arc(px, cy - 2, 3.5, 0, Math.PI * 2);
				ctx.moveTo(px, cy + 1.5); ctx.lineTo(px, cy + 7);
				if (gh.pin) { ctx.fillStyle = C.accent; ctx.fill(); ctx.strokeStyle = C.accent; }
				ctx.stroke();
			}
		}
		// ruler overlays: search ticks, area label, crosshair time
		ctx.save();
		ctx.beginPath();
		ctx.rect(GUTTER, 0, this.PW, RULER_H);
		ctx.clip();
		if (this.searchHits.length) {
			ctx.fillStyle = C.hl;
			let last = -10;
			const hits = this.searchHits;
			// hits are in time order: start at the view
			let lo = 0, hi = hits.length;
			while (lo < hi) { const m = (lo + hi) >> 1; if (hits[m].rel < this.view.s - r) lo = m + 1; else hi = m; }
			for (let j = lo; j < hits.length; j++) {
				const h = hits[j];
				if (h.rel > this.view.e) break;
				const x = Math.round(this.xOf(h.rel));
				if (x === last) continue;
				last = x;
				ctx.fillRect(x, RULER_H - 5, 2, 5);
			}
		}
		ctx.font = '11px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		if (this.area) {
			const x0 = this.xOf(this.area.s), x1 = this.xOf(this.area.e);
			const label = fmtDur(this.area.e - this.area.s);
			ctx.fillStyle = C.accent;
			ctx.fillRect(x0, RULER_H - 4, x1 - x0, 3);
			const w = ctx.measureText(label).width + 8;
			const cx = Math.max(GUTTER + w / 2, Math.min(GUTTER + this.PW - w / 2, (x0 + x1) / 2));
			ctx.fillRect(cx - w / 2, 1, w, 14);
			ctx.fillStyle = '#fff';
			ctx.fillText(label, cx - w / 2 + 4, 8);
		}
		if (this.mouse && this.mouse.x > GUTTER) {
			const t = this.tOf(this.mouse.x);
			const label = fmtOffset(t, r); // (to the pixel)
			const w = ctx.measureText(label).width + 8;
			const x = Math.min(this.mouse.x + 2, GUTTER + this.PW - w);
			ctx.fillStyle = C.fg;
			ctx.fillRect(x, RULER_H - 16, w, 15);
			ctx.fillStyle = C.bg;
			ctx.fillText(label, x + 4, RULER_H - 8.5);
		}
		ctx.restore();
	}

	drawLabels(ctx, r, pin) {
		ctx.font = '11px system-ui, sans-serif';
		ctx.textBaseline = 'middle';
		const seen = new Set();
		const cw = this.charW;
		const left = GUTTER, right = GUTTER + this.PW;
		this.forDrawn((tile, i, x0, x1, y, row, rel) => {
			const d = tile.data;
			const w = Math.min(x1, right) - Math.max(x0, left);
			if (w < LABEL_MIN_PX) return;
			if (d.off[i] < 0 || d.off[i] + d.dur[i] > tileSpan(tile.L)) {
				const key = `${tile.track}:${d.depth[i]}:${rel}`;
				if (seen.has(key)) return;
				seen.add(key);
			}
			let text = this.nameText(d.name[i]);
			if (d.count[i] > 1) text = `${text} (+${fmtInt(d.count[i] - 1)})`;
			if (d.flags[i] & EVF_UNCLOSED) text += ' (Did Not Finish)';
			const max = Math.floor((w - 6) / cw);
			if (max < 3) return;
			if (text.length > max) text = text.slice(0, max - 1) + '…';
			const ci = this.colorKey(d, i);
			const dim = this.highlight && !this.lit(d, i, tile.track);
			ctx.fillStyle = dim ? '#555' : palette[ci].text;
			const cx = (Math.max(x0, left) + Math.min(x1, right)) / 2;
			const tw = text.length * cw;
			ctx.fillText(text, cx - tw / 2, y + SLICE_H / 2 + 0.5);
		}, { wide: true, pin });
	}

	drawSameName(ctx, nameId, color, width, pin) {
		ctx.strokeStyle = color;
		ctx.lineWidth = width;
		ctx.beginPath();
		let n = 0;
		this.forDrawn((tile, i, x0, x1, y) => {
			if (tile.data.name[i] !== nameId) return;
			ctx.rect(Math.round(x0) + 0.5, y + 0.5, Math.max(1, x1 - x0 - 1), SLICE_H - 1);
			if (++n > 5000) return false;
		}, { pin });
		ctx.stroke();
	}

	selRect() {
		const s = this.sel;
		if (!s) return null;
		const row = this.rowOfTrack(s.track);
		if (!row) return null;
		const y = this.rowTop(row) + s.depth * LANE_H + 1;
		const x0 = this.xOf(s.rel), x1 = this.xOf(s.rel + s.dur);
		return { x0, x1, y, h: SLICE_H };
	}

	drawSelection(ctx) {
		const b = this.selRect();
		if (!b) return;
		const x0 = Math.max(GUTTER - 4, b.x0), x1 = Math.min(GUTTER + this.PW + 4, b.x1);
		ctx.lineWidth = 3;
		ctx.strokeStyle = this.colors.sel;
		ctx.strokeRect(x0 - 1, b.y - 1, Math.max(2, x1 - x0) + 2, b.h + 2);
		ctx.lineWidth = 1;
		ctx.strokeStyle = this.colors.bg;
		ctx.strokeRect(x0 + 1, b.y + 1, Math.max(1, x1 - x0 - 2), b.h - 2);
	}

	laneOf(trackId, rel) {
		let best = 0;
		for (const dr of this.drawn) {
			if (dr.t.id !== trackId || dr.summary) continue;
			const d = dr.tile.data;
			for (let i = 0; i < d.n; i++) {
				const s = dr.tile.relStart + d.off[i];
				if (s <= rel && s + d.dur[i] >= rel && d.depth[i] > best && d.depth[i] < dr.t.lanes) best = d.depth[i];
			}
		}
		return best;
	}

	drawFlows(ctx) {
		const b = this.selRect();
		if (!b) return;
		ctx.lineWidth = 1.5;
		ctx.strokeStyle = this.colors.accent;
		ctx.fillStyle = this.colors.accent;
		for (const f of this.flows) {
			const row = this.rowOrGroupOfTrack(f.track);
			if (!row) continue;
			let ty = this.rowTop(row);
			if (row.type === 'track') ty += (f.lane ?? (f.lane = this.laneOf(f.track, f.rel))) * LANE_H + SLICE_H / 2 + 1;
			else ty += GROUP_H / 2;
			const tx = this.xOf(f.rel);
			const sx = f.dir === 'out' ? Math.min(b.x1, this.xOf(f.srcRel ?? this.sel.rel)) : b.x0;
			const sy = b.y + SLICE_H / 2;
			let ax, ay, bx, by;
			if (f.dir === 'out') { ax = sx; ay = sy; bx = tx; by = ty; } else { ax = tx; ay = ty; bx = sx; by = sy; }
			const dx = Math.max(30, Math.abs(bx - ax) / 2);
			ctx.beginPath();
			ctx.moveTo(ax, ay);
			ctx.bezierCurveTo(ax + dx, ay, bx - dx, by, bx, by);
			ctx.stroke();
			ctx.beginPath();
			ctx.moveTo(bx, by);
			ctx.lineTo(bx - 7, by - 4);
			ctx.lineTo(bx - 7, by + 4);
			ctx.closePath();
			ctx.fill();
			ctx.beginPath();
			ctx.arc(ax, ay, 2.5, 0, Math.PI * 2);
			ctx.fill();
		}
	}
}
