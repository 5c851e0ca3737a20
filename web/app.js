// SPDX-License-Identifier: MIT
// Entry point: loads the session, wires the pages (Overview, Timeline, Ops), search,
// details drawer, keyboard, URL state (#/page?...), theme, errors and status.
import { getJSON, onActivity, downloadUrl, big, parseExact } from './api.js';
import { Timeline } from './timeline.js';
import { Details } from './details.js';
import { Search } from './search.js';
import { Overview } from './overview.js';
import { Ops } from './ops.js';
import { setTimeFormat, timeFormat, escapeHtml, fmtInt } from './format.js';

const $ = (s) => document.querySelector(s);
const PAGES = ['overview', 'timeline', 'ops'];

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
function ereEscape(s) { return s.replace(/[.[\]()*+?{}|^$\\]/g, '\\$&'); }

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
			this.setStatus('offline', false, true);
			const msg = e.status === 0 ? 'Cannot reach the tftracer server.' : `Could not load the session: ${e.message}`;
			this.banner(msg, () => { this.hideBanner(); this.load(); });
			$('#page-overview').innerHTML = `<div class="fatal"><h2>No session</h2><p>${escapeHtml(msg)}</p><p class="muted">Start the server with <code>tftracer serve FILE.tft</code> (or <code>tftracer FILE</code>) and reload.</p></div>`;
			this.showPage('overview');
			return;
		}
		performance.mark('tft-session');
		const s = this.session;
		document.title = `tftracer · ${s.producer || s.format || 'session'}`;
		this.timeline.setSession(s);
		this.ops.build(s);
		this.setStatus('ready', false);
		window.addEventListener('hashchange', () => this.route());
		this.route(true);
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
			if (q.get('hl')) this.highlightName(q.get('hl'), true, { stay: true });
			else if (q.get('q')) this.search.set(q.get('q'), q.get('rx') === '1');
			const sel = q.get('sel');
			if (sel) {
				const [track, abs, depth] = sel.split('.');
				if (/^\d+$/.test(track) && /^-?\d+$/.test(abs || '')) {
					const a = BigInt(abs);
					tl.select({ track: +track, depth: +depth || 0, rel: Number(a - tl.T0), dur: 0, abs: a, name: null, count: 1, flags: 0 });
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
				if (tl.sel) q.set('sel', `${tl.sel.track}.${tl.sel.abs}.${tl.sel.depth}`);
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
	selectionDetails() { /* flows are drawn by the timeline */ }
	areaChanged(area) { this.details.showArea(area); }
	searchChanged(results) { this.timeline.setSearchHits(results); this.updateHash(); }
	gotoResult(r) { if (this.page !== 'timeline') this.go('timeline'); this.timeline.gotoResult(r); }
	firstDraw() {
		$('.tl-loading').hidden = true;
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

	/* Highlight every slice named `name` on the Timeline (and step through them). */
	highlightName(name, exact = true, opts = {}) {
		if (!name) return;
		this.highlightedName = name;
		this.timeline.setHighlight(name);
		$('.hl-chip').hidden = false;
		$('.hl-text').textContent = `Highlighting: ${name}`;
		$('.hl-chip').title = name;
		this.search.set(exact ? `^${ereEscape(name)}$` : name, exact);
		if (!opts.stay) this.go('timeline');
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

	openStep(st) {
		this.go('timeline');
		const tl = this.timeline;
		tl.focusRange(st.rel, Math.max(1, st.dur), true);
	}

	/* ---- chrome: header, banner, toast, status, keys ------------------------- */

	bindChrome() {
		$('.dl-session').href = downloadUrl('download/session');
		$('.dl-chrome').href = downloadUrl('download/chrome');
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
			if (this.session) { if (this.overviewBuilt) this.overview.render(this.session); this.ops.applyFilter(); }
			if (this.timeline.sel) this.details.show(this.timeline.sel);
		};
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
		const set = (h) => {
			h = Math.max(80, Math.min(window.innerHeight * 0.75, h));
			page.style.setProperty('--drawer-h', `${h}px`);
			try { localStorage.setItem('tft.drawer', String(Math.round(h))); } catch { /* ignore */ }
		};
		try { const v = +localStorage.getItem('tft.drawer'); if (v) page.style.setProperty('--drawer-h', `${v}px`); } catch { /* ignore */ }
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
			if (e.code === 'Tab' && this.search.results.length) { this.search.step(e.shiftKey ? -1 : 1); e.preventDefault(); return; }
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
		this.setStatus(n ? `loading ${n} tile request${n === 1 ? '' : 's'}…` : 'ready', n > 0);
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
					busy: tl.store ? tl.store.busy() : 0,
					requests: tl.store ? { ...tl.store.stats } : null,
					firstDrawMs: window.__tft_first_draw_ms ?? null,
				};
			},
			isIdle: () => app.timeline.isIdle(),
			findSlice: (minPx, summaries) => app.timeline.findSlice(minPx, summaries),
			countHighlighted: () => app.timeline.countHighlighted(),
			frames: () => app.timeline.frames,
		};
	}
}

new App();
void big;
