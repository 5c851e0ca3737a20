/* SPDX-License-Identifier: MIT */
/*
 * The session object: the summary keys of export_summary.h plus the process,
 * track and step lists, as GET /api/session (server/api_session.c) answers
 * and the standalone HTML export inlines (export_html.c). Here, below the
 * server, so that the export layer writes it without the server.
 */
#ifndef TFT_EXPORT_EXPORT_SESSION_H
#define TFT_EXPORT_EXPORT_SESSION_H

#include "codec/json_write.h"
#include "store/session.h"

/* The whole object (docs/http-api.md, GET /api/session). */
void tft_export_session_write(struct tft_session *s, struct tft_json_writer *w);
/* The step list alone, an array (its "step_list", GET /api/steps's "steps"). */
void tft_export_steps_write(struct tft_json_writer *w, struct tft_session *s);

#endif /* TFT_EXPORT_EXPORT_SESSION_H */
