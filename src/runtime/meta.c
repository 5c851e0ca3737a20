/* SPDX-License-Identifier: MIT */
/*
 * Session metadata from the program (tft_set_meta): a key and its text
 * value, handed to the running session. The call copies both into a small
 * table under a lock of its own and returns; the drain thread writes what
 * waits there into the session at its next commit (tft_rt_meta_apply, under
 * the work lock), so the caller never waits for the store. Not on the
 * recording path: meant for values that change rarely (the program's model
 * description, a run's configuration).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"
#include "store/writer.h"

#define META_MAX 64                      /* distinct keys waiting at once */
#define META_KEY_MAX 127u                /* bytes of a key */
#define META_VALUE_MAX ((size_t)64 << 20) /* bytes of one value */
#define META_PENDING_MAX ((size_t)128 << 20) /* bytes of all values waiting */

/*
 * Keys the session itself writes (the runtime's drain, the store writer,
 * live imports): a program cannot replace them.
 */
static const char *const reserved[] = {
	"format", "producer", "clock", "clock_domain", "tsc_hz", "realtime_offset_ns",
	"session_start_ns", "dropped", "unclosed_slices", "unmatched_flows", "flow_count",
	"graph_nodes", "schema_version", "created_by",
};

/* Lock order: after the runtime's locks (the drain holds the work lock here). */
static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *key, *value;
	size_t len;
} pend[META_MAX];
static uint32_t npend;
static size_t pend_bytes;

static int is_reserved(const char *key)
{
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strcmp(key, reserved[i]) == 0)
			return 1;
	return 0;
}

TFT_API int tft_set_meta(const char *key, const char *value)
{
	size_t klen, vlen;
	char *k, *v, *old = NULL;
	uint32_t i;

	if (!key || !value)
		return TFT_EINVAL;
	klen = strnlen(key, META_KEY_MAX + 1);
	vlen = strnlen(value, META_VALUE_MAX + 1);
	if (klen == 0 || klen > META_KEY_MAX || vlen > META_VALUE_MAX || is_reserved(key))
		return TFT_EINVAL;
	if (!(tft_rt_state_load() & TFT_RT_STEPS))
		return TFT_EAGAIN; /* no session runs (or it disabled itself) */
	k = malloc(klen + 1);
	v = malloc(vlen + 1);
	if (!k || !v) {
		free(k);
		free(v);
		return TFT_ENOMEM;
	}
	memcpy(k, key, klen + 1);
	memcpy(v, value, vlen + 1);
	pthread_mutex_lock(&meta_lock);
	for (i = 0; i < npend; i++)
		if (strcmp(pend[i].key, k) == 0)
			break;
	if (pend_bytes - (i < npend ? pend[i].len : 0) + vlen > META_PENDING_MAX ||
	    (i == npend && npend == META_MAX)) {
		pthread_mutex_unlock(&meta_lock);
		free(k);
		free(v);
		return TFT_EAGAIN; /* the drain has not caught up: too much waiting */
	}
	if (i < npend) { /* a newer value of a waiting key replaces it */
		old = pend[i].value;
		pend_bytes -= pend[i].len;
		free(k);
	} else {
		pend[i].key = k;
		npend++;
	}
	pend[i].value = v;
	pend[i].len = vlen;
	pend_bytes += vlen;
	pthread_mutex_unlock(&meta_lock);
	free(old);
	return 0;
}

int tft_rt_meta_apply(struct tft_writer *w)
{
	char *keys[META_MAX], *values[META_MAX];
	uint32_t n;
	int rc = 0;

	pthread_mutex_lock(&meta_lock);
	n = npend;
	for (uint32_t i = 0; i < n; i++) {
		keys[i] = pend[i].key;
		values[i] = pend[i].value;
	}
	npend = 0;
	pend_bytes = 0;
	pthread_mutex_unlock(&meta_lock);
	for (uint32_t i = 0; i < n; i++) {
		int r = tft_writer_set_meta(w, keys[i], values[i]);
		if (r && !rc)
			rc = r;
		free(keys[i]);
		free(values[i]);
	}
	return rc;
}

void tft_rt_meta_clear(void)
{
	pthread_mutex_lock(&meta_lock);
	for (uint32_t i = 0; i < npend; i++) {
		free(pend[i].key);
		free(pend[i].value);
	}
	npend = 0;
	pend_bytes = 0;
	pthread_mutex_unlock(&meta_lock);
}

void tft_rt_meta_lock(void)
{
	pthread_mutex_lock(&meta_lock);
}

void tft_rt_meta_unlock(void)
{
	pthread_mutex_unlock(&meta_lock);
}
