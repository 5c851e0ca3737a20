// SPDX-License-Identifier: MIT
// Browser tests of the Analysis page (web/analysis.js), headless Chromium (playwright-core)
// against a running `tftracer serve`: the scope, op and graph views render with the numbers of
// `tftracer prof SESSION VIEW --json` (same options) on the same session, node by node and
// metric by metric; the icicle draws the scope tree; expanding a node shows its children; an
// option (-hide_name_regexes) filters as the CLI does; a click on a node opens the Timeline
// with its executions marked and the first selected, whose details name its graph node
// (GET /api/prof?slice=); a static HTML export opened from file:// shows its precomputed
// views with the CLI's numbers. Fails on any console error or request to another host. TAP.
//
//   node analysis.test.mjs http://127.0.0.1:PORT/ --tft BIN --session S.tft
//        [--static FILE.html --static-session S2.tft] [--artifacts DIR]
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const base = new URL(args.find((a) => /^https?:/.test(a)) || 'http://127.0.0.1:9999/');
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const artifacts = path.resolve(opt('--artifacts', path.join(here, '../../build/test-artifacts')));
const tft = opt('--tft', path.join(here, '../../build/tftracer'));
const session = opt('--session', null);
const staticFile = opt('--static', null);
const staticSession = opt('--static-session', null);
const allowedHosts = new Set([base.host]);
const WAIT = 60000;
const SELECT = 'micros,accelerator_micros,cpu_micros,params,float_ops,occurrence'; // the page's default
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

/* `tftracer prof SESS VIEW --json` with the page's default options and extra ones: {id: node}. */
function cli(sess, view, extra = []) {
	const out = execFileSync(tft, ['prof', sess, view, '--json', '-select', SELECT, '-order_by', 'micros', '-max_depth', '10', ...extra],
		{ encoding: 'utf8', maxBuffer: 1 << 28 });
	const doc = JSON.parse(out);
	const byId = new Map();
	const walk = (x) => { byId.set(x.id, x); for (const c of x.children || []) walk(c); };
	walk(doc.root);
	return { doc, byId };
}

/* The rows the page shows: [{id, name, cells: [{m, k, v}]}]. */
const rowsOf = (p) => p.evaluate(() => [...document.querySelectorAll('#page-analysis tr.an-row')].map((tr) => ({
	id: +tr.dataset.id, name: tr.dataset.name,
	cells: [...tr.querySelectorAll('td[data-m]')].map((td) => ({ m: td.dataset.m, k: td.dataset.k, v: Number(td.dataset.v) })),
})));

/* Every shown row is the CLI's node of its id, each metric's self and total equal. */
function compare(rows, want) {
	assert(rows.length > 1, `${rows.length} rows shown`);
	let cells = 0;
	for (const r of rows) {
		const w = want.byId.get(r.id);
		assert(w, `row ${r.id} (${r.name}) is no node of the CLI's view`);
		assert(w.name === r.name, `row ${r.id}: ${r.name}, the CLI's ${w.name}`);
		for (const c of r.cells) {
			const v = w[c.k][c.m];
			assert(v === c.v, `${r.name} ${c.m} ${c.k}: page ${c.v}, CLI ${v}`);
			cells++;
		}
	}
	assert(cells === rows.length * want.doc.select.length * 2, `${cells} cells for ${rows.length} rows`);
	return cells;
}

const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tft-an-profile-'));
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
async function openPage() {
	const p = await ctx.newPage();
	const errs = [];
	p.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
	p.on('pageerror', (e) => errs.push(`pageerror: ${e.message}`));
	return { p, errs };
}
const shot = async (p, name) => { const f = path.join(artifacts, `analysis-${name}.png`); await p.screenshot({ path: f }); note(`screenshot ${f}`); };
const loadedView = (p, view) => p.waitForFunction((v) => { const s = window.__tft.analysis(); return s.loaded && s.view === v && s.rows > 0; }, view, { timeout: WAIT });

if (!session) {
	ok(false, 'served: --session given');
} else {
	const { p, errs } = await openPage();
	await step('served: the scope view shows the CLI\'s numbers, node by node', async () => {
		await p.goto(new URL('#/analysis', base).href);
		await p.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
		await loadedView(p, 'scope');
		const want = cli(session, 'scope');
		const rows = await rowsOf(p);
		assert(rows.length === 1 + want.doc.root.children.length, `${rows.length} rows, root + ${want.doc.root.children.length} children`);
		note(`${compare(rows, want)} cells equal`);
		return true;
	});
	await step('served: the icicle draws the scope tree', async () => {
		const st = await p.evaluate(() => window.__tft.analysis());
		const ids = await p.evaluate(() => [...document.querySelectorAll('#page-analysis .an-cell')].map((c) => +c.dataset.id));
		const want = cli(session, 'scope');
		assert(ids.length === st.cells && ids.length > 1 && ids.every((i) => want.byId.has(i)), `${ids.length} cells`);
		await shot(p, 'scope');
		return true;
	});
	await step('served: expanding a node shows its children with the CLI\'s numbers', async () => {
		const want = cli(session, 'scope');
		const parent = want.doc.root.children.find((c) => (c.children || []).length);
		if (!parent) return 'no node with children in the scope view';
		await p.locator(`#page-analysis [data-tw="${parent.id}"]`).click();
		const rows = await rowsOf(p);
		assert(rows.length === 1 + want.doc.root.children.length + parent.children.length, `${rows.length} rows after expanding ${parent.name}`);
		compare(rows, want);
		return true;
	});
	let opWant;
	await step('served: the op view shows the CLI\'s numbers', async () => {
		await p.selectOption('#page-analysis select[name=view]', 'op');
		await loadedView(p, 'op');
		opWant = cli(session, 'op');
		compare(await rowsOf(p), opWant);
		const flame = await p.locator('#page-analysis .an-flame-panel').isHidden();
		return flame || 'the icicle shows for the op view';
	});
	await step('served: the graph view shows the CLI\'s numbers; the code view of a trace without stacks only its root', async () => {
		await p.selectOption('#page-analysis select[name=view]', 'graph');
		await loadedView(p, 'graph');
		compare(await rowsOf(p), cli(session, 'graph'));
		const code = cli(session, 'code');
		await p.selectOption('#page-analysis select[name=view]', 'code');
		await loadedView(p, 'code');
		const rows = await rowsOf(p);
		assert(rows.length === 1 + code.doc.root.children.length, `${rows.length} rows in the code view, the CLI's ${code.doc.root.children.length} + 1`);
		await p.selectOption('#page-analysis select[name=view]', 'op');
		await loadedView(p, 'op');
		return true;
	});
	await step('served: -hide_name_regexes filters as the CLI does', async () => {
		const hide = opWant.doc.root.children[0].name;
		const re = hide.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
		await p.locator('#page-analysis details.an-more summary').click();
		await p.fill('#page-analysis input[name=hide_name_regexes]', re);
		await p.locator('#page-analysis .an-apply').click();
		await p.waitForFunction((h) => window.__tft.analysis().loaded && ![...document.querySelectorAll('#page-analysis tr.an-row')].some((r) => r.dataset.name === h), hide, { timeout: WAIT });
		const want = cli(session, 'op', ['-hide_name_regexes', re]);
		const rows = await rowsOf(p);
		assert(rows.length === 1 + want.doc.root.children.length && rows.length === opWant.doc.root.children.length, `${rows.length} rows with ${hide} hidden, ${opWant.doc.root.children.length} before`);
		compare(rows, want);
		await p.fill('#page-analysis input[name=hide_name_regexes]', '');
		await p.locator('#page-analysis .an-apply').click();
		await p.waitForFunction((k) => window.__tft.analysis().rows === k, opWant.doc.root.children.length + 1, { timeout: WAIT });
		return true;
	});
	await step('served: a click on a node selects its executions on the Timeline; the details name its graph node', async () => {
		const node = opWant.doc.root.children.find((c) => c.self.occurrence > 0 && c.self.cpu_micros > 0);
		const r = await (await fetch(new URL(`api/prof?view=op&select=${SELECT}&order_by=micros&max_depth=10&node=${node.id}`, base))).text();
		const ex = JSON.parse(r.replace(/([:\[,]\s*)(-?\d{16,})(?=[,\]}])/g, '$1"$2"'));
		assert(Number(ex.executions) >= node.self.occurrence, `${ex.executions} executions of ${node.name}, ${node.self.occurrence} per step`);
		await p.locator(`#page-analysis a.an-node[data-id="${node.id}"]`).click();
		await p.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: WAIT });
		await p.waitForFunction(() => { const s = window.__tft.evidence(); return s && s.selected && window.__tft.state().details; }, null, { timeout: WAIT });
		const st = await p.evaluate(() => ({ st: window.__tft.state(), ev: window.__tft.evidence(), sel: window.__tft.analysis().lastSelect, abs: window.__tft.timeline.sel?.abs?.toString() }));
		assert(st.ev.slices === ex.slice_ids.length, `${st.ev.slices} slices marked, ${ex.slice_ids.length} returned`);
		const [t, ts, d] = ex.slice_ids[0].split('.');
		assert(st.st.selected && st.st.selected.track === +t && st.st.selected.depth === +d && st.abs === ts, `selected ${JSON.stringify(st.st.selected)} at ${st.abs}, first execution ${ex.slice_ids[0]}`);
		await p.waitForFunction(() => document.querySelector('#page-timeline .dr-prof .dr-prof-kv'), null, { timeout: WAIT });
		const txt = await p.locator('#page-timeline .dr-prof').innerText();
		assert(txt.includes(node.name) && /FLOPs/.test(txt) && /Achieved/.test(txt), `details' profile: ${txt.slice(0, 200)}`);
		await shot(p, 'selected');
		return true;
	});
	await step('served: no console errors', async () => errs.length === 0 || `console errors: ${errs.slice(0, 3).join(' | ')}`);
	await p.close();
}

if (staticFile && staticSession) {
	const { p, errs } = await openPage();
	await step('static: the precomputed scope and op views show the CLI\'s numbers', async () => {
		await p.goto(`file://${path.resolve(staticFile)}#/analysis`);
		await p.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
		await loadedView(p, 'scope');
		compare(await rowsOf(p), cli(staticSession, 'scope'));
		await p.selectOption('#page-analysis select[name=view]', 'op');
		await loadedView(p, 'op');
		compare(await rowsOf(p), cli(staticSession, 'op'));
		await shot(p, 'static');
		return true;
	});
	await step('static: a click on a node highlights its slices on the Timeline', async () => {
		await p.locator('#page-analysis a.an-node').nth(1).click();
		await p.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: WAIT });
		return true;
	});
	await step('static: no console errors', async () => errs.length === 0 || `console errors: ${errs.slice(0, 3).join(' | ')}`);
	await p.close();
} else {
	ok(false, 'static: --static and --static-session given');
}

ok(foreign.length === 0, 'no request left this machine', foreign.slice(0, 3).join(' '));
console.log(`1..${n}`);
await ctx.close();
fs.rmSync(userDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
