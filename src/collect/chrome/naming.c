/* SPDX-License-Identifier: MIT */
/*
 * Metadata events (ph M): process and thread names, labels and sort indexes,
 * applied to the proc / thread entries and, when already registered, to the
 * writer's process or track (a name may come after the events).
 */
#include "collect/chrome/chrome_int.h"

static void note_tf_name(struct chrome *c, const struct tft_json_str *n)
{
	if (c->tf_timeline)
		return;
	/* "/job:.../device:GPU:0 Compute", "/gpu:0/stream:12 Tensors", "Allocators" */
	if (STR_EQ(n, "Allocators") ||
	    (n->len > 0 && n->ptr[0] == '/' &&
	     (ends_with(n->ptr, n->len, " Compute") || ends_with(n->ptr, n->len, " Tensors"))))
		c->tf_timeline = true;
}

/* M: process_name / _labels / _sort_index, thread_name / _sort_index. */
int tft_chrome_do_meta(struct chrome *c, const struct cev *e)
{
	const struct parg *a;
	uint32_t idx, sid;
	int rc;

	if (STR_EQ(&e->name, "process_name") || STR_EQ(&e->name, "process_labels") ||
	    STR_EQ(&e->name, "process_sort_index")) {
		if ((rc = tft_chrome_get_proc(c, &e->pid, &idx)))
			return rc;
		struct proc *p = &c->procs[idx];
		struct tft_process *wp;
		if (e->name.ptr[8] == 'n') {
			if (!(a = tft_chrome_find_parg(c, "name")) || a->type != TFT_ARG_STR)
				return 0;
			note_tf_name(c, &a->s);
			if ((rc = intern(c, a->s.ptr, a->s.len, &sid)))
				return rc;
			p->name = sid;
			if (p->id != TFT_NONE && (wp = tft_writer_process(c->w, p->id)))
				wp->name = sid;
		} else if (e->name.ptr[8] == 'l') {
			if (!(a = tft_chrome_find_parg(c, "labels")) || a->type != TFT_ARG_STR)
				return 0;
			if ((rc = intern(c, a->s.ptr, a->s.len, &sid)))
				return rc;
			p->labels = sid;
			if (p->id != TFT_NONE && (wp = tft_writer_process(c->w, p->id)))
				wp->labels = sid;
		} else {
			if (!(a = tft_chrome_find_parg(c, "sort_index")) || a->type != TFT_ARG_INT)
				return 0;
			p->sort_index = (int32_t)a->i;
			if (p->id != TFT_NONE && (wp = tft_writer_process(c->w, p->id)))
				wp->sort_index = p->sort_index;
		}
		return 0;
	}
	if (STR_EQ(&e->name, "thread_name") || STR_EQ(&e->name, "thread_sort_index")) {
		if ((rc = get_thread(c, &e->pid, &e->tid, &idx)))
			return rc;
		struct thread *t = &c->threads[idx];
		struct tft_track *wt;
		if (e->name.ptr[7] == 'n') {
			if (!(a = tft_chrome_find_parg(c, "name")) || a->type != TFT_ARG_STR)
				return 0;
			if ((rc = intern(c, a->s.ptr, a->s.len, &sid)))
				return rc;
			t = &c->threads[idx];
			t->name = sid;
			if (t->track != TFT_NONE && (wt = tft_writer_track(c->w, t->track))) {
				wt->name = sid;
				wt->kind = tft_chrome_thread_kind(c, t);
			}
		} else {
			if (!(a = tft_chrome_find_parg(c, "sort_index")) || a->type != TFT_ARG_INT)
				return 0;
			t->sort_index = (int32_t)a->i;
			if (t->track != TFT_NONE && (wt = tft_writer_track(c->w, t->track)))
				wt->sort_index = t->sort_index;
		}
	}
	return 0;
}
