/* SPDX-License-Identifier: MIT */
/*
 * The event decoder, the importer's per-event fast path: each element of the
 * events array to a parsed event (struct cev) and its args, strings
 * borrowed from the JSON window (or copied into the batch when decoded),
 * batched for the committer.
 */
#include "collect/chrome/chrome_int.h"

static inline void val_xid(const struct tft_json_value *v, struct xid *x)
{
	x->kind = 0;
	if (v->type == TFT_JSON_NUMBER) {
		if (tft_json_value_to_i64(v, &x->i) == 0) {
			x->kind = 1;
		} else {
			x->kind = 2; /* fractional / huge: keyed by its text */
			x->s.ptr = v->ptr;
			x->s.len = v->len;
		}
	} else if (v->type == TFT_JSON_STRING) {
		x->kind = 2;
		x->s.ptr = v->ptr;
		x->s.len = v->len;
	}
}

static inline int val_time(struct parser *p, const struct tft_json_value *v, int64_t *out, bool *has)
{
	*has = false;
	if (v->type == TFT_JSON_NUMBER) {
		if (tft_json_value_to_ns(v, out))
			return tft_error_set(p->err, TFT_EFORMAT, v->offset,
					     "expected a time in microseconds within the int64 nanosecond range");
		*has = true;
	} else if (v->type == TFT_JSON_STRING) {
		if (tft_json_number_to_ns(v->ptr, v->len, out) != 0) /* never a silent 0 */
			return tft_error_set(p->err, TFT_EFORMAT, v->offset,
					     "expected a time in microseconds (a number, or a string holding one) within the int64 nanosecond range");
		*has = true;
	}
	return 0;
}

static bool val_bool(const struct tft_json_value *v)
{
	return v->type == TFT_JSON_TRUE ||
	       (v->type == TFT_JSON_NUMBER && !(v->len == 1 && v->ptr[0] == '0'));
}

/* "id2": {"local": ...} or {"global": ...}; the '{' is next. */
static int read_id2(struct parser *p, struct cev *e)
{
	struct tft_json_value v;
	struct tft_json_str k;
	bool is_obj;
	int rc = enter_object(p, &is_obj);

	if (rc || !is_obj)
		return rc;
	while ((rc = tft_json_next_member(&p->r, &k, &v, p->err)) == 1) {
		if (is_container(&v)) {
			if ((rc = tft_json_skip_checked(&p->r, NULL, p->err)))
				return rc;
		} else if (STR_EQ(&k, "local") || STR_EQ(&k, "global")) {
			e->id_local = k.ptr[0] == 'l';
			val_xid(&v, &e->id);
		}
	}
	return rc;
}

/* One arg from its parsed member; containers are validated and kept verbatim. */
/* Digits, with a leading '-' at most: a JSON integer (which the reader has validated). */
static bool is_int_literal(const char *s, size_t n)
{
	size_t i = n && s[0] == '-';

	if (i == n)
		return false;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static inline int put_arg(struct parser *p, struct parg *a, const struct tft_json_member *m)
{
	int rc;

	a->key = m->key;
	switch (m->v.type) {
	case TFT_JSON_STRING:
		a->type = TFT_ARG_STR;
		a->s.ptr = m->v.ptr;
		a->s.len = m->v.len;
		break;
	case TFT_JSON_NUMBER:
		if (tft_json_value_to_i64(&m->v, &a->i) == 0) {
			a->type = TFT_ARG_INT;
		} else {
			/*
			 * An integer past int64 (a uint64 id, a hash) stays the exact
			 * JSON text it was, as a double would round it; anything else
			 * is a double, converted by the committer (parg_double).
			 */
			a->type = is_int_literal(m->v.ptr, m->v.len) ? TFT_ARG_JSON : TFT_ARG_DOUBLE;
			a->s.ptr = m->v.ptr;
			a->s.len = m->v.len;
		}
		break;
	case TFT_JSON_TRUE:
	case TFT_JSON_FALSE:
		a->type = TFT_ARG_BOOL;
		a->i = m->v.type == TFT_JSON_TRUE;
		break;
	case TFT_JSON_OBJECT:
	case TFT_JSON_ARRAY:
		/* kept verbatim: validated so that exporters can copy it out */
		if ((rc = tft_json_skip_checked(&p->r, &a->s, p->err)))
			return rc;
		a->type = TFT_ARG_JSON;
		break;
	default:
		a->type = TFT_ARG_NULL;
		a->i = 0;
		break;
	}
	return 0;
}

/* "args": {...} of the event in pe; the '{' is next. Appends to b->pargs. */
static int read_args(struct parser *p, struct batch *b, const struct pev *pe)
{
	struct tft_json_member ms[MEMBERS];
	bool is_obj, ended = false;
	unsigned n;
	int rc = enter_object(p, &is_obj);

	if (rc || !is_obj)
		return rc;
	while (!ended) {
		if ((rc = tft_json_next_members(&p->r, ms, MEMBERS, &n, &ended, p->err)))
			return rc;
		if (tft_unlikely(b->npargs + n > b->cap_pargs) &&
		    tft_grow((void **)&b->pargs, &b->cap_pargs, (uint64_t)b->npargs + n, sizeof(*b->pargs)))
			return tft_error_set(p->err, TFT_ENOMEM, -1, "out of memory");
		for (unsigned i = 0; i < n; i++) {
			if (b->npargs - pe->parg0 >= MAX_ARGS) {
				if (is_container(&ms[i].v) && (rc = tft_json_skip_checked(&p->r, NULL, p->err)))
					return rc;
				continue;
			}
			if ((rc = put_arg(p, &b->pargs[b->npargs], &ms[i])))
				return rc;
			b->npargs++;
		}
	}
	return 0;
}

/*
 * Parse one events-array element into *pe (args appended to b). Returns 1
 * for an event object, 0 for an element that is not an object (skipped),
 * TFT_JSON_MORE or an error.
 */
static int parse_event(struct parser *p, struct batch *b, struct pev *pe)
{
	struct cev *e = &pe->e;
	struct tft_json_member ms[MEMBERS];
	bool is_obj, ended = false;
	unsigned n;
	int rc;

	memset(e, 0, sizeof(*e));
	e->offset = tft_json_offset(&p->r); /* next_item stopped at the element's first byte */
	if ((rc = enter_object(p, &is_obj)))
		return rc;
	if (!is_obj)
		return 0;
	while (!ended) {
		if ((rc = tft_json_next_members(&p->r, ms, MEMBERS, &n, &ended, p->err)))
			return rc;
		for (unsigned i = 0; i < n; i++) {
			const struct tft_json_member *m = &ms[i];
			const char *kp = m->key.ptr;
			const struct tft_json_value *v = &m->v;
			if (tft_unlikely(is_container(v))) {
				if (m->key.len == 4 && memcmp(kp, "args", 4) == 0) {
					b->npargs = pe->parg0; /* a second "args" replaces the first, as in JSON */
					rc = read_args(p, b, pe);
				}
				else if (m->key.len == 3 && memcmp(kp, "id2", 3) == 0)
					rc = read_id2(p, e);
				else /* an event's key not used: still checked to be JSON */
					rc = tft_json_skip_checked(&p->r, NULL, p->err);
				if (rc)
					return rc;
				continue;
			}
			switch (m->key.len) {
			case 1:
				if (kp[0] == 's')
					val_str(v, &e->s);
				break;
			case 2:
				if (kp[0] == 'p' && kp[1] == 'h') {
					val_str(v, &e->ph);
					e->has_ph = true;
				} else if (kp[0] == 't' && kp[1] == 's') {
					rc = val_time(p, v, &e->ts, &e->has_ts);
				} else if (kp[0] == 'i' && kp[1] == 'd') {
					val_xid(v, &e->id);
				} else if (kp[0] == 'b' && kp[1] == 'p') {
					val_str(v, &e->bp);
				}
				break;
			case 3:
				if (memcmp(kp, "pid", 3) == 0)
					val_xid(v, &e->pid);
				else if (memcmp(kp, "tid", 3) == 0)
					val_xid(v, &e->tid);
				else if (memcmp(kp, "cat", 3) == 0)
					val_str(v, &e->cat);
				else if (memcmp(kp, "dur", 3) == 0)
					rc = val_time(p, v, &e->dur, &e->has_dur);
				break;
			case 4:
				if (memcmp(kp, "name", 4) == 0)
					val_str(v, &e->name);
				break;
			case 5:
				if (memcmp(kp, "scope", 5) == 0)
					val_str(v, &e->scope);
				break;
			case 7:
				if (memcmp(kp, "bind_id", 7) == 0)
					val_xid(v, &e->bind_id);
				else if (memcmp(kp, "flow_in", 7) == 0)
					e->flow_in = val_bool(v);
				break;
			case 8:
				if (memcmp(kp, "flow_out", 8) == 0)
					e->flow_out = val_bool(v);
				break;
			default:
				break;
			}
			if (rc)
				return rc;
		}
	}
	if (!e->has_dur)
		e->dur = 0;
	pe->npargs = b->npargs - pe->parg0;
	return 1;
}

/* Strings decoded into the reader's scratch die at the next mark: copy them into b. */
static int keep_decoded(struct parser *p, struct batch *b, struct pev *pe)
{
	struct cev *e = &pe->e;
	struct tft_json_str *strs[] = { &e->ph, &e->name, &e->cat, &e->scope, &e->bp, &e->s,
					&e->pid.s, &e->tid.s, &e->id.s, &e->bind_id.s };

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i]->len && !tft_json_in_window(&p->r, strs[i]->ptr) && tft_chrome_batch_keep(b, strs[i]))
			goto oom;
	for (uint32_t i = 0; i < pe->npargs; i++) {
		struct parg *a = &b->pargs[pe->parg0 + i];
		if (a->key.len && !tft_json_in_window(&p->r, a->key.ptr) && tft_chrome_batch_keep(b, &a->key))
			goto oom;
		if ((a->type == TFT_ARG_STR || a->type == TFT_ARG_JSON) && a->s.len &&
		    !tft_json_in_window(&p->r, a->s.ptr) && tft_chrome_batch_keep(b, &a->s))
			goto oom;
	}
	return 0;
oom:
	return tft_error_set(p->err, TFT_ENOMEM, -1, "out of memory");
}

/* The elements of the events array, batched and handed to the committer. */
int tft_chrome_read_events(struct parser *p, unsigned flags)
{
	uint64_t items = 0, with_ph = 0;
	int64_t first = -1;
	int rc;

	for (;;) {
		struct batch *b = p->cur;
		struct pev *pe;
		if (tft_unlikely(b->nev == b->cap_ev) &&
		    tft_grow((void **)&b->ev, &b->cap_ev, (uint64_t)b->nev + 1, sizeof(*b->ev)))
			return tft_error_set(p->err, TFT_ENOMEM, -1, "out of memory");
		pe = &b->ev[b->nev];
		pe->parg0 = b->npargs;
		tft_json_mark(&p->r);
		rc = tft_json_next_item(&p->r, flags, p->err);
		if (rc == 1)
			rc = parse_event(p, b, pe);
		else if (rc == 0)
			break;
		if (rc == TFT_JSON_MORE) {
			b->npargs = pe->parg0; /* drop the partial event's args */
			if ((rc = tft_chrome_p_refill(p)))
				return rc;
			continue;
		}
		if (rc < 0)
			return rc;
		if (items++ == 0)
			first = pe->e.offset;
		if (rc == 0) {
			p->nonobj++;
			continue;
		}
		with_ph += pe->e.has_ph;
		if (p->r.decoded && (rc = keep_decoded(p, b, pe)))
			return rc;
		if (++b->nev >= BATCH_EVENTS && (rc = tft_chrome_p_flush(p)))
			return rc;
	}
	/* [1, 2, 3] or [{"a": 1}] is valid JSON but not a trace */
	if (items && !with_ph)
		return tft_error_set(p->err, TFT_EFORMAT, first,
				     "expected trace event objects (with a \"ph\" key) in the events array");
	return 0;
}
