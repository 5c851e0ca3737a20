// SPDX-License-Identifier: MIT
// Browser tests of the Advisor page and the Overview's advice (web/advisor.js,
// web/overview.js), headless Chromium (playwright-core) against a running `tftracer
// serve`: the findings render as cards matching GET /api/advise; a card, and an evidence
// link, open the Timeline on that evidence (the range shaded on its track, in view, its
// first slice selected); the verdicts and the steps' breakdown show; choosing a step
// asks for that step's advice; the Overview charts each step's breakdown and shows the
// top three findings, which open their evidence too; a static HTML export opened from
// file:// does the same from its inlined advice. Fails on any console error or request
// to another host. Prints TAP.
//
//   node advisor.test.mjs http://127.0.0.1:PORT/ [--static FILE.html] [--artifacts DIR]
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
const staticFile = opt('--static', null);
const allowedHosts = new Set([base.host]);
const WAIT = 30000;
fs.mkdirSync(artifacts, { recursive: true });

let n = 0, failed = 0;
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

const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tft-adv-profile-'));
const ctx = await chromium.launchPersistentContext(userDir, {
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
		'--no-first-run', '--disable-sync'],
	viewport: { width: 1400, height: 900 },
});
const foreign = [];
await ctx.route('**/*', (route) => {
	const u = new URL(route.request().url());
	if ((u.protocol === 'http:' || u.protocol === 'https:') && !allowedHosts.has(u.host)) {
		foreign.push(u.href);
		return route.abort();
	}
	return route.continue();
});

/* A page with its console errors collected. */
async function openPage() {
	const p = await ctx.newPage();
	const errs = [];
	p.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
	p.on('pageerror', (e) => errs.push(`pageerror: ${e.message}`));
	p.on('requestfailed', (r) => {
		const f = r.failure();
		const u = new URL(r.url());
		if (allowedHosts.has(u.host) && !(f && /ERR_ABORTED/.test(f.errorText)) && !/\/api\/live$/.test(u.pathname)) errs.push(`request failed: ${r.url()} ${f && f.errorText}`);
	});
	return { p, errs };
}
const shot = async (p, name) => { const f = path.join(artifacts, `advisor-${name}.png`); await p.screenshot({ path: f }); note(`screenshot ${f}`); };
const parseId = (id) => { const m = /^(\d+)\.(-?\d+)\.(\d+)$/.exec(id); return m ? { track: +m[1], ts: m[2], depth: +m[3] } : null; };

/*
 * After a click on evidence e: the Timeline shows, the evidence range is the area (on its
 * track), in view, and its first slice is selected.
 */
async function expectEvidence(p, e) {
	await p.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: WAIT });
	const ids = (e.slice_ids || []).map(parseId);
	// the selection, then its details (the drawer asks the server for them)
	if (ids.length) await p.waitForFunction(() => { const s = window.__tft.evidence(); return s && s.selected && window.__tft.state().details; }, null, { timeout: WAIT });
	await p.waitForFunction(() => window.__tft.isIdle(), null, { timeout: WAIT, polling: 50 });
	const r = await p.evaluate((e) => {
		const st = window.__tft.state(), ev = window.__tft.evidence(), tl = window.__tft.timeline;
		return { st, ev, t0: (BigInt(e.t0_ns) - tl.T0).toString(), t1: (BigInt(e.t1_ns) - tl.T0).toString(), selAbs: tl.sel && tl.sel.abs !== undefined ? tl.sel.abs.toString() : null };
	}, { t0_ns: String(e.t0_ns), t1_ns: String(e.t1_ns) });
	const a = r.ev && r.ev.area;
	assert(a, 'no area on the Timeline');
	// (a session's times beyond 2^53 ns reach the page exact; the area is in float ns from the start)
	assert(Math.abs(a.s - Number(r.t0)) <= 1 && Math.abs(a.e - Math.max(Number(r.t1), Number(r.t0) + 1)) <= 1,
		`area [${a.s}, ${a.e}] against the evidence [${r.t0}, ${r.t1}]`);
	if (e.track !== null && e.track !== undefined) assert(a.tracks && a.tracks.length === 1 && a.tracks[0] === Number(e.track), `area tracks ${JSON.stringify(a.tracks)}, evidence track ${e.track}`);
	else assert(a.tracks === null, 'an evidence without a track shades one track');
	const v = r.st.view;
	assert(v.s <= a.s + 1 && v.e >= a.e - 1, `view [${v.s}, ${v.e}] does not hold the evidence [${a.s}, ${a.e}]`);
	if (ids.length) {
		assert(r.st.selected && r.st.selected.track === ids[0].track && r.st.selected.depth === ids[0].depth && r.selAbs === ids[0].ts,
			`selected ${JSON.stringify(r.st.selected)} at ${r.selAbs}, evidence slice ${JSON.stringify(ids[0])}`);
		assert(r.st.details && r.st.details.name, 'no details shown for the selected slice');
	}
	return r;
}

/* The Advisor page of page p (served or static) against the advice `want`. */
async function advisorChecks(label, p, errs, want) {
	await step(`${label}: the Advisor page shows one card per finding, the verdicts and the steps`, async () => {
		await p.locator('nav.pages a[data-page="advisor"]').click();
		await p.waitForFunction(() => window.__tft.advisor().loaded, null, { timeout: WAIT });
		const st = await p.evaluate(() => window.__tft.advisor());
		assert(st.cards === want.findings.length, `${st.cards} cards for ${want.findings.length} findings`);
		assert(JSON.stringify(st.findings.map((f) => f.title)) === JSON.stringify(want.findings.map((f) => f.title)), 'card titles differ from the findings');
		const titles = await p.locator('#page-advisor .adv-card h3').allInnerTexts();
		assert(titles.length === want.findings.length && titles.every((t, i) => t === want.findings[i].title), `rendered titles ${JSON.stringify(titles.slice(0, 3))}`);
		const rec = await p.locator('#page-advisor .adv-card .adv-rec').first().innerText();
		assert(want.findings.length === 0 || rec.includes(want.findings[0].recommendation.slice(0, 40)), `recommendation shown: ${rec.slice(0, 80)}`);
		const rows = await p.locator('#page-advisor .adv-checked tr').count();
		assert(rows === want.checked.length + 1, `${rows - 1} verdict rows for ${want.checked.length}`);
		if (want.steps.length) {
			const bars = await p.locator('#page-advisor .adv-steps-panel .adv-bar').count();
			assert(bars === Math.min(500, want.steps.length), `${bars} breakdown bars for ${want.steps.length} steps`);
		}
		await shot(p, `${label}-page`);
		return true;
	});
	if (!want.findings.length) return;
	await step(`${label}: a card's button opens the Timeline on its first evidence`, async () => {
		await p.locator('#page-advisor .adv-card').first().locator('.adv-open').click();
		await expectEvidence(p, want.findings[0].evidence[0]);
		await shot(p, `${label}-evidence`);
		return true;
	});
	// an evidence link further down: the first finding with two or more evidence entries
	const fi = want.findings.findIndex((f) => f.evidence.length > 1);
	if (fi >= 0) {
		await step(`${label}: an evidence link opens that evidence`, async () => {
			await p.locator('nav.pages a[data-page="advisor"]').click();
			await p.waitForFunction(() => window.__tft.advisor().cards > 0, null, { timeout: WAIT });
			await p.locator('#page-advisor .adv-card').nth(fi).locator('a.adv-ev').nth(1).click();
			await expectEvidence(p, want.findings[fi].evidence[1]);
			return true;
		});
	}
	await step(`${label}: no console errors`, async () => errs.length === 0 || `console errors: ${errs.slice(0, 3).join(' | ')}`);
}

/* ---- served ---------------------------------------------------------------------- */
const api = async (q) => {
	const r = await fetch(new URL(`api/advise${q || ''}`, base));
	const text = await r.text();
	// exact big integers, as strings (the page keeps them exact too)
	return JSON.parse(text.replace(/([:\[,]\s*)(-?\d{16,})(?=[,\]}])/g, '$1"$2"'));
};
const want = await api('');
note(`served session: ${want.findings.length} findings, ${want.steps.length} steps`);
{
	const { p, errs } = await openPage();
	await step('served: the page loads', async () => {
		await p.goto(new URL('#/overview', base).href);
		await p.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
		return true;
	});
	await step('served: the Overview charts each step\'s breakdown and lists the top three findings', async () => {
		await p.waitForFunction(() => document.querySelectorAll('#page-overview .ov-findings .adv-card, #page-overview .ov-findings .empty').length > 0, null, { timeout: WAIT });
		const legend = await p.locator('#page-overview .step-breakdown').innerText();
		if (want.steps.length) assert(/device compute/.test(legend) && /input/.test(legend) && /idle/.test(legend), `legend "${legend}"`);
		const bd = await p.evaluate(() => (window.__tft.app.overview.breakdown || []).filter(Boolean).length);
		assert(!want.steps.length || bd === want.steps.length, `${bd} steps with a breakdown of ${want.steps.length}`);
		if (want.steps.length) {
			// the breakdown chart is drawn: its bars in the parts' colours (device compute first)
			await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
			const px = await p.evaluate(() => {
				const c = document.querySelector('#page-overview .bdchart'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
				const want = getComputedStyle(document.documentElement).getPropertyValue('--adv-device').trim();
				const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(want);
				const rgb = m ? [1, 2, 3].map((i) => parseInt(m[i], 16)) : [45, 164, 78];
				let n = 0;
				for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 200 && Math.abs(d[i] - rgb[0]) + Math.abs(d[i + 1] - rgb[1]) + Math.abs(d[i + 2] - rgb[2]) < 60) n++;
				return n;
			});
			const dev = want.steps.reduce((x, st) => x + Number(st.breakdown.device_compute), 0);
			assert(!dev || px > 100, `${px} device-compute pixels in the breakdown chart`);
		}
		const titles = await p.locator('#page-overview .ov-findings .adv-card h3').allInnerTexts();
		const top = want.findings.slice(0, 3).map((f) => f.title);
		assert(JSON.stringify(titles) === JSON.stringify(top), `top findings ${JSON.stringify(titles)}, want ${JSON.stringify(top)}`);
		await shot(p, 'overview');
		return true;
	});
	if (want.findings.length) {
		await step('served: an Overview finding opens its evidence on the Timeline', async () => {
			await p.locator('#page-overview .ov-findings .adv-card').first().click();
			await expectEvidence(p, want.findings[0].evidence[0]);
			return true;
		});
	}
	await advisorChecks('served', p, errs, want);
	if (want.steps.length) {
		await step('served: choosing a step shows that step\'s advice', async () => {
			const idx = String(want.steps[want.steps.length - 1].index);
			const one = await api(`?step=${idx}`);
			await p.locator('nav.pages a[data-page="advisor"]').click();
			await p.waitForFunction(() => window.__tft.advisor().loaded, null, { timeout: WAIT });
			await p.locator('#page-advisor .adv-steps').selectOption(idx);
			await p.waitForFunction((k) => window.__tft.advisor().loaded && document.querySelector('#page-advisor .adv-steps').value === k, idx, { timeout: WAIT });
			const st = await p.evaluate(() => window.__tft.advisor());
			assert(JSON.stringify(st.findings.map((f) => f.title)) === JSON.stringify(one.findings.map((f) => f.title)), `step ${idx}: ${st.findings.length} cards, want ${one.findings.length}`);
			const head = await p.locator('#page-advisor .adv-head').innerText();
			assert(/1 step analysed/.test(head), `header "${head}"`);
			return true;
		});
	}
	await step('served: still no console errors', async () => errs.length === 0 || errs.slice(0, 3).join(' | '));
	await p.close();
}

/* ---- static export from file:// --------------------------------------------------- */
if (staticFile) {
	const { p, errs } = await openPage();
	let swant = null;
	await step('static: the exported page loads from file:// with its advice', async () => {
		await p.goto(`file://${path.resolve(staticFile)}#/advisor`);
		await p.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
		await p.waitForFunction(() => window.__tft.advisor().loaded || window.__tft.advisor().error, null, { timeout: WAIT });
		const st = await p.evaluate(() => window.__tft.advisor());
		return !st.error || `the page says: ${st.error}`;
	});
	// what the static page answers, read back through its module
	swant = await p.evaluate(() => {
		const a = window.__tft.app.advisor.data;
		const s = (v) => (typeof v === 'bigint' ? v.toString() : v);
		return a ? { findings: a.findings.map((f) => ({ title: f.title, recommendation: f.recommendation, evidence: f.evidence.map((e) => ({ track: e.track === null ? null : Number(e.track), t0_ns: s(e.t0_ns), t1_ns: s(e.t1_ns), slice_ids: e.slice_ids })) })), checked: a.checked, steps: a.steps } : null;
	});
	if (swant) {
		note(`static session: ${swant.findings.length} findings`);
		await p.evaluate(() => { location.hash = '#/overview'; });
		await advisorChecks('static', p, errs, swant);
	} else {
		ok(false, 'static: the advice is in the page');
	}
	await p.close();
}

ok(foreign.length === 0, 'no request left this machine', foreign.slice(0, 3).join(' '));
console.log(`1..${n}`);
await ctx.close();
fs.rmSync(userDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
