// SPDX-License-Identifier: MIT
// Op statistics from /api/stats: normalises the row shape; area selections (a time
// range over some tracks) are one request, clipped to the range by the server.
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
		track: r.track_id ?? null, // (rows by track)
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

/*
 * Stats of an area selection: the slices of `tracks` (a Set or array of ids; null =
 * every track) overlapping [t0, t1], clipped to it (clip=1: a slice counts only its
 * time inside the range, self time too), so totals, percentiles and "% of range" are
 * exact. One request whatever the number of tracks: the server (and the static
 * export) take a track list.
 */
export function fetchStatsMulti(tracks, t0, t1, signal) {
	const q = { by: 'name', t0, t1, clip: 1 };
	if (tracks) q.track = [...tracks].join(',');
	return fetchStats(q, signal);
}
