// SPDX-License-Identifier: MIT
// Web Worker: fetches and decodes /api/viewport tiles off the main thread, so JSON
// parsing of large windows never blocks drawing. Messages: {id, url, headers, t0}
// -> {id, ok, data|error}; {abort: id} cancels a request.
import { decodeViewport } from './tiledata.js';

const pending = new Map();

self.onmessage = async (ev) => {
	const m = ev.data;
	if (m.abort !== undefined) {
		const c = pending.get(m.abort);
		if (c) c.abort();
		pending.delete(m.abort);
		return;
	}
	const ctl = new AbortController();
	pending.set(m.id, ctl);
	try {
		const res = await fetch(m.url, { headers: m.headers, signal: ctl.signal });
		const text = await res.text();
		if (!res.ok) {
			let msg = `${res.status} ${res.statusText}`;
			try { const j = JSON.parse(text); if (j && j.error) msg = String(j.error); } catch { /* keep */ }
			self.postMessage({ id: m.id, ok: false, status: res.status, error: msg });
			return;
		}
		const d = decodeViewport(JSON.parse(text), m.t0);
		const transfer = d.transfer;
		delete d.transfer;
		self.postMessage({ id: m.id, ok: true, data: d, bytes: text.length }, transfer);
	} catch (e) {
		if (e && e.name === 'AbortError') self.postMessage({ id: m.id, ok: false, aborted: true });
		else self.postMessage({ id: m.id, ok: false, status: 0, error: String((e && e.message) || e) });
	} finally {
		pending.delete(m.id);
	}
};

self.postMessage({ ready: true });
