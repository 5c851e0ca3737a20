// SPDX-License-Identifier: MIT
// Browser tests of the tftracer web UI: headless Chromium (playwright-core) against a
// running `tftracer serve`. Drives the Timeline (tracks, wheel and W zoom, D pan,
// selection and details, search stepping, colour by, pinned tracks), the Ops page
// (click an op, see it highlighted; column filters), Overview, Runs, help; a static
// HTML export opened from file:// with no server; the Runs page of a live job
// (tests/browser/live-job.py under tftracer.TracingServer). Fails on any request to
// another host or any console error; measures first draw and frame times; saves
// screenshots. Prints TAP.
//
//   node ui.test.mjs http://127.0.0.1:PORT/ [--artifacts DIR] [--tag NAME] [--perf-only]
//        [--static FILE.html] [--python-path DIR] [--python BIN] [--tft BIN] [--data DIR]
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const base = new URL(args.find((a) => /^https?:/.test(a)) || 'http://127.0.0.1:9999/');
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const artifacts = path.resolve(opt('--artifacts', path.join(here, '../../build/test-artifacts')));
const tag = opt('--tag', 'ui');
const perfOnly = args.includes('--perf-only');
const staticFile = opt('--static', null);
const pythonPath = opt('--python-path', null);
const python = opt('--python', '/usr/bin/python3');
const tftBin = opt('--tft', null);          // for the small sessions of 8b
const dataDir = opt('--data', path.join(here, '../../../shared/data'));
const allowedHosts = new Set([base.host]);
const WIDTH = 1400, HEIGHT = 900;
fs.mkdirSync(artifacts, { recursive: true });

/* ---- TAP ------------------------------------------------------------------ */
let n = 0, failed = 0;
const metrics = {};
console.log('TAP version 13');
function ok(cond, name, detail) {
	n++;
	if (cond) console.log(`ok ${n} - ${name}`);
	else { failed++; console.log(`not ok ${n} - ${name}${detail ? ` # ${String(detail).replace(/\n/g, ' ')}` : ''}`); }
	return cond;
}
function note(s) { console.log(`# ${s}`); }
function skip(name, why) { n++; console.log(`ok ${n} - ${name} # SKIP ${why}`); }
async function step(name, fn) {
	try {
		const r = await fn();
		return ok(r !== false, name, typeof r === 'string' ? r : '');
	} catch (e) {
		return ok(false, name, e && e.message ? e.message.split('\n')[0] : e);
	}
}
function assert(c, msg) { if (!c) throw new Error(msg); }

/* ---- modules on their own ------------------------------------------------------ */
/* The Ops page's CSV: trace text is untrusted (a name a spreadsheet would run as a formula). */
await step('CSV export: formula-like names defused, CR quoted, numbers kept', async () => {
	const { toCsv } = await import(new URL('../../web/vtable.js', import.meta.url).href);
	const csv = toCsv([{ key: 'name' }, { key: 'n' }],
		[{ name: '=HYPERLINK("http://x")', n: -2 }, { name: '@SUM(A1)', n: 1 }, { name: 'cr\ronly', n: 3 }, { name: 'plain', n: 0 }]);
	const want = 'name,n\n"\'=HYPERLINK(""http://x"")",-2\n\'@SUM(A1),1\n"cr\ronly",3\nplain,0\n';
	return csv === want || `got ${JSON.stringify(csv)}`;
});

/* #19.8: names cut in the middle keep the part that tells them apart (a fixed 6.6 px per character here). */
await step('textfit: long names that share a start are cut in the middle, fit, and stay apart', async () => {
	const { elide, distinctStarts } = await import(new URL('../../web/textfit.js', import.meta.url).href);
	const names = ['/job:localhost/replica:0/task:0/device:GPU:0/stream:14', '/job:localhost/replica:0/task:0/device:GPU:0/stream:all',
		'/job:localhost/replica:0/task:0/device:GPU:0/memcpy', '/job:localhost/replica:0/task:0/device:CPU:0',
		'tf_GPU_Event_Manager/-1199079105', 'tf_GPU_Event_Manager/-1606410758', 'thread 19392 (python3)', 'thread 0 (python3)', 'stream 7'];
	const keep = distinctStarts(names), measure = (t) => t.length * 6.6;
	const out = names.map((n) => elide(n, 150, measure, keep.get(n)));
	const bad = out.filter((l, i) => measure(l) > 150 || out.indexOf(l) !== i);
	return (!bad.length && out[0] !== names[0] && out[0].endsWith('stream:14') && out[6] === names[6]) || `labels ${JSON.stringify(out)}`;
});
/* #19.13: times written together share a unit (the duration format's for the largest, or the chosen one). */
await step('format: a range\'s ends and the ruler\'s ticks in one unit, never "+4780 µs"', async () => {
	const f = await import(new URL('../../web/format.js', import.meta.url).href);
	const got = [f.fmtRange(4.78e6, 6.01e6), f.fmtRange(-16, -7), f.fmtRange(4780123, 4780173), f.fmtTick(4.78e6, 1e4, 4.88e6), f.fmtTick(0, 5e5, 1.5e6),
		f.fmtTime(0, 168e6), f.fmtOffset(4780123, 10), f.fmtTime(123456, 123456, 0, 'us')];
	const want = ['+4.78 ms – +6.01 ms', '−16 ns – −7 ns', '+4.780123 ms – +4.780173 ms', '4.78 ms', '0.0 ms', '0 ms', '+4.78012 ms', '123.456 µs'];
	return got.every((g, i) => g === want[i]) || `got ${JSON.stringify(got)}`;
});

/* ---- browser ---------------------------------------------------------------- */
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tft-ui-profile-'));
const ctx = await chromium.launchPersistentContext(userDir, {
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
		'--no-first-run', '--disable-sync'],
	viewport: { width: WIDTH, height: HEIGHT },
	acceptDownloads: false,
});
const foreign = [];
const consoleErrors = [];
await ctx.route('**/*', (route) => {
	const u = new URL(route.request().url());
	if ((u.protocol === 'http:' || u.protocol === 'https:') && !allowedHosts.has(u.host)) {
		foreign.push(u.href);
		return route.abort();
	}
	return route.continue();
});
const page = ctx.pages()[0] || await ctx.newPage();
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
page.on('requestfailed', (r) => {
	const f = r.failure();
	const u = new URL(r.url());
	// aborted tile requests (stale windows) are expected; anything else is not
	if (allowedHosts.has(u.host) && !(f && /ERR_ABORTED/.test(f.errorText)) && !/\/api\/live$/.test(u.pathname)) consoleErrors.push(`request failed: ${r.url()} ${f && f.errorText}`);
});

/* Synchronisation: wait on the page's state, never for a fixed time (this machine is
 * loaded: a frame may come 200 ms late). WAIT bounds a wait for state; past it the step
 * fails. holdUntil holds a key until fn(arg) is true in the page (the effect the key must
 * have), then releases it and waits for the glide to end. */
const WAIT = 30000;
const shot = async (name) => {
	const p = path.join(artifacts, `${tag}-${name}.png`);
	await page.screenshot({ path: p });
	note(`screenshot ${p}`);
};
const state = () => page.evaluate(() => window.__tft.state());
const idle = (timeout = WAIT) => page.waitForFunction(() => window.__tft && window.__tft.isIdle(), null, { timeout, polling: 50 });
const plotCenter = async () => {
	const b = await page.locator('.tl-over').boundingBox();
	return { x: b.x + 220 + (b.width - 220 - 14) / 2, y: b.y + Math.min(b.height / 2, 150) };
};
/* A key held for ms: only the frame-rate measurement's workload, never to wait for an effect. */
const hold = async (code, ms) => { await page.keyboard.down(code); await page.waitForTimeout(ms); await page.keyboard.up(code); };
const holdUntil = async (p, code, fn, arg) => {
	await p.keyboard.down(code);
	try {
		await p.waitForFunction(fn, arg, { timeout: WAIT, polling: 'raf' });
	} finally {
		await p.keyboard.up(code);
	}
	await p.waitForFunction(() => window.__tft && window.__tft.isIdle(), null, { timeout: WAIT, polling: 50 });
};
/* Two animation frames of page p: its layout, ResizeObserver callbacks and a paint done. */
const frames2 = (p) => p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
/* The URL hash, which the app writes 300 ms after a change, matching re. */
const hashMatches = (p, re) => p.waitForFunction((src) => new RegExp(src).test(location.hash), re.source, { timeout: WAIT });

/* ---- 0. the web files can be inlined by the static exporter ---------------- */
if (!perfOnly) {
	const webDir = path.join(here, '../../web');
	const bad = fs.readdirSync(webDir).filter((f) => /\.(js|css)$/.test(f) && /<\/script|<!--/i.test(fs.readFileSync(path.join(webDir, f), 'utf8')));
	ok(bad.length === 0, 'no web file holds "</script" or "<!--" (static export inlines them)', bad.join(' '));
}

/* ---- 1. open a real trace and see the tracks ------------------------------- */
const t0 = Date.now();
await step('page loads and draws the timeline', async () => {
	await page.goto(new URL('#/timeline', base).href);
	await page.waitForFunction(() => window.__tft_first_draw_ms !== undefined, null, { timeout: WAIT });
	metrics.first_draw_ms = Math.round(await page.evaluate(() => window.__tft_first_draw_ms));
	note(`first_draw_ms=${metrics.first_draw_ms} (navigation start to a complete first timeline frame; wall ${Date.now() - t0} ms)`);
	return true;
});
await step('tracks are shown', async () => {
	await idle();
	const s = await state();
	note(`session: ${s.tracks} tracks, ${s.rows} rows, span ${s.span} ns`);
	assert(s.tracks > 0 && s.rows > 0, `tracks=${s.tracks} rows=${s.rows}`);
	const sl = await page.evaluate(() => window.__tft.findSlice(2, true));
	assert(sl, 'no slice drawn');
	await shot('01-timeline');
	return true;
});

if (!perfOnly) {
	/* ---- 2. zoom with the wheel and with W; pan with D ----------------------- */
	await step('wheel zooms in at the cursor', async () => {
		const before = (await state()).view;
		const c = await plotCenter();
		await page.mouse.move(c.x, c.y);
		for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -120);
		/* five notches zoom by exp(-0.3 * 5): wait until they are applied */
		await page.waitForFunction((b) => { const v = window.__tft.state().view; return (v.e - v.s) / (b.e - b.s) < 0.6; }, before, { timeout: WAIT })
			.catch(() => {});
		await idle();
		const after = (await state()).view;
		const r = (after.e - after.s) / (before.e - before.s);
		assert(r < 0.6, `span ratio ${r.toFixed(3)}`);
		return true;
	});
	await step('W zooms in (held, accelerating)', async () => {
		const before = (await state()).view;
		await page.locator('.tl-over').focus();
		await holdUntil(page, 'KeyW', (b) => { const v = window.__tft.state().view; return (v.e - v.s) / (b.e - b.s) < 0.7; }, before)
			.catch(() => {});
		const after = (await state()).view;
		const r = (after.e - after.s) / (before.e - before.s);
		assert(r < 0.7, `span ratio ${r.toFixed(3)}`);
		return true;
	});
	await step('D pans right', async () => {
		const before = (await state()).view;
		await holdUntil(page, 'KeyD', (b) => { const v = window.__tft.state().view; return (v.s - b.s) / (b.e - b.s) > 0.05; }, before)
			.catch(() => {});
		const after = (await state()).view;
		const moved = (after.s - before.s) / (before.e - before.s);
		assert(moved > 0.05, `moved ${moved.toFixed(3)} windows`);
		assert(Math.abs((after.e - after.s) - (before.e - before.s)) < (before.e - before.s) * 0.02, 'span changed while panning');
		await idle();
		await shot('02-zoomed');
		return true;
	});

	/* ---- 3. select a slice and read its details -------------------------------- */
	let picked = null;
	await step('click selects a slice and the details panel shows it', async () => {
		await page.keyboard.press('Digit0');
		await idle();
		picked = await page.evaluate(() => window.__tft.findSlice(40));
		if (!picked) picked = await page.evaluate(() => window.__tft.findSlice(8));
		assert(picked, 'no clickable slice');
		const b = await page.locator('.tl-over').boundingBox();
		await page.mouse.click(b.x + picked.x, b.y + picked.y);
		await page.waitForFunction(() => window.__tft.state().details, null, { timeout: WAIT });
		const s = await state();
		assert(s.selected && s.selected.track === picked.track, 'wrong track selected');
		assert(s.details.name === picked.name, `details name "${s.details.name}" != "${picked.name}"`);
		const text = await page.locator('.dr-sel').innerText();
		for (const w of ['Duration', 'Start', 'Thread / track', 'Arguments']) assert(text.includes(w), `details lack "${w}"`);
		note(`selected "${picked.name}" on track ${picked.track}`);
		await idle();
		await shot('03-selected');
		return true;
	});
	await step('F fits the selection, 0 fits all', async () => {
		const s0 = await state();
		await page.keyboard.press('KeyF');
		await page.keyboard.press('KeyF');
		await idle();
		const s1 = await state();
		const w = s1.view.e - s1.view.s;
		assert(s1.selected && Math.abs(w - Math.max(s1.selected.dur / 0.8, 80)) / w < 0.05, `window ${w} for a ${s1.selected && s1.selected.dur} ns slice`);
		await page.keyboard.press('Digit0');
		await idle();
		const s2 = await state();
		assert(s2.view.e - s2.view.s >= s0.span, 'not fitted to all');
		return true;
	});
	await step('the URL keeps the view and the selection', async () => {
		await hashMatches(page, /#\/timeline\?.*sel=/).catch(() => {});
		const h = await page.evaluate(() => location.hash);
		assert(/#\/timeline\?/.test(h) && /sel=/.test(h) && /s=/.test(h), `hash ${h}`);
		return true;
	});

	/* ---- 4. search and step through results ------------------------------------ */
	await step('search counts results and Enter / Shift+Enter step through them', async () => {
		const q = picked ? picked.name.slice(0, Math.min(picked.name.length, 12)) : 'a';
		const input = page.locator('form.search input');
		await input.fill(q);
		await input.press('Enter');
		await page.waitForFunction(() => { const s = window.__tft.state().search; return !s.pending && s.query && (s.cur >= 0 || s.error || !s.total); }, null, { timeout: WAIT });
		let s = (await state()).search;
		assert(!s.error, s.error);
		assert(s.total >= 1, `no results for "${q}"`);
		const first = s.cur;
		const count1 = await page.locator('.s-count').innerText();
		assert(new RegExp(`^${first + 1} / `).test(count1.replace(/,/g, '')), `count text "${count1}"`);
		await input.press('Enter');
		await page.waitForFunction(() => !window.__tft.state().search.pending, null, { timeout: WAIT });
		s = (await state()).search;
		const expect = s.total > 1 ? (first + 1) % Math.max(1, s.loaded) : first;
		assert(s.cur === expect, `after Enter cur=${s.cur}, expected ${expect}`);
		await input.press('Shift+Enter');
		await page.waitForFunction(() => !window.__tft.state().search.pending, null, { timeout: WAIT });
		s = (await state()).search;
		assert(s.cur === first, `after Shift+Enter cur=${s.cur}, expected ${first}`);
		await page.waitForFunction(() => window.__tft.state().details, null, { timeout: WAIT });
		const st = await state();
		assert(st.selected, 'search result not selected');
		note(`search "${q}": ${s.total} results`);
		await idle();
		await shot('04-search');
		await input.fill('');
		await input.press('Escape');
		return true;
	});

	/* ---- 5. Ops page, click an op, see it highlighted --------------------------- */
	let opName = null;
	await step('Ops page lists ops with a sortable table and a chart', async () => {
		await page.click('nav.pages a[data-page=ops]');
		await page.waitForSelector('#page-ops .vt-row:not([hidden])', { timeout: WAIT });
		const rows = await page.locator('#page-ops .vt-row:not([hidden])').count();
		assert(rows > 0, 'no rows');
		await page.click('#page-ops .vt-h[data-key=count]');
		await page.waitForSelector('#page-ops .vt-h[data-key=count].sorted', { timeout: WAIT });
		const firstCount = await page.locator('#page-ops .vt-row:not([hidden]) .vt-c').nth(1).innerText();
		await page.click('#page-ops .vt-h[data-key=self]');
		await page.waitForSelector('#page-ops .vt-h[data-key=self].sorted', { timeout: WAIT });
		note(`ops rows visible: ${rows}; top count ${firstCount}`);
		// a name's bidi controls (an unclosed right-to-left override) stay inside its cell
		assert(await page.evaluate(() => getComputedStyle(document.querySelector('#page-ops .vt-row:not([hidden]) .vt-c')).unicodeBidi) === 'isolate', 'name cells are not bidi isolates');
		await shot('05-ops');
		return true;
	});
	await step('clicking an op highlights its slices on the timeline', async () => {
		const row = page.locator('#page-ops .vt-row:not([hidden])').first();
		opName = await row.locator('.vt-c').first().innerText();
		await row.click();
		await page.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: WAIT });
		const s = await state();
		assert(s.highlight === opName, `highlight "${s.highlight}" != "${opName}"`);
		await page.keyboard.press('Digit0');
		await idle();
		await page.waitForFunction(() => { const s = window.__tft.state().search; return s.total > 0 || s.error; }, null, { timeout: WAIT });
		const c = await page.evaluate(() => window.__tft.countHighlighted());
		note(`highlighted ${c.highlighted} of ${c.drawn} drawn slices for "${opName}"`);
		assert(c.highlighted > 0, 'nothing highlighted');
		assert(await page.locator('.hl-chip').isVisible(), 'no highlight chip');
		await shot('06-highlight');
		await page.click('.hl-clear');
		return true;
	});
	await step('the longest op name (past the 256 bytes of a text search) highlights and steps too', async () => {
		const name = await page.evaluate(() => window.__tft.app.ops.table.ordered().map((r) => r.name)
			.reduce((a, b) => (b.length > a.length ? b : a), ''));
		await page.evaluate((n) => window.__tft.app.highlightName(n), name);
		await page.waitForFunction(() => { const s = window.__tft.state().search; return !s.pending && (s.total > 0 || s.error); }, null, { timeout: WAIT });
		const s = (await state()).search;
		note(`longest op name: ${name.length} characters, ${s.total} slices`);
		assert(!s.error && s.total > 0 && s.exact, `search ${JSON.stringify(s)}`);
		await page.click('.hl-clear');
		return true;
	});
	await step('Overview page and back to the timeline', async () => {
		await page.click('nav.pages a[data-page=overview]');
		await page.waitForSelector('#page-overview .cards', { timeout: WAIT });
		await page.waitForFunction(() => !document.querySelector('#page-overview .topops .loading'), null, { timeout: WAIT });
		const text = await page.locator('#page-overview').innerText();
		for (const w of ['Session', 'Steps', 'Health', 'Top ops by self time']) assert(text.includes(w), `overview lacks "${w}"`);
		await shot('07-overview');
		await page.click('nav.pages a[data-page=timeline]');
		await idle();
		const s = await state();
		assert(s.page === 'timeline' && s.rows > 0, 'timeline not back');
		return true;
	});
	await step('? shows the help overlay, Escape closes it', async () => {
		await page.locator('.tl-over').focus();
		await page.keyboard.press('Shift+Slash');
		await page.waitForSelector('.help:not([hidden])', { timeout: WAIT });
		await shot('08-help');
		await page.keyboard.press('Escape');
		await page.waitForSelector('.help', { state: 'hidden', timeout: WAIT });
		return true;
	});
	await step('downloads are served', async () => {
		for (const p of ['download/chrome', 'download/session']) {
			const r = await page.request.get(new URL(p, base).href);
			assert(r.ok(), `${p}: ${r.status()}`);
			const b = await r.body();
			assert(b.length > 0, `${p} empty`);
		}
		return true;
	});
	await step('dark theme renders', async () => {
		await page.evaluate(() => { const s = document.querySelector('.set-theme'); s.value = 'dark'; s.dispatchEvent(new Event('change')); });
		await idle();
		await shot('09-dark');
		await page.evaluate(() => { const s = document.querySelector('.set-theme'); s.value = 'auto'; s.dispatchEvent(new Event('change')); });
		return true;
	});
}

if (!perfOnly) {
	/* ---- 5b. checklist items: colour by, pins, search fields, column filters, Runs ---- */
	const pixelAt = (x, y) => page.evaluate(([x, y]) => {
		const c = document.querySelector('.tl-base');
		const dpr = window.devicePixelRatio || 1;
		return Array.from(c.getContext('2d').getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data.slice(0, 3));
	}, [x, y]);
	await step('colour by duration recolours the slices, and back to names', async () => {
		await page.click('nav.pages a[data-page=timeline]');
		await page.keyboard.press('Digit0');
		await idle();
		const sl = await page.evaluate(() => window.__tft.findSlice(30));
		assert(sl, 'no slice to sample');
		const before = await pixelAt(sl.x, sl.y + 4);
		await page.selectOption('.tl-color', 'duration');
		await idle();
		const s = await state();
		assert(s.colorBy === 'duration', `colorBy ${s.colorBy}`);
		const after = await pixelAt(sl.x, sl.y + 4);
		note(`"${sl.name}" by name rgb(${before}) -> by duration rgb(${after})`);
		assert(before.join() !== after.join(), 'same colour after switching to duration');
		await shot('11-colour-duration');
		await page.selectOption('.tl-color', 'name');
		await idle();
		assert((await pixelAt(sl.x, sl.y + 4)).join() === before.join(), 'name colours not restored');
		return true;
	});
	await step('a track pins to the top (and stays there while scrolling), unpin all', async () => {
		const b = await page.locator('.tl-over').boundingBox();
		const target = await page.evaluate(() => {
			const tl = window.__tft.timeline;
			const rows = tl.rows.filter((r) => r.type === 'track');
			const r = rows[rows.length - 1];
			return { id: r.t.id, y: tl.rowTop(r) + 9, name: r.t.name };
		});
		await page.mouse.move(b.x + 120, b.y + target.y);
		await page.mouse.move(b.x + 186, b.y + target.y);
		await page.mouse.click(b.x + 186, b.y + target.y);
		let s = await state();
		assert(s.pinned.length === 1 && s.pinned[0] === target.id, `pinned ${JSON.stringify(s.pinned)}`);
		assert(s.pinH > 0, 'no pinned area');
		const top = await page.evaluate(() => { const tl = window.__tft.timeline; return tl.rowTop(tl.pinRows[0]); });
		assert(top === 32, `pinned row at y=${top}`);
		await page.mouse.move(b.x + 600, b.y + 300);
		await page.mouse.wheel(0, 400); // scroll the other tracks (over the names: Alt)
		await idle();
		await shot('12-pinned');
		await hashMatches(page, /pin=/).catch(() => {});
		assert(/pin=/.test(await page.evaluate(() => location.hash)), 'pin not in the URL');
		note(`pinned "${target.name}"; pinned area ${s.pinH} px`);
		await page.click('.tl-unpin');
		s = await state();
		assert(s.pinned.length === 0 && s.pinH === 0, 'not unpinned');
		await page.keyboard.press('Digit0');
		return true;
	});
	await step('search also matches track names', async () => {
		const tname = await page.evaluate(() => { const t = [...window.__tft.timeline.tracks.values()].find((x) => !x.counter); return t ? t.name : ''; });
		assert(tname, 'no track');
		const q = tname.slice(0, Math.min(12, tname.length));
		const input = page.locator('form.search input');
		await input.fill(q);
		await page.waitForFunction(() => { const s = window.__tft.state().search; return !s.pending && (s.total > 0 || s.trackHits > 0 || s.error); }, null, { timeout: WAIT });
		const s = (await state()).search;
		assert(!s.error, s.error);
		if (s.trackHits > 0) {
			// the server searches names only: the UI matched the track itself
			await page.click('.s-count .s-tracks');
			const st = await state();
			note(`"${q}": ${s.total} name results, ${s.trackHits} tracks (matched in the page); filtered to ${st.rows} rows`);
			assert(st.rows > 0, 'filter hid everything');
			await page.fill('.tl-filter', '');
			await page.click('.tl-hidden').catch(() => {});
		} else {
			await input.press('Enter');
			await page.waitForFunction(() => !window.__tft.state().search.pending, null, { timeout: WAIT });
			const s2 = (await state()).search;
			note(`"${q}": ${s2.total} results (server-side, field ${s2.field})`);
			assert(s2.total > 0, 'no result');
		}
		await input.fill('');
		await input.press('Escape');
		return true;
	});
	await step('Ops column filters (Total > 1ms, name text) narrow the table', async () => {
		await page.click('nav.pages a[data-page=ops]');
		try {
			await page.waitForFunction(() => window.__tft.app.ops.table.ordered().length > 0, null, { timeout: WAIT });
		} catch {
			throw new Error(`no ops rows: page ${(await state()).page}, status "${await page.locator('#page-ops .o-status').innerText()}", filter "${await page.locator('#page-ops .o-text').inputValue()}"`);
		}
		const all = await page.evaluate(() => window.__tft.app.ops.table.ordered().length);
		await page.fill('#page-ops .vt-f[data-key=total]', '>1ms');
		await page.waitForFunction((all) => window.__tft.app.ops.table.ordered().length < all, all, { timeout: WAIT });
		const r = await page.evaluate(() => { const v = window.__tft.app.ops.table.ordered(); return { n: v.length, bad: v.filter((x) => !(x.total > 1e6)).length }; });
		assert(r.n > 0 && r.bad === 0, `${r.n} rows, ${r.bad} not over 1 ms`);
		const status = await page.locator('#page-ops .o-status').innerText();
		assert(/ of /.test(status), `status "${status}"`);
		await page.fill('#page-ops .vt-f[data-key=total]', '>1xs');
		await page.waitForSelector('#page-ops .vt-f[data-key=total].bad', { timeout: WAIT });
		await page.fill('#page-ops .vt-f[data-key=total]', '');
		note(`Total > 1ms: ${r.n} of ${all} ops`);
		await page.fill('#page-ops .vt-f[data-key=total]', '>1ms');
		await page.waitForFunction((n) => window.__tft.app.ops.table.ordered().length === n, r.n, { timeout: WAIT });
		await shot('13-ops-filter');
		await page.fill('#page-ops .vt-f[data-key=total]', '');
		return true;
	});
	await step('Runs page of a recorded session: steps per run kind, no live controls', async () => {
		await page.click('nav.pages a[data-page=runs]');
		await page.waitForFunction(() => window.__tft.runs().conn !== undefined && document.querySelector('#page-runs .r-cards'), null, { timeout: WAIT });
		const r = await page.evaluate(() => window.__tft.runs());
		assert(!r.live, 'a file server reported live');
		assert(await page.locator('#page-runs .r-controls').count() === 0, 'live controls shown');
		assert(await page.locator('#page-runs .r-static').isVisible(), 'no "not live" note');
		const steps = await page.evaluate(() => (window.__tft.app.session.step_list || []).length);
		if (steps) assert(r.kinds >= 1 && r.points >= 1, `kinds ${r.kinds} points ${r.points}`);
		note(`runs: ${r.kinds} kinds, chart of ${r.points} steps (${r.traced} traced)`);
		await shot('14-runs-recorded');
		if (r.points) {
			// a click on a bar opens the step on the Timeline
			const c = await page.locator('#page-runs .r-chart').boundingBox();
			await page.mouse.click(c.x + 64, c.y + 190);
			await page.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: WAIT });
		}
		await page.click('nav.pages a[data-page=timeline]');
		return true;
	});
}

if (!perfOnly) {
	/* ---- 5c. search over every hit, flows, stepping, ancestors, Ops groups, keys ---- */
	const searchFor = async (q) => {
		const input = page.locator('form.search input');
		await input.fill(q);
		await input.press('Enter');
		await page.waitForFunction(() => { const s = window.__tft.state().search; return !s.pending && !s.filling && (s.cur >= 0 || s.error || !s.total); }, null, { timeout: WAIT });
		return (await state()).search;
	};
	const clearSearch = async () => {
		const input = page.locator('form.search input');
		await input.fill('');
		await input.press('Escape');
		await page.waitForFunction(() => window.__tft.state().search.query === '', null, { timeout: WAIT });
	};
	const selDetails = () => page.waitForFunction(() => { const s = window.__tft.state(); return s.details && s.selected && document.querySelector('.dr-sel .dr-headline'); }, null, { timeout: WAIT });
	// the most frequent name: past one page (1000) of search results in the Kineto traces
	const busy = await page.evaluate(async () => (await (await fetch('api/stats?by=name')).json()).rows.reduce((a, b) => (b.count > a.count ? b : a)));
	await step('search: Enter starts at the view, Shift+Enter wraps to the last of N, ticks show every hit', async () => {
		assert(busy.count > 1000, `the busiest name has ${busy.count} slices`);
		await page.click('nav.pages a[data-page=timeline]');
		await page.keyboard.press('Digit0');
		const span = await page.evaluate(() => window.__tft.timeline.span);
		await page.evaluate((sp) => window.__tft.timeline.setView(sp * 0.9, sp), span);
		let s = await searchFor(busy.name);
		const st = await state();
		const hit = await page.evaluate(() => { const tl = window.__tft.timeline; return { rel: tl.sel ? tl.sel.rel : null, ticks: tl.searchHits.length }; });
		note(`"${busy.name}": ${s.total} hits; Enter in the last tenth -> ${s.cur + 1} / ${s.total}; ${hit.ticks} ticks`);
		assert(hit.rel !== null && hit.rel >= span * 0.9 - 1, `first Enter selected rel ${hit.rel}, view starts at ${span * 0.9}`);
		assert(s.cur + 1 > 1000, `first Enter went to hit ${s.cur + 1}`);
		assert(hit.ticks === s.total, `${hit.ticks} ticks for ${s.total} hits`);
		assert(st.selected, 'nothing selected');
		await clearSearch();
		await page.locator('.tl-over').focus();
		await page.keyboard.press('Digit0');
		s = await searchFor(busy.name);
		assert(s.cur === 0, `Enter at fit-all went to ${s.cur + 1}`);
		await page.locator('form.search input').press('Shift+Enter');
		await page.waitForFunction(() => !window.__tft.state().search.pending, null, { timeout: WAIT });
		s = (await state()).search;
		assert(s.cur === s.total - 1, `Shift+Enter from 1 went to ${s.cur + 1} / ${s.total}`);
		await clearSearch();
		return true;
	});
	await step('`]` follows a flow to a sub-pixel slice (selects it, zooms in); the drawer lists the real ancestors', async () => {
		await page.locator('.tl-over').focus();
		await page.keyboard.press('Digit0');
		await idle();
		// a slice with an outgoing flow: the first of the busiest name that has one
		const src = await page.evaluate(async (name) => {
			// (epoch nanoseconds: kept as text, JSON numbers would round them)
			const get = async (u) => JSON.parse((await (await fetch(u)).text()).replace(/("ts":)(-?\d+)/g, '$1"$2"'));
			const j = await get(`api/search?q=${encodeURIComponent(name)}&exact=1&in=name&limit=200`);
			for (const r of j.results) {
				const d = await get(`api/slice?track=${r.track}&ts=${r.ts}&depth=${r.depth}`);
				if (d.flows_out.length && d.flows_out[0].track !== null && d.depth > 0) return { r, d };
			}
			return null;
		}, busy.name);
		assert(src, 'no slice of the busiest name has an outgoing flow');
		await page.evaluate((r) => window.__tft.app.gotoResult(r), src.r);
		await page.keyboard.press('Digit0');
		await selDetails();
		await page.locator('.tl-over').focus();
		const chain = await page.locator('.dr-sel .chain').innerText();
		note(`chain at fit-all: ${chain.replace(/\s+/g, ' ').slice(0, 160)}`);
		assert(!/\?/.test(chain) && (chain.match(/›/g) || []).length === src.d.depth, `chain "${chain}" for depth ${src.d.depth}`);
		const want = src.d.flows_out[0];
		await page.keyboard.press('BracketRight');
		await page.waitForFunction((t) => { const s = window.__tft.state(); return s.selected && s.selected.track === t && s.details; }, want.track, { timeout: WAIT });
		const s = await state();
		const tl = await page.evaluate(() => { const t = window.__tft.timeline; return { rel: t.sel.rel, dur: t.sel.dur, res: t.res(), T0: String(t.T0) }; });
		const end = Number(BigInt(String(want.ts)) - BigInt(tl.T0));
		assert(tl.rel <= end && end <= tl.rel + tl.dur, `selected [${tl.rel}, +${tl.dur}] does not hold the flow end ${end}`);
		assert(tl.dur / tl.res >= 3, `the target is ${(tl.dur / tl.res).toFixed(2)} px wide`);
		note(`] selected "${s.details.name}" on track ${s.selected.track} (${(tl.dur / tl.res).toFixed(0)} px wide)`);
		return true;
	});
	await step('`.` / `,` step to the next / previous slice at the depth, merged blocks included', async () => {
		await page.keyboard.press('Digit0');
		await idle();
		const s0 = await state();
		assert(s0.selected, 'nothing selected');
		// the truth: every slice of the track at full resolution near the selection
		const truth = await page.evaluate(async (sel) => {
			const tl = window.__tft.timeline;
			const t0 = tl.T0 + BigInt(Math.round(sel.rel)) - 100000n, t1 = tl.T0 + BigInt(Math.round(sel.rel)) + 400000n;
			const j = await (await fetch(`api/viewport?tracks=${sel.track}&t0=${t0}&t1=${t1}&width=10000&rel=1`)).json();
			const t = j.tracks[0];
			const at = [];
			for (let i = 0; i < t.ts.length; i++) if (t.depth[i] === sel.depth && t.count[i] === 1) at.push(Number(t0 - tl.T0) + t.ts[i]);
			return at.sort((a, b) => a - b);
		}, { track: s0.selected.track, depth: s0.selected.depth, rel: await page.evaluate(() => window.__tft.timeline.sel.rel) });
		const rel0 = await page.evaluate(() => window.__tft.timeline.sel.rel);
		const next = truth.find((x) => x > rel0), prev = [...truth].reverse().find((x) => x < rel0);
		await page.locator('.tl-over').focus();
		await page.keyboard.press('Period');
		await page.waitForFunction((r) => window.__tft.timeline.sel && window.__tft.timeline.sel.rel !== r, rel0, { timeout: WAIT });
		const r1 = await page.evaluate(() => window.__tft.timeline.sel.rel);
		assert(next === undefined || r1 === next, `. went to ${r1}, the next slice at the depth starts at ${next}`);
		await page.keyboard.press('Comma');
		await page.waitForFunction((r) => window.__tft.timeline.sel && window.__tft.timeline.sel.rel !== r, r1, { timeout: WAIT });
		const r2 = await page.evaluate(() => window.__tft.timeline.sel.rel);
		assert(r2 === rel0, `, went back to ${r2}, not ${rel0}`);
		note(`. and , from ${rel0}: next ${r1}, previous ${prev}`);
		return true;
	});
	await step('Ops grouped by category: a click highlights that category\'s slices', async () => {
		await page.click('nav.pages a[data-page=ops]');
		await page.selectOption('#page-ops .o-by', 'category');
		await page.waitForFunction(() => /categor/.test(document.querySelector('#page-ops .o-status').textContent), null, { timeout: WAIT });
		await page.waitForSelector('#page-ops .vt-row:not([hidden])', { timeout: WAIT });
		const row = page.locator('#page-ops .vt-row:not([hidden])').first();
		const cat = await row.locator('.vt-c').first().innerText();
		await row.click();
		await page.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: WAIT });
		await page.keyboard.press('Digit0');
		await idle();
		const c = await page.evaluate(() => window.__tft.countHighlighted());
		const s = await state();
		note(`category "${cat}": ${c.highlighted} of ${c.drawn} drawn items highlighted`);
		assert(s.highlightField === 'cat' && s.highlight === cat, `highlight ${s.highlightField} "${s.highlight}"`);
		assert(c.highlighted > 0, 'nothing highlighted');
		assert(/category/.test(await page.locator('.hl-text').innerText()), 'the chip does not say category');
		await page.click('.hl-clear');
		await page.evaluate(() => { const s = document.querySelector('#page-ops .o-by'); s.value = 'name'; s.dispatchEvent(new Event('change')); });
		return true;
	});
	await step('Tab moves the focus off a button while a search has results; 0 stops the W/A/S/D glide', async () => {
		await searchFor(busy.name);
		await page.locator('.tl-fit').focus();
		const before = await page.evaluate(() => document.activeElement.outerHTML.slice(0, 60));
		await page.keyboard.press('Tab');
		const after = await page.evaluate(() => document.activeElement.outerHTML.slice(0, 60));
		assert(before !== after, `focus stayed on ${before}`);
		await clearSearch();
		await page.locator('.tl-over').focus();
		/* hold D until the view moves, release and press 0 at once (in the glide) */
		const v0 = (await state()).view;
		await page.keyboard.down('KeyD');
		await page.waitForFunction((b) => window.__tft.state().view.s !== b.s, v0, { timeout: WAIT, polling: 'raf' })
			.finally(() => page.keyboard.up('KeyD'));
		await page.keyboard.press('Digit0');
		await idle();
		const v = (await state()).view, sp = await page.evaluate(() => window.__tft.timeline.span);
		assert(Math.abs(v.s + sp * 0.01) < sp * 0.001, `after 0 the view starts at ${v.s}, not ${-sp * 0.01}`);
		return true;
	});
	await step('the drawer keeps inside a smaller window; step median and P90 by nearest rank; signed range offsets', async () => {
		await page.evaluate(() => localStorage.setItem('tft.drawer', '675'));
		await page.reload();
		await page.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
		await page.click('nav.pages a[data-page=timeline]');
		await page.setViewportSize({ width: 1000, height: 450 });
		await frames2(page);
		const dr = await page.evaluate(() => { const r = document.querySelector('.drawer').getBoundingClientRect(); return { h: r.height, bottom: r.bottom }; });
		await page.setViewportSize({ width: WIDTH, height: HEIGHT });
		await page.evaluate(() => localStorage.removeItem('tft.drawer'));
		assert(dr.h > 0 && dr.bottom <= 451, `drawer ${dr.h} px tall, bottom at ${dr.bottom} px in a 450 px window`);
		const st = await page.evaluate(() => window.__tft.app.overview.stepStats([1, 2, 3, 4, 5, 6].map((dur) => ({ dur }))));
		assert(st.median === 3 && st.p90 === 6, `median ${st.median}, p90 ${st.p90} of 1..6`);
		await page.evaluate(() => window.__tft.app.details.showArea({ s: -16, e: -7, tracks: null }));
		const head = await page.locator('.dr-area .dr-headline').innerText();
		assert(!/\+-/.test(head) && /−16/.test(head), `range header "${head}"`);
		await page.evaluate(() => window.__tft.app.details.showArea(null));
		await page.reload();
		await page.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
		await idle();
		return true;
	});
}

/* ---- 5d. issue #19 (items 9, 13): Esc ends a search; times in one unit; step colours; Ops chart labels ---- */
/* Record the text every 2D context of `pg` draws (offscreen ones too) into window.__texts:
 * {t, x, y, font, w (measured), canvas (class)}. Again: empties the record. */
const recordTexts = (pg) => pg.evaluate(() => {
	if (window.__texts) { window.__texts.length = 0; return; }
	window.__texts = [];
	for (const C of [window.CanvasRenderingContext2D, window.OffscreenCanvasRenderingContext2D]) {
		if (!C) continue;
		const f = C.prototype.fillText;
		C.prototype.fillText = function (t, x, y, ...rest) {
			if (window.__texts) window.__texts.push({ t: String(t), x, y, font: this.font, w: this.measureText(String(t)).width, canvas: (this.canvas && this.canvas.className) || '' });
			return f.call(this, t, x, y, ...rest);
		};
	}
});
/* "+4.78 ms – +6.01 ms" -> [{v: 4.78, u: 'ms'}, ...] */
const timesIn = (text) => [...text.matchAll(/(\d+(?:[.,]\d+)*)\s*(ns|µs|ms|s)\b/g)].map((m) => ({ v: +m[1].replace(/,/g, ''), u: m[2] }));
/* A step of 5d that leaves the page on the Timeline even when it fails (6 needs it). */
const onTimeline = (fn) => async () => {
	try { return await fn(); } finally {
		await page.click('nav.pages a[data-page=timeline]').catch(() => {});
		await page.evaluate(() => window.__tft.app.details.showArea(null)).catch(() => {});
	}
};
if (!perfOnly) {
	await step('Esc in the search box ends the search: box, count, ruler ticks, q= in the address; and a highlight it shows (#19.9)', onTimeline(async () => {
		await page.click('nav.pages a[data-page=timeline]');
		await page.locator('.tl-over').focus();
		await page.keyboard.press('Digit0');
		const q = await page.evaluate(async () => (await (await fetch('api/stats?by=name')).json()).rows[0].name);
		const input = page.locator('form.search input');
		await input.fill(q);
		await page.waitForFunction(() => { const s = window.__tft.state().search; return !s.pending && s.total > 0 && window.__tft.timeline.searchHits.length > 0; }, null, { timeout: 10000 });
		await page.waitForFunction(() => /[?&]q=/.test(location.hash), null, { timeout: 5000 });
		await input.press('Escape');
		await page.waitForFunction(() => !/[?&]q=/.test(location.hash), null, { timeout: 3000 }).catch(() => {});
		const after = () => page.evaluate(() => {
			const s = window.__tft.state();
			return { value: document.querySelector('form.search input').value, query: s.search.query, total: s.search.total, ticks: window.__tft.timeline.searchHits.length,
				count: document.querySelector('.s-count').textContent, hash: location.hash, focused: document.activeElement === document.querySelector('form.search input'),
				highlight: s.highlight, chip: !document.querySelector('.hl-chip').hidden };
		});
		let r = await after();
		assert(r.value === '' && r.query === '' && r.total === 0 && r.ticks === 0 && r.count === '' && !/[?&]q=/.test(r.hash) && !r.focused, `after Esc: ${JSON.stringify(r)}`);
		// an op highlighted from the Ops page is in the box: Esc there ends both
		await page.click('nav.pages a[data-page=ops]');
		await page.waitForSelector('#page-ops .vt-row:not([hidden])', { timeout: 15000 });
		await page.locator('#page-ops .vt-row:not([hidden])').first().click();
		await page.waitForFunction(() => window.__tft.state().page === 'timeline' && window.__tft.state().search.total > 0, null, { timeout: 10000 });
		await page.waitForFunction(() => /[?&]hl=/.test(location.hash), null, { timeout: 5000 });
		await input.focus();
		await input.press('Escape');
		await page.waitForFunction(() => !/[?&](hl|q)=/.test(location.hash), null, { timeout: 3000 }).catch(() => {});
		r = await after();
		assert(r.value === '' && r.query === '' && r.ticks === 0 && r.highlight === null && !r.chip && !/[?&](hl|q)=/.test(r.hash), `Esc on a highlighted op: ${JSON.stringify(r)}`);
		// the same in the Ops page's filter box: Esc empties it, the table and the address follow
		await page.click('nav.pages a[data-page=ops]');
		await page.waitForSelector('#page-ops .vt-row:not([hidden])', { timeout: 15000 });
		const all = await page.evaluate(() => window.__tft.app.ops.table.ordered().length);
		await page.fill('#page-ops .o-text', q.slice(0, 3));
		await page.waitForFunction(() => /[?&]filter=/.test(location.hash), null, { timeout: 3000 });
		await page.press('#page-ops .o-text', 'Escape');
		await page.waitForFunction(() => !/[?&]filter=/.test(location.hash), null, { timeout: 3000 }).catch(() => {});
		const o = await page.evaluate(() => ({ n: window.__tft.app.ops.table.ordered().length, hash: location.hash, v: document.querySelector('#page-ops .o-text').value }));
		assert(o.v === '' && o.n === all && !/[?&]filter=/.test(o.hash), `Ops filter after Esc: ${JSON.stringify(o)} (all ${all})`);
		await page.click('nav.pages a[data-page=timeline]');
		return true;
	}));
	await step('a page link switches pages while the address, rewritten after a pause, still names that page', onTimeline(async () => {
		// (found with #19.5: Ops page, a row, the × of the highlight and Ops again within 0.3 s stayed on the Timeline)
		await page.evaluate(() => { history.replaceState(null, '', '#/ops'); window.__tft.app.showPage('timeline'); });
		await page.click('nav.pages a[data-page=ops]');
		const pg = await page.evaluate(() => window.__tft.state().page);
		await page.click('nav.pages a[data-page=timeline]');
		assert(pg === 'ops', `after a click on Ops the page is ${pg}`);
		return true;
	}));
	await step('a range and the time ruler write their times in one unit, the one the duration format picks, or the one chosen (#19.13)', onTimeline(async () => {
		await page.click('nav.pages a[data-page=timeline]');
		const span = await page.evaluate(() => window.__tft.timeline.span);
		const s0 = span > 7e6 ? 4.78e6 : span * 0.5, e0 = s0 + Math.min(1.23e6, span * 0.1);
		const header = async () => {
			await page.evaluate(([s, e]) => window.__tft.app.details.showArea({ s, e, tracks: null }), [s0, e0]);
			return page.locator('.dr-area .dr-headline .muted').innerText();
		};
		const ruler = async () => {
			await recordTexts(page);
			await page.evaluate(([s]) => { const tl = window.__tft.timeline; tl.setView(s, s + 100e3); }, [s0]);
			await frames2(page);
			// the tick labels: drawn on the base canvas under the ruler's middle, right of the names
			return page.evaluate(() => window.__texts.filter((x) => x.canvas === 'tl-base' && x.y === 21 && x.x > 220).map((x) => x.t));
		};
		const check = (what, times, unit) => {
			const units = new Set(times.map((x) => x.u));
			const top = Math.max(...times.map((x) => x.v));
			assert(times.length >= 2 && units.size === 1 && (unit ? units.has(unit) : top >= 1 && top < 1000), `${what}: ${JSON.stringify(times)}`);
		};
		const h = await header();
		check(`range header "${h}"`, timesIn(h));
		const ticks = await ruler();
		check(`ruler ticks ${ticks.join(' | ')}`, timesIn(ticks.join(' ')));
		note(`range ${h}; ruler ${ticks.slice(0, 3).join(', ')}…`);
		// Times = ms (the settings): everything in ms
		const setTime = (v) => page.evaluate((v) => { const s = document.querySelector('.set-time'); s.value = v; s.dispatchEvent(new Event('change')); }, v);
		await setTime('ms');
		try {
			const hm = await header();
			check(`range header in ms "${hm}"`, timesIn(hm), 'ms');
			const tm = await ruler();
			check(`ruler ticks in ms ${tm.join(' | ')}`, timesIn(tm.join(' ')), 'ms');
		} finally { await setTime('auto'); }
		await page.evaluate(() => window.__tft.app.details.showArea(null));
		await page.keyboard.press('Digit0');
		return true;
	}));
	await step('traced steps: the same colour on the Overview as on the Runs page (#19.13)', onTimeline(async () => {
		const steps = await page.evaluate(() => (window.__tft.app.session.step_list || []).length);
		assert(steps > 0, 'the session has no steps');
		/* The hue (10-degree bucket) most of the canvas's coloured pixels have. */
		const hueOf = (sel) => page.evaluate((sel) => {
			const c = document.querySelector(sel), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
			const hist = new Array(36).fill(0);
			for (let i = 0; i < d.length; i += 4) {
				const r = d[i] / 255, g = d[i + 1] / 255, b = d[i + 2] / 255, mx = Math.max(r, g, b), mn = Math.min(r, g, b), l = (mx + mn) / 2;
				if (d[i + 3] < 200 || mx - mn < 0.25 || l < 0.15 || l > 0.9) continue;
				const h = mx === r ? ((g - b) / (mx - mn) + 6) % 6 : mx === g ? (b - r) / (mx - mn) + 2 : (r - g) / (mx - mn) + 4;
				hist[Math.floor(h * 6) % 36]++;
			}
			const k = hist.indexOf(Math.max(...hist));
			return { hue: k * 10 + 5, n: hist[k] };
		}, sel);
		await page.click('nav.pages a[data-page=overview]');
		await page.waitForSelector('#page-overview .stepchart', { timeout: 10000 });
		await page.mouse.move(5, 5);
		await frames2(page);
		const ov = await hueOf('#page-overview .stepchart');
		await page.click('nav.pages a[data-page=runs]');
		await page.waitForFunction(() => window.__tft.runs().points > 0 && document.querySelector('#page-runs .r-chart'), null, { timeout: 10000 });
		await page.mouse.move(5, 5);
		await frames2(page);
		const rn = await hueOf('#page-runs .r-chart');
		const dh = Math.min(Math.abs(ov.hue - rn.hue), 360 - Math.abs(ov.hue - rn.hue));
		note(`traced steps: Overview hue ${ov.hue} (${ov.n} px), Runs hue ${rn.hue} (${rn.n} px)`);
		assert(ov.n > 50 && rn.n > 50 && dh <= 20, `Overview bars hue ${ov.hue}, Runs bars hue ${rn.hue}`);
		const sw = await page.evaluate(() => [getComputedStyle(document.querySelector('#page-overview .sw.traced')).backgroundColor, getComputedStyle(document.querySelector('#page-runs .sw.traced-hl')).backgroundColor]);
		assert(sw[0] === sw[1], `legend swatches: Overview ${sw[0]}, Runs ${sw[1]}`);
		await page.click('nav.pages a[data-page=timeline]');
		return true;
	}));
	await step('Ops chart: names are cut (in the middle) to end before their bar and value, and stay apart (#19.13)', onTimeline(async () => {
		await page.click('nav.pages a[data-page=ops]');
		await page.waitForSelector('#page-ops .vt-row:not([hidden])', { timeout: 15000 });
		await recordTexts(page);
		await page.evaluate(() => window.__tft.app.ops.drawBars());
		const r = await page.evaluate(() => {
			const c = document.querySelector('#page-ops .o-bars');
			const t = window.__texts.filter((x) => x.canvas === 'o-bars');
			const top = window.__tft.app.ops.top;
			// (the bars start at labelW, as ops.js lays them out)
			const labelW = Math.min(260, c.clientWidth * 0.45);
			const labels = t.filter((x) => x.x === 4);
			const rows = labels.map((l, i) => ({ name: top[i] && top[i].name, label: l.t, right: l.x + l.w, value: t.find((v) => v.y === l.y && v.x > l.x) }));
			return { labelW, rows: rows.map((x) => ({ name: x.name, label: x.label, right: Math.round(x.right), valueX: x.value ? Math.round(x.value.x) : null })) };
		});
		assert(r.rows.length > 0, 'no labels drawn');
		const over = r.rows.filter((x) => x.right > r.labelW - 2 || (x.valueX !== null && x.right > x.valueX - 2));
		assert(!over.length, `labels over their bars (bars at ${Math.round(r.labelW)} px): ${JSON.stringify(over.slice(0, 3))}`);
		const same = r.rows.filter((x, i) => r.rows.some((y, j) => j !== i && y.label === x.label && y.name !== x.name));
		assert(!same.length, `different names read the same: ${JSON.stringify(same.slice(0, 2))}`);
		note(`Ops chart: ${r.rows.length} labels within ${Math.round(r.labelW)} px, e.g. "${(r.rows.find((x) => x.label !== x.name) || r.rows[0]).label}"`);
		await page.click('nav.pages a[data-page=timeline]');
		await idle();
		return true;
	}));
}

/* ---- 6. frame times during a pan/zoom sequence --------------------------------- */
await step('pan/zoom frame rate', async () => {
	await page.keyboard.press('Digit0');
	await idle();
	const c = await plotCenter();
	await page.mouse.move(c.x, c.y);
	await page.locator('.tl-over').focus();
	const f0 = await page.evaluate(() => {
		window.__fps = { n: 0, t0: performance.now(), on: true, gaps: [] };
		let last = performance.now();
		const f = (t) => { if (!window.__fps.on) return; window.__fps.n++; window.__fps.gaps.push(t - last); last = t; requestAnimationFrame(f); };
		requestAnimationFrame(f);
		return window.__tft.frames().length;
	});
	await hold('KeyW', 900);
	await hold('KeyD', 700);
	await hold('KeyS', 500);
	await hold('KeyA', 700);
	for (let i = 0; i < 12; i++) { await page.mouse.wheel(0, i < 6 ? -100 : 100); await page.waitForTimeout(40); }
	for (let i = 0; i < 8; i++) { await page.mouse.wheel(120, 0); await page.waitForTimeout(40); }
	const r = await page.evaluate((f0) => {
		window.__fps.on = false;
		const ms = performance.now() - window.__fps.t0;
		const draw = window.__tft.frames().slice(f0).map((f) => f.ms).sort((a, b) => a - b);
		const gaps = window.__fps.gaps.slice(1).sort((a, b) => a - b);
		const q = (a, p) => (a.length ? a[Math.min(a.length - 1, Math.floor(p * a.length))] : 0);
		return { frames: window.__fps.n, ms, drawN: draw.length, drawP50: q(draw, 0.5), drawP95: q(draw, 0.95), drawMax: draw[draw.length - 1] || 0, gapP95: q(gaps, 0.95), gapMax: gaps[gaps.length - 1] || 0 };
	}, f0);
	metrics.fps = +(r.frames / (r.ms / 1000)).toFixed(1);
	metrics.draw_p50_ms = +r.drawP50.toFixed(2);
	metrics.draw_p95_ms = +r.drawP95.toFixed(2);
	note(`fps=${metrics.fps} over ${(r.ms / 1000).toFixed(1)} s (${r.frames} frames; frame gap p95 ${r.gapP95.toFixed(1)} ms, max ${r.gapMax.toFixed(1)} ms)`);
	note(`timeline draw per frame: p50 ${r.drawP50.toFixed(2)} ms, p95 ${r.drawP95.toFixed(2)} ms, max ${r.drawMax.toFixed(2)} ms over ${r.drawN} frames`);
	await idle();
	await shot('10-after-motion');
	return metrics.fps >= 30 ? true : `fps ${metrics.fps} < 30`;
});

/* ---- 7. hygiene ---------------------------------------------------------------- */
ok(foreign.length === 0, 'no request to any other host', foreign.slice(0, 3).join(' '));
ok(consoleErrors.length === 0, 'no console error', consoleErrors.slice(0, 3).join(' | '));
const st = await state().catch(() => null);
if (st && st.requests) note(`tile requests ${st.requests.requests}, aborted ${st.requests.aborted}, errors ${st.requests.errors}, ${(st.requests.bytes / 1e6).toFixed(1)} MB`);
note(`first_draw_ms=${metrics.first_draw_ms} fps=${metrics.fps} (targets: first draw <= 1000 ms on 10M events, >= 30 fps)`);

/* ---- 8. a static HTML export from file://, no server, no network ----------------- */
if (staticFile && !perfOnly) {
	const sp = await ctx.newPage();
	const net = [], errs = [];
	sp.on('request', (r) => { if (!/^(file|blob|data):/.test(r.url())) net.push(r.url()); });
	sp.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
	sp.on('pageerror', (e) => errs.push(`pageerror: ${e.message}`));
	const sstate = () => sp.evaluate(() => window.__tft.state());
	const sidle = () => sp.waitForFunction(() => window.__tft && window.__tft.isIdle(), null, { timeout: WAIT, polling: 50 });
	const sshot = async (name) => { const p = path.join(artifacts, `${tag}-${name}.png`); await sp.screenshot({ path: p }); note(`screenshot ${p}`); };
	let spicked = null;
	await step('static export: opens from file:// and draws the tracks', async () => {
		const t1 = Date.now();
		await sp.goto(`file://${path.resolve(staticFile)}#/timeline`);
		await sp.waitForFunction(() => window.__tft_first_draw_ms !== undefined, null, { timeout: WAIT });
		await sidle();
		const s = await sstate();
		metrics.static_first_draw_ms = Math.round(await sp.evaluate(() => window.__tft_first_draw_ms));
		note(`static: ${(fs.statSync(staticFile).size / 1e6).toFixed(1)} MB, ${s.tracks} tracks, first draw ${metrics.static_first_draw_ms} ms (wall ${Date.now() - t1} ms)`);
		assert(s.static && s.tracks > 0 && s.rows > 0, `static=${s.static} tracks=${s.tracks}`);
		assert(await sp.evaluate(() => !!window.__tft.findSlice(2, true)), 'nothing drawn');
		assert(await sp.locator('details.downloads').isHidden(), 'downloads offered in a static page');
		await sshot('20-static-timeline');
		return true;
	});
	await step('static export: a click selects a slice and the drawer shows it', async () => {
		// into the first step (or the middle of the trace) where slices are wide enough
		await sp.evaluate(() => {
			const app = window.__tft.app, st = (app.session.step_list || [])[0];
			if (st) app.openStep({ abs: st.start_ns, dur: Number(st.dur_ns) });
			else { const tl = app.timeline; tl.setView(tl.span * 0.45, tl.span * 0.46); }
		});
		await sidle();
		spicked = await sp.evaluate(() => window.__tft.findSlice(30)) || await sp.evaluate(() => window.__tft.findSlice(6));
		assert(spicked, 'no clickable slice');
		const b = await sp.locator('.tl-over').boundingBox();
		await sp.mouse.click(b.x + spicked.x, b.y + spicked.y);
		await sp.waitForFunction(() => window.__tft.state().details, null, { timeout: WAIT });
		const s = await sstate();
		assert(s.details.name === spicked.name, `details "${s.details.name}" != "${spicked.name}"`);
		const text = await sp.locator('.dr-sel').innerText();
		for (const w of ['Duration', 'Self time', 'Thread / track']) assert(text.includes(w), `details lack "${w}"`);
		await sp.waitForFunction(() => !/loading/.test(document.querySelector('.dr-hist-stats')?.textContent || ''), null, { timeout: WAIT });
		note(`static: selected "${spicked.name}"`);
		await sshot('21-static-selected');
		return true;
	});
	await step('static export: search, Ops, Overview and colour by category work in the page', async () => {
		const input = sp.locator('form.search input');
		await input.fill(spicked.name.slice(0, 10));
		await input.press('Enter');
		await sp.waitForFunction(() => { const s = window.__tft.state().search; return !s.pending && (s.cur >= 0 || s.error || !s.total); }, null, { timeout: WAIT });
		const ss = (await sstate()).search;
		assert(!ss.error && ss.total >= 1, `search: ${ss.error || ss.total}`);
		await input.fill('');
		await input.press('Escape');
		await sp.selectOption('.tl-color', 'category');
		await sidle();
		assert(await sp.evaluate(() => window.__tft.timeline.catSeen), 'no categories in the static tiles');
		await sshot('22-static-category');
		await sp.selectOption('.tl-color', 'name');
		await sp.click('nav.pages a[data-page=ops]');
		await sp.waitForSelector('#page-ops .vt-row:not([hidden])', { timeout: WAIT });
		const rows = await sp.evaluate(() => window.__tft.app.ops.table.ordered().length);
		await sp.click('nav.pages a[data-page=overview]');
		await sp.waitForFunction(() => !document.querySelector('#page-overview .topops .loading'), null, { timeout: WAIT });
		const comm = await sp.evaluate(() => (window.__tft.app.session.track_list || []).some((t) => t.kind === 'comm'));
		if (comm) {
			await sp.waitForFunction(() => /compute/.test(document.querySelector('#page-overview .step-breakdown')?.textContent || ''), null, { timeout: WAIT });
			note(`static: breakdown "${(await sp.locator('#page-overview .step-breakdown').innerText()).replace(/\s+/g, ' ')}"`);
		}
		await sshot('23-static-overview');
		note(`static: search "${ss.query}" ${ss.total} results; ${rows} ops`);
		return true;
	});
	ok(net.length === 0, 'static export: no network request', net.slice(0, 3).join(' '));
	ok(errs.length === 0, 'static export: no console error', errs.slice(0, 3).join(' | '));
	// (after the console check: the blocked script below is logged as an error)
	await step('static export: its Content-Security-Policy keeps an injected script from running', async () => {
		/* an inline script runs (or not) as it is appended; the violation event follows:
		 * wait for that event, not for a time (WAIT bounds it) */
		const r = await sp.evaluate((wait) => new Promise((res) => {
			const meta = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
			const done = (violated) => res({ meta: !!meta, ran: window.__tft_injected, violated });
			document.addEventListener('securitypolicyviolation', () => done(true));
			window.__tft_injected = false;
			const s = document.createElement('script');
			s.textContent = 'window.__tft_injected = true';
			document.head.append(s);
			if (window.__tft_injected) done(false);
			else setTimeout(() => done(false), wait);
		}), WAIT);
		assert(r.meta && !r.ran && r.violated, JSON.stringify(r));
		return true;
	});
	await sp.close();
} else if (!perfOnly) {
	skip('static export opened from file://', 'no --static FILE (tftracer export -f html)');
}

/* ---- 8b. small sessions of their own: counters, an unclosed slice, edge cases ---- */
if (tftBin && !perfOnly) {
	const xtmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tft-ui-x-'));
	const run = (argv) => new Promise((resolve, reject) => {
		const p = spawn(tftBin, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
		let err = '';
		p.stderr.on('data', (d) => { err += d; });
		p.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`tftracer ${argv[0]}: exit ${c}: ${err.trim().split('\n').pop()}`))));
	});
	/* Import a trace (a file, or JSON text) and serve it: {url, stop, tft}. */
	const serveTrace = async (name, src) => {
		let files = Array.isArray(src) ? src : [src];
		if (typeof src !== 'string' && !Array.isArray(src)) { files = [path.join(xtmp, `${name}.json`)]; fs.writeFileSync(files[0], JSON.stringify(src)); }
		const tft = path.join(xtmp, `${name}.tft`);
		await run(['import', ...files, '-o', tft, '--quiet']);
		const p = spawn(tftBin, ['serve', tft, '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
		const url = await new Promise((resolve) => {
			let out = '';
			const t = setTimeout(() => resolve(null), WAIT);
			p.stdout.on('data', (d) => { out += d; const m = /https?:\/\/\S+/.exec(out); if (m) { clearTimeout(t); resolve(m[0]); } });
			p.on('exit', () => { clearTimeout(t); resolve(null); });
		});
		if (!url) { p.kill(); throw new Error(`serve ${name}: no URL`); }
		allowedHosts.add(new URL(url).host);
		return { url, tft, stop: () => p.kill() };
	};
	const xp = await ctx.newPage();
	const xerrs = [];
	xp.on('console', (m) => { if (m.type() === 'error') xerrs.push(m.text()); });
	xp.on('pageerror', (e) => xerrs.push(`pageerror: ${e.message}`));
	const xidle = () => xp.waitForFunction(() => window.__tft && window.__tft.isIdle(), null, { timeout: WAIT, polling: 50 });
	const xopen = async (url) => {
		await xp.goto(url);
		await xp.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
		await xidle();
		await frames2(xp); // work the first frames scheduled (a second fetch) is in flight: idle again
		await xidle();
	};
	/* Filled height (px) of each counter track's area at times `at` (ns from the start),
	 * and the height its value should have on the track's scale. */
	const counterColumns = (at) => xp.evaluate((at) => {
		const tl = window.__tft.timeline;
		const c = document.querySelector('.tl-base'), g = c.getContext('2d'), dpr = window.devicePixelRatio || 1;
		const out = [];
		for (const row of tl.rows) {
			if (row.type !== 'track' || !row.t.counter) continue;
			const t = row.t, sy = tl.rowTop(row);
			const lo = Math.min(0, t.cmin), hi = Math.max(t.cmax, lo + 1e-9);
			for (const rel of at) {
				const x = Math.round(tl.xOf(rel));
				const px = (y) => Array.from(g.getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data.slice(0, 3));
				const bg = px(sy + 1);
				let filled = 0;
				for (let y = sy + 3; y < sy + t.h - 2; y++) { const p = px(y); if (Math.abs(p[0] - bg[0]) + Math.abs(p[1] - bg[1]) + Math.abs(p[2] - bg[2]) > 30) filled++; }
				// the value in force (the hover's answer)
				const h = tl.hit(x, sy + 20);
				const v = h && h.counter ? h.counter.value : null;
				out.push({ track: t.name, rel, filled, v, want: v === null ? 0 : (v - lo) / (hi - lo) * (t.h - 7) });
			}
		}
		return out;
	}, at);
	const checkCounters = async (what) => {
		const cols = await counterColumns([10e3, 50e3, 90e3, 100e3]);
		const bad = cols.filter((c) => c.v === null || Math.abs(c.filled - c.want) > 3);
		note(`${what}: ${cols.map((c) => `${c.track}@${c.rel / 1e3}us=${c.v}:${c.filled}/${c.want.toFixed(0)}px`).join(' ')}`);
		assert(!bad.length, `wrong area: ${JSON.stringify(bad)}`);
	};
	const counters = path.join(dataDir, 'catapult/instance_counters.json');
	if (fs.existsSync(counters)) {
		let srv = null;
		await step('counters hold their value across tiles and before a tile\'s first sample, on one scale', async () => {
			srv = await serveTrace('counters', counters);
			await xopen(new URL('#/timeline', srv.url).href);
			await checkCounters('served');
			return true;
		});
		await step('static export: the counters are drawn as served', async () => {
			const html = path.join(xtmp, 'counters.html');
			await run(['export', srv.tft, '-f', 'html', '-o', html, '--quiet']);
			await xopen(`file://${html}#/timeline`);
			await checkCounters('static');
			return true;
		});
		if (srv) srv.stop();
	} else skip('counters across tiles', `no ${counters}`);
	{
		// four zero-duration slices starting together between a and b: `.` and `,` visit each
		// (the selection's seq goes back to /api/slice), and a link keeps which one
		const trace = { traceEvents: [{ name: 'a', ph: 'X', ts: 10, dur: 5, pid: 1, tid: 1 },
			...[0, 1, 2, 3].map((k) => ({ name: `z${k}`, ph: 'X', ts: 100, dur: 0, pid: 1, tid: 1 })),
			{ name: 'b', ph: 'X', ts: 200, dur: 5, pid: 1, tid: 1 }] };
		const names = ['a', 'z0', 'z1', 'z2', 'z3', 'b'];
		const detailsName = () => xp.evaluate(() => { const d = window.__tft.state().details; return d ? d.name : null; });
		const press = async (key, from) => {
			await xp.keyboard.press(key);
			await xp.waitForFunction((n) => { const d = window.__tft.state().details; return d && d.name !== n; }, from, { timeout: WAIT })
				.catch(() => {});
			return detailsName();
		};
		const stepThrough = async (url, what) => {
			await xopen(url);
			// select a (at 10 us) and let the details load
			await xp.evaluate(() => { const tl = window.__tft.timeline; return tl.selectAt(0, Number(10000n - tl.T0), 0); });
			await xp.waitForFunction(() => { const d = window.__tft.state().details; return d && d.name === 'a'; }, null, { timeout: WAIT });
			await xp.locator('.tl-over').focus();
			const fwd = ['a'], back = [];
			for (let k = 1; k < names.length; k++) fwd.push(await press('Period', fwd[k - 1]));
			for (let k = names.length - 2; k >= 0; k--) back.push(await press('Comma', k === names.length - 2 ? 'b' : back[back.length - 1]));
			note(`${what}: . visits ${fwd.join(' ')}; , visits ${back.join(' ')}`);
			assert(fwd.join() === names.join(), `${what}: . visits ${fwd.join(' ')}, want ${names.join(' ')}`);
			assert(back.join() === [...names].reverse().slice(1).join(), `${what}: , visits ${back.join(' ')}`);
			// on z2 (stepped to), the link names it: opened again, it is selected
			await press('Period', 'a');
			await press('Period', 'z0');
			await press('Period', 'z1');
			// (the URL follows the selection after a short debounce)
			await xp.waitForFunction(() => /[?&]sel=0\.-?\d+\.0\.2(&|$)/.test(location.hash), null, { timeout: WAIT })
				.catch(() => {});
			const hash = await xp.evaluate(() => location.hash);
			await xp.goto('about:blank');
			await xp.goto(url.replace(/#.*$/, '') + hash);
			await xp.waitForFunction(() => { const d = window.__tft && window.__tft.state().details; return d && d.name; }, null, { timeout: WAIT });
			const again = await detailsName();
			assert(again === 'z2', `${what}: the link ${hash} selects ${again}, want z2`);
		};
		let srv = null;
		await step('`.` / `,` visit each of several slices starting together, and a link keeps which one', async () => {
			srv = await serveTrace('samestart', trace);
			await stepThrough(new URL('#/timeline', srv.url).href, 'served');
			return true;
		});
		await step('static export: `.` / `,` visit each of several slices starting together', async () => {
			const html = path.join(xtmp, 'samestart.html');
			await run(['export', srv.tft, '-f', 'html', '-o', html, '--quiet']);
			await stepThrough(`file://${html}#/timeline`, 'static');
			return true;
		});
		if (srv) srv.stop();
	}
	const unclosed = path.join(dataDir, 'catapult/main_thread_has_unclosed_slices.json');
	if (fs.existsSync(unclosed)) {
		await step('an unclosed slice fades once over its whole length (not once per tile)', async () => {
			const srv = await serveTrace('unclosed', unclosed);
			try {
				await xopen(new URL('#/timeline', srv.url).href);
				const r = await xp.evaluate(() => {
					const tl = window.__tft.timeline;
					let best = null;
					tl.forDrawn((tile, i, x0, x1, y) => { if ((tile.data.flags[i] & 1) && (!best || x1 - x0 > best.x1 - best.x0)) best = { x0, x1, y }; });
					if (!best) return null;
					const g = document.querySelector('.tl-base').getContext('2d'), dpr = window.devicePixelRatio || 1;
					const lum = (x) => { const p = g.getImageData(Math.round(x * dpr), Math.round((best.y + 12) * dpr), 1, 1).data; return p[0] + p[1] + p[2]; };
					const a = Math.max(best.x0, 221) + 2, b = Math.min(best.x1, 221 + tl.PW) - 8;
					const out = [];
					for (let x = a; x < b; x += 8) out.push(lum(x));
					return { from: a, to: b, lum: out };
				});
				assert(r && r.lum.length > 20, `no wide unclosed slice drawn: ${JSON.stringify(r)}`);
				// one gradient: the colour moves one way; a restart at a tile edge jumps back
				const dir = Math.sign(r.lum[r.lum.length - 1] - r.lum[0]);
				// (the faded end lets the grid lines show through: small steps back)
				const back = r.lum.findIndex((v, i) => i && (v - r.lum[i - 1]) * dir < -80);
				note(`unclosed slice: x ${r.from.toFixed(0)}..${r.to.toFixed(0)}, brightness ${r.lum[0]} -> ${r.lum[r.lum.length - 1]}`);
				assert(back < 0, `brightness jumps back at x ${r.from + back * 8} (${r.lum[back - 1]} -> ${r.lum[back]})`);
			} finally { srv.stop(); }
			return true;
		});
	} else skip('unclosed slice', `no ${unclosed}`);
	await step('a slice\'s details list the GraphDef node it joins (op, inputs, attrs), served and static', async () => {
		const run1 = path.join(xtmp, 'run.pbtxt'), graph = path.join(xtmp, 'graph.pbtxt');
		fs.writeFileSync(run1, 'step_stats { dev_stats { device: "/job:localhost/replica:0/task:0/device:GPU:0/stream:14"\n' +
			'  node_stats { node_name: "conv1/Conv2D:Conv2D" all_start_micros: 1000 all_end_rel_micros: 40\n' +
			'    timeline_label: "maxwell_scudnn regs:80 shm:9000 grid:1,2,3 block:128,1,1@@conv1/Conv2D:Conv2D" } } }\n');
		fs.writeFileSync(graph, 'node { name: "x" op: "Placeholder" }\n' +
			'node { name: "conv1/Conv2D" op: "Conv2D" input: "x" input: "w" attr { key: "data_format" value { s: "NCHW" } } }\n');
		const srv = await serveTrace('graphjoin', [run1, graph]);
		const html = path.join(xtmp, 'graphjoin.html');
		await run(['export', srv.tft, '-f', 'html', '-o', html, '--quiet']);
		try {
			for (const [what, url] of [['served', new URL('#/timeline', srv.url).href], ['static', `file://${html}#/timeline`]]) {
				await xopen(url);
				await xp.evaluate(() => { const tl = window.__tft.timeline; return tl.selectAt(0, 20000, 0); });
				await xp.waitForFunction(() => /Graph node/.test(document.querySelector('.dr-sel').textContent), null, { timeout: WAIT })
					.catch(() => {});
				const text = await xp.evaluate(() => document.querySelector('.dr-sel').textContent);
				assert(/Graph node/.test(text) && /Conv2D/.test(text) && /x, w/.test(text) && /NCHW/.test(text),
					`${what}: the details lack the graph node: ${text.slice(0, 300)}`);
			}
		} finally { srv.stop(); }
		return true;
	});
	await step('edge cases: an empty session\'s overview, a one-instant session\'s hover and zoomed-in chevron, a profiler error on the Overview, a long name\'s tooltip', async () => {
		let srv = await serveTrace('empty', { traceEvents: [] });
		try {
			await xopen(new URL('#/timeline', srv.url).href);
			await xp.waitForFunction(() => window.__tft.timeline.miniData !== null && window.__tft_first_draw_ms !== undefined, null, { timeout: WAIT })
				.catch(() => { throw new Error('empty session: overview strip still loading (or no first draw)'); });
		} finally { srv.stop(); }
		srv = await serveTrace('oneinst', { traceEvents: [{ name: 'inst', ph: 'i', ts: 1000, pid: 1, tid: 1, s: 't' }] });
		try {
			await xopen(new URL('#/timeline', srv.url).href);
			const p = await xp.evaluate(() => { const tl = window.__tft.timeline; const r = tl.rows.find((x) => x.type === 'track'); return { x: tl.xOf(0), y: tl.rowTop(r) + 9 }; });
			const b = await xp.locator('.tl-over').boundingBox();
			await xp.mouse.move(b.x + p.x + 1, b.y + p.y);
			await xp.waitForFunction(() => !document.querySelector('.tl-tooltip').hidden, null, { timeout: WAIT })
				.catch(() => { throw new Error('one instant: no tooltip over it'); });
			// zoomed to 0.01 ns/px (past the finest tiles' 1 ns buckets) its chevron keeps its size
			const wide = await xp.evaluate(async () => {
				/* drawn at the new view, every tile in: two frames, then idle (no time-based way out) */
				const settle = (tl) => new Promise((resolve, reject) => { const t0 = performance.now(); requestAnimationFrame(() => requestAnimationFrame(function check() { if (tl.isIdle()) resolve(); else if (performance.now() - t0 > 30000) reject(new Error('the view did not settle')); else setTimeout(check, 20); })); });
				const tl = window.__tft.timeline;
				tl.setView(-5, 5);
				await settle(tl);
				const r = tl.rows.find((x) => x.type === 'track');
				const g = document.querySelector('.tl-base').getContext('2d'), dpr = window.devicePixelRatio || 1;
				const x0 = Math.round(tl.xOf(0) * dpr), top = tl.rowTop(r);
				let w = 0, ink = false;
				// the widest ink run through the instant's x over the lane's rows
				for (let yy = top; yy < top + 20; yy++) {
					const y = Math.round(yy * dpr);
					const px = (x) => { const d = g.getImageData(x, y, 1, 1).data; return d[0] * 65536 + d[1] * 256 + d[2]; };
					const bg = px(Math.round((tl.xOf(0) - 200) * dpr));
					if (px(x0) === bg) continue;
					let a = x0, b = x0;
					while (a > x0 - 1000 && px(a - 1) !== bg) a--;
					while (b < x0 + 1000 && px(b + 1) !== bg) b++;
					ink = true;
					w = Math.max(w, (b - a + 1) / dpr);
				}
				return { res: tl.res(), ink, w };
			});
			note(`one instant at ${wide.res.toFixed(3)} ns/px: chevron ${wide.w} px wide`);
			assert(wide.ink && wide.w <= 12, `one instant zoomed in: chevron ${JSON.stringify(wide)} (want about 8 px wide)`);
			// at 0.8 ns/px (1.25 px per 1 ns bucket) the chevron is drawn 5 px either side: hovering 4.6 px
			// before it finds it (the view ends at the session's end, so the instant is at the right edge)
			const at = await xp.evaluate(async () => {
				/* drawn at the new view, every tile in: two frames, then idle (no time-based way out) */
				const settle = (tl) => new Promise((resolve, reject) => { const t0 = performance.now(); requestAnimationFrame(() => requestAnimationFrame(function check() { if (tl.isIdle()) resolve(); else if (performance.now() - t0 > 30000) reject(new Error('the view did not settle')); else setTimeout(check, 20); })); });
				const tl = window.__tft.timeline;
				tl.setView(-0.4 * tl.PW, 0.4 * tl.PW);
				await settle(tl);
				const r = tl.rows.find((x) => x.type === 'track');
				return { x: tl.xOf(0), y: tl.rowTop(r) + 9 };
			});
			await xp.mouse.move(b.x + at.x + 200, b.y + at.y + 200);
			await xp.waitForFunction(() => document.querySelector('.tl-tooltip').hidden, null, { timeout: WAIT })
				.catch(() => { throw new Error('one instant at 0.8 ns/px: the tooltip stays when the mouse moves away'); });
			await xp.mouse.move(b.x + at.x - 4.6, b.y + at.y);
			await xp.waitForFunction(() => !document.querySelector('.tl-tooltip').hidden, null, { timeout: WAIT })
				.catch(() => { throw new Error('one instant at 0.8 ns/px: no tooltip 4.6 px off its centre (its chevron reaches 5 px)'); });
		} finally { srv.stop(); }
		// an XSpace whose profiler reported an error: the Overview's Health card says it
		{
			const vi = (v) => { const o = []; do { let b = v & 0x7f; v = Math.floor(v / 128); if (v) b |= 0x80; o.push(b); } while (v); return o; };
			const fld = (n, bytes) => [...vi(n * 8 + 2), ...vi(bytes.length), ...bytes];
			const int = (n, v) => [...vi(n * 8), ...vi(v)];
			const str = (n, t) => fld(n, [...Buffer.from(t)]);
			const ev = [...int(1, 1), ...int(2, 0), ...int(3, 1000000)];
			const line = [...int(1, 1), ...str(2, 'main'), ...fld(4, ev)];
			const meta = [...int(1, 1), ...fld(2, [...int(1, 1), ...str(2, 'op')])];
			const plane = [...int(1, 1), ...str(2, '/host:CPU'), ...fld(3, line), ...fld(4, meta)];
			const space = [...fld(1, plane), ...str(2, 'CUPTI could not be loaded'), ...str(4, 'h')];
			const file = path.join(xtmp, 'errs.xplane.pb');
			fs.writeFileSync(file, Buffer.from(space));
			srv = await serveTrace('errs', file);
			try {
				await xopen(new URL('#/overview', srv.url).href);
				await xp.waitForFunction(() => /Profiler error:\s*CUPTI could not be loaded/.test(document.body.innerText), null, { timeout: WAIT })
					.catch(() => { throw new Error('an XSpace with a profiler error: the Overview does not show it'); });
			} finally { srv.stop(); }
		}
		srv = await serveTrace('long', { traceEvents: [{ name: 'x'.repeat(3000), ph: 'X', ts: 0, dur: 1000, pid: 1, tid: 1, args: { a: 'y'.repeat(5000) } }] });
		try {
			await xopen(new URL('#/timeline', srv.url).href);
			const sl = await xp.evaluate(() => window.__tft.findSlice(20));
			const b = await xp.locator('.tl-over').boundingBox();
			await xp.mouse.move(b.x + sl.x, b.y + sl.y);
			await xp.waitForFunction(() => !document.querySelector('.tl-tooltip').hidden, null, { timeout: WAIT });
			const h = await xp.evaluate(() => document.querySelector('.tl-tooltip').getBoundingClientRect().height);
			assert(h <= HEIGHT * 0.45, `tooltip ${h} px tall`);
		} finally { srv.stop(); }
		return true;
	});
	/* ---- issue #19.5: a selected slice deep in a stack is scrolled into view, however it was selected ---- */
	const deep = path.join(dataDir, 'tracelens/kineto_h100/gaunernst_bert-small-uncased__1016001.json.gz');
	if (fs.existsSync(deep)) {
		let srv = null;
		/* The selection's lane: inside its track's drawn lanes and inside the visible part of its area. */
		const selSeen = () => xp.evaluate(() => {
			const tl = window.__tft.timeline;
			if (!tl.sel) return { ok: false, why: 'nothing selected' };
			const row = tl.rowOfTrack(tl.sel.track), b = tl.selRect();
			if (!row || !b) return { ok: false, why: `track ${tl.sel.track} has no row` };
			const top = row.pin ? 32 : 32 + tl.pinH, bot = row.pin ? 32 + tl.pinH - 2 : tl.H, rowBottom = tl.rowTop(row) + row.h;
			return { ok: b.y >= top && b.y + b.h <= bot && b.y + b.h <= rowBottom, depth: tl.sel.depth, y: b.y, top, bot, rowBottom, pinned: !!row.pin };
		});
		const seen = async (what) => { const r = await selSeen(); if (!r.ok) throw new Error(`${what}: the selected slice is not in view: ${JSON.stringify(r)}`); return r; };
		const wheelNames = async (dy) => {
			const b = await xp.locator('.tl-over').boundingBox();
			await xp.mouse.move(b.x + 100, b.y + 300);
			await xp.mouse.wheel(0, dy);
			await xp.mouse.move(b.x + 600, b.y + 5);
			await xidle();
		};
		const searchEnter = async (q) => {
			const input = xp.locator('form.search input');
			await input.fill(q);
			await input.press('Enter');
			await xp.waitForFunction(() => { const s = window.__tft.state().search; return !s.pending && (s.cur >= 0 || s.error || !s.total); }, null, { timeout: 10000 });
			return (await xp.evaluate(() => window.__tft.state().search));
		};
		await step('search Enter: every hit of a name found only deep in a Python stack (depth 25 to 42) is scrolled into view (#19.5)', async () => {
			srv = await serveTrace('deepstack', deep);
			await xopen(new URL('#/timeline', srv.url).href);
			let s = await searchEnter('cudaLaunchKernel');
			assert(s.total > 1, `search: ${JSON.stringify(s)}`);
			const depths = [];
			for (let k = 0; k < s.total; k++) {
				if (k) {
					await xp.locator('form.search input').press('Enter');
					await xp.waitForFunction((c) => { const x = window.__tft.state().search; return !x.pending && x.cur !== c; }, s.cur, { timeout: 10000 });
					s = await xp.evaluate(() => window.__tft.state().search);
				}
				depths.push((await seen(`hit ${s.cur + 1} / ${s.total}`)).depth);
			}
			note(`cudaLaunchKernel: ${depths.length} hits at depths ${Math.min(...depths)}..${Math.max(...depths)}, each in view`);
			assert(Math.min(...depths) >= 24 && Math.max(...depths) >= 40, `depths ${depths.join(',')}`);
			return true;
		});
		await step('F brings a deep selection back into view after the tracks were scrolled away (#19.5)', async () => {
			await xp.evaluate(async () => {
				const tl = window.__tft.timeline;
				const j = JSON.parse((await (await fetch('api/search?q=cudaLaunchKernel&exact=1&in=name&limit=100')).text()).replace(/("ts":)(-?\d+)/g, '$1"$2"'));
				window.__tft.app.gotoResult(j.results.find((r) => r.depth >= 24 && r.depth <= 27));
				return tl.sel.depth;
			});
			await seen('selected');
			await wheelNames(5000);
			if ((await selSeen()).ok) await wheelNames(-5000);
			assert(!(await selSeen()).ok, 'the selection is in view with the tracks scrolled to either end');
			await xp.locator('.tl-over').focus();
			await xp.keyboard.press('KeyF');
			await seen('after F');
			return true;
		});
		await step('an Ops row of an op found only deep in the stack opens it on the Timeline in view (#19.5)', async () => {
			await wheelNames(-5000);
			await xp.locator('form.search input').fill('');
			await xp.click('nav.pages a[data-page=ops]');
			await xp.waitForSelector('#page-ops .vt-row:not([hidden])', { timeout: 15000 });
			await xp.fill('#page-ops .o-text', 'is_compiling');
			await xp.waitForFunction(() => { const v = window.__tft.app.ops.table.ordered(); return v.length > 0 && v.every((r) => /is_compiling/.test(r.name)); }, null, { timeout: 5000 });
			const op = await xp.locator('#page-ops .vt-row:not([hidden]) .vt-c').first().innerText();
			await xp.locator('#page-ops .vt-row:not([hidden])').first().click();
			await xp.waitForFunction((op) => { const s = window.__tft.state(); return s.page === 'timeline' && s.details && s.details.name === op; }, op, { timeout: 10000 })
				.catch(() => {});
			const d = await xp.evaluate(() => window.__tft.state().details);
			assert(d && d.name === op, `after a click on the Ops row "${op}" the selection is ${JSON.stringify(d)}`);
			const r = await seen('Ops row');
			note(`Ops row "${await xp.evaluate(() => window.__tft.state().highlight)}": selected at depth ${r.depth}`);
			await xp.click('.hl-clear');
			await xp.click('nav.pages a[data-page=ops]');
			await xp.fill('#page-ops .o-text', '');
			await xp.click('nav.pages a[data-page=timeline]');
			return true;
		});
		await step('`[` from a kernel goes back to its launch deep in the CPU stack, in view (#19.5)', async () => {
			const src = await xp.evaluate(async () => {
				const get = async (u) => JSON.parse((await (await fetch(u)).text()).replace(/("ts":)(-?\d+)/g, '$1"$2"'));
				const j = await get('api/search?q=cudaLaunchKernel&exact=1&in=name&limit=100');
				for (const r of j.results) {
					const d = await get(`api/slice?track=${r.track}&ts=${r.ts}&depth=${r.depth}`);
					const f = d.flows_out.find((x) => x.track !== null && x.track !== r.track);
					if (d.depth >= 24 && f) return { launch: { track: r.track, depth: d.depth }, kernel: { track: f.track, ts: String(f.ts) } };
				}
				return null;
			});
			assert(src, 'no cudaLaunchKernel with a flow to a kernel');
			await xp.evaluate((k) => { const tl = window.__tft.timeline; return tl.selectAt(k.track, Number(BigInt(k.ts) - tl.T0)).then(() => true); }, src.kernel);
			await xp.waitForFunction(() => { const tl = window.__tft.timeline; return window.__tft.state().details && tl.flows.some((f) => f.dir === 'in'); }, null, { timeout: 10000 });
			await seen('the kernel');
			await xp.locator('.tl-over').focus();
			await xp.keyboard.press('BracketLeft');
			await xp.waitForFunction((t) => { const s = window.__tft.state(); return s.selected && s.selected.track === t; }, src.launch.track, { timeout: 10000 });
			const r = await seen('after [');
			note(`[ from the kernel on track ${src.kernel.track}: its launch at depth ${r.depth}`);
			return true;
		});
		await step('a link to a deep slice opens with the slice in view (#19.5)', async () => {
			await xp.waitForFunction(() => /[?&]sel=0\./.test(location.hash), null, { timeout: 5000 });
			const url = await xp.evaluate(() => location.href);
			await xp.goto('about:blank');
			await xp.goto(url);
			await xp.waitForFunction(() => window.__tft && window.__tft.state().loaded && window.__tft.timeline.sel, null, { timeout: 20000 });
			await xidle();
			await seen('opened from the link');
			return true;
		});
		await step('a track deeper than the lanes it shows says so, and a click on that shows them', async () => {
			const t0 = await xp.evaluate(() => { const t = window.__tft.timeline.tracks.get(0); return { lanes: t.lanes, deepest: t.deepest }; });
			assert(t0.deepest >= t0.lanes, `track 0: ${JSON.stringify(t0)} (a fresh page shows 40 levels)`);
			await recordTexts(xp);
			await wheelNames(-5000);
			const nt = await xp.evaluate(async () => {
				const tl = window.__tft.timeline;
				window.__texts.length = 0;
				tl.gutterSig = null;
				tl.invalidate(true);
				await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
				return window.__texts.find((x) => /hidden/.test(x.t) && x.x < 220) || null;
			});
			assert(nt, 'no note on the track');
			const b = await xp.locator('.tl-over').boundingBox();
			await xp.mouse.click(b.x + nt.x + 10, b.y + nt.y);
			const t1 = await xp.evaluate(() => { const t = window.__tft.timeline.tracks.get(0); return { lanes: t.lanes, deepest: t.deepest }; });
			note(`"${nt.t}": a click shows ${t1.lanes} levels`);
			assert(t1.lanes === t1.deepest + 1, `after a click on "${nt.t}": ${JSON.stringify(t1)}`);
			return true;
		});
		await step('a deep selection in a pinned track scrolls the pinned area to it (#19.5)', async () => {
			await xp.evaluate(() => window.__tft.timeline.setPins([0]));
			await xidle();
			const s = await searchEnter('cudaLaunchKernel');
			assert(s.total > 0, 'no hit');
			const r = await seen('in the pinned track');
			assert(r.pinned, 'track 0 is not pinned');
			await xp.click('.tl-unpin');
			await xp.locator('form.search input').fill('');
			return true;
		});
		if (srv) srv.stop();
	} else skip('deep stacks scrolled into view', `no ${deep}`);

	/* ---- issue #19.8: long track and process names are told apart, and every name has a tooltip ---- */
	/* The names the Timeline's gutter draws for the rows in view (recorded as drawn):
	 * [{group, pin, name, label, right, tagLeft, y}] */
	const gutterNames = () => xp.evaluate(async () => {
		const tl = window.__tft.timeline;
		window.__texts.length = 0;
		tl.gutterSig = null; // (the names are a cached image: drawn again)
		tl.invalidate(true);
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		const t = window.__texts.filter((x) => x.x < 220);
		const out = [];
		for (const row of tl.visibleRows()) {
			const top = tl.rowTop(row), bot = top + (row.type === 'group' ? 24 : Math.min(row.h, 20));
			const areaTop = row.pin ? 32 : 32 + tl.pinH, areaBot = row.pin ? 32 + tl.pinH - 2 : tl.H;
			if (top < areaTop || bot > areaBot) continue;
			const l = t.find((x) => (row.type === 'group' ? /^600 12px/ : /^12px/).test(x.font) && x.y > top && x.y < bot);
			const tag = row.type === 'track' ? t.find((x) => /^10px/.test(x.font) && x.y > top && x.y < bot && x.x > 120) : null;
			let name = row.type === 'track' ? row.t.name : row.g.proc.name || `process ${row.g.proc.id}`;
			if (row.type === 'group' && row.g.proc.labels && row.g.proc.labels !== name) name += ` · ${row.g.proc.labels}`;
			out.push({ group: row.type === 'group', pin: !!row.pin, name, label: l ? l.t : null, right: l ? l.x + l.w : 0, tagLeft: tag ? tag.x : 220, y: l ? l.y : top + 9 });
		}
		return out;
	});
	const checkNames = (what, rows) => {
		assert(rows.length > 1, `${what}: ${rows.length} rows in view`);
		const none = rows.filter((r) => r.label === null);
		assert(!none.length, `${what}: no name drawn for ${JSON.stringify(none[0])}`);
		const same = rows.filter((a) => rows.some((b) => b !== a && b.group === a.group && b.label === a.label && b.name !== a.name));
		assert(!same.length, `${what}: different names read the same: ${same.slice(0, 3).map((r) => `"${r.name}" as "${r.label}"`).join(', ')}`);
		const over = rows.filter((r) => r.right > (r.group ? 216 : r.tagLeft - 2));
		assert(!over.length, `${what}: names over the kind tag or the edge: ${JSON.stringify(over.slice(0, 2))}`);
	};
	const tooltipAt = async (y, x = 60) => {
		const b = await xp.locator('.tl-over').boundingBox();
		await xp.mouse.move(b.x + 600, b.y + 5);
		await xp.mouse.move(b.x + x, b.y + y);
		return xp.waitForFunction(() => { const t = document.querySelector('.tl-tooltip'); return !t.hidden && t.textContent; }, null, { timeout: 3000 })
			.then((h) => h.jsonValue(), () => null);
	};
	const xspace = path.join(dataDir, 'tf-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb');
	const tfGpu = path.join(dataDir, 'ikhlestov-tf-profiling/GPU/timeline_01.json');
	if (fs.existsSync(xspace) && fs.existsSync(tfGpu)) {
		await step('long track names (an XSpace\'s tf_GPU_Event_Manager/N threads) are cut in the middle, told apart, and whole in a tooltip (#19.8)', async () => {
			const srv = await serveTrace('longnames', xspace);
			try {
				await xopen(new URL('#/timeline', srv.url).href);
				await recordTexts(xp);
				const rows = await gutterNames();
				const cut = rows.filter((r) => !r.group && r.label !== r.name);
				note(`XSpace: ${rows.length} names in view, ${cut.length} cut: ${cut.slice(0, 3).map((r) => `"${r.label}"`).join(', ')}`);
				checkNames('XSpace tracks', rows);
				assert(cut.length > 1, 'no name was long enough to be cut');
				const tip = await tooltipAt(cut[0].y);
				assert(tip && tip.includes(cut[0].name), `tooltip over "${cut[0].label}": ${JSON.stringify(tip)}`);
				const g = rows.find((r) => r.group);
				const gt = await tooltipAt(g.y);
				assert(gt && gt.includes(g.name), `tooltip over the process "${g.name}": ${JSON.stringify(gt)}`);
				// pinned, a track's label adds its process: still told apart
				const ids = await xp.evaluate(() => [...window.__tft.timeline.tracks.values()].filter((t) => /^tf_GPU_Event_Manager\//.test(t.name)).slice(0, 3).map((t) => t.id));
				await xp.evaluate((ids) => window.__tft.timeline.setPins(ids), ids);
				await xidle();
				const pinned = (await gutterNames()).filter((r) => r.pin);
				assert(pinned.length === ids.length, `${pinned.length} pinned rows in view`);
				checkNames('pinned tracks', pinned);
				await xp.click('.tl-unpin');
			} finally { srv.stop(); }
			return true;
		});
		await step('long process names (TF timeline devices /job:localhost/replica:0/task:0/…) are told apart, and whole in a tooltip (#19.8)', async () => {
			const srv = await serveTrace('longprocs', tfGpu);
			try {
				await xopen(new URL('#/timeline', srv.url).href);
				await recordTexts(xp);
				const rows = await gutterNames();
				const groups = rows.filter((r) => r.group);
				note(`TF timeline: processes drawn as ${groups.map((r) => `"${r.label}"`).join(', ')}`);
				checkNames('TF devices', rows);
				const g = groups.find((r) => r.label !== r.name);
				assert(g, 'no process name was cut');
				const tip = await tooltipAt(g.y);
				assert(tip && tip.includes(g.name), `tooltip over "${g.label}": ${JSON.stringify(tip)}`);
			} finally { srv.stop(); }
			return true;
		});
	} else skip('long track names told apart', `no ${xspace} or ${tfGpu}`);
	ok(xerrs.length === 0, 'small sessions: no console error', xerrs.slice(0, 3).join(' | '));
	await xp.close();
	fs.rmSync(xtmp, { recursive: true, force: true });
} else if (!perfOnly) {
	skip('small sessions (counters, unclosed, edge cases)', 'no --tft BIN');
}

/* ---- 9. the Runs page of a live job (tftracer.TracingServer) --------------------- */
async function startLiveJob(extra = []) {
	/* the job runs until the test stops it (Stop server) or kills it; --seconds only
	 * bounds a job left behind by a crashed test, never the test's own time */
	const job = spawn(python, [path.join(here, 'live-job.py'), '--seconds', '900', ...extra], {
		env: { ...process.env, PYTHONPATH: pythonPath }, stdio: [extra.includes('--wait') ? 'pipe' : 'ignore', 'pipe', 'pipe'],
	});
	let err = '', out = '';
	job.stderr.on('data', (d) => { err += d; });
	job.stdout.on('data', (d) => { out += d; });
	const url = await new Promise((resolve) => {
		const t = setTimeout(() => resolve(null), WAIT);
		job.stdout.on('data', () => { const m = /https?:\/\/\S+/.exec(out); if (m) { clearTimeout(t); resolve(m[0]); } });
		job.on('exit', () => { clearTimeout(t); resolve(null); });
	});
	const exited = () => new Promise((resolve) => {
		if (job.exitCode !== null) return resolve(true);
		const t = setTimeout(() => resolve(false), WAIT);
		job.on('exit', () => { clearTimeout(t); resolve(true); });
	});
	return { job, url, err: () => err, out: () => out, exited };
}
/* A page on a live job: its console errors (with the time they came) and its requests. */
async function livePage(url) {
	const p = await ctx.newPage();
	const errs = [], reqs = [];
	p.on('console', (m) => { if (m.type() === 'error') errs.push({ at: Date.now(), text: `${m.text()}${m.location() && m.location().url ? ` (${m.location().url})` : ''}` }); });
	p.on('pageerror', (e) => errs.push({ at: Date.now(), text: `pageerror: ${e.message}` }));
	p.on('request', (r) => reqs.push({ at: Date.now(), url: r.url() }));
	p.on('dialog', (d) => d.accept());
	await p.goto(new URL('#/runs', url).href);
	await p.waitForFunction(() => window.__tft && window.__tft.runs().live && window.__tft.runs().conn === 'open', null, { timeout: 20000 });
	return { p, errs, reqs };
}
if (perfOnly) {
	// no live test in the performance run
} else if (!pythonPath) {
	skip('live Runs page against tftracer.TracingServer', 'no --python-path (the tftracer Python module was not built)');
} else if (process.env.TFT_UI_LIVE === '0') {
	skip('live Runs page against tftracer.TracingServer', 'TFT_UI_LIVE=0');
} else {
	const lj = await startLiveJob();
	if (!lj.url) { /* a failure, not a skip: the module or the job is broken */
		ok(false, 'live Runs page against tftracer.TracingServer', `the live job did not start: ${lj.err().split('\n').filter(Boolean).slice(-1)[0] || 'no URL'}`);
		lj.job.kill();
	} else {
		const lurl = new URL(lj.url);
		allowedHosts.add(lurl.host);
		const lp = await ctx.newPage();
		const lerrs = [];
		lp.on('console', (m) => { if (m.type() === 'error') lerrs.push(`${m.text()}${m.location() && m.location().url ? ` (${m.location().url})` : ''}`); });
		lp.on('pageerror', (e) => lerrs.push(`pageerror: ${e.message}`));
		lp.on('dialog', (d) => d.accept());
		const runs = () => lp.evaluate(() => window.__tft.runs());
		const lshot = async (name) => { const p = path.join(artifacts, `${tag}-${name}.png`); await lp.screenshot({ path: p }); note(`screenshot ${p}`); };
		await step('live: the Runs page follows the job (cards, step chart, status)', async () => {
			await lp.goto(new URL('#/runs', lurl).href);
			await lp.waitForFunction(() => window.__tft && window.__tft.runs().live && window.__tft.runs().conn === 'open', null, { timeout: WAIT });
			const p0 = (await runs()).points;
			await lp.waitForFunction((p0) => window.__tft.runs().points >= p0 + 5, p0, { timeout: WAIT });
			const r = await runs();
			assert(r.kinds >= 1 && r.status && r.status.live, 'no run kinds or status');
			const text = await lp.locator('#page-runs .r-status').innerText();
			for (const w of ['Events', 'Dropped', 'Tracing', 'Pending']) assert(text.includes(w), `status lacks "${w}"`);
			note(`live: ${r.kinds} run kinds, chart grew from ${p0} to ${r.points} steps; ${r.status.events} events, ${r.status.dropped} dropped`);
			return true;
		});
		await step('live: "Trace next step" goes armed -> ready and opens the traced step on the Timeline', async () => {
			await lp.click('#page-runs .r-next');
			await lp.waitForFunction(() => { const r = window.__tft.runs(); return r.request && (r.request.state === 'ready' || r.request.state === 'error'); }, null, { timeout: WAIT });
			const r = await runs();
			assert(r.request.state === 'ready', `request ${JSON.stringify(r.request)}`);
			/* (the traced step may be the job's every-10th "eval", not the kind the chart shows) */
			assert(r.notes >= 1 && r.tracedAll >= 1, `notes ${r.notes}, traced bars ${r.tracedAll} (${r.traced} in the chart's kind)`);
			await frames2(lp);
			await lshot('30-live-runs');
			await lp.click('#page-runs .r-req .r-open');
			await lp.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: WAIT });
			return true;
		});
		await step('live: the traced step\'s slices are drawn on the Timeline', async () => {
			/* The trace lands before the Timeline's summary reaches it: the opened range
			 * must follow once the summary does (it used to stay clamped to the old end). */
			const found = await lp.waitForFunction(() => window.__tft.findSlice(4) !== null, null, { timeout: WAIT, polling: 100 })
				.then(() => true, () => false);
			if (!found) await lshot('31-live-traced-step-missing');
			assert(found, 'no slice of the traced step drawn in the opened range');
			const sl = await lp.evaluate(() => window.__tft.findSlice(4));
			note(`live: traced step opened, first slice "${sl.name}"`);
			await lshot('31-live-traced-step');
			return true;
		});
		await step('live: the Timeline follows new data (Follow live), a manual pan pauses it', async () => {
			const u0 = (await lp.evaluate(() => window.__tft.live())).updates;
			await lp.click('.tl-follow');
			await lp.waitForFunction((u0) => { const l = window.__tft.live(); return l.follow && l.updates >= u0 + 2; }, u0, { timeout: WAIT });
			const v = (await lp.evaluate(() => window.__tft.state())).view;
			const l = await lp.evaluate(() => window.__tft.live());
			assert(v.e >= l.span * 0.99, `view ends at ${v.e}, span ${l.span}`);
			await lp.locator('.tl-over').focus();
			/* hold A until the view has moved back from the live end (a pan), then release */
			const e0 = (await lp.evaluate(() => window.__tft.state())).view.e;
			await lp.keyboard.down('KeyA');
			await lp.waitForFunction((e0) => { const v = window.__tft.state().view; return !window.__tft.live().follow || v.e < e0; }, e0, { timeout: WAIT, polling: 'raf' })
				.catch(() => {}).finally(() => lp.keyboard.up('KeyA'));
			assert(!(await lp.evaluate(() => window.__tft.live())).follow, 'follow not paused by a pan');
			assert(/Resume/.test(await lp.locator('.tl-follow').innerText()), 'no Resume');
			note(`live: ${l.updates - u0} timeline updates while following`);
			return true;
		});
		await step('live: trace next N, every k-th, global tracing (confirmed), save', async () => {
			await lp.click('nav.pages a[data-page=runs]');
			await lp.fill('#page-runs .r-n', '3');
			await lp.click('#page-runs .r-nextn');
			await lp.waitForFunction(() => { const r = window.__tft.runs(); return r.request && r.request.state === 'ready'; }, null, { timeout: WAIT });
			await lp.fill('#page-runs .r-k', '7');
			await lp.click('#page-runs .r-every');
			await lp.waitForFunction(() => Number(window.__tft.runs().status.every) === 7, null, { timeout: WAIT });
			await lp.click('#page-runs .r-every-off');
			await lp.click('#page-runs .r-switch');
			await lp.waitForFunction(() => { const r = window.__tft.runs(); return r.global && r.status.tracing; }, null, { timeout: WAIT });
			assert(/Global tracing is on/.test(await lp.locator('#page-runs .r-banner').innerText()), 'no global tracing banner');
			await lshot('32-live-global');
			await lp.click('#page-runs .r-switch');
			await lp.waitForFunction(() => !window.__tft.runs().global, null, { timeout: WAIT });
			await lp.click('#page-runs .r-save');
			await lp.waitForFunction(() => /Saved|failed/.test(document.querySelector('#page-runs .r-req').textContent), null, { timeout: WAIT });
			const saved = await lp.locator('#page-runs .r-req').innerText();
			assert(/Saved/.test(saved), saved);
			note(`live: ${saved.split('\n').pop()}`);
			return true;
		});
		await step('live: Stop server (confirmed) ends the job\'s server', async () => {
			await lp.click('#page-runs .r-stop');
			try {
				await lp.waitForFunction(() => window.__tft.runs().conn === 'stopped', null, { timeout: WAIT });
			} catch {
				const r = await runs();
				throw new Error(`conn ${r.conn}; "${await lp.locator('#page-runs .r-req').innerText()}"; toast "${await lp.locator('.toast').innerText()}"`);
			}
			const exited = await new Promise((resolve) => {
				if (lj.job.exitCode !== null) return resolve(true);
				const t = setTimeout(() => resolve(false), WAIT);
				lj.job.on('exit', () => { clearTimeout(t); resolve(true); });
			});
			assert(exited, 'the job did not end after the server stopped');
			await lshot('33-live-stopped');
			return true;
		});
		ok(lerrs.length === 0, 'live: no console error', lerrs.slice(0, 3).join(' | '));
		await lp.close();
		if (lj.job.exitCode === null) lj.job.kill();
	}

	/*
	 * A PyTorch job: a traced step runs under torch.profiler and has landed only once
	 * its profiler trace is in the file too. "Trace next 3" counts them as they land
	 * (the server's count) and is ready when all 3 have, not at the first trace event.
	 */
	const tj = await startLiveJob(['--torch']);
	if (!tj.url) {
		ok(false, 'live (PyTorch): trace next 3 steps', `the job did not start: ${tj.err().split('\n').filter(Boolean).slice(-1)[0] || 'no URL'}`);
		tj.job.kill();
	} else {
		const turl = new URL(tj.url);
		allowedHosts.add(turl.host);
		const status = async () => (await fetch(new URL('api/live/status', turl))).json();
		let tp = null;
		await step('live (PyTorch): "Trace next 3 steps" says k of 3 as each step lands with its profiler trace, ready when all 3 have', async () => {
			tp = await livePage(tj.url);
			const p = tp.p;
			await p.fill('#page-runs .r-n', '3');
			// every state and count the request line shows, as it changes
			await p.evaluate(() => {
				window.__seen = [];
				const el = document.querySelector('#page-runs .r-req');
				new MutationObserver(() => {
					const r = window.__tft.runs().request;
					const t = el.textContent;
					if (r && (!window.__seen.length || window.__seen[window.__seen.length - 1].text !== t)) window.__seen.push({ state: r.state, text: t });
				}).observe(el, { childList: true, subtree: true, characterData: true });
			});
			const before = await status();
			await p.click('#page-runs .r-nextn');
			await p.waitForFunction(() => { const r = window.__tft.runs().request; return r && ['ready', 'error', 'ended'].includes(r.state); }, null, { timeout: 90000 });
			const after = await status(); // (as soon as the page said ready)
			const r = (await p.evaluate(() => window.__tft.runs())).request;
			const seen = await p.evaluate(() => window.__seen);
			note(`live (PyTorch): request line went ${seen.map((x) => `${x.state}${/(\d+ of \d+)/.exec(x.text)?.[1] ? ` (${/(\d+ of \d+)/.exec(x.text)[1]})` : ''}`).join(' -> ')}`);
			assert(r.state === 'ready', `request ${JSON.stringify(r)}`);
			// the page said ready when the job had imported the three steps' profiler traces
			assert(Number(after.imports) - Number(before.imports) >= 3, `ready with ${Number(after.imports) - Number(before.imports)} of 3 profiler traces imported`);
			assert(after.request && String(after.request.id) === String(r.id) && Number(after.request.landed) === 3 && Number(after.request.begun) === 3,
				`server's count when the page said ready: ${JSON.stringify(after.request)}`);
			const text = await p.locator('#page-runs .r-req').innerText();
			assert(/3 of 3 landed/.test(text) && /ready/.test(text), `request line "${text}"`);
			// it counted on the way: "k of 3" with k < 3 before ready, never ready early
			const early = seen.filter((x) => x.state !== 'ready');
			assert(early.some((x) => /[0-2] of 3 landed/.test(x.text)), `no "k of 3" before ready: ${JSON.stringify(seen.map((x) => x.text))}`);
			assert(!seen.some((x) => x.state === 'ready' && !/3 of 3/.test(x.text)), `ready before 3 of 3: ${JSON.stringify(seen.map((x) => x.text))}`);
			return true;
		});
		await step('live (PyTorch): a traced step\'s ops are on the job\'s own thread inside their step, with shapes, categories and the step in the details', async () => {
			const p = tp.p;
			await p.click('#page-runs .r-req .r-open');
			await p.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: 5000 });
			// (a profiled step is mostly the profiler starting: its ops may be a few ms of it)
			const found = await p.waitForFunction(() => window.__tft.findSlice(6) !== null, null, { timeout: 25000, polling: 100 }).then(() => true, () => false);
			if (!found) {
				await p.screenshot({ path: path.join(artifacts, `${tag}-35-live-torch-step-missing.png`) });
				const st = await p.evaluate(() => ({ view: window.__tft.state().view, span: window.__tft.state().span, end: String(window.__tft.app.session.end_ns), start: String(window.__tft.app.session.start_ns), note: window.__tft.app.runs.req && window.__tft.app.runs.req.note ? { s: String(window.__tft.app.runs.req.note.start), e: String(window.__tft.app.runs.req.note.end) } : null }));
				throw new Error(`no slice of the traced step drawn: ${JSON.stringify(st)}`);
			}
			const sess = await p.evaluate(() => window.__tft.app.session);
			const pids = new Set((sess.process_list || []).map((x) => String(x.pid)));
			assert(pids.size === 1, `processes ${JSON.stringify(sess.process_list)} (want the job's own only)`);
			const sl = await p.evaluate(() => window.__tft.findSlice(20) || window.__tft.findSlice(6));
			const b = await p.locator('.tl-over').boundingBox();
			await p.mouse.click(b.x + sl.x, b.y + sl.y);
			await p.waitForFunction(() => window.__tft.state().details && document.querySelector('.dr-sel .dr-headline'), null, { timeout: 10000 });
			const text = await p.locator('.dr-sel').innerText();
			const stepRow = /Step\s+(\S+)/.exec(text);
			assert(stepRow && /^\d+$/.test(stepRow[1]), `details of "${sl.name}": step ${stepRow ? stepRow[1] : 'missing'}`);
			assert(/user_annotation|cpu_op|python_module/.test(text), `details of "${sl.name}" show no profiler category: ${text.slice(0, 300)}`);
			note(`live (PyTorch): "${sl.name}" is in step ${stepRow[1]}`);
			return true;
		});
		if (tp) await tp.p.close();
		if (tj.job.exitCode === null) tj.job.kill('SIGTERM');
		await tj.exited();
	}

	/*
	 * The job ends (TracingServer.stop(), as at the end of a script): every step it
	 * recorded reaches the page, which says "stopped", stops asking (no request, no
	 * retry), and has no console error.
	 */
	const ej = await startLiveJob(['--steps', '300', '--step-ms', '1', '--wait']);
	if (!ej.url) {
		ok(false, 'live: a job that stops', `the job did not start: ${ej.err().split('\n').filter(Boolean).slice(-1)[0] || 'no URL'}`);
		ej.job.kill();
	} else {
		allowedHosts.add(new URL(ej.url).host);
		await step('live: the job stops: all its steps reach the page, which says "stopped", then asks nothing more and logs no error', async () => {
			const { p, errs, reqs } = await livePage(ej.url);
			ej.job.stdin.write('go\n');
			assert(await ej.exited(), 'the job did not end');
			const recorded = Number((/recorded (\d+) steps/.exec(ej.out()) || [])[1]);
			assert(recorded >= 330, `the job says it recorded ${recorded} steps (want 300 train + 30 eval)`);
			try {
				await p.waitForFunction(() => window.__tft.runs().conn === 'stopped', null, { timeout: 15000 });
			} catch {
				const r = await p.evaluate(() => window.__tft.runs());
				throw new Error(`the page did not see the end: conn ${r.conn}, ${r.steps} of ${recorded} steps`);
			}
			const stoppedAt = Date.now();
			const r = await p.evaluate(() => window.__tft.runs());
			assert(r.steps === recorded, `${r.steps} of the ${recorded} steps reached the page`);
			const conn = await p.locator('#page-runs .r-conn').innerText();
			const pill = await p.locator('.live-pill').innerText();
			const line = await p.locator('#page-runs .r-req').innerText();
			assert(/stopped/.test(conn) && /stopped/.test(pill) && /stopped/.test(line), `says "${conn}", pill "${pill}", "${line}"`);
			assert(new RegExp(`${recorded} steps recorded`).test(line.replace(/,/g, '')), `the end line: "${line}"`);
			// the statistics are whole too (the page holds every step: its own P50 and P99)
			const stats = await p.locator('#page-runs .r-chartstats').innerText();
			assert(/300 runs/.test(stats) && !/p50 –|p99 –/.test(stats), `chart statistics "${stats}"`);
			// longer than the browser's own retry (2 s) and the page's quiet poll (5 s)
			await p.waitForTimeout(7000);
			const later = reqs.filter((x) => x.at >= stoppedAt);
			assert(later.length === 0, `${later.length} requests after the stop: ${later.slice(0, 3).map((x) => x.url).join(' ')}`);
			assert((await p.evaluate(() => window.__tft.runs().conn)) === 'stopped', 'no longer "stopped"');
			const bad = errs.map((e) => e.text);
			assert(bad.length === 0, `console errors: ${bad.slice(0, 3).join(' | ')}`);
			await p.screenshot({ path: path.join(artifacts, `${tag}-34-live-job-ended.png`) });
			note(`live: ${r.steps} of ${recorded} steps on the page; stopped; no request and no error in the 7 s after`);
			await p.close();
			return true;
		});
		if (ej.job.exitCode === null) ej.job.kill();
	}
}
fs.writeFileSync(path.join(artifacts, `${tag}-metrics.json`), JSON.stringify(metrics, null, 2) + '\n');
console.log(`1..${n}`);
await ctx.close();
fs.rmSync(userDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
