// SPDX-License-Identifier: MIT
// Boot of a static HTML export (a classic script, inlined last by the exporter; see
// docs/http-api.md "Static HTML export"): the UI's modules are inlined as
// <script type="text/plain" data-tft-module="NAME.js"> texts; each becomes a blob:
// module with its './NAME.js' imports pointing at the blobs of its dependencies,
// then app.js is imported. Nothing is fetched: the page works from file://.
(function () {
	'use strict';
	var texts = new Map();
	var urls = new Map();
	var busy = new Set();
	var nodes = document.querySelectorAll('script[data-tft-module]');
	for (var k = 0; k < nodes.length; k++) texts.set(nodes[k].getAttribute('data-tft-module'), nodes[k].textContent);

	function moduleUrl(name) {
		if (urls.has(name)) return urls.get(name);
		if (!texts.has(name)) throw new Error('module ' + name + ' is not in the page');
		if (busy.has(name)) throw new Error('import cycle through ' + name);
		busy.add(name);
		var src = texts.get(name).replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])\.\/([A-Za-z0-9_.-]+\.js)\2/g,
			function (m, pre, q, dep) { return pre + q + moduleUrl(dep) + q; });
		busy.delete(name);
		var u = URL.createObjectURL(new Blob([src + '\n//# sourceURL=tftracer/' + name], { type: 'text/javascript' }));
		urls.set(name, u);
		return u;
	}

	function fatal(msg) {
		var p = document.getElementById('page-overview');
		if (!p) { document.body.textContent = msg; return; }
		p.hidden = false;
		p.textContent = '';
		var d = document.createElement('div');
		d.className = 'fatal';
		var h = document.createElement('h2');
		h.textContent = 'This page could not start';
		var t = document.createElement('p');
		t.textContent = msg;
		d.append(h, t);
		p.append(d);
	}

	window.__TFT_STATIC_BOOT__ = true;
	function start() {
		var u;
		try { u = moduleUrl('app.js'); } catch (e) { fatal(String(e && e.message || e)); return; }
		import(u).catch(function (e) { fatal('The viewer failed to load: ' + (e && e.message || e)); });
	}
	if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
	else start();
})();
