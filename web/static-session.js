// SPDX-License-Identifier: MIT
// A static export's session (docs/http-api.md "Static HTML export"): what the exporter
// precomputed and inlined (the session object, the advisor's default result, tftracer
// prof's default views, the truncation counts) answered as they are, and the queries
// whose answers depend on their parameters (GET /api/viewport, slice, search, stats)
// answered by the query engine (static-engine.js: the server's own C code, compiled to
// WebAssembly) over the same data. Loaded by the export's worker too: plain
// declarations only, each top-level name once across the modules staticapi.js imports.

import { big } from './bigjson.js';

export function fail(status, message) {
	const e = new Error(message);
	e.status = status;
	return e;
}

export class StaticSession {
	/* d: DATA's small top-level values (session, advise, prof, truncated, graph_truncated);
	 * engine: the QueryEngine over the whole of DATA, or null with `error` saying why. */
	constructor(d, engine, error) {
		this.error = error;
		this.engine = engine;
		if (!error) {
			try { this.init(d); } catch (e) { this.error = `the inlined session data is not usable: ${e.message}`; }
		}
	}

	init(d) {
		if (!d || typeof d !== 'object' || !d.session || typeof d.session !== 'object') throw new Error('no "session" object');
		this.session = d.session;
		this.T0 = big(d.start_ns ?? d.session.start_ns); // the origin of DATA's times
		this.truncated = Number(d.truncated) || 0;
		this.graphTruncated = Number(d.graph_truncated) || 0; // graph rows the exporter's cap left out
		// the advisor's default result, precomputed by the exporter (GET /api/advise)
		this.advice = d.advise && typeof d.advise === 'object' ? d.advise : null;
		// tftracer prof's four views with the Analysis page's default options (GET /api/prof)
		this.prof = d.prof && typeof d.prof === 'object' ? d.prof : null;
	}

	/* What the UI shows about the export (title bar, truncation banner). */
	info() {
		return { error: this.error, truncated: this.truncated || 0, producer: this.session ? this.session.producer : null };
	}

	/* The answer to GET `path` with the parameters of its URL `q` (name -> text; api.js
	 * passes what a served request's URL would carry, query.js queryParams). */
	query(path, q) {
		if (this.error) throw fail(500, this.error);
		switch (path) {
			case 'api/session': return this.session;
			case 'api/steps': return { steps: this.session.step_list || [] };
			case 'api/live/status': return { live: false, generation: 0 };
			case 'api/viewport':
			case 'api/search':
			case 'api/stats':
				return this.engine.query(path, q);
			case 'api/slice': {
				const r = this.engine.query(path, q);
				// the rows the exporter left out, so that the details can say so
				if (this.graphTruncated && r) r.graph_truncated = this.graphTruncated;
				return r;
			}
			case 'api/advise':
				if (!this.advice) throw fail(404, 'the advisor is not in this export (export it again)');
				if (q && Object.keys(q).some((k) => q[k] !== undefined && q[k] !== null && q[k] !== '')) throw fail(404, 'a static export holds the default advice only (all steps, every checker)');
				return this.advice;
			case 'api/prof': {
				const v = (q && q.view) || 'scope';
				if (!this.prof || !this.prof[v]) throw fail(404, 'tftracer prof\'s views are not in this export (export it again)');
				if (q && Object.keys(q).some((k) => k !== 'view' && q[k] !== undefined && q[k] !== null && q[k] !== '')) throw fail(404, 'a static export holds the default views only');
				return this.prof[v];
			}
			default: throw fail(404, 'not available in a static export');
		}
	}
}
