/* SPDX-License-Identifier: MIT */
/*
 * Node templates (struct rm_tmpl in rm_int.h): what a node's (device,
 * node_name, timeline_label) imply, cached in a set-associative table so
 * that a trace's repeated nodes skip the label parse and the interning.
 * The table is kept on the writer between the inputs of a session.
 * (Not core/hmap: a fixed-size cache that evicts ways in turn, not a map.)
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"

/*
 * The template table of the session's last input, kept on the writer for
 * the next (a session pickle is thousands of small steps): taken back
 * without clearing, its tags are tied to an input (tmpl_epoch).
 */
struct rm_tmpl_cache {
	struct rm_tmpl *tmpl;
	uint64_t *tag;
	uint8_t *next;
	uint64_t epochs;
};

static void tmpl_free(struct rm_tmpl *tmpl, uint64_t *tag, uint8_t *next)
{
	if (tmpl) {
		for (uint32_t i = 0; i < TMPL_SLOTS; i++)
			free(tmpl[i].key);
		free(tmpl);
	}
	free(tag);
	free(next);
}

static void tmpl_cache_free(void *ctx)
{
	struct rm_tmpl_cache *c = ctx;

	tmpl_free(c->tmpl, c->tag, c->next);
	free(c);
}

/* The session's spare-table slot (made on first use); NULL: none. */
struct rm_tmpl_cache *tft_rm_tmpl_cache_get(struct tft_writer *w)
{
	struct rm_tmpl_cache *c = tft_writer_attached(w, TFT_SLOT_RUNMETA_TMPL);

	if (c || !(c = calloc(1, sizeof(*c))))
		return c;
	if (tft_writer_attach(w, TFT_SLOT_RUNMETA_TMPL, c, NULL, tmpl_cache_free)) {
		free(c);
		return NULL;
	}
	return c;
}

/*
 * The template slot for (current device, node_name, label), or NULL when
 * the key is too long to cache or the cache could not be allocated. *hit:
 * the slot holds exactly this key; else the slot is the one to fill
 * (tft_rm_tmpl_store): an empty way of the key's set, or its ways in turn. The
 * tags are probed first so that a lookup reads one line, not four slots.
 */
struct rm_tmpl *tft_rm_tmpl_slot(struct rm *rm, uint32_t devno, struct tft_tf_str name,
				 const struct tft_pb_bytes *label, uint64_t *hash, int *hit)
{
	struct rm_tmpl *t;
	const uint64_t *tags;
	uint64_t h;
	uint32_t set, w;

	*hit = 0;
	if (name.len + label->len > TMPL_MAX_KEY)
		return NULL;
	if (!rm->tmpl && rm->tmpl_cache && rm->tmpl_cache->tmpl) {
		struct rm_tmpl_cache *c = rm->tmpl_cache;

		rm->tmpl = c->tmpl;
		rm->tmpl_tag = c->tag;
		rm->tmpl_next = c->next;
		c->tmpl = NULL;
		c->tag = NULL;
		c->next = NULL;
		rm->tmpl_epoch = tft_hash_u64(++c->epochs) & ~1ull;
	}
	if (!rm->tmpl) {
		rm->tmpl = calloc(TMPL_SLOTS, sizeof(*rm->tmpl));
		rm->tmpl_tag = calloc(TMPL_SLOTS, sizeof(*rm->tmpl_tag));
		rm->tmpl_next = calloc(TMPL_SETS, sizeof(*rm->tmpl_next));
		if (!rm->tmpl || !rm->tmpl_tag || !rm->tmpl_next) {
			free(rm->tmpl);
			free(rm->tmpl_tag);
			free(rm->tmpl_next);
			rm->tmpl = NULL;
			rm->tmpl_tag = NULL;
			rm->tmpl_next = NULL;
			return NULL; /* run without the cache */
		}
	}
	/* Two independent hashes: the CPU overlaps them. */
	h = tft_hash_fast(label->p, label->len, devno);
	h ^= tft_hash_fast(name.p, name.len, 0) * 0x9e3779b97f4a7c15ULL;
	*hash = h;
	h ^= rm->tmpl_epoch; /* (t->hash keeps the plain hash) */
	set = (uint32_t)h & (TMPL_SETS - 1);
	tags = rm->tmpl_tag + set * TMPL_WAYS;
	for (w = 0; w < TMPL_WAYS; w++) {
		if (tags[w] != (h | 1))
			continue;
		t = &rm->tmpl[set * TMPL_WAYS + w];
		/* (absent strings have p == NULL and len 0: memcmp must not see them) */
		if (t->dev == devno && t->hash == *hash && t->name_len == name.len &&
		    t->label_len == label->len &&
		    (!name.len || memcmp(t->key, name.p, name.len) == 0) &&
		    (!label->len || memcmp(t->key + name.len, label->p, label->len) == 0)) {
			*hit = 1;
			return t;
		}
	}
	for (w = 0; w < TMPL_WAYS && tags[w]; w++)
		;
	if (w == TMPL_WAYS) {
		w = rm->tmpl_next[set];
		rm->tmpl_next[set] = (uint8_t)((w + 1) & (TMPL_WAYS - 1));
	}
	return &rm->tmpl[set * TMPL_WAYS + w];
}

/* Fill slot t with the template nt built for this key (best effort: no memory, no entry). */
void tft_rm_tmpl_store(struct rm *rm, struct rm_tmpl *t, const struct rm_tmpl *nt,
		       struct tft_tf_str name, const struct tft_pb_bytes *label)
{
	size_t klen = name.len + label->len;
	char *key = t->key;
	uint32_t cap = t->key_cap;

	if (klen > cap || !key) {
		/* Powers of two: a slot that sees ever other keys reallocates rarely. */
		cap = 128;
		while (cap < klen)
			cap *= 2;
		free(key);
		key = malloc(cap);
		if (!key) {
			memset(t, 0, sizeof(*t));
			rm->tmpl_tag[t - rm->tmpl] = 0;
			return;
		}
	}
	*t = *nt;
	t->key = key;
	t->key_cap = cap;
	if (name.len)
		memcpy(key, name.p, name.len);
	if (label->len)
		memcpy(key + name.len, label->p, label->len);
	rm->tmpl_tag[t - rm->tmpl] = (nt->hash ^ rm->tmpl_epoch) | 1;
}

/* The input is done: its table goes to the session's spare slot for the next input, or is freed. */
void tft_rm_tmpl_release(struct rm *rm)
{
	if (rm->tmpl_cache && !rm->tmpl_cache->tmpl && rm->tmpl) {
		rm->tmpl_cache->tmpl = rm->tmpl;
		rm->tmpl_cache->tag = rm->tmpl_tag;
		rm->tmpl_cache->next = rm->tmpl_next;
	} else {
		tmpl_free(rm->tmpl, rm->tmpl_tag, rm->tmpl_next);
	}
	rm->tmpl = NULL;
	rm->tmpl_tag = NULL;
	rm->tmpl_next = NULL;
}
