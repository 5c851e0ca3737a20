/* SPDX-License-Identifier: MIT */
/*
 * The XSpace wire schema (tensorflow/tsl/profiler/protobuf/xplane.proto) as
 * the importer's decode tables: one table per pass over a container.
 *
 * Containers are walked in several passes, one table per pass, because the
 * wire order puts what is needed first last (lines before the metadata maps,
 * planes before the hostnames). A pass skips what it does not list; nothing
 * is buffered, so memory does not grow with the number of entries. The hot
 * messages (XEvent, XStat, the metadata entries) have fast paths for their
 * usual layout; these tables decode any other and report errors with their
 * message path.
 */
#include <stddef.h>

#include "collect/xspace/xs_int.h"

#define F TFT_PB_FIELD
#define H TFT_PB_HOOK

static const struct tft_pb_field stat_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_stat, metadata_id, "metadata_id", NULL, NULL),
	F(2, TFT_PB_DOUBLE, 0, struct xs_stat, d, "double_value", NULL, NULL),
	F(3, TFT_PB_UINT64, 0, struct xs_stat, u, "uint64_value", NULL, NULL),
	F(4, TFT_PB_INT64, 0, struct xs_stat, i, "int64_value", NULL, NULL),
	F(5, TFT_PB_STRING, 0, struct xs_stat, str, "str_value", NULL, NULL),
	F(6, TFT_PB_BYTES, 0, struct xs_stat, bytes, "bytes_value", NULL, NULL),
	F(7, TFT_PB_UINT64, 0, struct xs_stat, ref, "ref_value", NULL, NULL),
};
const struct tft_pb_msg tft_xs_stat_msg = {"XStat", stat_fields, 7, offsetof(struct xs_stat, has)};

static const struct tft_pb_field event_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_event, metadata_id, "metadata_id", NULL, NULL),
	F(2, TFT_PB_INT64, 0, struct xs_event, offset_ps, "offset_ps", NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct xs_event, duration_ps, "duration_ps", NULL, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stats", tft_xs_on_event_stat, NULL),
	F(5, TFT_PB_INT64, 0, struct xs_event, num_occurrences, "num_occurrences", NULL, NULL),
};
const struct tft_pb_msg tft_xs_event_msg = {"XEvent", event_fields, 5, offsetof(struct xs_event, has)};

static int on_event_later(void *ctx, void *msg, const struct tft_pb_field *f,
			  const struct tft_pb_val *v)
{
	return 0; /* pass 2 (do_line) decodes the events */
}

/*
 * Pass 1 over a line: everything but the events, which pass 2 walks since
 * the name and display_name come after them in the wire order.
 */
static const struct tft_pb_field line_hdr_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_line, id, "id", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct xs_line, name, "name", NULL, NULL),
	F(3, TFT_PB_INT64, 0, struct xs_line, timestamp_ns, "timestamp_ns", NULL, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "events", on_event_later, NULL),
	F(9, TFT_PB_INT64, 0, struct xs_line, duration_ps, "duration_ps", NULL, NULL),
	F(10, TFT_PB_INT64, 0, struct xs_line, display_id, "display_id", NULL, NULL),
	F(11, TFT_PB_STRING, 0, struct xs_line, display_name, "display_name", NULL, NULL),
};
const struct tft_pb_msg tft_xs_line_hdr_msg = {"XLine", line_hdr_fields, 7, offsetof(struct xs_line, has)};

static const struct tft_pb_field stat_meta_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_stat_meta, id, "id", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct xs_stat_meta, name, "name", NULL, NULL),
	F(3, TFT_PB_STRING, 0, struct xs_stat_meta, description, "description", NULL, NULL),
};
static const struct tft_pb_msg stat_meta_msg = {"XStatMetadata", stat_meta_fields, 3,
						offsetof(struct xs_stat_meta, has)};

static const struct tft_pb_field smeta_entry_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_smeta_entry, key, "key", NULL, NULL),
	F(2, TFT_PB_MESSAGE, 0, struct xs_smeta_entry, value, "value", NULL, &stat_meta_msg),
};
const struct tft_pb_msg tft_xs_smeta_entry_msg = {"XPlane.StatMetadataEntry", smeta_entry_fields, 2,
						  offsetof(struct xs_smeta_entry, has)};

static const struct tft_pb_field event_meta_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_event_meta_raw, id, "id", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct xs_event_meta_raw, name, "name", NULL, NULL),
	F(4, TFT_PB_STRING, 0, struct xs_event_meta_raw, display_name, "display_name", NULL, NULL),
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stats", tft_xs_on_meta_stat, NULL),
};
static const struct tft_pb_msg event_meta_msg = {"XEventMetadata", event_meta_fields, 4,
						 offsetof(struct xs_event_meta_raw, has)};

static const struct tft_pb_field emeta_entry_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_emeta_entry, key, "key", NULL, NULL),
	F(2, TFT_PB_MESSAGE, 0, struct xs_emeta_entry, value, "value", NULL, &event_meta_msg),
};
const struct tft_pb_msg tft_xs_emeta_entry_msg = {"XPlane.EventMetadataEntry", emeta_entry_fields, 2,
						  offsetof(struct xs_emeta_entry, has)};

/*
 * Plane pass 1: id and name; the rest is checked for its wire type only,
 * and where each repeated field lies is noted (tft_xs_on_plane_later()) so that
 * the later passes walk only that part of the plane.
 */
static const struct tft_pb_field plane_fields[] = {
	F(1, TFT_PB_INT64, 0, struct xs_plane, id, "id", NULL, NULL),
	F(2, TFT_PB_STRING, 0, struct xs_plane, name, "name", NULL, NULL),
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "lines", tft_xs_on_plane_later, NULL),
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "event_metadata", tft_xs_on_plane_later, NULL),
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stat_metadata", tft_xs_on_plane_later, NULL),
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stats", tft_xs_on_plane_later, NULL),
};
const struct tft_pb_msg tft_xs_plane_msg = {"XPlane", plane_fields, 6, offsetof(struct xs_plane, has)};

/* Passes 2-5: stat metadata, event metadata (their stats need the stat names), stats, lines. */
static const struct tft_pb_field plane_smeta_fields[] = {
	H(5, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stat_metadata", tft_xs_on_stat_meta, NULL),
};
const struct tft_pb_msg tft_xs_plane_smeta_msg = {"XPlane", plane_smeta_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field plane_emeta_fields[] = {
	H(4, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "event_metadata", tft_xs_on_event_meta, NULL),
};
const struct tft_pb_msg tft_xs_plane_emeta_msg = {"XPlane", plane_emeta_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field plane_stats_fields[] = {
	H(6, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "stats", tft_xs_on_plane_stat, NULL),
};
const struct tft_pb_msg tft_xs_plane_stats_msg = {"XPlane", plane_stats_fields, 1, TFT_PB_NOOFF};
static const struct tft_pb_field plane_lines_fields[] = {
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "lines", tft_xs_on_line, NULL),
};
const struct tft_pb_msg tft_xs_plane_lines_msg = {"XPlane", plane_lines_fields, 1, TFT_PB_NOOFF};

/* XSpace pass 1: hostnames, errors, warnings (after the planes on the wire), the host's clock. */
static const struct tft_pb_field space_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "planes", tft_xs_on_space_plane, NULL),
	H(2, TFT_PB_STRING, TFT_PB_F_REPEATED, "errors", tft_xs_on_space_field, NULL),
	H(3, TFT_PB_STRING, TFT_PB_F_REPEATED, "warnings", tft_xs_on_space_field, NULL),
	H(4, TFT_PB_STRING, TFT_PB_F_REPEATED, "hostnames", tft_xs_on_space_field, NULL),
};
const struct tft_pb_msg tft_xs_space_msg = {"XSpace", space_fields, 4, TFT_PB_NOOFF};
/* Pass 2: the planes. */
static const struct tft_pb_field space_planes_fields[] = {
	H(1, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "planes", tft_xs_on_plane, NULL),
};
const struct tft_pb_msg tft_xs_space_planes_msg = {"XSpace", space_planes_fields, 1, TFT_PB_NOOFF};

static const struct tft_pb_field plane_jobs_fields[] = {
	H(3, TFT_PB_MESSAGE, TFT_PB_F_REPEATED, "lines", tft_xs_on_line_job, NULL),
};
const struct tft_pb_msg tft_xs_plane_jobs_msg = {"XPlane", plane_jobs_fields, 1, TFT_PB_NOOFF};
