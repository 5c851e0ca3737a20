// SPDX-License-Identifier: MIT
// Entry point: loads the session, wires the pages (Overview, Timeline, Ops, Runs, Advisor, Analysis),
// search, details drawer, keyboard, URL state (#/page?...), theme, errors and status;
// follows a live session (new steps and traces grow the Timeline in place) and runs
// from an inlined session in a static export.
import { getJSON, onActivity, downloadUrl, big, parseExact, isStatic, staticInfo, serverGone } from './api.js';
import { Timeline } from './timeline.js';
import { Details } from './details.js';
import { Search } from './search.js';
import { Overview } from './overview.js';
import { Ops } from './ops.js';
import { Runs } from './runs.js';
import { Ranks } from './ranks.js';
import { Advisor, parseSliceId } from './advisor.js';
import { Analysis } from './analysis.js';
import { invalidateStats } from './stats.js';
import { setTimeFormat, timeFormat, escapeHtml, fmtInt } from './format.js';

const $ = (s) => document.querySelector(s);
const PAGES = ['overview', 'timeline', 'ops', 'runs', 'ranks', 'advisor', 'analysis'];

/* The session fetched by index.html before the modules loaded; null to refetch. */
async function parseEarly(p) {
	try {
		const res = await p;
		if (!res.ok) return null;
		return parseExact(await res.text());
	} catch {
		return null;
	}
}

/* POSIX ERE: escape the special characters of an exact name. */

class App {
	constructor() {
		this.page = null;
		this.session = null;
		this.hashTimer = 0;
		this.applyingHash = false;
		this.errors = new Map();
		this.timeline = new Timeline($('#page-timeline'), this);
		this.details = new Details($('#page-timeline .drawer'), this);
		this.search = new Search($('form.search'), this);
		this.overview = new Overview($('#page-overview'), this);
		this.ops = new Ops($('#page-ops'), this);
		this.runs = new Runs($('#page-runs'), this);
		this.ranks = new Ranks($('#page-ranks'), this);
		this.advisor = new Advisor($('#page-advisor'), this);
		this.analysis = new Analysis($('#page-analysis'), this);
		this.live = false;
		this.bindChrome();
		window.__tft = this.testHooks();
		this.load();
	}

	/* ---- loading -------------------------------------------------------- */

	async load() {
		this.setStatus('loading session…', true);
		try {
			const early = window.__tft_session_p;
			window.__tft_session_p = null;
			this.session = early ? await parseEarly(early) : null;
			if (!this.session) this.session = await getJSON('api/session', null, { exact: true, quiet: true });
		} catch (e) {
			this.setStatus(isStatic() ? 'no data' : 'offline', false, true);
			const msg = e.status === 0 ? 'Cannot reach the tftracer server.' : `Could not load the session: ${e.message}`;
			if (!isStatic()) this.banner(msg, () => { this.hideBanner(); this.load(); });
			$('#page-overview').innerHTML = `<div class="fatal"><h2>No session</h2><p>${escapeHtml(msg)}</p><p class="muted">${isStatic() ? 'Export the session again with <code>tftracer export FILE -f html</code>.' : 'Start the server with <code>tftracer serve FILE.tft</code> (or <code>tftracer FILE</code>) and reload.'}</p></div>`;
			this.showPage('overview');
			return;
		}
		performance.mark('tft-session');
		const s = this.session;
		document.title = `tftracer · ${s.producer || s.format || 'session'}`;
		this.timeline.setSession(s);
		this.ranks.setSession(s);
		this.ops.build(s);
		this.setStatus('ready', false);
		const si = staticInfo();
		if (si && si.truncated > 0) this.banner(`This export holds part of the session: ${fmtInt(si.truncated)} events were left out (the exporter's event cap).`);
		window.addEventListener('hashchange', () => this.route());
		this.route(true);
		this.runs.start(s);
	}

	/* ---- routing and URL state --------------------------------------------- */

	parseHash() {
		const h = location.hash.replace(/^#\/?/, '');
		const [page, query] = h.split('?');
		return { page: PAGES.includes(page) ? page : 'timeline', q: new URLSearchParams(query || '') };
	}

	route(initial) {
		if (this.applyingHash) return;
		const { page, q } = this.parseHash();
		if (initial || page !== this.page) this.showPage(page);
		if (!initial) return;
		this.applyingHash = true;
		try {
			const tl = this.timeline;
			const s = parseFloat(q.get('s')), e = parseFloat(q.get('e'));
			if (Number.isFinite(s) && Number.isFinite(e) && e > s) tl.setView(s, e);
			const pins = (q.get('pin') || '').split(',').filter((x) => /^\d+$/.test(x)).map(Number);
			if (pins.length) tl.setPins(pins);
			if (q.get('hl')) this.highlightName(q.get('hl'), true, { stay: true });
			else if (q.get('q')) this.search.set(q.get('q'), q.get('rx') === '1');
			const sel = q.get('sel');
			if (sel) {
				const [track, abs, depth, seq] = sel.split('.');
				if (/^\d+$/.test(track) && /^-?\d+$/.test(abs || '')) {
					const a = BigInt(abs);
					const s = { track: +track, depth: +depth || 0, rel: Number(a - tl.T0), dur: 0, abs: a, name: null, count: 1, flags: 0 };
					if (/^\d+$/.test(seq || '')) s.seq = +seq; // one of several slices starting together
					tl.select(s);
					tl.showLane(s.track, s.depth); // (the address keeps the window, not the scroll)
				}
			}
			if (page === 'ops') {
				this.ops.setFilters({ track: q.get('track') ?? undefined, step: q.get('step') ?? undefined, text: q.get('filter') ?? undefined });
				this.ops.show();
			}
		} finally {
			this.applyingHash = false;
		}
	}

	showPage(page) {
		this.page = page;
		for (const p of PAGES) $(`#page-${p}`).hidden = p !== page;
		for (const a of document.querySelectorAll('nav.pages a')) a.classList.toggle('on', a.dataset.page === page);
		if (page === 'timeline') this.timeline.show(); else this.timeline.hide();
		if (page === 'ops' && this.session) this.ops.show();
		if (page === 'overview' && this.session) { this.ensureOverview(); if (this.overview.canvas) this.overview.drawChart(); }
		if (page === 'runs') this.runs.show();
		if (page === 'ranks' && this.session) this.ranks.show();
		if (page === 'advisor') this.advisor.show();
		if (page === 'analysis') this.analysis.show();
		this.updateHash();
	}

	go(page) {
		if (this.page !== page) {
			this.showPage(page);
		}
	}

	updateHash() {
		clearTimeout(this.hashTimer);
		this.hashTimer = setTimeout(() => {
			if (!this.session) return;
			const q = new URLSearchParams();
			const tl = this.timeline;
			if (this.page === 'timeline') {
				q.set('s', Math.round(tl.view.s));
				q.set('e', Math.round(tl.view.e));
				if (tl.sel) q.set('sel', `${tl.sel.track}.${tl.sel.abs}.${tl.sel.depth}${tl.sel.seq !== undefined ? `.${tl.sel.seq}` : ''}`);
				if (tl.pinned.length) q.set('pin', tl.pinned.join(','));
			}
			if (this.highlightedName) q.set('hl', this.highlightedName);
			else if (this.search.query) { q.set('q', this.search.query); if (this.search.regex) q.set('rx', '1'); }
			if (this.page === 'ops') {
				const f = this.ops.filters;
				if (f.track !== '') q.set('track', f.track);
				if (f.step !== '') q.set('step', f.step);
				if (f.text) q.set('filter', f.text);
			}
			const qs = q.toString();
			const h = `#/${this.page}${qs ? `?${qs}` : ''}`;
			if (location.hash !== h) history.replaceState(null, '', h);
		}, 300);
	}

	/* ---- callbacks from the pages -------------------------------------------- */

	viewChanged() { this.updateHash(); }
	layoutChanged(hidden) {
		const b = $('.tl-hidden');
		b.hidden = !hidden;
		b.textContent = `${fmtInt(hidden)} hidden · show all`;
	}
	selectionChanged(sel) { this.details.show(sel); this.updateHash(); }
	pinsChanged(n) {
		const b = $('.tl-unpin');
		b.hidden = !n;
		b.textContent = `${fmtInt(n)} pinned · unpin all`;
		this.updateHash();
	}
	/* The Timeline cleared the track filter to show a selected slice's track. */
	filterCleared(name) {
		$('.tl-filter').value = '';
		this.toast(`Track filter cleared to show \u2068${name}\u2069`);
	}
	catsSeen() { this.colorHint(); }
	colorHint() {
		const sel = $('.tl-color');
		const lacking = this.timeline.colorBy === 'category' && !this.timeline.catSeen && this.timeline.firstDraw;
		sel.title = lacking ? 'The server sends no categories with the timeline data: colouring by name instead' : 'Colour slices by name, category or duration (100 ns blue → 1 s red)';
		$('.tl-colorby').classList.toggle('lacking', lacking);
	}
	selectionDetails() { /* flows are drawn by the timeline */ }
	areaChanged(area) { this.details.showArea(area); }
	searchChanged(results) { this.timeline.setSearchHits(results); this.updateHash(); }
	gotoResult(r) { if (this.page !== 'timeline') this.go('timeline'); this.timeline.gotoResult(r); }
	filterTracks(text) {
		this.go('timeline');
		$('.tl-filter').value = text;
		this.timeline.setFilter(text);
	}
	firstDraw() {
		$('.tl-loading').hidden = true;
		this.colorHint();
		// the Overview (and its op statistics) is built once the first screen is drawn
		setTimeout(() => this.ensureOverview(), 50);
	}

	ensureOverview() {
		if (this.overviewBuilt || !this.session) return;
		this.overviewBuilt = true;
		this.overview.render(this.session);
	}
	activity() {
		if (this.statusTimer) return;
		this.statusTimer = setTimeout(() => { this.statusTimer = 0; this.refreshStatus(); }, 100);
	}

	tileError(msg, status) {
		if (status === 0) this.connectionLost();
		else this.banner(`Could not load timeline data: ${msg}`);
	}

	/*
	 * Highlight every slice named `name` on the Timeline (and step through them); with
	 * opts.first (from the Ops page or the Overview's top ops) the first of them at or
	 * after the start of the view is selected and brought into view, as Enter would.
	 */
	highlightName(name, exact = true, opts = {}) {
		if (!name) return;
		this.highlightedName = name;
		this.timeline.setHighlight(name);
		$('.hl-chip').hidden = false;
		$('.hl-text').textContent = `Highlighting: \u2068${name}\u2069`; // (an isolate: see style.css)
		$('.hl-chip').title = name;
		const run = this.search.set(name, false, exact);
		if (!opts.stay) this.go('timeline');
		if (opts.first) this.selectFirst(run);
		this.updateHash();
	}

	/* Once the search `run` answered (and loaded every hit): its first hit, unless the
	 * search changed or the user left the Timeline meanwhile. */
	async selectFirst(run) {
		const gen = this.search.gen;
		await run;
		if (this.search.filling) await this.search.filling;
		if (gen === this.search.gen && this.page === 'timeline' && this.search.cur < 0 && this.search.results.length) this.search.step(1);
	}

	highlightActive() { return !!this.timeline.highlight; }

	/* A row of the Ops page (grouped by name, category or track): highlight its slices. */
	highlightRow(by, row) {
		if (by !== 'category' && by !== 'track') { this.highlightName(row.name, by === 'name', { first: true }); return; }
		this.highlightedName = null;
		const tl = this.timeline;
		let label;
		if (by === 'category') {
			tl.setHighlight(row.name, null, 'cat');
			label = `category \u2068${row.name}\u2069`;
			this.selectFirst(this.search.set(row.name, false, true, 'cat'));
		} else {
			const id = row.track ?? [...tl.tracks.values()].find((t) => t.name === row.name)?.id;
			if (id === undefined) return;
			tl.setHighlight(null, null, 'track', id);
			label = `track \u2068${row.name}\u2069`;
			this.search.set('', false);
		}
		$('.hl-chip').hidden = false;
		$('.hl-text').textContent = `Highlighting ${label}`;
		$('.hl-chip').title = row.name;
		this.go('timeline');
		if (by === 'track') tl.showLane(id);
		this.updateHash();
	}

	clearHighlight() {
		this.highlightedName = null;
		this.timeline.setHighlight(null);
		$('.hl-chip').hidden = true;
		this.search.set('', false);
		this.updateHash();
	}

	statsFor(name) {
		this.ops.setFilters({ text: name });
		this.go('ops');
		this.ops.show();
		this.ops.applyFilter();
	}

	/* Open a step (or any range) on the Timeline: {abs: BigInt ns, dur} or {rel, dur}. */
	openStep(st) {
		this.go('timeline');
		const tl = this.timeline;
		if (tl.follow) tl.setFollow(false);
		const rel = st.abs !== undefined ? Number(big(st.abs) - tl.T0) : st.rel;
		const dur = Math.max(1, st.dur);
		$('.notice').hidden = true;
		tl.focusRange(rel, dur, true);
		/*
		 * A trace that just landed in a live session can lie past the summary the
		 * Timeline has (its view is clamped to that span): read the summary now and
		 * open the range again once the Timeline reaches it.
		 */
		this.pendingOpen = null;
		if (this.live && st.abs !== undefined && rel + dur > tl.span) {
			this.pendingOpen = { abs: big(st.abs), dur, until: performance.now() + 30000 };
			clearTimeout(this.liveTimer);
			this.liveTimer = 0;
			this.refreshLive();
		}
	}

	/*
	 * Open an advisor finding's evidence {track, t0_ns, t1_ns, slice_ids} on the
	 * Timeline: the range shaded (on its track, or on every track), in view, and its
	 * first slice selected (the others marked on the ruler like search hits).
	 */
	async openEvidence(ev, label) {
		const tl = this.timeline;
		this.go('timeline');
		if (tl.follow) tl.setFollow(false);
		const rel = Number(big(ev.t0_ns) - tl.T0);
		const dur = Math.max(1, Number(big(ev.t1_ns) - big(ev.t0_ns)));
		const track = ev.track === null || ev.track === undefined ? null : Number(ev.track);
		const ids = (ev.slice_ids || []).map(parseSliceId).filter(Boolean);
		tl.area = { s: rel, e: rel + dur, tracks: track !== null ? new Set([track]) : null };
		this.areaChanged(tl.area);
		tl.focusRange(rel, dur, true);
		tl.setSearchHits(ids.map((x) => ({ track: x.track, ts: x.ts.toString(), dur: 0 })));
		if (track !== null) tl.showLane(track, ids.length && ids[0].track === track ? ids[0].depth : undefined);
		this.evidence = { label: label || '', track, rel, dur, slices: ids.length, selected: false };
		if (ids.length) {
			const x = ids[0];
			try {
				const d = await getJSON('api/slice', { track: x.track, ts: x.ts.toString(), depth: x.depth }, { exact: true, quiet: true });
				if (this.page === 'timeline') {
					tl.select(tl.selOf(d, x.track));
					tl.showLane(x.track, x.depth);
					this.evidence.selected = true;
				}
			} catch (e) {
				this.toast(`The evidence's slice is not in this session (${e.message})`);
			}
		}
		tl.invalidate(false);
		this.updateHash();
	}

	/* The range openStep() could not show yet, once the live Timeline reaches it. */
	openPending() {
		const p = this.pendingOpen, tl = this.timeline;
		if (!p) return;
		if (performance.now() > p.until) { this.pendingOpen = null; return; }
		const rel = Number(p.abs - tl.T0);
		if (rel + p.dur > tl.span) {
			// not there yet: look again soon (the trace's events are still being stored)
			if (!this.liveTimer) this.liveTimer = setTimeout(() => { this.liveTimer = 0; this.refreshLive(); }, 250);
			return;
		}
		this.pendingOpen = null;
		if (this.page === 'timeline' && !tl.follow) tl.focusRange(rel, p.dur, true);
	}

	/* ---- live sessions ------------------------------------------------------------ */

	/* The Runs page found out whether the server follows a running program. */
	liveChanged(live) {
		this.live = live;
		$('.tl-follow').hidden = !live;
		$('.live-pill').hidden = !live;
	}

	/* Connection state of the live stream (null: not live). */
	setLive(conn) {
		const p = $('.live-pill');
		if (!conn) { p.hidden = true; return; }
		p.hidden = false;
		p.className = `live-pill c-${conn}`;
		$('.live-text').textContent = { open: 'live', connecting: 'connecting…', retrying: 'reconnecting…', lost: 'disconnected', stopped: 'stopped' }[conn] || conn;
	}

	/*
	 * New data in a live session: [startAbs, endAbs] (BigInt ns) when known, or nulls
	 * (the generation moved). Coalesced: at most one session refresh per 500 ms.
	 */
	liveData(startAbs, endAbs) {
		if (!this.session || this.liveEnd) return;
		if (startAbs !== null && startAbs !== undefined) this.dirtyFrom = this.dirtyFrom === undefined || startAbs < this.dirtyFrom ? startAbs : this.dirtyFrom;
		if (this.liveTimer) return;
		const wait = Math.max(0, 500 - (performance.now() - (this.liveAt || 0)));
		this.liveTimer = setTimeout(() => { this.liveTimer = 0; this.refreshLive(); }, wait);
	}

	async refreshLive() {
		const t0 = performance.now();
		this.liveAt = t0;
		let s;
		try {
			s = await getJSON('api/session', null, { exact: true, quiet: true });
		} catch {
			this.openPending();
			return;
		}
		// a big summary (many steps) is re-read less often: at most 10% of the time
		this.liveAt = performance.now() + 9 * (performance.now() - t0);
		const old = this.session;
		const oldEnd = Timeline.extent(old).end;
		let from = this.dirtyFrom !== undefined && this.dirtyFrom < oldEnd ? this.dirtyFrom : oldEnd;
		this.dirtyFrom = undefined;
		const T0 = this.timeline.T0;
		const changed = Timeline.extent(s).end !== oldEnd || s.slices !== old.slices || s.instants !== old.instants || s.counters !== old.counters ||
			(s.track_list || []).length !== (old.track_list || []).length || (s.step_list || []).length !== (old.step_list || []).length || from < oldEnd;
		if (!changed) { this.openPending(); return; }
		this.session = s;
		this.timeline.updateSession(s, Number(from - T0));
		this.openPending();
		this.liveUpdates = (this.liveUpdates || 0) + 1;
		// statistics and the Overview are recomputed when next shown
		invalidateStats();
		this.ops.session = s;
		this.ops.loaded = false;
		if (this.page === 'ops') this.ops.show();
		this.advisor.invalidate();
		this.analysis.invalidate();
		if (this.overviewBuilt) {
			this.overviewBuilt = false;
			if (this.page === 'overview') this.ensureOverview();
		}
	}

	followChanged(on, paused) {
		const b = $('.tl-follow');
		b.setAttribute('aria-pressed', String(!!on));
		b.textContent = on ? 'Following live' : paused ? 'Resume follow' : 'Follow live';
	}

	/*
	 * The live server said its last (the job stopped, or it serves another file): no
	 * more refreshes, and no reconnection attempts.
	 */
	liveEnded(info) {
		this.liveEnd = info || {};
		serverGone('the live server has stopped');
		clearTimeout(this.liveTimer);
		this.liveTimer = 0;
		this.setLive('stopped');
	}

	/* A requested trace landed: a notice with a link to the step. */
	traceLanded(note) {
		const n = $('.notice');
		n.innerHTML = `Trace landed: <b>${note.step !== null ? `step ${escapeHtml(note.step)}` : escapeHtml(note.name || 'trace')}</b> <a href="#" class="notice-open">Open on the Timeline</a> <button type="button" class="notice-close" aria-label="Dismiss">×</button>`;
		n.hidden = false;
		n.querySelector('.notice-open').onclick = (e) => { e.preventDefault(); n.hidden = true; this.runs.openNote(note); };
		n.querySelector('.notice-close').onclick = () => { n.hidden = true; };
		clearTimeout(this.noticeTimer);
		this.noticeTimer = setTimeout(() => { n.hidden = true; }, 15000);
	}

	/* ---- chrome: header, banner, toast, status, keys ------------------------- */

	bindChrome() {
		$('.dl-session').href = downloadUrl('download/session');
		$('.dl-chrome').href = downloadUrl('download/chrome');
		if (isStatic()) {
			// nothing to download from a file; the page is the export
			$('details.downloads').hidden = true;
			document.documentElement.classList.add('static');
		}
		const cb = $('.tl-color');
		cb.value = this.timeline.colorBy;
		cb.onchange = () => { this.timeline.setColorBy(cb.value); this.colorHint(); };
		$('.tl-unpin').onclick = () => this.timeline.unpinAll();
		$('.tl-follow').onclick = () => this.timeline.setFollow(!this.timeline.follow);
		const theme = $('.set-theme');
		try { theme.value = localStorage.getItem('tft.theme') || 'auto'; } catch { /* ignore */ }
		theme.onchange = () => {
			const v = theme.value;
			if (v === 'auto') delete document.documentElement.dataset.theme; else document.documentElement.dataset.theme = v;
			try { localStorage.setItem('tft.theme', v); } catch { /* ignore */ }
			this.themeChanged();
		};
		matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.themeChanged());
		const tf = $('.set-time');
		tf.value = timeFormat();
		tf.onchange = () => {
			setTimeFormat(tf.value);
			this.timeline.invalidate(true);
			if (this.session) { if (this.overviewBuilt) this.overview.render(this.session); this.ops.applyFilter(); this.advisor.render(); }
			if (this.timeline.sel) this.details.show(this.timeline.sel);
		};
		// the page links switch at once: the address is rewritten after a pause, so a
		// link to the page it still names would change nothing
		for (const a of document.querySelectorAll('nav.pages a')) {
			a.addEventListener('click', (e) => {
				if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey || !this.session) return;
				e.preventDefault();
				this.go(a.dataset.page);
			});
		}
		$('.help-btn').onclick = () => this.toggleHelp(true);
		$('.help-close').onclick = () => this.toggleHelp(false);
		$('.help').addEventListener('click', (e) => { if (e.target === $('.help')) this.toggleHelp(false); });
		$('.banner-close').onclick = () => this.hideBanner();
		$('.hl-clear').onclick = () => this.clearHighlight();
		$('.tl-expand').onclick = () => this.timeline.setCollapsedAll(false);
		$('.tl-collapse').onclick = () => this.timeline.setCollapsedAll(true);
		$('.tl-fit').onclick = () => this.timeline.fitAll();
		$('.tl-undo').onclick = () => this.timeline.undoZoom();
		let ft = 0;
		$('.tl-filter').oninput = (e) => { clearTimeout(ft); ft = setTimeout(() => this.timeline.setFilter(e.target.value), 120); };
		$('.tl-hidden').onclick = () => { $('.tl-filter').value = ''; this.timeline.showAllTracks(); };
		for (const d of document.querySelectorAll('details.menu')) {
			d.addEventListener('toggle', () => { if (d.open) for (const o of document.querySelectorAll('details.menu')) if (o !== d) o.open = false; });
		}
		document.addEventListener('click', (e) => {
			for (const d of document.querySelectorAll('details.menu[open]')) if (!d.contains(e.target)) d.open = false;
		});
		this.bindDrawer();
		window.addEventListener('keydown', (e) => this.onKey(e));
		window.addEventListener('keyup', (e) => this.timeline.keyUp(e));
		onActivity((n, err) => {
			if (err && err.status === 0) this.connectionLost();
			this.activity();
		});
	}

	bindDrawer() {
		const handle = $('.dr-handle');
		const page = $('#page-timeline');
		let h0 = 0, y0 = 0;
		let want = 0; // the height asked for; shown clamped to the window
		const clamp = (h) => Math.max(80, Math.min(window.innerHeight * 0.75, h));
		const apply = () => { if (want) page.style.setProperty('--drawer-h', `${clamp(want)}px`); };
		const set = (h) => {
			want = clamp(h);
			apply();
			try { localStorage.setItem('tft.drawer', String(Math.round(want))); } catch { /* ignore */ }
		};
		try { want = +localStorage.getItem('tft.drawer') || 0; } catch { /* ignore */ }
		apply();
		window.addEventListener('resize', apply);
		handle.addEventListener('mousedown', (e) => {
			h0 = $('.drawer').getBoundingClientRect().height;
			y0 = e.clientY;
			const move = (ev) => set(h0 + (y0 - ev.clientY));
			const up = () => { window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up); };
			window.addEventListener('mousemove', move);
			window.addEventListener('mouseup', up);
			e.preventDefault();
		});
	}

	toggleDrawer() {
		const page = $('#page-timeline');
		page.classList.toggle('no-drawer');
		this.timeline.resize();
	}

	themeChanged() {
		this.timeline.readColors();
		this.timeline.invalidate(true);
		if (this.overview.canvas) this.overview.drawChart();
		this.ops.drawBars();
	}

	toggleHelp(on) {
		const h = $('.help');
		h.hidden = on === undefined ? !h.hidden : !on;
		if (!h.hidden) $('.help-close').focus();
	}

	onKey(e) {
		const tag = (e.target && e.target.tagName) || '';
		const typing = tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || (e.target && e.target.isContentEditable);
		if (e.key === 'Escape' && !$('.help').hidden) { this.toggleHelp(false); e.preventDefault(); return; }
		if (typing) return;
		if (e.key === '?') { this.toggleHelp(); e.preventDefault(); return; }
		if ((e.key === '/' && !e.ctrlKey && !e.metaKey) || ((e.ctrlKey || e.metaKey) && e.code === 'KeyF')) {
			const i = $('form.search input');
			i.focus();
			i.select();
			e.preventDefault();
			return;
		}
		if (!$('.help').hidden) return;
		if (this.page === 'timeline') {
			if (e.code === 'KeyQ' && !e.ctrlKey && !e.metaKey && !e.altKey) { this.toggleDrawer(); e.preventDefault(); return; }
			// (from the plot only: elsewhere Tab moves the focus, as everywhere)
			const onPlot = !e.target || e.target === document.body || e.target === this.timeline.over;
			if (e.code === 'Tab' && onPlot && this.search.results.length) { this.search.step(e.shiftKey ? -1 : 1); e.preventDefault(); return; }
			if (this.timeline.keyDown(e)) e.preventDefault();
		}
	}

	banner(msg, retry) {
		const b = $('.banner');
		$('.banner-text').textContent = msg;
		const r = $('.banner-retry');
		r.hidden = !retry;
		r.onclick = retry || null;
		b.hidden = false;
	}

	hideBanner() { $('.banner').hidden = true; }

	connectionLost() {
		if (this.liveEnd) { // nobody to reconnect to: say so once
			if (!this.lost) this.banner('The live server has stopped: this page shows what it sent before.');
			this.lost = true;
			return;
		}
		if (this.lost) return;
		this.lost = true;
		this.banner('Connection to the tftracer server lost. Retrying…');
		let wait = 1000;
		const probe = async () => {
			try {
				await getJSON('api/session', null, { quiet: true });
				this.lost = false;
				this.hideBanner();
				this.timeline.scheduleFetch();
				this.toast('Reconnected');
			} catch {
				wait = Math.min(5000, wait * 2);
				setTimeout(probe, wait);
			}
		};
		setTimeout(probe, wait);
	}

	toast(msg) {
		const t = $('.toast');
		t.textContent = msg;
		t.hidden = false;
		clearTimeout(this.toastTimer);
		this.toastTimer = setTimeout(() => { t.hidden = true; }, 1600);
	}

	setStatus(text, busy, bad) {
		if (this.statusText === text && this.statusBusy === busy) return;
		this.statusText = text;
		this.statusBusy = busy;
		$('.status-text').textContent = text;
		$('.status').classList.toggle('busy', !!busy);
		$('.status').classList.toggle('bad', !!bad);
	}

	refreshStatus() {
		if (!this.session) return;
		if (this.lost) { this.setStatus('offline', false, true); return; }
		const n = (this.timeline.store ? this.timeline.store.busy() : 0);
		this.setStatus(n ? `loading ${n} tile request${n === 1 ? '' : 's'}…` : isStatic() ? 'static export' : 'ready', n > 0);
	}

	/* ---- test hooks (used by tests/browser) ----------------------------------- */

	testHooks() {
		const app = this;
		return {
			app,
			get timeline() { return app.timeline; },
			state() {
				const tl = app.timeline;
				return {
					page: app.page,
					loaded: !!app.session,
					view: { ...tl.view },
					span: tl.span,
					rows: tl.rows.length,
					tracks: tl.tracks ? tl.tracks.size : 0,
					selected: tl.sel ? { track: tl.sel.track, depth: tl.sel.depth, rel: tl.sel.rel, dur: tl.sel.dur } : null,
					details: app.details.current ? { name: app.details.current.name, dur: Number(app.details.current.dur) } : null,
					search: app.search.state(),
					highlight: tl.highlight ? tl.highlight.name : null,
					highlightField: tl.highlight ? tl.highlight.field : null,
					pinned: tl.pinned.slice(),
					pinH: tl.pinH,
					colorBy: tl.colorBy,
					static: isStatic(),
					busy: tl.store ? tl.store.busy() : 0,
					requests: tl.store ? { ...tl.store.stats } : null,
					firstDrawMs: window.__tft_first_draw_ms ?? null,
				};
			},
			runs: () => app.runs.state(),
			ranks: () => app.ranks.state(),
			advisor: () => app.advisor.state(),
			analysis: () => app.analysis.state(),
			evidence: () => (app.evidence ? { ...app.evidence, area: app.timeline.area ? { s: app.timeline.area.s, e: app.timeline.area.e, tracks: app.timeline.area.tracks ? [...app.timeline.area.tracks] : null } : null } : null),
			live: () => ({ live: app.live, updates: app.liveUpdates || 0, follow: app.timeline.follow, span: app.timeline.span }),
			isIdle: () => app.timeline.isIdle(),
			findSlice: (minPx, summaries) => app.timeline.findSlice(minPx, summaries),
			countHighlighted: () => app.timeline.countHighlighted(),
			frames: () => app.timeline.frames,
			// GET an API path through the UI's client (served: HTTP; static: the page answers)
			api: (path, query) => getJSON(path, query, { exact: true, quiet: true }),
		};
	}
}

new App();
void big;
