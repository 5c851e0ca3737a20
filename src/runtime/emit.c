/* SPDX-License-Identifier: MIT */
/*
 * The recording hot path: each thread appends fixed-size records to its own
 * SPSC ring, reached through one initial-exec TLS pointer, and publishes
 * them with one release store. Registration on a thread's first event is a
 * cold slow path (one mmap, no malloc); thread exit marks the ring for the
 * drain to reclaim. Nothing here locks, waits, prints or changes errno.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/rt.h"
#include "runtime/source.h"

#define TLS_IE __attribute__((tls_model("initial-exec")))
#define COLD __attribute__((cold, noinline))

/*
 * Where a signal handler may land in a fast path, just before the call marks
 * its thread busy (and in a registration, just before it marks the thread).
 * Nothing in the library; tests/unit/test_emit_preempt.c compiles this file
 * with hooks there that record as a handler would.
 */
#ifndef TFT_RT_PREEMPT
#define TFT_RT_PREEMPT(t) ((void)0)
#endif
#ifndef TFT_RT_PREEMPT_REGISTER /* the same, in a thread's registration */
#define TFT_RT_PREEMPT_REGISTER() ((void)0)
#endif

/*
 * Compiler-only barrier: a signal handler running on this thread sees
 * `busy` set before any slot write and cleared after the publish. Each use
 * pairs with the `busy` check at the top of the handler's own call.
 */
#define SIGNAL_FENCE() atomic_signal_fence(memory_order_seq_cst)

enum { TLS_NONE = 0, TLS_REGISTERING = 1, TLS_DEAD = 2, TLS_REFUSED = 3 };

static __thread struct tft_rt_thread *self TLS_IE; /* this thread's ring, NULL until registered */
static __thread int tls_state TLS_IE;               /* TLS_*: why self is NULL */
static __thread uint32_t refused_gen TLS_IE;        /* TLS_REFUSED: in this generation */
static __thread int refused_cap TLS_IE;             /* ... because the thread cap was reached */
static _Atomic uint32_t next_serial = 1;

static void lose(uint64_t n)
{
	atomic_fetch_add_explicit(&tft_rt_lost, n, memory_order_relaxed);
}

static void drop(struct tft_rt_thread *t, uint64_t n)
{
	/* An atomic add: a signal handler may drop on this thread mid-update. */
	atomic_fetch_add_explicit(&t->dropped, n, memory_order_relaxed);
}

/* ---- registration (cold) ---------------------------------------------------------- */

static COLD struct tft_rt_thread *thread_register(uint64_t n)
{
	struct tft_rt_thread *t, *head;
	size_t page = 4096, hdr, ring_bytes, total;
	uint32_t cur;
	int saved_errno;
	void *m;

	/*
	 * A refused thread tries again in a later session, or once a slot is
	 * free when the cap refused it (a failed mmap waits for a session).
	 */
	if (tls_state == TLS_REFUSED &&
	    (refused_gen != atomic_load_explicit(&tft_rt_generation, memory_order_relaxed) ||
	     (refused_cap && atomic_load_explicit(&tft_rt_nthreads, memory_order_relaxed) <
				     atomic_load_explicit(&tft_rt_max_threads, memory_order_relaxed))))
		tls_state = TLS_NONE;
	/*
	 * Acquire: pairs with the release CAS in runtime.c (state_update) that
	 * set TFT_RT_STEPS after the ring size and the key were set.
	 */
	if (tls_state != TLS_NONE ||
	    !(__atomic_load_n(&tft_rt_state, __ATOMIC_ACQUIRE) & TFT_RT_STEPS)) {
		lose(n);
		return NULL;
	}
	saved_errno = errno;
	TFT_RT_PREEMPT_REGISTER();
	tls_state = TLS_REGISTERING; /* a handler or an allocator hook landing here records nothing */
	SIGNAL_FENCE();
	if (self) { /* a handler registered this thread between the check above and here */
		tls_state = TLS_NONE;
		errno = saved_errno;
		return self;
	}
	cur = atomic_load_explicit(&tft_rt_nthreads, memory_order_relaxed);
	do {
		if (cur >= atomic_load_explicit(&tft_rt_max_threads, memory_order_relaxed)) {
			refused_gen = atomic_load_explicit(&tft_rt_generation, memory_order_relaxed);
			refused_cap = 1;
			tls_state = TLS_REFUSED;
			goto fail;
		}
	} while (!atomic_compare_exchange_weak_explicit(&tft_rt_nthreads, &cur, cur + 1,
							memory_order_relaxed,
							memory_order_relaxed));
	ring_bytes = atomic_load_explicit(&tft_rt_ring_bytes, memory_order_relaxed);
	hdr = (sizeof(*t) + page - 1) & ~(page - 1);
	total = hdr + ring_bytes;
	m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (m == MAP_FAILED) {
		atomic_fetch_sub_explicit(&tft_rt_nthreads, 1, memory_order_relaxed);
		refused_gen = atomic_load_explicit(&tft_rt_generation, memory_order_relaxed);
		refused_cap = 0;
		tls_state = TLS_REFUSED;
		goto fail;
	}
	/* Prefault every page (MAP_POPULATE may be ignored): the steady state never faults. */
	for (size_t off = 0; off < total; off += page)
		((volatile char *)m)[off] = 0;
	t = m; /* anonymous memory is zeroed: counters, head and tail start at 0 */
	t->ring = (struct tft_rt_rec *)((char *)m + hdr);
	t->mask = ring_bytes / TFT_RT_REC_BYTES - 1;
	t->half = (t->mask + 1) / 2;
	t->serial = atomic_fetch_add_explicit(&next_serial, 1, memory_order_relaxed);
	t->tid = (int64_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, t->comm, 0, 0, 0);
	t->comm[sizeof(t->comm) - 1] = 0;
	t->map_bytes = total;
	pthread_setspecific(tft_rt_key, t);
	/*
	 * Push on the thread list. Release: the initialised struct is visible
	 * before the list head that points to it; pairs with the drain's
	 * acquire load of tft_rt_threads (drain.c, drain_cycle).
	 */
	head = atomic_load_explicit(&tft_rt_threads, memory_order_relaxed);
	do
		atomic_store_explicit(&t->next, head, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&tft_rt_threads, &head, t,
						      memory_order_release, memory_order_relaxed));
	self = t;
	tls_state = TLS_NONE;
	errno = saved_errno;
	return t;
fail:
	lose(n);
	errno = saved_errno;
	return NULL;
}

void tft_rt_thread_exit(void *p)
{
	struct tft_rt_thread *t = p;

	if (self == t)
		self = NULL;
	tls_state = TLS_DEAD; /* events after this (other TLS destructors) count as lost */
	/*
	 * Release: every record this thread published is visible to whoever
	 * sees `exited`; pairs with the drain's acquire load (drain_cycle).
	 */
	atomic_store_explicit(&t->exited, 1, memory_order_release);
}

void tft_rt_emit_forget_self(void)
{
	self = NULL;
	tls_state = TLS_NONE;
	pthread_setspecific(tft_rt_key, NULL);
}

void tft_rt_emit_mark_internal(void)
{
	self = NULL;
	tls_state = TLS_DEAD;
}

void tft_rt_thread_free(struct tft_rt_thread *t)
{
	if (t)
		munmap(t, t->map_bytes);
}

/* ---- ring ------------------------------------------------------------------------- */

/*
 * Structure of every recording call: a fast path that needs no call (so no
 * register spills) and hands anything unusual (no ring yet, re-entered, ring
 * looks full, no TSC) to a general noinline slow version by a tail call.
 */

static __attribute__((noinline)) int refresh_tail(struct tft_rt_thread *t, uint64_t h,
						 uint64_t need)
{
	/*
	 * Acquire: the drain's reads of every slot below `tail` happen before
	 * we overwrite them; pairs with the release store of tail in drain_records.c
	 * (consume_thread).
	 */
	t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
	return h - t->tail_cache + need <= t->mask + 1;
}

/*
 * Room for `need` slots at h by the cached tail? Every zone open on this
 * thread holds one slot for its end, so `need` counts them: ends never find
 * a full ring. Written so that a ring overrun (h more than a ring ahead of
 * the tail) reads as full, never as room.
 */
static inline int fits(const struct tft_rt_thread *t, uint64_t h, uint64_t need)
{
	return h - t->tail_cache + need <= t->mask + 1;
}

static inline int reserve(struct tft_rt_thread *t, uint64_t h, uint64_t need)
{
	return fits(t, h, need) || refresh_tail(t, h, need);
}

/*
 * Past half full: raise the drain's wake flag. Runs after `busy` is cleared
 * (a handler interrupting it only makes tail_cache older, never wrong).
 */
static COLD __attribute__((noinline)) void wake_drain(struct tft_rt_thread *t, uint64_t h)
{
	/* Acquire: pairs with the drain's release store of tail (consume_thread). */
	uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);

	t->tail_cache = tail;
	/* A hint the drain polls; it orders nothing, so relaxed. Read first to
	 * keep the line shared while the flag is already up. */
	if (h - tail >= t->half && !atomic_load_explicit(&tft_rt_wake, memory_order_relaxed))
		atomic_store_explicit(&tft_rt_wake, 1, memory_order_relaxed);
}

/* Publish slots up to h. Returns nonzero when the drain should be woken. */
static inline int publish(struct tft_rt_thread *t, uint64_t h)
{
	t->head_local = h;
	/*
	 * Release: the slot writes above are visible before the new head; pairs
	 * with the acquire load of head in drain_records.c (consume_thread).
	 */
	atomic_store_explicit(&t->head, h, memory_order_release);
	return tft_unlikely(h - t->tail_cache >= t->half);
}

/* The clock_gettime fallback stays out of line. */
static __attribute__((noinline)) uint64_t mono_tick(void)
{
	return tft_rt_tick(0);
}

static inline __attribute__((always_inline)) int have_tsc(void)
{
#if defined(__x86_64__)
	return atomic_load_explicit(&tft_rt_use_tsc, memory_order_relaxed);
#else
	return 0;
#endif
}

static inline __attribute__((always_inline)) uint64_t fast_tick(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return mono_tick();
#endif
}

static uint64_t any_tick(void)
{
	return have_tsc() ? fast_tick() : mono_tick();
}

/*
 * The zone hook (runtime/source.h): counters read at zone boundaries. One
 * relaxed load when none is set.
 */
static inline __attribute__((always_inline)) void zone_hook(uint32_t phase, uint32_t depth)
{
	tft_rt_zone_hook_fn fn = atomic_load_explicit(&tft_rt_zone_hook, memory_order_relaxed);

	if (tft_unlikely(fn != NULL))
		fn(phase, depth);
}

/* ---- recording calls ---------------------------------------------------------------- */

static __attribute__((noinline)) struct tft_zone zone_begin_slow(const struct tft_site *site)
{
	struct tft_rt_thread *t = self;
	struct tft_zone z = { 0, 0 };
	struct tft_rt_rec *r;
	uint64_t h;
	int wake = 0;

	if (!t && !(t = thread_register(2)))
		return z;
	if (t->busy || t->open >= TFT_RT_MAX_DEPTH) {
		drop(t, 2); /* a lost zone is two lost events: its begin and its end */
		return z;
	}
	t->busy = 1;
	SIGNAL_FENCE();
	h = t->head_local;
	if (reserve(t, h, (uint64_t)t->open + 2)) {
		r = &t->ring[h & t->mask];
		r->tick = any_tick();
		r->kind = TFT_RK_ZONE_BEGIN;
		r->p0 = (uintptr_t)site;
		wake = publish(t, h + 1);
		t->sites[t->open] = site;
		z.depth = ++t->open;
		z.serial = t->serial;
	} else {
		drop(t, 2);
	}
	SIGNAL_FENCE();
	t->busy = 0;
	if (wake)
		wake_drain(t, h + 1);
	if (z.depth)
		zone_hook(0, z.depth);
	return z;
}

TFT_API struct tft_zone tft_rt_zone_begin(const struct tft_site *site)
{
	struct tft_rt_thread *t = self;
	struct tft_zone z;
	struct tft_rt_rec *r;
	uint64_t h;

	if (tft_unlikely(!t || t->busy || !have_tsc()))
		return zone_begin_slow(site);
	TFT_RT_PREEMPT(t);
	t->busy = 1;
	SIGNAL_FENCE();
	/*
	 * The room is checked only now: a handler that recorded between a
	 * check before `busy` and here would have taken the room checked.
	 */
	h = t->head_local;
	if (tft_unlikely(t->open >= TFT_RT_MAX_DEPTH || !fits(t, h, (uint64_t)t->open + 2))) {
		SIGNAL_FENCE();
		t->busy = 0;
		return zone_begin_slow(site);
	}
	r = &t->ring[h & t->mask];
	r->tick = fast_tick();
	r->kind = TFT_RK_ZONE_BEGIN;
	r->p0 = (uintptr_t)site;
	t->sites[t->open] = site;
	z.depth = ++t->open;
	z.serial = t->serial;
	h = publish(t, h + 1) ? h + 1 : 0;
	SIGNAL_FENCE();
	t->busy = 0;
	if (tft_unlikely(h))
		wake_drain(t, h);
	zone_hook(0, z.depth);
	return z;
}

/* General end: misnested, foreign, re-entered or without TSC. */
static __attribute__((noinline)) void zone_end_slow(struct tft_zone z)
{
	struct tft_rt_thread *t = self;
	uint64_t h = 0;
	int wake = 0;

	/* Not this thread's zone, already ended with an outer one, or a handler
	 * interrupting a recording call (the zone stays open until an outer end). */
	if (!t || z.serial != t->serial || z.depth > t->open || t->busy)
		return;
	t->busy = 1;
	SIGNAL_FENCE();
	/* Zones opened inside z and never ended end here too; their end slots were reserved. */
	while (t->open >= z.depth) {
		h = t->head_local;
		t->ring[h & t->mask].tick = any_tick();
		t->ring[h & t->mask].kind = TFT_RK_ZONE_END;
		wake |= publish(t, h + 1);
		t->open--;
	}
	SIGNAL_FENCE();
	t->busy = 0;
	if (wake)
		wake_drain(t, h + 1);
}

TFT_API void tft_rt_zone_end(struct tft_zone z)
{
	struct tft_rt_thread *t = self;
	struct tft_rt_rec *r;
	uint64_t h;

	if (tft_unlikely(atomic_load_explicit(&tft_rt_zone_hook, memory_order_relaxed) != NULL) && t &&
	    !t->busy && z.serial == t->serial && z.depth == t->open)
		zone_hook(1, z.depth);
	if (tft_unlikely(!t || t->busy || !have_tsc())) {
		zone_end_slow(z);
		return;
	}
	TFT_RT_PREEMPT(t);
	t->busy = 1;
	SIGNAL_FENCE();
	/*
	 * The nesting is checked only now: a handler may have ended z, or an
	 * outer zone (and z with it), since an earlier check; the end slot
	 * reserved for z would then be used already.
	 */
	if (tft_unlikely(z.serial != t->serial || z.depth != t->open)) {
		SIGNAL_FENCE();
		t->busy = 0;
		zone_end_slow(z);
		return;
	}
	h = t->head_local;
	r = &t->ring[h & t->mask]; /* reserved when the zone began: always free */
	r->tick = fast_tick();
	r->kind = TFT_RK_ZONE_END;
	t->open--;
	h = publish(t, h + 1) ? h + 1 : 0;
	SIGNAL_FENCE();
	t->busy = 0;
	if (tft_unlikely(h))
		wake_drain(t, h);
}

static __attribute__((noinline)) void emit1_slow(uint32_t kind, uint64_t p0, uint64_t p1)
{
	struct tft_rt_thread *t = self;
	struct tft_rt_rec *r;
	uint64_t h;
	int wake = 0;

	if (!t && !(t = thread_register(1)))
		return;
	if (t->busy) {
		drop(t, 1);
		return;
	}
	t->busy = 1;
	SIGNAL_FENCE();
	h = t->head_local;
	if (reserve(t, h, (uint64_t)t->open + 1)) {
		r = &t->ring[h & t->mask];
		r->tick = any_tick();
		r->kind = kind;
		r->p0 = p0;
		r->p1 = p1;
		wake = publish(t, h + 1);
	} else {
		drop(t, 1);
	}
	SIGNAL_FENCE();
	t->busy = 0;
	if (wake)
		wake_drain(t, h + 1);
}

static inline __attribute__((always_inline)) void emit1(uint32_t kind, uint64_t p0, uint64_t p1)
{
	struct tft_rt_thread *t = self;
	struct tft_rt_rec *r;
	uint64_t h;

	if (tft_unlikely(!t || t->busy || !have_tsc())) {
		emit1_slow(kind, p0, p1);
		return;
	}
	TFT_RT_PREEMPT(t);
	t->busy = 1;
	SIGNAL_FENCE();
	/* The room is checked only now (see tft_rt_zone_begin). */
	h = t->head_local;
	if (tft_unlikely(!fits(t, h, (uint64_t)t->open + 1))) {
		SIGNAL_FENCE();
		t->busy = 0;
		emit1_slow(kind, p0, p1);
		return;
	}
	r = &t->ring[h & t->mask];
	r->tick = fast_tick();
	r->kind = kind;
	r->p0 = p0;
	r->p1 = p1;
	h = publish(t, h + 1) ? h + 1 : 0;
	SIGNAL_FENCE();
	t->busy = 0;
	if (tft_unlikely(h))
		wake_drain(t, h);
}

TFT_API void tft_rt_instant(const struct tft_site *site)
{
	emit1(TFT_RK_INSTANT, (uintptr_t)site, 0);
}

TFT_API void tft_rt_counter(const struct tft_site *site, double value)
{
	uint64_t bits;

	memcpy(&bits, &value, sizeof(bits));
	emit1(TFT_RK_COUNTER, (uintptr_t)site, bits);
}

TFT_API void tft_rt_flow(const struct tft_site *site, uint64_t id, int end)
{
	emit1(end ? TFT_RK_FLOW_END : TFT_RK_FLOW_BEGIN, (uintptr_t)site, id);
}

TFT_API void tft_rt_mem_alloc(const void *ptr, size_t bytes)
{
	emit1(TFT_RK_MEM_ALLOC, (uintptr_t)ptr, bytes);
}

TFT_API void tft_rt_mem_free(const void *ptr)
{
	emit1(TFT_RK_MEM_FREE, (uintptr_t)ptr, 0);
}

/* Steps and names: a record plus its text in the following slots, published at once. */
int tft_rt_emit_text(uint32_t kind, uint64_t p0, uint64_t p1, const char *text)
{
	struct tft_rt_thread *t = self;
	size_t len = text ? strnlen(text, TFT_RT_TEXT_MAX) : 0;
	uint64_t h, nslots = 1 + TFT_RT_TEXT_SLOTS(len);
	struct tft_rt_rec *r;
	int rc = 0, wake = 0;
	uint64_t counted = kind == TFT_RK_STEP_BEGIN || kind == TFT_RK_STEP_END; /* names are metadata */

	if (!t && !(t = thread_register(counted)))
		return TFT_EAGAIN;
	if (t->busy) {
		drop(t, counted);
		return TFT_EAGAIN;
	}
	t->busy = 1;
	SIGNAL_FENCE();
	h = t->head_local;
	if (reserve(t, h, t->open + nslots)) {
		r = &t->ring[h & t->mask];
		r->tick = any_tick();
		r->kind = kind;
		r->aux = (uint32_t)len;
		r->p0 = p0;
		r->p1 = p1;
		for (uint64_t i = 1; i < nslots; i++) {
			size_t off = (size_t)(i - 1) * TFT_RT_REC_BYTES;
			size_t n = len - off < TFT_RT_REC_BYTES ? len - off : TFT_RT_REC_BYTES;
			memcpy(&t->ring[(h + i) & t->mask], text + off, n);
		}
		wake = publish(t, h + nslots);
	} else {
		drop(t, counted);
		rc = TFT_EAGAIN;
	}
	SIGNAL_FENCE();
	t->busy = 0;
	if (wake)
		wake_drain(t, h + nslots);
	return rc;
}

/* ---- for the layers above (runtime/source.h) ---------------------------------------- */

const struct tft_site *tft_rt_innermost_site(void)
{
	struct tft_rt_thread *t = self;
	uint32_t open;

	if (!t)
		return NULL;
	open = t->open; /* (a handler that interrupts us and returns leaves it as it was) */
	return open ? t->sites[open - 1] : NULL;
}

uint64_t tft_rt_now_tick(void)
{
	return any_tick();
}

void tft_rt_emit_values(uint32_t phase, uint32_t depth, const uint64_t *v, uint32_t n)
{
	struct tft_rt_thread *t = self;
	uint64_t h, nslots;

	if (!t || n == 0 || n > TFT_RT_MAX_VALUES || depth > TFT_RT_MAX_DEPTH)
		return;
	if (t->busy) { /* a handler interrupted a recording call: no room is ours */
		atomic_fetch_add_explicit(&t->values_dropped, 1, memory_order_relaxed);
		return;
	}
	nslots = (n + 1) / 2;
	t->busy = 1;
	SIGNAL_FENCE();
	h = t->head_local;
	/* room for the records and for the end of every open zone (they stay reserved) */
	if (reserve(t, h, (uint64_t)t->open + nslots)) {
		for (uint64_t i = 0; i < nslots; i++) {
			struct tft_rt_rec *r = &t->ring[(h + i) & t->mask];
			r->tick = 0;
			r->kind = TFT_RK_VALUES;
			r->aux = TFT_RT_VAL_AUX(i, n, phase & 1u, depth);
			r->p0 = v[2 * i];
			r->p1 = 2 * i + 1 < n ? v[2 * i + 1] : 0;
		}
		h = publish(t, h + nslots) ? h + nslots : 0;
	} else {
		atomic_fetch_add_explicit(&t->values_dropped, 1, memory_order_relaxed);
		h = 0;
	}
	SIGNAL_FENCE();
	t->busy = 0;
	if (h)
		wake_drain(t, h);
}

void tft_rt_zone_args(uint32_t depth, const struct tft_rt_arg *a, uint32_t n)
{
	struct tft_rt_thread *t = self;
	uint64_t h, nslots = 0;

	if (!t || n == 0 || n > TFT_RT_MAX_ARGS || depth == 0 || depth > t->open)
		return;
	for (uint32_t i = 0; i < n; i++) {
		nslots++;
		if (a[i].type == TFT_RT_ARG_TEXT || a[i].type == TFT_RT_ARG_JSON)
			nslots += TFT_RT_TEXT_SLOTS(a[i].len < TFT_RT_ARG_TEXT_MAX ? a[i].len
										  : TFT_RT_ARG_TEXT_MAX);
	}
	if (t->busy) { /* a handler interrupted a recording call: no room is ours */
		atomic_fetch_add_explicit(&t->values_dropped, 1, memory_order_relaxed);
		return;
	}
	t->busy = 1;
	SIGNAL_FENCE();
	h = t->head_local;
	/* room for the records and for the end of every open zone (they stay reserved) */
	if (reserve(t, h, (uint64_t)t->open + nslots)) {
		uint64_t k = h;
		for (uint32_t i = 0; i < n; i++) {
			struct tft_rt_rec *r = &t->ring[k & t->mask];
			uint32_t type = a[i].type, len = 0;
			int text = type == TFT_RT_ARG_TEXT || type == TFT_RT_ARG_JSON;

			if (text) {
				len = a[i].len;
				if (len > TFT_RT_ARG_TEXT_MAX) { /* cut: no longer valid JSON */
					len = TFT_RT_ARG_TEXT_MAX;
					type = TFT_RT_ARG_TEXT;
				}
			}
			r->tick = 0;
			r->kind = TFT_RK_ARG;
			r->aux = TFT_RT_ARG_AUX(depth, type, len, i + 1 == n);
			r->p0 = (uintptr_t)a[i].key;
			r->p1 = type == TFT_RT_ARG_STR ? (uint64_t)(uintptr_t)a[i].s : (uint64_t)a[i].i;
			k++;
			for (uint32_t off = 0; text && off < len; off += TFT_RT_REC_BYTES) {
				uint32_t m = len - off < TFT_RT_REC_BYTES ? len - off : TFT_RT_REC_BYTES;
				memcpy(&t->ring[k & t->mask], a[i].s + off, m);
				k++;
			}
		}
		h = publish(t, h + nslots) ? h + nslots : 0;
	} else {
		atomic_fetch_add_explicit(&t->values_dropped, 1, memory_order_relaxed);
		h = 0;
	}
	SIGNAL_FENCE();
	t->busy = 0;
	if (h)
		wake_drain(t, h);
}
