/* SPDX-License-Identifier: MIT */
/*
 * Does a byte run hold "Send", "Recv", "Nccl", "Horo" or "Coll"? Every op
 * or node name tft_tf_names_is_comm() accepts holds one, so a device whose
 * payload holds none has no comm nodes (the parallel import's track
 * prediction, par_predict.c). The SSE2 and AVX2 loops are exposed for their
 * unit test (tests/unit/test_runmeta_comm.c).
 */
#ifndef TFT_COLLECT_RUNMETA_COMM_WORD_H
#define TFT_COLLECT_RUNMETA_COMM_WORD_H

#include <stddef.h>
#include <stdint.h>

#include "codec/pb_wire.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define TFT_COMM_AVX2 1 /* tft_rm_comm_word_avx2(), chosen at run time */
#endif

/* Whether the four bytes at q are one of the words. */
static inline int tft_rm_comm_at(const uint8_t *q)
{
	static const uint32_t words[5] = {
		'S' | 'e' << 8 | 'n' << 16 | (uint32_t)'d' << 24,
		'R' | 'e' << 8 | 'c' << 16 | (uint32_t)'v' << 24,
		'N' | 'c' << 8 | 'c' << 16 | (uint32_t)'l' << 24,
		'H' | 'o' << 8 | 'r' << 16 | (uint32_t)'o' << 24,
		'C' | 'o' << 8 | 'l' << 16 | (uint32_t)'l' << 24,
	};
	uint32_t w = tft_pb_wire_le32(q);

	for (int k = 0; k < 5; k++)
		if (w == words[k])
			return 1;
	return 0;
}

/* The SSE2 (or plain) loop from offset i on (what comes before holds none). */
int tft_rm_comm_word_from(const uint8_t *p, size_t n, size_t i);

#ifdef TFT_COMM_AVX2
/* The AVX2 loop; n >= 4, and only where the CPU has AVX2. */
int tft_rm_comm_word_avx2(const uint8_t *p, size_t n);
#endif

/*
 * Whether p[0..n) holds "Send", "Recv", "Nccl", "Horo" or "Coll": every op
 * or node name that tft_tf_names_is_comm() accepts holds one of them, and
 * tft_rm_node_op() takes the op from the node name or the label bytes (or
 * is "RecvTensor" when the node name is). Candidates are found 16 (or 32)
 * bytes at a time by their first and fourth bytes (S..d, R..v, N..l, H..o,
 * C..l: far rarer in names than the first two, "Re" of "Relu" and
 * "Reshape" say), then checked.
 */
static inline int tft_rm_comm_word(const uint8_t *p, size_t n)
{
	if (n < 4)
		return 0;
#ifdef TFT_COMM_AVX2
	if (__builtin_cpu_supports("avx2"))
		return tft_rm_comm_word_avx2(p, n);
#endif
	return tft_rm_comm_word_from(p, n, 0);
}

#endif /* TFT_COLLECT_RUNMETA_COMM_WORD_H */
