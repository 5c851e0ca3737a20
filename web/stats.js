// SPDX-License-Identifier: MIT
// Op statistics from /api/stats: normalises the row shape and merges per-track
// answers (for area selections spanning several tracks).
import { getJSON } from './api.js';

const num = (v) => (typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : v == null ? null : Number(v));

function pick(r, ...keys) {
	for (const k of keys) if (r[k] !== undefined && r[k] !== null) return num(r[k]);
	return null;
}

/* One row in the UI's shape: name, count, total, self, mean, min, max, p50, p99, share. */
export function normRow(r) {
	const count = pick(r, 'count', 'calls', 'n') ?? 0;
	const total = pick(r, 'total_ns', 'total', 'inclusive_ns') ?? 0;
	const self = pick(r, 'self_ns', 'self', 'exclusive_ns') ?? total;
	return {
		name: String(r.name ?? r.key ?? r.op ?? r.category ?? r.track ?? ''),
		count, total, self,
		mean: pick(r, 'mean_ns', 'mean', 'avg_ns') ?? (count ? total / count : 0),
		min: pick(r, 'min_ns', 'min'),
		max: pick(r, 'max_ns', 'max'),
		p50: pick(r, 'p50_ns', 'p50', 'median_ns'),
		p99: pick(r, 'p99_ns', 'p99'),
		share: null, // computed by rowsOf: self / all self (the server's share is of totals, in %)
	};
}

export function rowsOf(j) {
	const arr = Array.isArray(j) ? j : (j && (j.rows || j.ops || j.stats || j.results)) || [];
	const rows = arr.map(normRow);
	let selfSum = 0;
	for (const r of rows) selfSum += r.self || 0;
	for (const r of rows) r.share = selfSum ? r.self / selfSum : 0;
	return rows;
}

/* The unfiltered by-name table is shared by the Overview and Ops pages. */
let allByName = null;

/* A live session grew: statistics are fetched again when next needed. */
export function invalidateStats() { allByName = null; }
export function fetchAllByName() {
	if (!allByName) allByName = fetchStats({ by: 'name' }).catch((e) => { allByName = null; throw e; });
	return allByName;
}

export async function fetchStats(query, signal) {
	const j = await getJSON('api/stats', query, { signal });
	return rowsOf(j);
}

/* Stats over several tracks: one request per track, merged (no percentiles). */
let multiTrack = true; // does the server take track=ID,ID,...?

export async function fetchStatsMulti(tracks, t0, t1, signal) {
	if (!tracks) return fetchStats({ by: 'name', t0, t1, clip: 1 }, signal);
	const all = [...tracks];
	if (all.length === 1) return fetchStats({ by: 'name', track: all[0], t0, t1, clip: 1 }, signal);
	if (multiTrack) {
		try {
			return await fetchStats({ by: 'name', track: all.join(','), t0, t1, clip: 1 }, signal);
		} catch (e) {
			if (e.status !== 400) throw e;
			multiTrack = false; // an older server: one request per track
		}
	}
	const ids = all.slice(0, 48);
	const parts = await Promise.all(ids.map((id) => fetchStats({ by: 'name', track: id, t0, t1, clip: 1 }, signal)));
	const m = new Map();
	for (const rows of parts) for (const r of rows) {
		const g = m.get(r.name);
		if (!g) { m.set(r.name, { ...r, p50: null, p99: null }); continue; }
		g.count += r.count; g.total += r.total; g.self += r.self;
		g.min = g.min === null ? r.min : r.min === null ? g.min : Math.min(g.min, r.min);
		g.max = g.max === null ? r.max : r.max === null ? g.max : Math.max(g.max, r.max);
	}
	const rows = [...m.values()];
	let selfSum = 0;
	for (const r of rows) { r.mean = r.count ? r.total / r.count : 0; selfSum += r.self; }
	for (const r of rows) r.share = selfSum ? r.self / selfSum : 0;
	return rows;
}
