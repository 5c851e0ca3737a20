// SPDX-License-Identifier: MIT
// The Timeline's input: W/A/S/D zoom and pan with acceleration and a short glide, the
// wheel (zoom at the pointer, pan, scroll), drags (pan with the middle or right
// button or Shift, box selection of an area and its tracks, a measure on the ruler),
// clicks (select, zoom into a merged block, the gutter's collapse, pin and hide), the
// keys (F, 0, Escape, Backspace, arrows, `.` and `,` through slices, `[` and `]` along
// flows, M), hit testing of the pointer, and the hover tooltips.
// Methods of Timeline (timeline.js mixes them in; `this` is the Timeline). State:
// keys, vel, keyHeld, drag, mouse, hover, gutterHover, area.
import { getJSON } from './api.js';
import { fmtDur, fmtOffset, fmtInt, fmtValue, escapeHtml } from './format.js';
import { KIND_LABEL, EVF_UNCLOSED } from './kinds.js';
import { GUTTER, RULER_H, LANE_H } from './timeline-layout.js';
import { STRETCH_MAX, chevron } from './timeline-tiles.js';

export class TimelineInput {
	/* F: centre the selection, a second F fits it; 0 fits everything. */
	keyF() {
		const target = this.sel ? { s: this.sel.rel, d: Math.max(this.sel.dur, 1) } : this.area ? { s: this.area.s, d: this.area.e - this.area.s } : null;
		if (!target) return;
		const again = this.lastF && this.lastF.s === target.s && this.lastF.d === target.d;
		this.focusRange(target.s, target.d, again || (this.area && !this.sel));
		this.lastF = target;
		if (this.sel) this.showLane(this.sel.track, this.sel.depth);
	}

	hit(x, y) {
		if (x < GUTTER || x > GUTTER + this.PW || y < RULER_H) return null;
		const row = this.rowAtY(y);
		if (!row || row.type !== 'track') return row ? { row } : null;
		const t = row.t;
		const sy = this.rowTop(row);
		const r = this.res();
		const tm = this.tOf(x);
		if (t.counter) {
			let best = null;
			for (const dr of this.drawn) {
				if (dr.t.id !== t.id) continue;
				const d = dr.tile.data;
				for (let i = 0; i < d.n; i++) {
					const s = dr.tile.relStart + d.off[i];
					if (s <= tm && (!best || s > best.rel)) best = { rel: s, value: d.value[i], min: d.min?.[i], max: d.max?.[i] };
				}
			}
			return { row, counter: best };
		}
		const lane = Math.floor((y - sy - 1) / LANE_H);
		const tol = 2 * r;
		let best = null, bestD = Infinity;
		for (const dr of this.drawn) {
			if (dr.t.id !== t.id || dr.summary) continue;
			const tile = dr.tile, d = tile.data;
			for (let i = 0; i < d.n; i++) {
				if (d.depth[i] !== lane) continue;
				const s = tile.relStart + d.off[i], e = s + d.dur[i];
				// an instant's chevron is 4 tile buckets either side, or 4 px on a
				// stretched tile (drawn on screen, drawChevrons: as drawTileInto decides)
				const tl = chevron(d, i) ? Math.max(tol, 4 * (tile.res > STRETCH_MAX * r ? r : tile.res)) : tol;
				if (s - tl > tm || e + tl < tm) continue;
				const dist = tm < s ? s - tm : tm > e ? tm - e : 0;
				if (dist < bestD || (dist === bestD && best && d.dur[i] < best.dur)) {
					bestD = dist;
					best = {
						track: t.id, depth: lane, rel: s, dur: d.dur[i], name: d.name[i], count: d.count[i], flags: d.flags[i],
						abs: tile.absStart + BigInt(Math.round(d.off[i])),
					};
				}
			}
		}
		return { row, slice: best };
	}

	animate(dt) {
		const k = this.keys;
		const fast = k.has('ShiftLeft') || k.has('ShiftRight') ? 2.2 : 1;
		const zoomDir = (k.has('KeyW') ? 1 : 0) - (k.has('KeyS') ? 1 : 0);
		const panDir = (k.has('KeyD') ? 1 : 0) - (k.has('KeyA') ? 1 : 0);
		this.keyHeld.zoom = zoomDir ? this.keyHeld.zoom + dt : 0;
		this.keyHeld.pan = panDir ? this.keyHeld.pan + dt : 0;
		// speed grows the longer a key is held (zoom in ln-units/s, pan in px/s)
		const zTarget = zoomDir * fast * Math.min(5, 1.6 + this.keyHeld.zoom * 2.5);
		const pTarget = panDir * fast * Math.min(4000, 500 + this.keyHeld.pan * 2200);
		// held: follow the target at once; released: a short spring-like glide (~60 ms)
		const ease = 1 - Math.exp(-dt / 0.06);
		this.vel.zoom += (zTarget - this.vel.zoom) * (zoomDir ? 1 : ease);
		this.vel.pan += (pTarget - this.vel.pan) * (panDir ? Math.max(ease, 0.5) : ease);
		if (Math.abs(this.vel.zoom) < 0.02) this.vel.zoom = 0;
		if (Math.abs(this.vel.pan) < 10) this.vel.pan = 0;
		let moved = false;
		if (this.vel.zoom) {
			const x = this.mouse && this.mouse.x > GUTTER ? this.mouse.x : undefined;
			this.zoomAt(Math.exp(-this.vel.zoom * dt), x);
			moved = true;
		}
		if (this.vel.pan) {
			this.panPx(this.vel.pan * dt);
			moved = true;
		}
		return moved || zoomDir !== 0 || panDir !== 0;
	}

	_bind() {
		const ov = this.over;
		ov.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
		ov.addEventListener('mousedown', (e) => this.onDown(e));
		window.addEventListener('mousemove', (e) => this.onMove(e));
		window.addEventListener('mouseup', (e) => this.onUp(e));
		ov.addEventListener('mouseleave', () => { this.mouse = null; this.hover = null; this.gutterHover = null; this.tooltip.hidden = true; this.invalidate(false); });
		ov.addEventListener('dblclick', (e) => this.onDbl(e));
		ov.addEventListener('contextmenu', (e) => e.preventDefault());
		this.scroller.addEventListener('scroll', () => {
			if (Math.abs(this.scroller.scrollTop - this.scrollY) < 1) return;
			this.scrollY = this.scroller.scrollTop;
			this.invalidate(true);
			this.scheduleFetch();
		});
		this.mini.addEventListener('mousedown', (e) => this.onMiniDown(e));
		window.addEventListener('blur', () => { this.keys.clear(); });
		new ResizeObserver(() => { if (this.visible) this.resize(); }).observe(this.main);
		const mq = () => {
			const m = matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
			m.addEventListener('change', () => { this.resize(); mq(); }, { once: true });
		};
		mq();
	}

	local(e) {
		const r = this.over.getBoundingClientRect();
		return { x: e.clientX - r.left, y: e.clientY - r.top };
	}

	onWheel(e) {
		e.preventDefault();
		const p = this.local(e);
		const unit = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
		let dx = e.deltaX * unit, dy = e.deltaY * unit;
		if (p.x < GUTTER || e.altKey) {
			// over the pinned tracks: they scroll (when taller than their area)
			if (this.pinH && p.y >= RULER_H && p.y < RULER_H + this.pinH) this.pinScrollY += dy || dx;
			else this.scrollY += dy || dx;
			this.clampScroll();
			this.invalidate(true);
			this.scheduleFetch();
			return;
		}
		if (e.shiftKey && !dy && dx) { dy = dx; dx = 0; }
		if (Math.abs(dx) > Math.abs(dy) && !e.shiftKey && !e.ctrlKey) {
			this.panPx(dx);
			return;
		}
		const k = e.ctrlKey ? 0.0008 : e.shiftKey ? 0.008 : 0.0025;
		this.zoomAt(Math.exp(dy * k), p.x);
	}

	onDown(e) {
		const p = this.local(e);
		this.over.focus?.();
		if (p.x < GUTTER) {
			const row = this.rowAtY(p.y);
			if (row && row.type === 'group' && e.button === 0) this.toggleGroup(row.g);
			else if (row && row.type === 'track' && e.button === 0 && p.x > GUTTER - 24) { this.gutterHover = null; this.hideTrack(row.t.id); }
			else if (row && row.type === 'track' && e.button === 0 && p.x > GUTTER - 46) { this.gutterHover = null; this.togglePin(row.t.id); }
			else if (row && row.type === 'track' && e.button === 0 && this.hiddenLevelsAt(row, p.y)) this.showLane(row.t.id, row.t.deepest);
			return;
		}
		if (p.y < RULER_H && e.button === 0 && !e.shiftKey) {
			this.drag = { mode: 'measure', x0: p.x, y0: p.y, moved: false };
			return;
		}
		const pan = e.button === 1 || e.button === 2 || e.shiftKey;
		this.drag = { mode: pan ? 'pan' : 'press', pan, x0: p.x, y0: p.y, last: p.x, lastY: p.y, moved: false, button: e.button };
		e.preventDefault();
	}

	onMove(e) {
		if (!this.visible) return;
		const p = this.local(e);
		const d = this.drag;
		if (d) {
			if (Math.abs(p.x - d.x0) > 3 || Math.abs(p.y - d.y0) > 3) d.moved = true;
			if (d.mode === 'pan') {
				this.panPx(d.last - p.x);
				d.last = p.x;
				this.scrollY += d.lastY - p.y;
				d.lastY = p.y;
				this.clampScroll();
			} else if ((d.mode === 'press' || d.mode === 'area') && d.moved) {
				d.mode = 'area';
				this.setArea(d, p);
			} else if (d.mode === 'measure' && d.moved) {
				const a = this.tOf(Math.min(d.x0, p.x)), b = this.tOf(Math.max(d.x0, p.x));
				this.area = { s: a, e: b, tracks: null };
			}
			this.mouse = p;
			this.invalidate(false);
			return;
		}
		if (e.target !== this.over) return;
		const gh = p.x < GUTTER ? this.rowAtY(p.y) : null;
		const gRow = gh && gh.type === 'track' ? gh : null;
		if (gRow !== this.gutterHover) { this.gutterHover = gRow; this.invalidate(false); }
		const onButtons = gRow && p.x > GUTTER - 46;
		this.over.style.cursor = onButtons || (gRow && this.hiddenLevelsAt(gRow, p.y)) ? 'pointer' : '';
		this.over.title = gRow && p.x > GUTTER - 24 ? 'Hide this track' : onButtons ? (gRow.pin ? 'Unpin this track' : 'Pin this track to the top') : '';
		this.mouse = p;
		if (gh && !onButtons) { this.hover = null; this.gutterTooltip(gh, e); this.invalidate(false); return; }
		const h = this.hit(p.x, p.y);
		const prev = this.hover;
		this.hover = h && h.slice ? h.slice : null;
		this.updateTooltip(h, e);
		if (prev?.name !== this.hover?.name || prev?.rel !== this.hover?.rel) this.invalidate(false);
		else this.invalidate(false);
	}

	/* Is y on a track's "levels N–M hidden: show" note (labelTop + 30)? */
	hiddenLevelsAt(row, y) {
		const t = row.t;
		if (t.counter || t.deepest < t.lanes) return false;
		const ly = this.labelTop(row, this.rowTop(row));
		return Math.abs(y - (ly + 30)) <= 8;
	}

	setArea(d, p) {
		const a = this.tOf(Math.min(d.x0, p.x)), b = this.tOf(Math.max(d.x0, p.x));
		const y0 = Math.min(d.y0, p.y), y1 = Math.max(d.y0, p.y);
		const tracks = new Set();
		for (const row of this.visibleRows()) {
			const sy = this.rowTop(row);
			if (sy + row.h < y0 || sy > y1) continue;
			if (row.type === 'track') tracks.add(row.t.id);
			else if (row.g.collapsed) for (const t of row.vis) tracks.add(t.id);
		}
		this.area = { s: a, e: b, tracks };
	}

	onUp(e) {
		const d = this.drag;
		if (!d) return;
		this.drag = null;
		const p = this.local(e);
		if ((d.mode === 'area' || d.mode === 'measure') && this.area) {
			this.app.areaChanged(this.area);
			this.invalidate(false);
			return;
		}
		if (d.mode === 'measure' && !d.moved) { this.area = null; this.app.areaChanged(null); this.invalidate(false); return; }
		if (d.moved || d.mode === 'pan') { this.scheduleFetch(); return; }
		// a click
		const h = this.hit(p.x, p.y);
		if (h && h.slice) {
			if (h.slice.count > 1) { this.focusRange(h.slice.rel, h.slice.dur, true); return; }
			if (e.button === 1) { this.focusRange(h.slice.rel, h.slice.dur, true); return; }
			this.select(h.slice);
		} else {
			if (this.area) { this.area = null; this.app.areaChanged(null); }
			if (this.sel) this.select(null);
			this.invalidate(false);
		}
	}

	onDbl(e) {
		const p = this.local(e);
		const h = this.hit(p.x, p.y);
		if (h && h.slice) this.focusRange(h.slice.rel, h.slice.dur, true);
	}

	/* Over a track name or a process header: the whole name (the gutter cuts long ones)
	 * and what the track is. */
	gutterTooltip(row, e) {
		const esc = escapeHtml;
		let html;
		if (row.type === 'group') {
			const p = row.g.proc;
			const sub = [p.pid !== undefined ? `pid ${p.pid}` : '', p.rank >= 0 ? `rank ${p.rank}` : '', p.host || '', `${row.vis.length} track${row.vis.length === 1 ? '' : 's'}`].filter(Boolean).join(' · ');
			html = `<b class="bidi">${esc(this.groupLabel(row.g))}</b><br><span class="muted">${esc(sub)} · click to ${row.g.collapsed ? 'expand' : 'collapse'}</span>`;
		} else {
			const t = row.t;
			const p = row.g ? this.groupLabel(row.g) : '';
			const what = [KIND_LABEL[t.kind] || t.kind, t.tid !== undefined && t.tid !== null ? `tid ${t.tid}` : '', t.slices ? `${fmtInt(t.slices)} slices` : '',
				!t.counter && t.deepest > 0 ? `${t.deepest + 1} levels` : ''].filter(Boolean).join(' · ');
			html = `<b class="bidi">${esc(t.name)}</b>${p ? `<br><span class="bidi">${esc(p)}</span>` : ''}<br><span class="muted">${esc(what)}</span>`;
		}
		this.tooltip.innerHTML = html;
		this.placeTooltip(e);
	}

	placeTooltip(e) {
		const tt = this.tooltip;
		tt.hidden = false;
		const r = this.main.getBoundingClientRect();
		let x = e.clientX - r.left + 14, y = e.clientY - r.top + 14;
		const tw = tt.offsetWidth, th = tt.offsetHeight;
		if (x + tw > this.W - 4) x = e.clientX - r.left - tw - 10;
		if (y + th > this.H - 4) y = e.clientY - r.top - th - 10;
		tt.style.transform = `translate(${Math.max(0, x)}px, ${Math.max(0, y)}px)`;
	}

	updateTooltip(h, e) {
		const tt = this.tooltip;
		if (!h || (!h.slice && !h.counter)) { tt.hidden = true; return; }
		let html;
		if (h.slice) {
			const s = h.slice;
			// (names run to thousands of characters: the drawer has the whole of it)
			let nm = s.nameText ?? this.nameText(s.name);
			if (nm.length > 300) nm = `${nm.slice(0, 299)}…`;
			const name = escapeHtml(nm || '(no name)');
			html = `<b>${name}</b><br>${fmtDur(s.dur)}`;
			if (s.count > 1) html = `<b>${fmtInt(s.count)} events</b> merged (longest: <span class="bidi">${name}</span>)<br>${fmtDur(s.dur)} span · click to zoom in`;
			if (s.flags & EVF_UNCLOSED) html += ' <i>(Did Not Finish)</i>';
			html += `<br><span class="muted"><span class="bidi">${escapeHtml(h.row.t.name)}</span> · at ${fmtOffset(s.rel)}</span>`;
		} else {
			const c = h.counter;
			html = `<b>${escapeHtml(h.row.t.name)}</b><br>${fmtValue(c.value)}`;
			if (c.min !== undefined && c.max !== undefined && c.min !== c.max) html += `<br><span class="muted">min ${fmtValue(c.min)} · max ${fmtValue(c.max)}</span>`;
			html += `<br><span class="muted">at ${fmtOffset(c.rel)}</span>`;
		}
		tt.innerHTML = html;
		this.placeTooltip(e);
	}

	/* Keyboard, by KeyboardEvent.code; returns true when handled. */
	keyDown(e) {
		const c = e.code;
		if (['KeyW', 'KeyA', 'KeyS', 'KeyD'].includes(c) && !e.ctrlKey && !e.metaKey && !e.altKey) {
			if (!this.keys.has(c)) { this.keys.add(c); this.invalidate(true); }
			if (e.shiftKey) this.keys.add('ShiftLeft');
			return true;
		}
		if (c === 'ShiftLeft' || c === 'ShiftRight') { this.keys.add(c); return false; }
		if (e.ctrlKey || e.metaKey || e.altKey) return false;
		switch (c) {
			case 'KeyF': this.keyF(); return true;
			case 'Digit0': case 'Numpad0': this.fitAll(); return true;
			case 'Escape':
				if (this.area) { this.area = null; this.app.areaChanged(null); }
				if (this.sel) this.select(null);
				this.invalidate(false);
				return true;
			case 'Backspace': this.undoZoom(); return true;
			case 'ArrowUp': this.scrollY -= 60; this.clampScroll(); this.invalidate(true); this.scheduleFetch(); return true;
			case 'ArrowDown': this.scrollY += 60; this.clampScroll(); this.invalidate(true); this.scheduleFetch(); return true;
			case 'ArrowLeft': this.panPx(-this.PW * 0.1); return true;
			case 'ArrowRight': this.panPx(this.PW * 0.1); return true;
			case 'Period': this.stepSlice(1); return true;
			case 'Comma': this.stepSlice(-1); return true;
			case 'BracketRight': this.followFlow('out'); return true;
			case 'BracketLeft': this.followFlow('in'); return true;
			case 'KeyM': if (this.sel) { this.area = { s: this.sel.rel, e: this.sel.rel + this.sel.dur, tracks: new Set([this.sel.track]) }; this.app.areaChanged(this.area); this.invalidate(false); } return true;
			default: return false;
		}
	}

	keyUp(e) {
		this.keys.delete(e.code);
		if (e.code === 'ShiftLeft' || e.code === 'ShiftRight') { this.keys.delete('ShiftLeft'); this.keys.delete('ShiftRight'); }
		this.invalidate(true);
	}

	/* , and . : previous/next slice at the selection's depth on its track, from the
	 * server (slices merged into a block at this zoom are not skipped). The selection's
	 * seq (its ordinal among the slices starting with it, from the details) makes the
	 * step visit each of several slices that start together. */
	async stepSlice(dir) {
		const s = this.sel;
		if (!s) return;
		const q = { track: s.track, ts: s.abs.toString(), depth: s.depth, nav: dir > 0 ? 'next' : 'prev' };
		if (s.seq !== undefined) q.seq = s.seq;
		let d;
		try {
			d = await getJSON('api/slice', q, { exact: true, quiet: true });
		} catch {
			return; // none on that side
		}
		if (this.sel !== s) return;
		const sel = this.selOf(d, s.track);
		this.reveal(sel, false);
		this.select(sel);
	}

	async followFlow(dir) {
		const f = this.flows.find((x) => x.dir === dir);
		if (!f) return;
		await this.selectAt(f.track, f.rel);
	}
}
