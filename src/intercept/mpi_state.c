/* SPDX-License-Identifier: MIT */
/*
 * The MPI interceptor's bookkeeping (intercept/mpi_icpt.h): the real
 * functions and Open MPI's predefined objects, looked up at run time;
 * communicator records with ids every member agrees on; envelope sequence
 * numbers per (communicator, peer, tag) and direction, receives whose
 * number waits for their match; the requests in flight; datatype and
 * reduction names.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/preload.h"

#if defined(TFT_HAVE_MPI)

#include "core/status.h"
#include "intercept/mpi_icpt.h"
#include "intercept/ptrmap.h"

#define SEQ_CAP_MAX (1u << 22)   /* (peer, tag) pairs per communicator and direction, at most */
#define REQ_BUCKETS (1u << 14)
#define REQ_CHUNK 1024u
#define REQ_MAX (1u << 22)       /* requests followed at once, at most */
#define GROUP_KEYS 4096u         /* made-by-group creations told apart */

struct tft_mpi_real tft_mpi_real_fns;
struct tft_mpi_state tft_mpi = { .comm_key = MPI_KEYVAL_INVALID, .win_key = MPI_KEYVAL_INVALID };

/* ---- the real functions and objects ----------------------------------------------------- */

static void *lib_handle(void)
{
	void *h = __atomic_load_n(&tft_mpi.lib, __ATOMIC_ACQUIRE);
	void *init;
	Dl_info di;

	if (h)
		return h;
	/* the library the program's MPI_Init would reach (linked, or loaded globally) */
	init = tft_preload_real_dlsym(RTLD_NEXT, "PMPI_Init");
	if (init && dladdr(init, &di) && di.dli_fname)
		h = tft_preload_real_dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	/* one a Python extension loaded RTLD_LOCAL (mpi4py): Open MPI's soname */
	if (!h)
		h = tft_preload_real_dlopen("libmpi.so.40", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		h = tft_preload_real_dlopen("libmpi.so", RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		__atomic_store_n(&tft_mpi.lib, h, __ATOMIC_RELEASE);
	return h;
}

void *tft_mpi_resolve(const char *name)
{
	void *p = tft_preload_real_dlsym(RTLD_NEXT, name), *h;

	if (!p && (h = lib_handle()) != NULL)
		p = tft_preload_real_dlsym(h, name);
	return p;
}

/*
 * A predefined object (ompi_mpi_comm_world ...): the one the program and the
 * library use. A program linked with libmpi holds a copy of each object it
 * names (a copy relocation) that the library then uses too: the global scope
 * finds it first; a library loaded RTLD_LOCAL (mpi4py) uses its own.
 */
static void *object(const char *name)
{
	void *p = tft_preload_real_dlsym(RTLD_DEFAULT, name), *h;

	if (!p && (h = lib_handle()) != NULL)
		p = tft_preload_real_dlsym(h, name);
	return p;
}

/* ---- names ----------------------------------------------------------------------------- */

static const char *const op_names[] = {
	"MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND", "MPI_LOR",
	"MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP",
};
static const char *const op_symbols[] = {
	"ompi_mpi_op_max", "ompi_mpi_op_min", "ompi_mpi_op_sum", "ompi_mpi_op_prod",
	"ompi_mpi_op_land", "ompi_mpi_op_band", "ompi_mpi_op_lor", "ompi_mpi_op_bor",
	"ompi_mpi_op_lxor", "ompi_mpi_op_bxor", "ompi_mpi_op_maxloc", "ompi_mpi_op_minloc",
	"ompi_mpi_op_replace", "ompi_mpi_op_no_op",
};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))
static void *ops[NOPS];

static struct tft_ptrmap type_names; /* predefined MPI_Datatype -> interned name */
static struct tft_strset names;

const char *tft_mpi_op_name(MPI_Op op)
{
	for (size_t i = 0; i < NOPS; i++)
		if (ops[i] && (void *)op == ops[i])
			return op_names[i];
	return "user";
}

const char *tft_mpi_type_name(MPI_Datatype t)
{
	const char *n = tft_ptrmap_get(&type_names, (uintptr_t)t);
	char buf[MPI_MAX_OBJECT_NAME + 1];
	int ni, na, nd, combiner, len = 0;

	if (n)
		return n;
	if (!t || t == tft_mpi.type_null)
		return "MPI_DATATYPE_NULL";
	/* a predefined type is named and never freed: its name is kept; a derived one is "derived" */
	if (!MREAL(PMPI_Type_get_envelope) ||
	    tft_mpi_real_fns.PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
	    combiner != MPI_COMBINER_NAMED || !MREAL(PMPI_Type_get_name) ||
	    tft_mpi_real_fns.PMPI_Type_get_name(t, buf, &len) != MPI_SUCCESS || len <= 0)
		return "derived";
	buf[len < MPI_MAX_OBJECT_NAME ? len : MPI_MAX_OBJECT_NAME] = 0;
	n = tft_strset_intern(&names, buf, strlen(buf));
	if (!n)
		return "derived";
	tft_ptrmap_put(&type_names, (uintptr_t)t, (void *)n);
	return n;
}

int64_t tft_mpi_bytes(int count, MPI_Datatype t)
{
	int size = 0;

	if (count <= 0 || !t || t == tft_mpi.type_null || !MREAL(PMPI_Type_size) ||
	    tft_mpi_real_fns.PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 0)
		return 0;
	return (int64_t)count * size;
}

/* ---- ids ------------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t mix2(uint64_t a, uint64_t b)
{
	return mix(a ^ mix(b));
}

uint64_t tft_mpi_mix(uint64_t a, uint64_t b)
{
	return mix2(a, b);
}

/* An id for JSON readers (below 2^53), never 0 (the world's). */
static int64_t id_of(uint64_t h)
{
	int64_t id = (int64_t)(h & 0x1fffffffffffffull);

	return id ? id : 1;
}

/* ---- communicators ------------------------------------------------------------------------ */

static int world_of_group(MPI_Group g, int r)
{
	int w = r;

	if (r < 0 || !MREAL(PMPI_Group_translate_ranks) ||
	    tft_mpi_real_fns.PMPI_Group_translate_ranks(g, 1, &r, tft_mpi.world_group, &w) !=
		    MPI_SUCCESS)
		return r;
	return w;
}

int tft_mpi_world_rank(const struct tft_mpi_comm *c, int r)
{
	if (!c || !c->world || r < 0 || r >= c->npeers)
		return r;
	return c->world[r];
}

/* The group peers are named in (the remote one of an intercommunicator): owned by the caller. */
static int peer_group(MPI_Comm comm, int inter, MPI_Group *g)
{
	struct tft_mpi_real *R = &tft_mpi_real_fns;

	if (inter)
		return MREAL(PMPI_Comm_remote_group) ? R->PMPI_Comm_remote_group(comm, g) : MPI_ERR_OTHER;
	return MREAL(PMPI_Comm_group) ? R->PMPI_Comm_group(comm, g) : MPI_ERR_OTHER;
}

static void comm_free(struct tft_mpi_comm *c)
{
	if (!c)
		return;
	free(c->world);
	free(c->send.keys);
	free(c->send.next);
	free(c->recv.keys);
	free(c->recv.next);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static int comm_delete(MPI_Comm comm, int key, void *val, void *extra)
{
	(void)comm;
	(void)key;
	(void)extra;
	comm_free(val);
	return MPI_SUCCESS;
}

/* A duplicate of a communicator is a new communicator: our record is not copied. */
static int comm_nocopy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
	(void)comm;
	(void)key;
	(void)extra;
	(void)in;
	(void)out;
	*flag = 0;
	return MPI_SUCCESS;
}

/* A record for comm (size, rank, the world ranks of its peers), attached to it. */
static struct tft_mpi_comm *comm_new(MPI_Comm comm, int64_t id, int attach)
{
	struct tft_mpi_real *R = &tft_mpi_real_fns;
	struct tft_mpi_comm *c = calloc(1, sizeof(*c));
	MPI_Group g;
	int flag = 0;

	if (!c)
		return NULL;
	c->id = id;
	pthread_mutex_init(&c->lock, NULL);
	if (MREAL(PMPI_Comm_test_inter) && R->PMPI_Comm_test_inter(comm, &flag) == MPI_SUCCESS)
		c->inter = flag;
	if (!MREAL(PMPI_Comm_size) || R->PMPI_Comm_size(comm, &c->size) != MPI_SUCCESS)
		c->size = 0;
	if (!MREAL(PMPI_Comm_rank) || R->PMPI_Comm_rank(comm, &c->rank) != MPI_SUCCESS)
		c->rank = -1;
	c->npeers = c->size;
	if (comm != tft_mpi.world && peer_group(comm, c->inter, &g) == MPI_SUCCESS) {
		int n = 0;
		if (MREAL(PMPI_Group_size) && R->PMPI_Group_size(g, &n) == MPI_SUCCESS && n > 0 &&
		    (c->world = malloc((size_t)n * 2 * sizeof(int))) != NULL) {
			int *in = c->world + n;
			for (int i = 0; i < n; i++)
				in[i] = i;
			if (MREAL(PMPI_Group_translate_ranks) &&
			    R->PMPI_Group_translate_ranks(g, n, in, tft_mpi.world_group, c->world) ==
				    MPI_SUCCESS) {
				int *shrunk = realloc(c->world, (size_t)n * sizeof(int));
				c->npeers = n;
				if (shrunk)
					c->world = shrunk;
			} else {
				free(c->world);
				c->world = NULL;
			}
		}
		if (MREAL(PMPI_Group_free))
			R->PMPI_Group_free(&g);
	}
	if (attach && tft_mpi.comm_key != MPI_KEYVAL_INVALID && MREAL(PMPI_Comm_set_attr) &&
	    R->PMPI_Comm_set_attr(comm, tft_mpi.comm_key, c) != MPI_SUCCESS) {
		comm_free(c);
		return NULL;
	}
	return c;
}

/* A hash of the world ranks of comm's members (both groups of an intercommunicator,
 * either order): what every member of a communicator we did not see made can agree on. */
static uint64_t membership(MPI_Comm comm)
{
	struct tft_mpi_real *R = &tft_mpi_real_fns;
	uint64_t h[2] = { 0, 0 };
	int inter = 0;

	if (MREAL(PMPI_Comm_test_inter))
		R->PMPI_Comm_test_inter(comm, &inter);
	for (int side = 0; side < 1 + (inter != 0); side++) {
		MPI_Group g;
		int n = 0;
		if (peer_group(comm, side == 1, &g) != MPI_SUCCESS)
			continue;
		if (MREAL(PMPI_Group_size))
			R->PMPI_Group_size(g, &n);
		h[side] = mix((uint64_t)n);
		for (int i = 0; i < n; i++)
			h[side] = mix2(h[side], (uint64_t)world_of_group(g, i));
		if (MREAL(PMPI_Group_free))
			R->PMPI_Group_free(&g);
	}
	return h[0] < h[1] ? mix2(h[0], h[1]) : mix2(h[1], h[0]);
}

struct tft_mpi_comm *tft_mpi_comm_of(MPI_Comm comm)
{
	void *v = NULL;
	int flag = 0;

	if (comm == tft_mpi.world)
		return tft_mpi.world_info;
	if (comm == tft_mpi.self)
		return tft_mpi.self_info;
	if (!comm || comm == tft_mpi.comm_null || tft_mpi.comm_key == MPI_KEYVAL_INVALID)
		return NULL;
	if (MREAL(PMPI_Comm_get_attr) &&
	    tft_mpi_real_fns.PMPI_Comm_get_attr(comm, tft_mpi.comm_key, &v, &flag) == MPI_SUCCESS &&
	    flag && v)
		return v;
	return comm_new(comm, id_of(mix2(0x4d454d42u /* "MEMB" */, membership(comm))), 1);
}

/* The world ranks of newcomm's first members (local, remote): what sets apart the
 * communicators one creation makes (a split's colours). */
static uint64_t leaders(MPI_Comm newcomm)
{
	struct tft_mpi_real *R = &tft_mpi_real_fns;
	uint64_t a = 0, b = 0;
	int inter = 0;
	MPI_Group g;

	if (MREAL(PMPI_Comm_test_inter))
		R->PMPI_Comm_test_inter(newcomm, &inter);
	if (peer_group(newcomm, 0, &g) == MPI_SUCCESS) {
		a = (uint64_t)world_of_group(g, 0) + 1;
		if (MREAL(PMPI_Group_free))
			R->PMPI_Group_free(&g);
	}
	if (inter && peer_group(newcomm, 1, &g) == MPI_SUCCESS) {
		b = (uint64_t)world_of_group(g, 0) + 1;
		if (MREAL(PMPI_Group_free))
			R->PMPI_Group_free(&g);
	}
	return a < b ? a << 32 | b : b << 32 | a;
}

void tft_mpi_comm_made(struct tft_mpi_comm *parent, MPI_Comm newcomm, uint64_t salt)
{
	uint64_t k;

	if (!parent)
		return;
	k = atomic_fetch_add_explicit(&parent->children, 1, memory_order_relaxed);
	if (!newcomm || newcomm == tft_mpi.comm_null)
		return;
	comm_new(newcomm, id_of(mix2(mix2((uint64_t)parent->id, k), mix2(salt, leaders(newcomm)))), 1);
}

/*
 * Per process: how many communicators were made with each (key, members) so far.
 * (Not core/hmap: a fixed static table, in the traced program's MPI calls, that
 * never allocates; its values are 64-bit counts bumped in place.)
 */
static pthread_mutex_t group_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t key;
	uint64_t n;
} group_seen[GROUP_KEYS];

void tft_mpi_comm_made_by_group(MPI_Comm newcomm, uint64_t key)
{
	uint64_t h, k = 0;
	uint32_t j;

	if (!newcomm || newcomm == tft_mpi.comm_null)
		return;
	h = mix2(key, membership(newcomm));
	pthread_mutex_lock(&group_lock);
	for (j = (uint32_t)h & (GROUP_KEYS - 1); group_seen[j].key && group_seen[j].key != h;
	     j = (j + 1) & (GROUP_KEYS - 1))
		;
	if (group_seen[j].key == h || !group_seen[j].key) {
		group_seen[j].key = h;
		k = group_seen[j].n++;
	}
	pthread_mutex_unlock(&group_lock);
	comm_new(newcomm, id_of(mix2(h, k)), 1);
}

/* ---- envelope numbers ------------------------------------------------------------------- */

static uint64_t seq_key(int peer, int tag)
{
	return (uint64_t)(uint32_t)(peer + 3) << 32 | (uint32_t)tag;
}

/*
 * The next number of key in t (under the communicator's lock); -1 when full.
 * (Not core/hmap: 64-bit counters bumped in place, and a table bounded by
 * SEQ_CAP_MAX that refuses new keys and counts the drop, in the traced
 * program's MPI calls; core/hmap holds 32-bit values and grows without bound.)
 */
static int64_t seq_next(struct tft_mpi_seqtab *t, uint64_t key)
{
	uint32_t j;

	if (t->n * 2 >= t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 64;
		uint64_t *nk, *nn;
		if (ncap > SEQ_CAP_MAX)
			goto find; /* full: numbers for the keys it has, none for new ones */
		nk = calloc(ncap, sizeof(*nk));
		nn = calloc(ncap, sizeof(*nn));
		if (!nk || !nn) {
			free(nk);
			free(nn);
			goto find;
		}
		for (uint32_t i = 0; i < t->cap; i++) {
			if (!t->keys[i])
				continue;
			for (j = (uint32_t)mix(t->keys[i]) & (ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
				;
			nk[j] = t->keys[i];
			nn[j] = t->next[i];
		}
		free(t->keys);
		free(t->next);
		t->keys = nk;
		t->next = nn;
		t->cap = ncap;
	}
find:
	if (!t->cap)
		return -1;
	for (j = (uint32_t)mix(key) & (t->cap - 1); t->keys[j]; j = (j + 1) & (t->cap - 1))
		if (t->keys[j] == key)
			return (int64_t)t->next[j]++;
	if ((t->n + 1) * 4 > t->cap * 3) {
		atomic_fetch_add_explicit(&tft_mpi.seq_dropped, 1, memory_order_relaxed);
		return -1;
	}
	t->keys[j] = key;
	t->n++;
	return (int64_t)t->next[j]++;
}

int64_t tft_mpi_send_seq(struct tft_mpi_comm *c, int peer, int tag)
{
	int64_t s;

	if (!c || peer < 0)
		return -1;
	pthread_mutex_lock(&c->lock);
	s = seq_next(&c->send, seq_key(peer, tag));
	pthread_mutex_unlock(&c->lock);
	return s;
}

/* ---- requests ---------------------------------------------------------------------------- */

/*
 * Requests by handle: buckets chaining preallocated records, oldest first.
 * (Not core/hmap: a chained table of the records themselves, the same handle
 * may be held by several of them at once, and it allocates only in chunks,
 * under a cap, in the traced program's MPI calls.)
 */
static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tft_mpi_req *req_table[REQ_BUCKETS];
static struct tft_mpi_req *req_free;
static uint64_t req_count;

static uint32_t req_bucket(MPI_Request h)
{
	return (uint32_t)mix((uintptr_t)h) & (REQ_BUCKETS - 1);
}

struct tft_mpi_req *tft_mpi_req_new(void)
{
	struct tft_mpi_req *r;

	pthread_mutex_lock(&req_lock);
	if (!req_free && req_count < REQ_MAX) {
		struct tft_mpi_req *chunk = calloc(REQ_CHUNK, sizeof(*chunk));
		if (chunk) {
			for (uint32_t i = 0; i < REQ_CHUNK; i++) {
				chunk[i].hnext = req_free;
				req_free = &chunk[i];
			}
			req_count += REQ_CHUNK;
		}
	}
	r = req_free;
	if (r)
		req_free = r->hnext;
	pthread_mutex_unlock(&req_lock);
	if (!r) {
		atomic_fetch_add_explicit(&tft_mpi.req_dropped, 1, memory_order_relaxed);
		return NULL;
	}
	memset(r, 0, sizeof(*r));
	r->id = atomic_fetch_add_explicit(&tft_mpi.next_req_id, 1, memory_order_relaxed);
	r->seq = -1;
	r->peer = r->rpeer = MPI_PROC_NULL;
	return r;
}

void tft_mpi_req_free(struct tft_mpi_req *r)
{
	if (!r)
		return;
	if (r->pending)
		tft_mpi_recv_forget(r);
	pthread_mutex_lock(&req_lock);
	r->hnext = req_free;
	req_free = r;
	pthread_mutex_unlock(&req_lock);
}

/*
 * Handles are not unique: Open MPI gives every send that completed inside
 * MPI_Isend the same static, completed request. A handle's records stay in
 * the order they were added (a bucket's chain is kept oldest first) and each
 * completion takes the oldest one not yet taken by the same call.
 */
void tft_mpi_req_add(struct tft_mpi_req *r)
{
	struct tft_mpi_req **p;
	uint32_t b;

	if (!r)
		return;
	b = req_bucket(r->h);
	r->hnext = NULL;
	pthread_mutex_lock(&req_lock);
	for (p = &req_table[b]; *p; p = &(*p)->hnext)
		;
	*p = r;
	pthread_mutex_unlock(&req_lock);
}

struct tft_mpi_req *tft_mpi_req_find(MPI_Request h)
{
	struct tft_mpi_req *r;

	if (!h || h == tft_mpi.req_null)
		return NULL;
	pthread_mutex_lock(&req_lock);
	for (r = req_table[req_bucket(h)]; r && r->h != h; r = r->hnext)
		;
	pthread_mutex_unlock(&req_lock);
	return r;
}

void tft_mpi_req_find_many(const MPI_Request *h, int n, struct tft_mpi_req **out)
{
	static uint64_t stamps; /* under req_lock */
	uint64_t stamp;

	pthread_mutex_lock(&req_lock);
	stamp = ++stamps;
	for (int i = 0; i < n; i++) {
		struct tft_mpi_req *r = NULL;
		if (h[i] && h[i] != tft_mpi.req_null)
			for (r = req_table[req_bucket(h[i])]; r && (r->h != h[i] || r->claim == stamp);
			     r = r->hnext)
				;
		if (r)
			r->claim = stamp; /* a handle twice in the array: the next record for it */
		out[i] = r;
	}
	pthread_mutex_unlock(&req_lock);
}

void tft_mpi_req_done(struct tft_mpi_req *r)
{
	uint32_t b;
	int found = 0;

	if (!r)
		return;
	if (r->pending)
		tft_mpi_recv_forget(r);
	b = req_bucket(r->h);
	pthread_mutex_lock(&req_lock);
	for (struct tft_mpi_req **p = &req_table[b]; *p; p = &(*p)->hnext) {
		if (*p == r) {
			*p = r->hnext;
			found = 1;
			break;
		}
	}
	if (found) { /* (never freed twice) */
		r->hnext = req_free;
		req_free = r;
	}
	pthread_mutex_unlock(&req_lock);
}

/* ---- receives and their numbers ------------------------------------------------------------ */

static void list_remove(struct tft_mpi_comm *c, struct tft_mpi_req *r)
{
	if (!r->pending)
		return;
	if (r->prev)
		r->prev->next = r->next;
	else
		c->pend_head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		c->pend_tail = r->prev;
	r->prev = r->next = NULL;
	r->pending = 0;
}

void tft_mpi_recv_posted(struct tft_mpi_comm *c, struct tft_mpi_req *r, int peer, int tag)
{
	int conflict = 0;

	r->ci = c;
	r->kind = TFT_MREQ_RECV;
	r->peer = peer;
	r->tag = tag;
	r->seq = -1;
	r->matched = 0;
	r->post = atomic_fetch_add_explicit(&tft_mpi.next_post, 1, memory_order_relaxed);
	if (!c || peer == MPI_PROC_NULL)
		return;
	pthread_mutex_lock(&c->lock);
	if (peer != MPI_ANY_SOURCE && tag != MPI_ANY_TAG) {
		for (struct tft_mpi_req *e = c->pend_head; e && !conflict; e = e->next)
			conflict = (e->peer == MPI_ANY_SOURCE || e->peer == peer) &&
				   (e->tag == MPI_ANY_TAG || e->tag == tag);
		if (!conflict) {
			r->seq = seq_next(&c->recv, seq_key(peer, tag));
			pthread_mutex_unlock(&c->lock);
			return;
		}
	}
	r->pending = 1;
	r->prev = c->pend_tail;
	r->next = NULL;
	if (c->pend_tail)
		c->pend_tail->next = r;
	else
		c->pend_head = r;
	c->pend_tail = r;
	pthread_mutex_unlock(&c->lock);
}

static int64_t status_bytes(const MPI_Status *st)
{
	int n = 0;

	if (!MREAL(PMPI_Get_count) || !tft_mpi.byte ||
	    tft_mpi_real_fns.PMPI_Get_count(st, tft_mpi.byte, &n) != MPI_SUCCESS || n < 0)
		return -1;
	return n;
}

/* A waiting receive matched (status): its number (under the communicator's lock). */
static void settle(struct tft_mpi_comm *c, struct tft_mpi_req *r, const MPI_Status *st)
{
	r->matched = 1;
	r->rpeer = st->MPI_SOURCE;
	r->rtag = st->MPI_TAG;
	r->rbytes = status_bytes(st);
	if (r->pending) {
		if (r->rpeer >= 0)
			r->seq = seq_next(&c->recv, seq_key(r->rpeer, r->rtag));
		list_remove(c, r);
	}
}

void tft_mpi_recv_matched(struct tft_mpi_req *r, const MPI_Status *st,
			  struct tft_mpi_req *const *done, int n)
{
	struct tft_mpi_comm *c = r->ci;

	if (!c) {
		r->matched = 1;
		r->rpeer = st->MPI_SOURCE;
		r->rtag = st->MPI_TAG;
		r->rbytes = status_bytes(st);
		return;
	}
	pthread_mutex_lock(&c->lock);
	if (r->pending) {
		/* earlier receives still waiting that MPI has matched meanwhile come first */
		for (struct tft_mpi_req *e = c->pend_head, *nx; e && e != r; e = nx) {
			MPI_Status s2;
			MPI_Request h = __atomic_load_n(&e->h, __ATOMIC_ACQUIRE);
			int flag = 0, skip = !h || h == tft_mpi.req_null; /* a blocking receive */
			nx = e->next;
			for (int i = 0; i < n && !skip; i++)
				skip = done[i] == e;
			if (skip || !MREAL(PMPI_Request_get_status))
				continue;
			memset(&s2, 0, sizeof(s2));
			if (tft_mpi_real_fns.PMPI_Request_get_status(h, &flag, &s2) == MPI_SUCCESS && flag)
				settle(c, e, &s2);
		}
	}
	settle(c, r, st);
	pthread_mutex_unlock(&c->lock);
}

void tft_mpi_recv_forget(struct tft_mpi_req *r)
{
	struct tft_mpi_comm *c = r->ci;

	if (!c || !r->pending)
		return;
	pthread_mutex_lock(&c->lock);
	list_remove(c, r);
	pthread_mutex_unlock(&c->lock);
}

/* ---- set-up -------------------------------------------------------------------------------- */

int tft_mpi_state_init(void)
{
	struct tft_mpi_real *R = &tft_mpi_real_fns;
	void *world = object("ompi_mpi_comm_world");

	/* Open MPI's ABI only: its communicators are its objects' addresses */
	if (!world || !object("ompi_mpi_byte") || !object("ompi_request_null"))
		return -1;
	tft_mpi.world = (MPI_Comm)world;
	tft_mpi.self = (MPI_Comm)object("ompi_mpi_comm_self");
	tft_mpi.comm_null = (MPI_Comm)object("ompi_mpi_comm_null");
	tft_mpi.req_null = (MPI_Request)object("ompi_request_null");
	tft_mpi.msg_null = (MPI_Message)object("ompi_message_null");
	tft_mpi.msg_no_proc = (MPI_Message)object("ompi_message_no_proc");
	tft_mpi.byte = (MPI_Datatype)object("ompi_mpi_byte");
	tft_mpi.type_null = (MPI_Datatype)object("ompi_mpi_datatype_null");
	tft_mpi.win_null = (MPI_Win)object("ompi_mpi_win_null");
	tft_mpi.group_null = (MPI_Group)object("ompi_mpi_group_null");
	for (size_t i = 0; i < NOPS; i++)
		ops[i] = object(op_symbols[i]);
	if (tft_ptrmap_init(&type_names, 12) || tft_strset_init(&names, 10))
		return -1;
	if (!MREAL(PMPI_Comm_rank) || R->PMPI_Comm_rank(tft_mpi.world, &tft_mpi.rank) != MPI_SUCCESS ||
	    !MREAL(PMPI_Comm_size) || R->PMPI_Comm_size(tft_mpi.world, &tft_mpi.size) != MPI_SUCCESS ||
	    !MREAL(PMPI_Comm_group) || R->PMPI_Comm_group(tft_mpi.world, &tft_mpi.world_group) != MPI_SUCCESS)
		return -1;
	if (MREAL(PMPI_Comm_create_keyval) &&
	    R->PMPI_Comm_create_keyval(comm_nocopy, comm_delete, &tft_mpi.comm_key, NULL) != MPI_SUCCESS)
		tft_mpi.comm_key = MPI_KEYVAL_INVALID;
	tft_mpi.world_info = comm_new(tft_mpi.world, 0, 0);
	tft_mpi.self_info = tft_mpi.self ? comm_new(tft_mpi.self, id_of(mix2(0x53454c46u /* "SELF" */,
										     (uint64_t)tft_mpi.rank)),
						    0)
					 : NULL;
	return tft_mpi.world_info ? 0 : -1;
}

void tft_mpi_state_fini(void)
{
	atomic_store_explicit(&tft_mpi.on, 0, memory_order_release);
}

#endif /* TFT_HAVE_MPI */
