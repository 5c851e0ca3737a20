// SPDX-License-Identifier: MIT
// Browser tests of the Ranks page and the Timeline's rank groups (web/ranks.js,
// web/timeline.js), headless Chromium (playwright-core) against `tftracer serve JOBDIR`
// of a generated job (tests/e2e/progs/gen_job.c: 8 ranks, rank 5 the straggler through
// its slow_op, ranks 1 and 3 with skewed clocks): the page's stacked bars (one per rank,
// each the rank's compute / communication / waiting / idle, matching GET /api/ranks, per
// step too), the straggler and the ops that made it late, the communication matrix (drawn
// where messages went, blank where none), the collectives' skew table, the clocks; a rank
// opens the Timeline on it; the Timeline's top-level groups are the ranks, in rank order,
// collapsible; the raw/aligned switch moves a skewed rank's tracks by its skew and back.
// Fails on any console error or request to another host. Prints TAP.
//
//   node ranks.test.mjs http://127.0.0.1:PORT/ --straggler 5 --skew 1:2500000 [--artifacts DIR]
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
const STRAGGLER = +opt('--straggler', '5');
const [SKEW_RANK, SKEW_NS] = opt('--skew', '1:2500000').split(':').map(Number);
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

const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tft-ranks-profile-'));
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
	if ((u.protocol === 'http:' || u.protocol === 'https:') && u.host !== base.host) {
		foreign.push(u.href);
		return route.abort();
	}
	return route.continue();
});

const p = await ctx.newPage();
const errs = [];
p.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
p.on('pageerror', (e) => errs.push(`pageerror: ${e.message}`));
p.on('requestfailed', (r) => {
	const f = r.failure();
	const u = new URL(r.url());
	if (u.host === base.host && !(f && /ERR_ABORTED/.test(f.errorText)) && !/\/api\/live$/.test(u.pathname)) errs.push(`request failed: ${r.url()} ${f && f.errorText}`);
});
const shot = async (name) => { const f = path.join(artifacts, `ranks-${name}.png`); await p.screenshot({ path: f }); note(`screenshot ${f}`); };
const api = async (u, init) => { const r = await fetch(new URL(u, base), init); assert(r.ok, `${u}: HTTP ${r.status}`); return r.json(); };
const openRanks = async () => {
	await p.waitForFunction(() => window.__tft && window.__tft.state().loaded, null, { timeout: WAIT });
	await p.locator('nav.pages a[data-page="ranks"]').click();
	await p.waitForFunction(() => window.__tft.ranks().loaded && window.__tft.ranks().bars > 0, null, { timeout: WAIT });
};
/* Per rank, the start of its first track (ns from the session's own start, exact). */
const rankStarts = (s) => {
	const out = {};
	for (const t of s.track_list) {
		const r = s.process_list[t.process].rank;
		const v = BigInt(t.min_ts_ns);
		if (!(r in out) || v < out[r]) out[r] = v;
	}
	return out;
};

await api('api/clock?mode=aligned', { method: 'POST' }); // (the job opens aligned; a rerun against one server too)
const want = await api('api/ranks');
const A = want.analysis;
const session0 = await api('api/session');

await step('the job: the Ranks link shows, the page draws one stacked bar per rank, in rank order', async () => {
	await p.goto(new URL('#/timeline', base).href);
	await openRanks();
	const st = await p.evaluate(() => window.__tft.ranks());
	assert(JSON.stringify(st.ranks) === JSON.stringify(A.ranks.map((r) => r.rank)), `ranks ${st.ranks}`);
	assert(A.ranks.length === 8 && st.bars === 8, `${st.bars} bars for ${A.ranks.length} ranks`);
	// every rank computes, communicates and waits or is waited for: two parts or more each
	assert(st.segments >= 16, `${st.segments} segments`);
	const labels = await p.locator('.rk-bars .rk-rank').allTextContents();
	assert(labels[0].startsWith('rank 0') && labels[7].startsWith('rank 7'), `labels ${labels}`);
	await shot('page');
});

await step('each bar is the rank\'s compute / communication / waiting / idle of GET /api/ranks, in proportion', async () => {
	const bars = await p.evaluate(() => [...document.querySelectorAll('.rk-bar')].map((b) => [...b.children].map((d) => ({ cls: d.className, w: d.getBoundingClientRect().width }))));
	const parts = [['compute_ns', 'rk-c'], ['comm_ns', 'rk-m'], ['wait_ns', 'rk-w'], ['idle_ns', 'rk-i']];
	const tot = A.ranks.map((r) => parts.reduce((s, [k]) => s + Number(r[k]), 0));
	const max = Math.max(...tot);
	const full = await p.evaluate(() => document.querySelector('.rk-bar').getBoundingClientRect().width);
	A.ranks.forEach((r, i) => {
		for (const [k, css] of parts) {
			const seg = bars[i].find((s) => s.cls === css);
			const wantW = full * Number(r[k]) / max;
			const got = seg ? seg.w : 0;
			assert(Math.abs(got - wantW) <= 1.5, `rank ${r.rank} ${k}: ${got.toFixed(1)} px, want ${wantW.toFixed(1)}`);
		}
	});
	// the straggler waits least and computes most
	const s = A.ranks.findIndex((r) => r.rank === STRAGGLER);
	const w = (k) => (bars[s].find((x) => x.cls === k) || { w: 0 }).w;
	const other = (k) => (bars[0].find((x) => x.cls === k) || { w: 0 }).w;
	assert(w('rk-c') > 2 * other('rk-c') && w('rk-w') < other('rk-w') / 4, `straggler compute ${w('rk-c')} wait ${w('rk-w')}, rank 0 ${other('rk-c')} / ${other('rk-w')}`);
});

await step('a step of its own: the bars are that step\'s cells', async () => {
	await p.locator('.rk-step').selectOption('2');
	await p.waitForFunction(() => window.__tft.ranks().step === '2', null, { timeout: WAIT });
	const titles = await p.evaluate(() => [...document.querySelectorAll('.rk-bars .rk-tot')].map((e) => e.textContent));
	const cells = A.steps[2].cells;
	const tot = cells.map((c) => Number(c.compute_ns) + Number(c.comm_ns) + Number(c.wait_ns) + Number(c.idle_ns));
	const fmt = await p.evaluate(async (v) => (await import('./assets/format.js')).fmtDur(v), tot[0]).catch(() => null);
	assert(titles.length === 8, `${titles.length} totals`);
	assert(fmt && titles[0].startsWith(fmt), `rank 0's total ${titles[0]}, step 2's cell ${fmt}`);
	const allSteps = A.ranks[0].compute_ns;
	assert(tot[0] < Number(A.ranks[0].compute_ns) + Number(A.ranks[0].comm_ns) + Number(A.ranks[0].wait_ns) + Number(A.ranks[0].idle_ns), `step 2 not shorter than all steps (${allSteps})`);
	await p.locator('.rk-step').selectOption('all');
});

await step('the straggler: the rank the others waited for, badged, with the op that made it late', async () => {
	const st = await p.evaluate(() => window.__tft.ranks());
	assert(A.straggler && A.straggler.rank === STRAGGLER && st.straggler === STRAGGLER, `straggler ${st.straggler}, api ${A.straggler && A.straggler.rank}`);
	assert(st.ops[0] === 'slow_op', `ops ${st.ops}`);
	const head = await p.locator('.rk-strag .rk-strank').textContent();
	assert(head === `rank ${STRAGGLER}`, `straggler heading ${head}`);
	const badged = await p.evaluate(() => [...document.querySelectorAll('.rk-rank')].filter((e) => e.querySelector('.rk-badge')).map((e) => e.dataset.rank));
	assert(JSON.stringify(badged) === JSON.stringify([String(STRAGGLER)]), `badged ${badged}`);
	const row = await p.locator('.rk-ops tbody tr').first().textContent();
	assert(row.includes('slow_op'), `first op row ${row}`);
});

await step('the communication matrix: drawn where messages went, blank where none; its hover names the pair', async () => {
	const st = await p.evaluate(() => window.__tft.ranks());
	assert(st.pairs === A.matrix.length && A.matrix.length > 0, `${st.pairs} pairs, api ${A.matrix.length}`);
	const res = await p.evaluate((matrix) => {
		const cv = document.querySelector('.rk-mat');
		const ctx = cv.getContext('2d');
		const n = 8, cell = Math.max(3, Math.min(22, Math.floor(560 / n))), pad = 40, dpr = window.devicePixelRatio || 1;
		const px = (i, j) => Array.from(ctx.getImageData(Math.round((pad + j * cell + cell / 2) * dpr), Math.round((pad + i * cell + cell / 2) * dpr), 1, 1).data);
		const has = new Set(matrix.map((m) => `${m.src},${m.dst}`));
		let filled = 0, blankWrong = 0, filledWrong = 0;
		const bg = px(0, 0); // (a rank sends nothing to itself)
		for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
			const v = px(i, j);
			const same = v.every((x, k) => Math.abs(x - bg[k]) < 3);
			if (has.has(`${i},${j}`)) { if (same) filledWrong++; else filled++; } else if (!same) blankWrong++;
		}
		const r = cv.getBoundingClientRect();
		const m = matrix[0];
		cv.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + pad + m.dst * cell + cell / 2, clientY: r.top + pad + m.src * cell + cell / 2 }));
		return { filled, blankWrong, filledWrong, title: cv.title, m };
	}, A.matrix);
	assert(!A.matrix.some((m) => m.src === 0 && m.dst === 0), 'rank 0 sends to itself');
	assert(res.filled === A.matrix.length && !res.blankWrong && !res.filledWrong, JSON.stringify(res));
	assert(res.title.startsWith(`rank ${res.m.src} → rank ${res.m.dst}: ${res.m.messages} messages`), `hover ${res.title}`);
	await p.locator('.rk-metric').selectOption('time_ns');
	const info = await p.locator('.rk-matinfo').textContent();
	assert(/pairs · largest/.test(info), `matrix info ${info}`);
});

await step('collective skew: the table lists the largest skews, first to last arrival', async () => {
	const rows = await p.locator('.rk-colltab tbody tr').count();
	assert(rows === Math.min(20, A.collectives.length) && rows > 0, `${rows} rows for ${A.collectives.length} collectives`);
	const top = [...A.collectives].sort((x, y) => Number(y.skew_ns) - Number(x.skew_ns))[0];
	const first = await p.locator('.rk-colltab tbody tr').first().textContent();
	assert(first.includes(top.name) && first.includes(`rank ${top.first_rank} → rank ${top.last_rank}`), `first row ${first}, want ${top.name}`);
	const st = await p.evaluate(() => window.__tft.ranks());
	assert(st.collectives === A.collectives_total, `${st.collectives} collectives`);
});

await step('the clocks: aligned to rank 0 within the error, the skewed rank\'s offset shown', async () => {
	const txt = await p.locator('.rk-clock').textContent();
	assert(/aligned to rank 0 within/.test(txt), `clock text ${txt}`);
	await p.locator('.rk-clocks summary').click();
	const rows = await p.locator('.rk-clocktab tbody tr').allTextContents();
	assert(rows.length === 8 && rows[0].includes('reference'), `clock rows ${rows.length}: ${rows[0]}`);
	const r = A.ranks.find((x) => x.rank === SKEW_RANK);
	assert(Math.abs(Number(r.clock.offset_ns) - SKEW_NS) <= Number(r.clock.error_ns), `rank ${SKEW_RANK} offset ${r.clock.offset_ns} ± ${r.clock.error_ns}, skew ${SKEW_NS}`);
	assert(rows[SKEW_RANK].includes('+2.'), `rank ${SKEW_RANK}'s row ${rows[SKEW_RANK]}`);
});

await step('the Timeline: the ranks are the top-level groups, in rank order, collapsible', async () => {
	await p.locator('nav.pages a[data-page="timeline"]').click();
	await p.waitForFunction(() => window.__tft.state().page === 'timeline' && window.__tft.isIdle(), null, { timeout: WAIT, polling: 50 });
	const g = await p.evaluate(() => {
		const tl = window.__tft.timeline;
		return {
			ranks: (tl.rankGroups || []).map((x) => x.rank),
			heads: tl.rows.filter((r) => r.type === 'group').map((r) => r.g.id),
			tracks: tl.rows.filter((r) => r.type === 'track').length,
		};
	});
	assert(JSON.stringify(g.ranks) === '[0,1,2,3,4,5,6,7]', `rank groups ${g.ranks}`);
	assert(JSON.stringify(g.heads) === JSON.stringify(g.ranks.map((r) => `rank:${r}`)), `group rows ${g.heads}`);
	assert(g.tracks >= 8, `${g.tracks} track rows`);
	const c = await p.evaluate(() => {
		const tl = window.__tft.timeline;
		tl.setCollapsedAll(true);
		const collapsed = { heads: tl.rows.filter((r) => r.type === 'group').length, tracks: tl.rows.filter((r) => r.type === 'track').length };
		tl.setCollapsedAll(false);
		return collapsed;
	});
	assert(c.heads === 8 && c.tracks === 0, `collapsed: ${JSON.stringify(c)}`);
	await shot('timeline');
});

await step('a rank on the Ranks page opens the Timeline on its tracks', async () => {
	await p.evaluate(() => window.__tft.timeline.setCollapsedAll(true));
	await p.locator('nav.pages a[data-page="ranks"]').click();
	await p.waitForFunction(() => window.__tft.ranks().bars === 8, null, { timeout: WAIT });
	await p.locator(`.rk-bars .rk-rank[data-rank="${STRAGGLER}"]`).click();
	await p.waitForFunction(() => window.__tft.state().page === 'timeline', null, { timeout: WAIT });
	const r = await p.evaluate((rank) => {
		const tl = window.__tft.timeline;
		const rg = tl.rankGroups.find((x) => x.rank === rank);
		return { open: !rg.collapsed, shown: tl.rows.some((x) => x.type === 'track' && rg.procIds.has(x.t.process)) };
	}, STRAGGLER);
	assert(r.open && r.shown, JSON.stringify(r));
	await p.evaluate(() => window.__tft.timeline.setCollapsedAll(false));
});

await step('raw clocks: the switch moves the skewed rank by its skew, every page in raw time; aligned again restores them', async () => {
	await p.locator('nav.pages a[data-page="ranks"]').click();
	await p.waitForFunction(() => window.__tft.ranks().bars === 8, null, { timeout: WAIT });
	await Promise.all([p.waitForNavigation({ timeout: WAIT }), p.locator('.rk-clockbtn button[data-mode="raw"]').click()]);
	await openRanks();
	const st = await p.evaluate(() => window.__tft.ranks());
	assert(st.clockMode === 'raw', `clock mode ${st.clockMode}`);
	const txt = await p.locator('.rk-clock').textContent();
	assert(/raw/.test(txt), `clock text ${txt}`);
	const raw = await api('api/session');
	const a0 = rankStarts(session0), r0 = rankStarts(raw);
	for (const k of Object.keys(a0)) {
		const moved = Number(r0[k] - a0[k]);
		const wantMove = +k === SKEW_RANK ? SKEW_NS : 0;
		assert(Math.abs(moved - wantMove) <= 5000, `rank ${k} moved ${moved} ns, want ${wantMove}`);
	}
	await shot('raw');
	await Promise.all([p.waitForNavigation({ timeout: WAIT }), p.locator('.rk-clockbtn button[data-mode="aligned"]').click()]);
	await openRanks();
	const back = await p.evaluate(() => window.__tft.ranks());
	assert(back.clockMode === 'aligned', `clock mode ${back.clockMode}`);
	const al = rankStarts(await api('api/session'));
	assert(Object.keys(a0).every((k) => al[k] === a0[k]), 'aligned again: the tracks moved');
});

ok(!errs.length, 'no console errors', errs.slice(0, 5).join(' | '));
ok(!foreign.length, 'no requests to other hosts', foreign.slice(0, 3).join(' '));
await ctx.close();
fs.rmSync(userDir, { recursive: true, force: true });
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
