// SPDX-License-Identifier: MIT
// Client of the tftracer HTTP API (docs/http-api.md): token handling, JSON errors,
// exact 64-bit integers, abortable requests, POSTs for the live controls, server-sent
// events, an activity counter for the status pill, and the static mode (a standalone
// HTML export answers the same queries in the page, see staticapi.js).
import { staticSource } from './staticapi.js';
import { exactReviver } from './bigjson.js';
import { queryParams } from './query.js';

export { big, parseExact, toJSONText } from './bigjson.js';

const params = new URLSearchParams(location.search);
const token = params.get('token');

/* The inlined session of a static HTML export, or null when served. */
const STATIC = staticSource();
export function isStatic() { return !!STATIC; }
export function staticInfo() { return STATIC ? STATIC.info() : null; }
function staticError(e, path) {
	if (e instanceof ApiError) return e;
	if (e && e.status) return new ApiError(e.message, e.status, path);
	return new ApiError(String((e && e.message) || e), 500, path);
}

/* Answer a query in the page (static mode only), given the parameters a served request's
 * URL would carry (apiUrl); rejects with ApiError like getJSON. */
export async function staticQuery(path, query) {
	try {
		return await STATIC.query(path.replace(/^\/+/, ''), Object.fromEntries(queryParams(query)));
	} catch (e) {
		throw staticError(e, path);
	}
}

/* A viewport window answered in the page, already decoded (tiledata.js). */
export async function staticTile(query, t0) {
	try {
		return await STATIC.tile(Object.fromEntries(queryParams(query)), t0);
	} catch (e) {
		throw staticError(e, 'api/viewport');
	}
}

export class ApiError extends Error {
	constructor(message, status, path) {
		super(message);
		this.status = status; // HTTP status, 0 when the server could not be reached
		this.path = path;
	}
}

let inflight = 0;
const listeners = new Set();

/* fn(inflightCount, error|null) runs whenever a request starts, ends or fails. */
export function onActivity(fn) {
	listeners.add(fn);
	return () => listeners.delete(fn);
}

function notify(err) {
	for (const fn of listeners) fn(inflight, err || null);
}

/*
 * A live server that said its last (the job stopped): nothing is asked of it any
 * more (each request would only fail, and be an error in the console).
 */
let gone = null;
export function serverGone(reason) { gone = reason || 'the server has stopped'; }
export function isServerGone() { return gone !== null; }

export function apiUrl(path, query) {
	const u = new URL(path, document.baseURI);
	for (const [k, v] of queryParams(query)) u.searchParams.set(k, v);
	return u;
}

/* A link that carries the token (downloads open in the browser, not via fetch). */
export function downloadUrl(path) {
	const u = apiUrl(path, token ? { token } : null);
	return u.pathname + u.search;
}

export function authHeaders() {
	return token ? { 'X-TFT-Token': token } : {};
}

/*
 * GET a JSON endpoint. opts.signal aborts; opts.exact keeps big integers exact
 * (use it for small answers: session, slice, search, steps). Throws ApiError.
 */
export async function getJSON(path, query, opts = {}) {
	if (STATIC) {
		inflight++;
		notify(null);
		try {
			const r = await staticQuery(path, query);
			if (opts.signal && opts.signal.aborted) throw new DOMException('aborted', 'AbortError');
			return r;
		} finally {
			inflight--;
			notify(null);
		}
	}
	if (gone) throw new ApiError(gone, 0, path);
	const u = apiUrl(path, query);
	inflight++;
	notify(null);
	let failure = null;
	try {
		let res;
		try {
			res = await fetch(u, { headers: authHeaders(), signal: opts.signal });
		} catch (e) {
			if (e && e.name === 'AbortError') throw e;
			failure = new ApiError('cannot reach the tftracer server', 0, path);
			throw failure;
		}
		const text = await res.text();
		if (!res.ok) {
			let msg = `${res.status} ${res.statusText}`;
			try {
				const j = JSON.parse(text);
				if (j && j.error) msg = String(j.error);
			} catch { /* not JSON: keep the status line */ }
			failure = new ApiError(msg, res.status, path);
			throw failure;
		}
		try {
			return opts.exact ? JSON.parse(text, exactReviver) : JSON.parse(text);
		} catch (e) {
			failure = new ApiError(`bad JSON from ${path}: ${e.message}`, res.status, path);
			throw failure;
		}
	} finally {
		inflight--;
		notify(failure && !opts.quiet ? failure : null);
	}
}

/*
 * POST a JSON body (the live controls). Carries the token (header) when the page was
 * opened with ?token=; the server refuses cross-origin POSTs. Throws ApiError; resolves
 * to the parsed answer ({} for an empty body).
 */
export async function postJSON(path, body) {
	if (STATIC) throw new ApiError('not available in a static export', 404, path);
	if (gone) throw new ApiError(gone, 0, path);
	const u = apiUrl(path);
	inflight++;
	notify(null);
	try {
		let res;
		try {
			res = await fetch(u, {
				method: 'POST',
				headers: { ...authHeaders(), 'Content-Type': 'application/json' },
				body: JSON.stringify(body ?? {}),
			});
		} catch (e) {
			throw new ApiError('cannot reach the tftracer server', 0, path);
		}
		const text = await res.text();
		let j = {};
		try { j = text ? JSON.parse(text, exactReviver) : {}; } catch { j = {}; }
		if (!res.ok) throw new ApiError((j && j.error) ? String(j.error) : `${res.status} ${res.statusText}`, res.status, path);
		return j;
	} finally {
		inflight--;
		notify(null);
	}
}

/* A server-sent event stream (EventSource; the token travels as a query parameter). */
export function eventSource(path) {
	if (STATIC || typeof EventSource === 'undefined') return null;
	const u = apiUrl(path, token ? { token } : null);
	return new EventSource(u.href);
}
