/* SPDX-License-Identifier: MIT */
/*
 * The pre-pass over a binary input's dev_stats: one walk that tells
 * whether each device appears once (its events can then go straight to
 * the writer, and the parallel import may take the input) and records
 * what each DeviceStepStats holds (struct rm_dinfo), so that the decode
 * need not walk it again before its nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/rm_int.h"

/*
 * One walk over the dev_stats of the binary StepStats in p[0..len): fills
 * rm->dinfo (each dev_stats in input order, up to the first one the walk
 * cannot take) and returns whether every dev_stats names a different
 * device: then no device's events can be split over two places and each
 * device can go straight to the writer. 0 when unsure.
 */
int tft_rm_scan_devices(struct rm *rm, const uint8_t *p, size_t len)
{
	enum { MAXDEV = 4096 };
	const uint8_t *end = len ? p + len : p; /* p may be NULL when empty */
	int unique = 1;

	rm->dinfo = malloc(MAXDEV * sizeof(*rm->dinfo));
	if (!rm->dinfo)
		return 0;
	while (p < end) {
		const uint8_t *at;
		uint64_t key, l;

		if (tft_pb_wire_varint(&p, end, &key) || (key & 7) != 2 || (at = p, 0) ||
		    tft_pb_wire_varint(&p, end, &l) || l > (uint64_t)(end - p))
			return 0; /* anything but length-delimited fields: let the decoder judge */
		if (key >> 3 == 1) {
			const uint8_t *q = p, *qe = p + l;
			struct rm_dinfo *di;
			struct tft_pb_bytes nm;

			if (rm->ndinfo == MAXDEV)
				return 0;
			di = &rm->dinfo[rm->ndinfo];
			memset(di, 0, sizeof(*di));
			di->p = p;
			di->len = (size_t)l;
			di->at = at;
			di->simple = 1;
			while (q < qe) {
				uint64_t k2, v;

				/* Each node's key is a cache miss: ask for the lines ~10 nodes ahead (BENCHMARKS.md). */
				__builtin_prefetch(q + 2048);
				if (tft_pb_wire_varint(&q, qe, &k2))
					return 0;
				if ((k2 & 7) == 0) {
					if (tft_pb_wire_varint(&q, qe, &v))
						return 0;
					di->simple = 0;
				} else if ((k2 & 7) == 2) {
					if (tft_pb_wire_varint(&q, qe, &v) || v > (uint64_t)(qe - q))
						return 0;
					if (k2 >> 3 == 1) {
						di->device.p = q; /* the last one wins, empty or not */
						di->device.len = (size_t)v;
					} else if (k2 >> 3 == 2) {
						di->nodes++;
					} else {
						di->simple = 0;
					}
					q += v;
				} else {
					return 0;
				}
			}
			/* tft_rm_get_device()'s name for it */
			nm = di->device;
			if (!nm.len) {
				nm.p = (const uint8_t *)"unknown device";
				nm.len = 14;
			}
			for (uint32_t i = 0; i < rm->ndinfo && unique; i++) {
				struct tft_pb_bytes o = rm->dinfo[i].device;

				if (!o.len) {
					o.p = (const uint8_t *)"unknown device";
					o.len = 14;
				}
				if (o.len == nm.len && memcmp(o.p, nm.p, nm.len) == 0)
					unique = 0;
			}
			rm->ndinfo++;
		}
		p += l;
	}
	return unique;
}

/* Same for a binary RunMetadata: one step_stats, unique devices in it. */
int tft_rm_runmeta_scan_devices(struct rm *rm, const uint8_t *p, size_t len)
{
	const uint8_t *end = len ? p + len : p, *ss = NULL; /* p may be NULL when empty */
	size_t ss_len = 0;
	int nss = 0;

	while (p < end) {
		uint64_t key, l;

		if (tft_pb_wire_varint(&p, end, &key))
			return 0;
		switch (key & 7) {
		case 0:
			if (tft_pb_wire_varint(&p, end, &l))
				return 0;
			break;
		case 1:
			if (end - p < 8)
				return 0;
			p += 8;
			break;
		case 5:
			if (end - p < 4)
				return 0;
			p += 4;
			break;
		case 2:
			if (tft_pb_wire_varint(&p, end, &l) || l > (uint64_t)(end - p))
				return 0;
			if (key >> 3 == 1) {
				ss = p;
				ss_len = (size_t)l;
				nss++;
			}
			p += l;
			break;
		default:
			return 0;
		}
	}
	/* (several step_stats: their dev_stats are not told apart, no dinfo) */
	return nss <= 1 && (!ss || tft_rm_scan_devices(rm, ss, ss_len));
}
