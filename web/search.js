// SPDX-License-Identifier: MIT
// Search over all events (server side, /api/search in=name,cat,args,track): names,
// categories, argument values and track names; substring or regex, results in time
// order, "i / N" and what the current hit matched, Enter / Shift+Enter step and wrap
// starting at the first hit after the viewport start; a generation counter drops answers
// to replaced queries. A server that searches names only is completed by matching track
// names here (a link filters the tracks).
import { getJSON, big } from './api.js';
import { fmtInt } from './format.js';

const PAGE = 1000;          // the first page, shown at once
const BULK = 10000;         // later pages (the server's largest)
const MAX_RESULTS = 200000; // loaded in the background: stepping and ticks cover these
const FIELDS = 'name,cat,args,track';
/* A result's "field" (the first that matched): [shown after "i / N", tooltip]. */
const FIELD_LABELS = {
	name: ['name', 'This hit matched its name'],
	cat: ['category', 'This hit matched its category'],
	args: ['argument', 'This hit matched one of its argument values'],
	track: ['track', 'This hit is on a track whose name (or process name) matched'],
};

export class Search {
	constructor(form, app) {
		this.app = app;
		this.input = form.querySelector('input[type=search]');
		this.regexBtn = form.querySelector('.s-regex');
		this.prevBtn = form.querySelector('.s-prev');
		this.nextBtn = form.querySelector('.s-next');
		this.countEl = form.querySelector('.s-count');
		this.trackHits = [];
		this.countEl.addEventListener('click', (e) => {
			const a = e.target.closest('.s-tracks');
			if (!a) return;
			e.preventDefault();
			this.app.filterTracks(this.query);
		});
		this.regex = false;
		this.exact = false; // the query is a whole name (a highlight), case included
		this.gen = 0;
		this.query = '';
		this.results = [];
		this.total = 0;
		this.cur = -1;
		this.loading = null;
		this.timer = 0;
		form.addEventListener('submit', (e) => e.preventDefault());
		this.input.addEventListener('input', () => {
			// emptied (deleted, or the box's own ×): no search, at once
			if (!this.input.value) { this.clear(); return; }
			this.setExact(false);
			clearTimeout(this.timer);
			this.timer = setTimeout(() => this.run(this.input.value), 250);
		});
		this.input.addEventListener('keydown', (e) => {
			if (e.key === 'Enter') {
				e.preventDefault();
				this.step(e.shiftKey ? -1 : 1);
			} else if (e.key === 'Escape') {
				// Esc ends the search (the browser only empties the box) and leaves the box
				e.preventDefault();
				this.clear();
				this.input.blur();
			}
		});
		this.regexBtn.addEventListener('click', () => {
			this.setExact(false);
			this.regex = !this.regex;
			this.regexBtn.setAttribute('aria-pressed', String(this.regex));
			this.run(this.input.value, true);
		});
		this.prevBtn.addEventListener('click', () => this.step(-1));
		this.nextBtn.addEventListener('click', () => this.step(1));
		this.render();
	}

	/* q, as a substring (regex false), a regex, or with exact a whole name (with
	 * field 'cat': a whole category). */
	set(q, regex, exact = false, field = 'name') {
		this.input.value = q;
		this.regex = !!regex && !exact;
		this.exactField = field;
		this.setExact(exact);
		this.regexBtn.setAttribute('aria-pressed', String(this.regex));
		return this.run(q, true);
	}

	/* No search: the box emptied, no count, no ticks, no `q=` in the address; a highlight
	 * the box was showing (an op from the Ops page) ends with it. */
	clear() {
		clearTimeout(this.timer);
		if (this.exact && this.app.highlightActive && this.app.highlightActive()) { this.app.clearHighlight(); return; }
		this.input.value = '';
		this.setExact(false);
		if (this.query || this.loading || this.results.length) this.run('', true);
	}

	setExact(on) {
		this.exact = !!on;
		this.input.classList.toggle('s-exact', this.exact);
		this.input.title = this.exact ? `Slices with exactly this ${this.exactField === 'cat' ? 'category' : 'name'} (type to search instead)` : '';
	}

	/* The query's parameters: an exact name is searched in names only. */
	params(q) {
		return this.exact ? { q, exact: 1, in: this.exactField || 'name' } : { q, regex: this.regex ? 1 : 0, in: FIELDS };
	}

	/* Start a query; resolves when its first page arrived (or was replaced). */
	run(q, force) {
		if (!this.exact) q = q.trim(); // (a name is exact, spaces included)
		clearTimeout(this.timer);
		if (q === this.query && !force) return this.loading || Promise.resolve();
		const gen = ++this.gen;
		this.query = q;
		this.results = [];
		this.total = 0;
		this.cur = -1;
		this.error = null;
		this.trackHits = [];
		this.filling = null;
		if (!q) {
			this.loading = null;
			this.render();
			this.app.searchChanged([]);
			return Promise.resolve();
		}
		this.render(true);
		this.loading = getJSON('api/search', { ...this.params(q), limit: PAGE }, { exact: true, quiet: true })
			.then((j) => {
				if (gen !== this.gen) return;
				this.results = (j.results || []).slice();
				this.total = Number(j.total ?? this.results.length);
				// a server without field search (no "field" in its results): track names here
				if (!this.results.length || this.results[0].field === undefined) this.trackHits = this.matchTracks(q);
				this.loading = null;
				this.render();
				this.app.searchChanged(this.results);
				// the rest in the background: Enter then starts at the view, Shift+Enter
				// wraps to the last hit, and the ticks show every hit
				if (this.results.length < this.total) this.filling = this.fill(gen);
			})
			.catch((e) => {
				if (gen !== this.gen) return;
				this.loading = null;
				this.error = e.message;
				this.render();
			});
		return this.loading;
	}

	/* Load the pages after the first (up to MAX_RESULTS). */
	async fill(gen) {
		try {
			while (gen === this.gen && this.results.length < Math.min(this.total, MAX_RESULTS)) {
				if (!(await this.more(BULK))) break;
			}
		} finally {
			if (gen === this.gen) { this.filling = null; this.render(); }
		}
	}

	async more(limit = PAGE) {
		if (this.results.length >= this.total) return false;
		const gen = this.gen;
		const last = this.results[this.results.length - 1];
		try {
			const cursor = { after_track: last.track, after_ts: big(last.ts).toString(), after_depth: last.depth ?? 0 };
			if (last.seq !== undefined) cursor.after_seq = last.seq; // past it, not past all starting with it
			const j = await getJSON('api/search', { ...this.params(this.query), limit, ...cursor }, { exact: true, quiet: true });
			if (gen !== this.gen) return false;
			const add = j.results || [];
			if (!add.length) { this.total = this.results.length; return false; }
			this.results.push(...add);
			this.app.searchChanged(this.results);
			return true;
		} catch (e) {
			this.error = e.message;
			this.render();
			return false;
		}
	}

	async step(dir) {
		this.stepping = (this.stepping || 0) + 1;
		try {
			await this.step1(dir);
		} finally {
			this.stepping--;
		}
	}

	async step1(dir) {
		if (this.input.value.trim() !== this.query || this.loading) {
			if (this.input.value.trim() !== this.query) await this.run(this.input.value);
			else await this.loading;
		}
		if (!this.results.length) return;
		const tl = this.app.timeline;
		const gen = this.gen;
		// the first step needs every hit (the one at the view, or the last one)
		if (this.cur < 0 && this.filling) await this.filling;
		if (gen !== this.gen || !this.results.length) return; // cleared or replaced meanwhile
		if (this.cur < 0) {
			// first hit at or after the viewport start
			const start = tl.view.s;
			let i = this.results.findIndex((r) => Number(big(r.ts) - tl.T0) >= start);
			if (i < 0) i = 0;
			this.cur = dir > 0 ? i : (i - 1 + this.results.length) % this.results.length;
		} else if (dir > 0) {
			if (this.cur + 1 >= this.results.length && this.results.length < this.total) {
				if (this.filling) await this.filling;
				if (this.cur + 1 >= this.results.length && this.results.length < this.total) await this.more();
				if (gen !== this.gen || !this.results.length) return;
			}
			this.cur = (this.cur + 1) % this.results.length;
		} else {
			this.cur = (this.cur - 1 + this.results.length) % this.results.length;
		}
		this.render();
		this.app.gotoResult(this.results[this.cur]);
	}

	/* Tracks whose name or process name matches (for servers that search names only). */
	matchTracks(q) {
		const tl = this.app.timeline;
		if (!tl.tracks) return [];
		let test;
		if (this.regex) { try { const re = new RegExp(q, 'i'); test = (s) => re.test(s); } catch { return []; } }
		else { const lc = q.toLowerCase(); test = (s) => s.toLowerCase().includes(lc); }
		const out = [];
		for (const t of tl.tracks.values()) {
			const p = tl.procs.get(t.process);
			if (test(t.name) || (p && test(String(p.name || '')))) out.push(t.id);
		}
		return out;
	}

	render(busy) {
		let t;
		if (this.error) t = `error: ${this.error}`;
		else if (busy || this.loading) t = 'searching…';
		else if (!this.query) t = '';
		else if (!this.total) t = this.trackHits.length ? '' : 'no match';
		else t = `${this.cur < 0 ? '–' : fmtInt(this.cur + 1)} / ${fmtInt(this.total)}`;
		this.countEl.textContent = t;
		const r = this.cur >= 0 && !busy && !this.loading ? this.results[this.cur] : null;
		if (r && FIELD_LABELS[r.field]) {
			// what the current hit matched: its name, category, an argument value or its track
			const f = document.createElement('span');
			f.className = 's-field';
			f.textContent = ` · ${FIELD_LABELS[r.field][0]}`;
			f.title = FIELD_LABELS[r.field][1];
			this.countEl.appendChild(f);
		}
		if (!this.error && !busy && !this.loading && this.trackHits.length) {
			const a = document.createElement('a');
			a.href = '#';
			a.className = 's-tracks';
			a.title = 'Show only the tracks whose name matches';
			a.textContent = `${t ? ' · ' : ''}${fmtInt(this.trackHits.length)} track${this.trackHits.length === 1 ? '' : 's'}`;
			this.countEl.appendChild(a);
		}
		this.countEl.classList.toggle('error', !!this.error);
	}

	state() {
		const r = this.cur >= 0 ? this.results[this.cur] : null;
		return { query: this.query, total: this.total, cur: this.cur, loaded: this.results.length, regex: this.regex, exact: this.exact, error: this.error || null, pending: !!this.loading || this.stepping > 0, filling: !!this.filling, field: r ? r.field ?? null : null, trackHits: this.trackHits.length };
	}
}
