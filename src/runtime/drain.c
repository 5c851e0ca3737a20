/* SPDX-License-Identifier: MIT */
/*
 * The drain thread (rt.h, tft_rt_drain_main): each cycle consumes every
 * thread's ring (drain_records.c), orders the cross-thread events
 * (drain_gev.c), appends them to the session writer, and commits at least
 * every flush interval; at the end it closes the session. Its private state:
 * drain_int.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/drain_int.h"

static uint64_t dropped_now(const struct tft_rt_session *s)
{
	return s->prod_dropped + (atomic_load_explicit(&tft_rt_lost, memory_order_relaxed) -
				  s->lost_base) + s->lost + s->src_dropped;
}

static void publish_stats(struct tft_rt_session *s)
{
	struct tft_rt_snapshot snap = {
		.events = s->committed,
		.dropped = dropped_now(s),
		.bytes = s->bytes,
		.flushes = s->flushes,
		.threads = s->threads,
		.last_flush_ns = s->last_flush_ns,
		.last_flush_unix_ns = s->last_flush_unix_ns,
	};
	tft_rt_publish_stats(&snap);
}

/* The writer failed: stop recording, count everything not yet durable as lost. */
void tft_rt_drain_fail(struct tft_rt_session *s, int rc, const char *what, const char *msg)
{
	char reason[200];

	if (s->failed)
		return;
	s->failed = rc ? rc : TFT_EIO;
	s->lost = s->consumed - s->committed;
	s->held = 0;
	s->ngev = 0;
	if (s->w) {
		tft_writer_abort(s->w);
		s->w = NULL;
	}
	snprintf(reason, sizeof(reason), "%s: %s", what, msg && *msg ? msg : tft_strerror(rc));
	tft_rt_disable(s->failed, reason);
}

enum { CYCLE_PLAIN = 0, CYCLE_FORCE = 1, CYCLE_FINAL = 2 };

static void drain_cycle(struct tft_rt_session *s, int mode)
{
	int64_t now_ns, hold_ns = (int64_t)s->st.hold_ms * 1000000;
	int64_t upto, held_from = INT64_MAX; /* the earliest step end a thread is held at */
	uint64_t live_dropped = 0, live_vdropped = 0;
	struct tft_rt_thread *t, *prev = NULL, *next;

	tft_rt_clock_refine(&s->clock);
	tft_rt_drain_apply_job(s);
	/*
	 * Sources first: a command a source sees was enqueued (its flow begun
	 * on its thread's ring) before, so the rings read below hold every flow
	 * begin that an end collected here refers to.
	 */
	tft_rt_drain_collect_sources(s, mode == CYCLE_FINAL);
	now_ns = tft_rt_clock_ns(&s->clock, tft_rt_clock_now(&s->clock));
	/* Acquire: pairs with the release CAS that pushed each thread (emit.c). */
	for (t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire); t; t = next) {
		/* Acquire: pairs with the exit destructor's release store (emit.c);
		 * loaded before head so that an exited thread's last records are seen. */
		int exited = atomic_load_explicit(&t->exited, memory_order_acquire);
		struct tft_rt_dthread *ds = t->ds;

		next = atomic_load_explicit(&t->next, memory_order_acquire);
		if (!ds)
			ds = t->ds = tft_rt_drain_dthread_create(0); /* a thread born in this session */
		if (ds && ds->held && (s->no_hold || tft_rt_drain_hold_over(s, ds, now_ns)))
			ds->held = 0;
		if (!ds || !ds->held)
			tft_rt_drain_consume_thread(s, t, ds);
		if (ds && ds->held) {
			/* waiting for an import: even an exited thread keeps its ring until then */
			if (ds->hold_ts < held_from)
				held_from = ds->hold_ts;
		} else if (exited) {
			tft_rt_drain_retire(s, t, prev);
			continue;
		}
		if (ds) {
			live_dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed) -
					ds->base_dropped;
			live_vdropped += atomic_load_explicit(&t->values_dropped, memory_order_relaxed) -
					 ds->base_vdropped;
			/* Hold limit: slices waiting too long for their zones get them split. */
			if (ds->npend && !s->failed && now_ns - ds->first_pend_ns > hold_ns)
				tft_rt_drain_split_flush(s, t, ds, ds->last_ns);
		}
		prev = t;
	}
	s->prod_dropped = s->retired_dropped + live_dropped; /* retired: this cycle's too */
	s->live_vdropped = live_vdropped;
	/* A held thread's later records are not read yet: cross-thread events after
	 * its hold wait for them, so that they stay in time order. */
	upto = mode != CYCLE_PLAIN ? INT64_MAX : now_ns - WATERMARK_NS;
	tft_rt_drain_emit_gev(s, held_from < upto ? held_from : upto);
}

static uint64_t file_bytes(const char *path)
{
	char wal[4200];
	struct stat st;
	uint64_t n = 0;

	if (stat(path, &st) == 0)
		n += (uint64_t)st.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (stat(wal, &st) == 0)
		n += (uint64_t)st.st_size;
	return n;
}

static void update_counts(struct tft_rt_session *s)
{
	uint64_t d = dropped_now(s);

	if (d > s->rep_dropped && !tft_writer_add_count(s->w, TFT_COUNT_DROPPED, (int64_t)(d - s->rep_dropped)))
		s->rep_dropped = d;
	if (s->unclosed > s->rep_unclosed &&
	    !tft_writer_add_count(s->w, TFT_COUNT_UNCLOSED_SLICES, (int64_t)(s->unclosed - s->rep_unclosed)))
		s->rep_unclosed = s->unclosed;
	if (s->unmatched > s->rep_unmatched &&
	    !tft_writer_add_count(s->w, TFT_COUNT_UNMATCHED_FLOWS,
				  (int64_t)(s->unmatched - s->rep_unmatched)))
		s->rep_unmatched = s->unmatched;
	if (s->clamped > s->rep_clamped &&
	    !tft_writer_add_count(s->w, TFT_COUNT_CLAMPED, (int64_t)(s->clamped - s->rep_clamped)))
		s->rep_clamped = s->clamped;
	if (s->hold_timeouts > s->rep_hold_timeouts &&
	    !tft_writer_add_count(s->w, TFT_COUNT_IMPORT_HOLD_TIMEOUTS,
				  (int64_t)(s->hold_timeouts - s->rep_hold_timeouts)))
		s->rep_hold_timeouts = s->hold_timeouts;
	d = s->vdropped + s->live_vdropped;
	if (d > s->rep_vdropped &&
	    !tft_writer_add_count(s->w, TFT_COUNT_VALUES_DROPPED, (int64_t)(d - s->rep_vdropped)))
		s->rep_vdropped = d;
}

void tft_rt_drain_commit(struct tft_rt_session *s)
{
	struct tft_error err;
	int rc;

	if (!s->failed && s->w) {
		update_counts(s);
		tft_rt_meta_apply(s->w); /* tft_set_meta values (lost only if out of memory) */
		tft_error_clear(&err);
		rc = tft_writer_commit(s->w, &err);
		if (rc) {
			tft_rt_drain_fail(s, rc, "committing the session", err.msg);
		} else {
			s->committed = s->consumed - s->held - s->lost;
			s->flushes++;
			s->last_flush_ns = tft_rt_mono_ns();
			s->last_flush_unix_ns = tft_rt_real_ns();
			s->bytes = file_bytes(s->st.path);
		}
	}
	publish_stats(s);
}

/* The last cycle: everything out of the rings, zones closed, session finished. */
static int finish(struct tft_rt_session *s)
{
	struct tft_error err;
	int64_t end_ns;
	int rc = 0;

	s->no_hold = 1; /* the session ends: no import comes after this */
	drain_cycle(s, CYCLE_FINAL);
	end_ns = tft_rt_clock_ns(&s->clock, tft_rt_clock_now(&s->clock));
	for (struct tft_rt_thread *t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire);
	     t; t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		if (t->ds && !s->failed)
			tft_rt_drain_close_all(s, t, t->ds, end_ns > t->ds->last_ns ? end_ns : t->ds->last_ns);
	}
	tft_rt_drain_emit_gev(s, INT64_MAX);
	for (uint32_t i = 0; i < s->cap_flows && !s->failed; i++)
		if (s->flows[i].used)
			tft_rt_drain_flow_unmatched(s, &s->flows[i]);
	s->nflows = 0;
	tft_rt_drain_commit(s);
	if (s->w) {
		tft_error_clear(&err);
		rc = tft_writer_close(s->w, &err);
		s->w = NULL;
		if (rc) {
			tft_rt_drain_fail(s, rc, "closing the session", err.msg);
		} else {
			s->committed = s->consumed - s->lost;
			s->bytes = file_bytes(s->st.path);
		}
	}
	rc = s->failed;
	/* The per-thread state belongs to this session; live rings stay for the next one. */
	for (struct tft_rt_thread *t = atomic_load_explicit(&tft_rt_threads, memory_order_acquire);
	     t; t = atomic_load_explicit(&t->next, memory_order_acquire)) {
		tft_rt_drain_dthread_destroy(t->ds);
		t->ds = NULL;
	}
	publish_stats(s);
	return rc;
}

void *tft_rt_drain_main(void *arg)
{
	struct tft_rt_session *s = arg;
	int64_t flush_ns = (int64_t)s->st.flush_ms * 1000000;
	int64_t now = tft_rt_mono_ns(), next_commit = now + flush_ns;
	uint64_t seq = 0;
	int rc;

	tft_rt_emit_mark_internal();
	for (;;) {
		int64_t until = now + POLL_NS < next_commit ? now + POLL_NS : next_commit;
		int f = tft_rt_drain_wait(until, &seq);
		int wake;

		if (f & TFT_RT_WAIT_STOP)
			break;
		now = tft_rt_mono_ns();
		wake = atomic_exchange_explicit(&tft_rt_wake, 0, memory_order_relaxed);
		tft_rt_work_begin();
		if (wake || (f & TFT_RT_WAIT_FLUSH) || now >= next_commit)
			drain_cycle(s, (f & TFT_RT_WAIT_FLUSH) ? CYCLE_FORCE : CYCLE_PLAIN);
		if ((f & TFT_RT_WAIT_FLUSH) || now >= next_commit) {
			tft_rt_drain_commit(s);
			now = tft_rt_mono_ns();
			next_commit = now + flush_ns;
		}
		tft_rt_work_end();
		if (f & TFT_RT_WAIT_FLUSH)
			tft_rt_drain_done(seq, 0, s->failed);
	}
	tft_rt_work_begin();
	rc = finish(s);
	tft_rt_work_end();
	tft_rt_drain_done(seq, 1, rc);
	return NULL;
}
