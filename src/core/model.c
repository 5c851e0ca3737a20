/* SPDX-License-Identifier: MIT */
/* Names of the model's enums. */
#include <string.h>

#include "core/model.h"

static const char *const kind_names[TFT_TRACK_KIND_MAX + 1] = {
	[TFT_TRACK_THREAD] = "thread",         [TFT_TRACK_DEVICE] = "device",
	[TFT_TRACK_GPU_STREAM] = "gpu_stream", [TFT_TRACK_COMM] = "comm",
	[TFT_TRACK_COUNTER] = "counter",       [TFT_TRACK_ASYNC] = "async",
	[TFT_TRACK_OBJECT] = "object",
};

const char *tft_track_kind_name(int kind)
{
	if (kind <= 0 || kind > TFT_TRACK_KIND_MAX)
		return "unknown";
	return kind_names[kind];
}

int tft_track_kind_parse(const char *s)
{
	for (int k = 1; k <= TFT_TRACK_KIND_MAX; k++)
		if (strcmp(s, kind_names[k]) == 0)
			return k;
	return 0;
}
