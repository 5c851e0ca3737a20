/* SPDX-License-Identifier: MIT */
/*
 * Matching a job's communication calls across ranks (job/comm.h):
 * requests to the Wait/Test that completed them, sends to receives by their
 * envelope (comm, source, destination, tag, seq), collectives by (comm,
 * coll_seq); then who waited for whom.
 */
#include <stdlib.h>
#include <string.h>

#include "codec/json_write.h"
#include "job/comm.h"

/* ---- requests ------------------------------------------------------------------------ */

struct req_key {
	uint32_t rank;
	int64_t request;
	uint32_t call;
};

static int cmp_req(const void *a, const void *b)
{
	const struct req_key *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->request != y->request)
		return x->request < y->request ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

/* Each posted request to the Wait/Test that completed it; a receive's source and tag from it. */
static int link_requests(struct tft_comm_set *cs)
{
	struct req_key *k;
	uint32_t n = 0;

	for (uint32_t i = 0; i < cs->ncalls; i++) {
		struct tft_comm_call *c = &cs->calls[i];
		if ((c->kind == TFT_COMM_ISEND || c->kind == TFT_COMM_IRECV) && c->request >= 0)
			n++;
	}
	k = malloc(((size_t)n + 1) * sizeof(*k));
	if (!k)
		return TFT_ENOMEM;
	n = 0;
	for (uint32_t i = 0; i < cs->ncalls; i++) {
		struct tft_comm_call *c = &cs->calls[i];
		if ((c->kind == TFT_COMM_ISEND || c->kind == TFT_COMM_IRECV) && c->request >= 0)
			k[n++] = (struct req_key){ c->rank, c->request, i };
	}
	if (n)
		qsort(k, n, sizeof(*k), cmp_req);
	for (uint32_t i = 0; i < cs->ncalls; i++) {
		struct tft_comm_call *w = &cs->calls[i];
		if (w->kind != TFT_COMM_WAIT)
			continue;
		for (uint32_t j = 0; j < w->ndone; j++) {
			const struct tft_comm_done *d = &cs->done[w->done + j];
			struct req_key key = { w->rank, d->request, 0 };
			uint32_t lo = 0, hi = n, best = UINT32_MAX;
			/* the latest post of this id before the wait that is still open */
			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;
				if (cmp_req(&k[mid], &key) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < n && k[lo].rank == w->rank && k[lo].request == d->request; lo++) {
				struct tft_comm_call *p = &cs->calls[k[lo].call];
				if (p->ts <= w->end && p->completed_by == UINT32_MAX)
					best = k[lo].call;
			}
			if (best == UINT32_MAX) {
				cs->orphan_waits++;
				continue;
			}
			struct tft_comm_call *p = &cs->calls[best];
			p->completed_by = i;
			if (p->kind == TFT_COMM_IRECV) {
				if (d->peer >= 0)
					p->peer = d->peer;
				if (d->tag >= 0)
					p->tag = d->tag;
				if (d->bytes >= 0)
					p->bytes = d->bytes;
				if (p->seq < 0 && d->seq >= 0)
					p->seq = d->seq;
			}
		}
	}
	free(k);
	return 0;
}

/* ---- messages -------------------------------------------------------------------------- */

struct env {
	int64_t comm;
	int32_t src, dst, tag;
	int64_t seq;
	int64_t ts;
	uint32_t call;
};

static int cmp_env_noseq(const struct env *x, const struct env *y)
{
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return 0;
}

/* (comm, src, dst, tag), then call order */
static int cmp_env_order(const void *a, const void *b)
{
	const struct env *x = a, *y = b;
	int c = cmp_env_noseq(x, y);

	if (c)
		return c;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

/* (comm, src, dst, tag, seq) */
static int cmp_env_seq(const void *a, const void *b)
{
	const struct env *x = a, *y = b;
	int c = cmp_env_noseq(x, y);

	if (c)
		return c;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

/* Fill the calls' missing seq: the k-th of its envelope in call order. */
static void infer_seq(struct env *e, uint32_t n)
{
	if (n)
		qsort(e, n, sizeof(*e), cmp_env_order);
	for (uint32_t i = 0, k = 0; i < n; i++) {
		k = i && cmp_env_noseq(&e[i - 1], &e[i]) == 0 ? k + 1 : 0;
		if (e[i].seq < 0)
			e[i].seq = k;
	}
	if (n)
		qsort(e, n, sizeof(*e), cmp_env_seq);
}

static int match_messages(struct tft_comm_set *cs)
{
	struct env *s = NULL, *r = NULL;
	uint32_t ns = 0, nr = 0, nm = 0;
	int rc = TFT_ENOMEM;

	s = malloc(((size_t)cs->sends + 1) * sizeof(*s));
	r = malloc(((size_t)cs->recvs + 1) * sizeof(*r));
	free(cs->msgs);
	cs->msgs = malloc(((size_t)(cs->sends < cs->recvs ? cs->sends : cs->recvs) + 1) * sizeof(*cs->msgs));
	if (!s || !r || !cs->msgs)
		goto out;
	for (uint32_t i = 0; i < cs->ncalls; i++) {
		const struct tft_comm_call *c = &cs->calls[i];
		int32_t me = cs->ranks[c->rank];
		if ((c->kind == TFT_COMM_SEND || c->kind == TFT_COMM_ISEND) && c->peer >= 0 && ns < cs->sends)
			s[ns++] = (struct env){ c->comm, me, c->peer, c->tag, c->seq, c->ts, i };
		else if ((c->kind == TFT_COMM_RECV || c->kind == TFT_COMM_IRECV) && nr < cs->recvs)
			r[nr++] = (struct env){ c->comm, c->peer, me, c->tag, c->seq, c->ts, i };
	}
	infer_seq(s, ns);
	infer_seq(r, nr);
	cs->unmatched_sends = cs->unmatched_recvs = 0;
	for (uint32_t i = 0, j = 0; i < ns || j < nr;) {
		int c = i == ns ? 1 : j == nr ? -1 : cmp_env_noseq(&s[i], &r[j]);
		if (c == 0 && s[i].seq != r[j].seq)
			c = s[i].seq < r[j].seq ? -1 : 1;
		if (c == 0 && r[j].src >= 0 && r[j].tag >= 0) {
			const struct tft_comm_call *rv = &cs->calls[r[j].call];
			struct tft_comm_msg *m = &cs->msgs[nm++];
			m->send = s[i].call;
			m->recv = r[j].call;
			m->recv_done = rv->kind == TFT_COMM_IRECV && rv->completed_by != UINT32_MAX
					       ? rv->completed_by
					       : r[j].call;
			m->bytes = cs->calls[s[i].call].bytes;
			i++;
			j++;
		} else if (c <= 0 && i < ns) {
			cs->unmatched_sends++;
			i++;
			if (c == 0) { /* (a receive of unknown source or tag) */
				cs->unmatched_recvs++;
				j++;
			}
		} else {
			cs->unmatched_recvs++;
			j++;
		}
	}
	cs->nmsgs = nm;
	rc = 0;
out:
	free(s);
	free(r);
	return rc;
}

/* ---- collectives --------------------------------------------------------------------- */

struct ckey {
	int64_t comm;
	int64_t seq;
	uint32_t name;  /* inferred keys only: the name (string id) */
	bool inferred;
	uint32_t rank;
	int64_t ts;
	uint32_t call;
};

static int cmp_ckey_group(const struct ckey *x, const struct ckey *y)
{
	if (x->inferred != y->inferred)
		return x->inferred ? 1 : -1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->inferred && x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

static int cmp_ckey(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;
	int c = cmp_ckey_group(x, y);

	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

/* rank, comm, name, then call order: for numbering the calls without coll_seq */
static int cmp_ckey_order(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;

	if (x->inferred != y->inferred)
		return x->inferred ? 1 : -1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

static int cmp_coll_arrival(const void *a, const void *b, void *ctx)
{
	const struct tft_comm_coll *x = a, *y = b;
	const struct tft_comm_set *cs = ctx;
	int64_t p = cs->calls[x->first_call].ts, q = cs->calls[y->first_call].ts;

	if (p != q)
		return p < q ? -1 : 1;
	return (x->first_call > y->first_call) - (x->first_call < y->first_call);
}

static int match_collectives(struct tft_comm_set *cs)
{
	struct ckey *k;
	uint32_t n = 0, ng = 0;

	for (uint32_t i = 0; i < cs->ncalls; i++)
		n += cs->calls[i].kind == TFT_COMM_COLL;
	k = malloc(((size_t)n + 1) * sizeof(*k));
	free(cs->member);
	free(cs->colls);
	cs->member = malloc(((size_t)n + 1) * sizeof(*cs->member));
	cs->colls = malloc(((size_t)n + 1) * sizeof(*cs->colls));
	if (!k || !cs->member || !cs->colls) {
		free(k);
		return TFT_ENOMEM;
	}
	n = 0;
	for (uint32_t i = 0; i < cs->ncalls; i++) {
		const struct tft_comm_call *c = &cs->calls[i];
		if (c->kind == TFT_COMM_COLL)
			k[n++] = (struct ckey){ c->comm, c->seq, c->name, c->seq < 0, c->rank, c->ts, i };
	}
	/* without coll_seq: the k-th call of (comm, name) on each rank */
	if (n)
		qsort(k, n, sizeof(*k), cmp_ckey_order);
	for (uint32_t i = 0, q = 0; i < n; i++) {
		if (!k[i].inferred)
			continue;
		q = i && k[i - 1].inferred && k[i - 1].rank == k[i].rank && k[i - 1].comm == k[i].comm &&
				    k[i - 1].name == k[i].name
			    ? q + 1
			    : 0;
		k[i].seq = q;
	}
	if (n)
		qsort(k, n, sizeof(*k), cmp_ckey);
	cs->incomplete_colls = cs->inferred_colls = 0;
	cs->nmember = n;
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i;
		struct tft_comm_coll *g = &cs->colls[ng++];
		int32_t size = 0;
		while (j < n && cmp_ckey_group(&k[i], &k[j]) == 0) {
			const struct tft_comm_call *c = &cs->calls[k[j].call];
			cs->member[j] = k[j].call;
			if (c->comm_size > size)
				size = c->comm_size;
			j++;
		}
		g->comm = k[i].comm;
		g->seq = k[i].seq;
		g->first = i;
		g->n = j - i;
		g->name = cs->calls[k[i].call].name;
		g->expected = size > 0 ? (uint32_t)size : cs->nranks;
		if (g->n < g->expected)
			cs->incomplete_colls++;
		if (k[i].inferred)
			cs->inferred_colls++;
		g->first_call = g->last_call = k[i].call;
		i = j;
	}
	cs->ncolls = ng;
	free(k);
	tft_comm_compute_waits(cs); /* (first and last arrivals) */
	qsort_r(cs->colls, ng, sizeof(*cs->colls), cmp_coll_arrival, cs);
	return 0;
}

/* ---- waits ------------------------------------------------------------------------ */

static int64_t clip_wait(int64_t from, int64_t until, int64_t end)
{
	int64_t t = until < end ? until : end;

	return t > from ? t - from : 0;
}

static void set_wait(struct tft_comm_call *c, int64_t w, uint32_t by)
{
	if (w > c->wait_ns) {
		c->wait_ns = w;
		c->waited_for = by;
	}
}

/* A member's rank in its communicator (its world rank when the call does not say). */
static int32_t comm_rank(const struct tft_comm_set *cs, const struct tft_comm_call *c)
{
	return c->rank_in_comm >= 0 ? c->rank_in_comm : cs->ranks[c->rank];
}

void tft_comm_compute_waits(struct tft_comm_set *cs)
{
	for (uint32_t i = 0; i < cs->ncalls; i++) {
		cs->calls[i].wait_ns = 0;
		cs->calls[i].waited_for = UINT32_MAX;
	}
	for (uint32_t m = 0; m < cs->nmsgs; m++) {
		const struct tft_comm_msg *g = &cs->msgs[m];
		struct tft_comm_call *s = &cs->calls[g->send], *r = &cs->calls[g->recv],
				     *d = &cs->calls[g->recv_done];
		/* late sender: the receive waited from its start until the send began */
		set_wait(d, clip_wait(d->ts, s->ts, d->end), g->send);
		/* late receiver: a blocking send waited until the receive was posted */
		if (s->kind == TFT_COMM_SEND)
			set_wait(s, clip_wait(s->ts, r->ts, s->end), g->recv);
	}
	for (uint32_t gi = 0; gi < cs->ncolls; gi++) {
		struct tft_comm_coll *g = &cs->colls[gi];
		const uint32_t *mem = cs->member + g->first;
		uint32_t first = mem[0], last = mem[0], root = UINT32_MAX;
		int shape = cs->calls[mem[0]].shape;

		for (uint32_t j = 0; j < g->n; j++) {
			const struct tft_comm_call *c = &cs->calls[mem[j]];
			if (c->ts < cs->calls[first].ts)
				first = mem[j];
			if (c->ts > cs->calls[last].ts)
				last = mem[j];
			if (c->root >= 0 && comm_rank(cs, c) == c->root)
				root = mem[j];
		}
		g->first_call = first;
		g->last_call = last;
		for (uint32_t j = 0; j < g->n; j++) {
			struct tft_comm_call *c = &cs->calls[mem[j]];
			if (shape == TFT_COLL_ROOT_OUT) {
				if (root != UINT32_MAX && mem[j] != root)
					set_wait(c, clip_wait(c->ts, cs->calls[root].ts, c->end), root);
			} else if (shape == TFT_COLL_ROOT_IN) {
				if (mem[j] == root) {
					uint32_t late = UINT32_MAX;
					for (uint32_t q = 0; q < g->n; q++)
						if (mem[q] != root && (late == UINT32_MAX ||
								       cs->calls[mem[q]].ts > cs->calls[late].ts))
							late = mem[q];
					if (late != UINT32_MAX)
						set_wait(c, clip_wait(c->ts, cs->calls[late].ts, c->end), late);
				}
			} else if (shape == TFT_COLL_PREFIX) {
				uint32_t late = UINT32_MAX;
				for (uint32_t q = 0; q < g->n; q++)
					if (comm_rank(cs, &cs->calls[mem[q]]) < comm_rank(cs, c) &&
					    (late == UINT32_MAX || cs->calls[mem[q]].ts > cs->calls[late].ts))
						late = mem[q];
				if (late != UINT32_MAX)
					set_wait(c, clip_wait(c->ts, cs->calls[late].ts, c->end), late);
			} else if (mem[j] != last) {
				set_wait(c, clip_wait(c->ts, cs->calls[last].ts, c->end), last);
			}
		}
	}
}

int tft_comm_match(struct tft_comm_set *cs)
{
	int rc;

	cs->orphan_waits = 0;
	for (uint32_t i = 0; i < cs->ncalls; i++)
		cs->calls[i].completed_by = UINT32_MAX;
	if ((rc = link_requests(cs)) || (rc = match_messages(cs)) || (rc = match_collectives(cs)))
		return rc;
	tft_comm_compute_waits(cs);
	return 0;
}

/* ---- meta job_comm -------------------------------------------------------------------- */

char *tft_comm_json(const struct tft_comm_set *cs)
{
	struct tft_json_writer w;

	tft_json_write_init_mem(&w);
	tft_json_write_begin_object(&w);
	tft_json_write_key(&w, "calls");
	tft_json_write_uint(&w, cs->ncalls);
	tft_json_write_key(&w, "sends");
	tft_json_write_uint(&w, cs->sends);
	tft_json_write_key(&w, "receives");
	tft_json_write_uint(&w, cs->recvs);
	tft_json_write_key(&w, "messages");
	tft_json_write_uint(&w, cs->nmsgs);
	tft_json_write_key(&w, "unmatched_sends");
	tft_json_write_uint(&w, cs->unmatched_sends);
	tft_json_write_key(&w, "unmatched_receives");
	tft_json_write_uint(&w, cs->unmatched_recvs);
	tft_json_write_key(&w, "collectives");
	tft_json_write_uint(&w, cs->ncolls);
	tft_json_write_key(&w, "incomplete_collectives");
	tft_json_write_uint(&w, cs->incomplete_colls);
	tft_json_write_key(&w, "inferred_collectives");
	tft_json_write_uint(&w, cs->inferred_colls);
	tft_json_write_key(&w, "orphan_completions");
	tft_json_write_uint(&w, cs->orphan_waits);
	tft_json_write_end_object(&w);
	return tft_json_write_take(&w, NULL);
}

