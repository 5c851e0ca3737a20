// SPDX-License-Identifier: MIT
// Browser tests of the tftracer web UI: headless Chromium (playwright-core) against a
// running `tftracer serve`. Drives the Timeline (tracks, wheel and W zoom, D pan,
// selection and details, search stepping), the Ops page (click an op, see it
// highlighted), Overview, help; fails on any request to another host or any console
// error; measures first draw and frame times; saves screenshots. Prints TAP.
//
//   node ui.test.mjs http://127.0.0.1:PORT/ [--artifacts DIR] [--tag NAME] [--perf-only]
import { chromium } from 'playwright-core';
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
async function step(name, fn) {
	try {
		const r = await fn();
		return ok(r !== false, name, typeof r === 'string' ? r : '');
	} catch (e) {
		return ok(false, name, e && e.message ? e.message.split('\n')[0] : e);
	}
}
function assert(c, msg) { if (!c) throw new Error(msg); }

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
	if ((u.protocol === 'http:' || u.protocol === 'https:') && u.host !== base.host) {
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
	if (u.host === base.host && !(f && /ERR_ABORTED/.test(f.errorText))) consoleErrors.push(`request failed: ${r.url()} ${f && f.errorText}`);
});

const shot = async (name) => {
	const p = path.join(artifacts, `${tag}-${name}.png`);
	await page.screenshot({ path: p });
	note(`screenshot ${p}`);
};
const state = () => page.evaluate(() => window.__tft.state());
const idle = (timeout = 15000) => page.waitForFunction(() => window.__tft && window.__tft.isIdle(), null, { timeout, polling: 50 });
const plotCenter = async () => {
	const b = await page.locator('.tl-over').boundingBox();
	return { x: b.x + 220 + (b.width - 220 - 14) / 2, y: b.y + Math.min(b.height / 2, 150) };
};
const hold = async (code, ms) => { await page.keyboard.down(code); await page.waitForTimeout(ms); await page.keyboard.up(code); };

/* ---- 1. open a real trace and see the tracks ------------------------------- */
const t0 = Date.now();
await step('page loads and draws the timeline', async () => {
	await page.goto(new URL('#/timeline', base).href);
	await page.waitForFunction(() => window.__tft_first_draw_ms !== undefined, null, { timeout: 20000 });
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
		for (let i = 0; i < 5; i++) { await page.mouse.wheel(0, -120); await page.waitForTimeout(30); }
		await page.waitForTimeout(100);
		const after = (await state()).view;
		const r = (after.e - after.s) / (before.e - before.s);
		assert(r < 0.6, `span ratio ${r.toFixed(3)}`);
		return true;
	});
	await step('W zooms in (held, accelerating)', async () => {
		const before = (await state()).view;
		await page.locator('.tl-over').focus();
		await hold('KeyW', 350);
		await page.waitForTimeout(300);
		const after = (await state()).view;
		const r = (after.e - after.s) / (before.e - before.s);
		assert(r < 0.7, `span ratio ${r.toFixed(3)}`);
		return true;
	});
	await step('D pans right', async () => {
		const before = (await state()).view;
		await hold('KeyD', 300);
		await page.waitForTimeout(300);
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
		await page.waitForFunction(() => window.__tft.state().details, null, { timeout: 10000 });
		const s = await state();
		assert(s.selected && s.selected.track === picked.track, 'wrong track selected');
		assert(s.details.name === picked.name, `details name "${s.details.name}" != "${picked.name}"`);
		const text = await page.locator('.dr-sel').innerText();
		for (const w of ['Duration', 'Start', 'Thread / track', 'Arguments']) assert(text.includes(w), `details lack "${w}"`);
		note(`selected "${picked.name}" on track ${picked.track}`);
		await page.waitForTimeout(150);
		await shot('03-selected');
		return true;
	});
	await step('F fits the selection, 0 fits all', async () => {
		const s0 = await state();
		await page.keyboard.press('KeyF');
		await page.keyboard.press('KeyF');
		await page.waitForTimeout(100);
		const s1 = await state();
		const w = s1.view.e - s1.view.s;
		assert(s1.selected && Math.abs(w - Math.max(s1.selected.dur / 0.8, 80)) / w < 0.05, `window ${w} for a ${s1.selected && s1.selected.dur} ns slice`);
		await page.keyboard.press('Digit0');
		await page.waitForTimeout(50);
		const s2 = await state();
		assert(s2.view.e - s2.view.s >= s0.span, 'not fitted to all');
		return true;
	});
	await step('the URL keeps the view and the selection', async () => {
		await page.waitForTimeout(400);
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
		await page.waitForFunction(() => { const s = window.__tft.state().search; return !s.pending && s.query && (s.cur >= 0 || s.error || !s.total); }, null, { timeout: 10000 });
		let s = (await state()).search;
		assert(!s.error, s.error);
		assert(s.total >= 1, `no results for "${q}"`);
		const first = s.cur;
		const count1 = await page.locator('.s-count').innerText();
		assert(new RegExp(`^${first + 1} / `).test(count1.replace(/,/g, '')), `count text "${count1}"`);
		await input.press('Enter');
		await page.waitForFunction(() => !window.__tft.state().search.pending, null, { timeout: 10000 });
		s = (await state()).search;
		const expect = s.total > 1 ? (first + 1) % Math.max(1, s.loaded) : first;
		assert(s.cur === expect, `after Enter cur=${s.cur}, expected ${expect}`);
		await input.press('Shift+Enter');
		await page.waitForFunction(() => !window.__tft.state().search.pending, null, { timeout: 10000 });
		s = (await state()).search;
		assert(s.cur === first, `after Shift+Enter cur=${s.cur}, expected ${first}`);
		await page.waitForFunction(() => window.__tft.state().details, null, { timeout: 10000 });
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
		await page.waitForSelector('#page-ops .vt-row:not([hidden])', { timeout: 15000 });
		const rows = await page.locator('#page-ops .vt-row:not([hidden])').count();
		assert(rows > 0, 'no rows');
		await page.click('#page-ops .vt-h[data-key=count]');
		await page.waitForTimeout(100);
		const firstCount = await page.locator('#page-ops .vt-row:not([hidden]) .vt-c').nth(1).innerText();
		await page.click('#page-ops .vt-h[data-key=self]');
		await page.waitForTimeout(100);
		note(`ops rows visible: ${rows}; top count ${firstCount}`);
		await shot('05-ops');
		return true;
	});
	await step('clicking an op highlights its slices on the timeline', async () => {
		const row = page.locator('#page-ops .vt-row:not([hidden])').first();
		opName = await row.locator('.vt-c').first().innerText();
		await row.click();
		await page.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: 5000 });
		const s = await state();
		assert(s.highlight === opName, `highlight "${s.highlight}" != "${opName}"`);
		await page.keyboard.press('Digit0');
		await idle();
		await page.waitForFunction(() => { const s = window.__tft.state().search; return s.total > 0 || s.error; }, null, { timeout: 10000 });
		const c = await page.evaluate(() => window.__tft.countHighlighted());
		note(`highlighted ${c.highlighted} of ${c.drawn} drawn slices for "${opName}"`);
		assert(c.highlighted > 0, 'nothing highlighted');
		assert(await page.locator('.hl-chip').isVisible(), 'no highlight chip');
		await shot('06-highlight');
		await page.click('.hl-clear');
		return true;
	});
	await step('Overview page and back to the timeline', async () => {
		await page.click('nav.pages a[data-page=overview]');
		await page.waitForSelector('#page-overview .cards', { timeout: 10000 });
		await page.waitForFunction(() => !document.querySelector('#page-overview .topops .loading'), null, { timeout: 10000 });
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
		await page.waitForSelector('.help:not([hidden])', { timeout: 3000 });
		await shot('08-help');
		await page.keyboard.press('Escape');
		await page.waitForSelector('.help', { state: 'hidden', timeout: 3000 });
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
fs.writeFileSync(path.join(artifacts, `${tag}-metrics.json`), JSON.stringify(metrics, null, 2) + '\n');
console.log(`1..${n}`);
await ctx.close();
fs.rmSync(userDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
