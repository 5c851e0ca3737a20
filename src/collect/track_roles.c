/* SPDX-License-Identifier: MIT */
/* Track roles for accounting (see track_roles.h). */
#include <stdlib.h>
#include <string.h>

#include "collect/tf_names.h"
#include "collect/track_roles.h"

uint32_t tft_roles_default_flags(uint32_t kind)
{
	return kind == TFT_TRACK_DEVICE || kind == TFT_TRACK_GPU_STREAM ? TFT_TRACKF_CONCURRENT : 0;
}

/* A track's TF device: its name, else its process's name less " Compute". */
static int track_device(struct tft_writer *w, const struct tft_track *t, struct tft_tf_device *d)
{
	size_t len = 0;
	const char *s = tft_writer_str(w, t->name, &len);
	const struct tft_process *p;

	if (s && len && tft_tf_names_parse_device(s, len, d) == 0 && d->type.len)
		return 0;
	p = tft_writer_process(w, t->process);
	s = p ? tft_writer_str(w, p->name, &len) : NULL;
	if (!s)
		return -1;
	if (len > 8 && memcmp(s + len - 8, " Compute", 8) == 0)
		len -= 8;
	return tft_tf_names_parse_device(s, len, d) == 0 && d->type.len ? 0 : -1;
}

struct gpu_track {
	char canon[160];
	uint32_t track;
	uint32_t flags; /* TFT_TF_DEV_* */
};

static int cmp_canon(const void *a, const void *b)
{
	return strcmp(((const struct gpu_track *)a)->canon, ((const struct gpu_track *)b)->canon);
}

int tft_roles_mark_tf_mirrors(struct tft_writer *w)
{
	uint32_t n = tft_writer_track_count(w), m = 0;
	struct gpu_track *g;

	if (!n)
		return 0;
	g = malloc((size_t)n * sizeof(*g));
	if (!g)
		return 0; /* the flags only sharpen the accounting: no failure of the import */
	for (uint32_t i = 0; i < n; i++) {
		struct tft_track *t = tft_writer_track(w, i);
		struct tft_tf_device d;

		if (!t || (t->kind != TFT_TRACK_GPU_STREAM && t->kind != TFT_TRACK_DEVICE) ||
		    track_device(w, t, &d))
			continue;
		if (!(d.flags & (TFT_TF_DEV_STREAM | TFT_TF_DEV_STREAM_ALL | TFT_TF_DEV_MEMCPY)))
			continue;
		tft_tf_names_canon_device(&d, g[m].canon, sizeof(g[m].canon));
		g[m].track = i;
		g[m].flags = d.flags;
		m++;
	}
	qsort(g, m, sizeof(*g), cmp_canon);
	for (uint32_t i = 0, j; i < m; i = j) {
		int streams = 0;

		for (j = i; j < m && strcmp(g[j].canon, g[i].canon) == 0; j++)
			streams |= (g[j].flags & TFT_TF_DEV_STREAM) && !(g[j].flags & TFT_TF_DEV_STREAM_ALL);
		if (!streams)
			continue;
		for (uint32_t k = i; k < j; k++) {
			if (g[k].flags & (TFT_TF_DEV_STREAM_ALL | TFT_TF_DEV_MEMCPY)) {
				struct tft_track *t = tft_writer_track(w, g[k].track);
				if (t)
					t->flags |= TFT_TRACKF_DERIVED;
			}
		}
	}
	free(g);
	return 0;
}
