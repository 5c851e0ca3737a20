// SPDX-License-Identifier: MIT
// The Timeline's drawing cost at fixed views, measured in the page (BENCHMARKS.md "Web
// UI"): a served session (URL) or a static export (FILE.html) is opened and left idle,
// then at three windows (the whole session, 1% of it, 0.01%) the base canvas is drawn
// again with every tile canvas rendered anew ("full"), from the cached tile canvases
// ("blit"), and the overlay ("over"), in loops (the page's clock counts 0.1 ms), 7 times
// each: [min, median] ms per draw, one JSON line. Not a test: numbers to compare builds
// on one machine, run alternately.
//
//   node draw-bench.mjs http://127.0.0.1:PORT/ | FILE.html
import { chromium } from 'playwright-core';
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
const target = process.argv[2];
const url = /^https?:/.test(target) ? new URL('#/timeline', target).href : `file://${path.resolve(target)}#/timeline`;
const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tft-db-'));
const ctx = await chromium.launchPersistentContext(userDir, { executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
	args: ['--no-sandbox', '--disable-gpu'], viewport: { width: 1400, height: 900 } });
const page = await ctx.newPage();
await page.goto(url);
await page.waitForFunction(() => window.__tft && window.__tft.state().loaded && window.__tft_first_draw_ms !== undefined, null, { timeout: 60000 });
const idle = () => page.waitForFunction(() => window.__tft.isIdle(), null, { timeout: 60000, polling: 50 });
await idle();
const out = {};
for (const [name, frac] of [['all', null], ['1pct', 0.01], ['0.01pct', 0.0001]]) {
	await page.evaluate((frac) => { const tl = window.__tft.timeline; if (frac === null) tl.fitAll(); else { const c = tl.span * 0.52, w = tl.span * frac; tl.setView(c - w / 2, c + w / 2); } }, frac);
	await idle();
	await page.waitForTimeout(300);
	await idle();
	const r = await page.evaluate(() => {
		const tl = window.__tft.timeline;
		const fd = tl.firstDraw; tl.firstDraw = false;
		const full = [], blit = [], over = [];
		const loop = (k, fn) => { const t = performance.now(); for (let i = 0; i < k; i++) fn(); return (performance.now() - t) / k; };
		for (let rep = 0; rep < 7; rep++) {
			full.push(loop(10, () => { tl.renderGen++; tl.store.dropCanvases(); tl.frameStart = performance.now(); tl.rendered = 0; tl.drawBase(); }));
			blit.push(loop(200, () => { tl.frameStart = performance.now(); tl.rendered = 0; tl.drawBase(); }));
			over.push(loop(200, () => tl.drawOver()));
		}
		tl.firstDraw = fd;
		const st = (a) => { a.sort((x, y) => x - y); return [+a[0].toFixed(3), +a[a.length >> 1].toFixed(3)]; };
		return { full: st(full), blit: st(blit), over: st(over), drawn: tl.drawnCount, incomplete: tl.incomplete };
	});
	out[name] = r;
}
console.log(JSON.stringify(out));
await ctx.close(); fs.rmSync(userDir, { recursive: true, force: true });
