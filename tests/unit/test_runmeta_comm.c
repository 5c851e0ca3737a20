/* SPDX-License-Identifier: MIT */
/*
 * The RunMetadata importer's comm-word scan (collect/runmeta/comm_word.h:
 * does a device's payload hold "Send", "Recv", "Nccl", "Horo" or "Coll"?)
 * against a plain byte-by-byte search: the SSE2 loop (tft_rm_comm_word_from(),
 * the path of CPUs without AVX2, which the rest of the suite never takes on
 * an AVX2 machine) and the AVX2 loop where the CPU has it. A word at every offset of short
 * and block-sized buffers (the loops' ends and the tail), then random
 * buffers drawn mostly from the words' letters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/runmeta/comm_word.h"
#include "tap.h"

static int plain(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (tft_rm_comm_at(p + i))
			return 1;
	return 0;
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

/* The loops under test; `which`: 0 the SSE2 (or plain) loop, 1 AVX2. */
static int scan(int which, const uint8_t *p, size_t n)
{
#ifdef TFT_COMM_AVX2
	if (which)
		return n < 4 ? 0 : tft_rm_comm_word_avx2(p, n);
#else
	(void)which;
#endif
	return n < 4 ? 0 : tft_rm_comm_word_from(p, n, 0);
}

int main(void)
{
	static const char *const words[] = { "Send", "Recv", "Nccl", "Horo", "Coll" };
	static const char near[] = "SendRecvNcclHoroColldvloRSNHCeco";
	uint8_t buf[300];
	int nloops = 1;

#ifdef TFT_COMM_AVX2
	nloops = __builtin_cpu_supports("avx2") ? 2 : 1;
	if (nloops == 1)
		tap_skip("no AVX2 on this CPU: the AVX2 loop is not checked");
#endif
	for (int which = 0; which < nloops; which++) {
		const char *loop = which ? "AVX2" : "SSE2";
		int bad = 0, hits = 0, misses = 0;

		/* Each word alone at every offset, in buffers of every length to 80; none in them. */
		for (size_t n = 0; n <= 80; n++) {
			memset(buf, 'x', n);
			bad += scan(which, buf, n) != 0;
			for (int w = 0; w < 5; w++)
				for (size_t at = 0; at + 4 <= n; at++) {
					memset(buf, 'x', n);
					memcpy(buf + at, words[w], 4);
					bad += scan(which, buf, n) != 1;
				}
		}
		ok(!bad, "%s loop: each word at every offset of 0..80-byte buffers (%d wrong)", loop, bad);

		/* Random buffers, mostly the words' letters: near misses and hits anywhere. */
		bad = 0;
		for (int k = 0; k < 200000; k++) {
			size_t n = rnd() % sizeof(buf);

			for (size_t i = 0; i < n; i++)
				buf[i] = rnd() % 8 ? (uint8_t)near[rnd() % (sizeof(near) - 1)] : (uint8_t)rnd();
			int want = plain(buf, n), got = scan(which, buf, n);

			bad += got != want;
			hits += want;
			misses += !want;
		}
		ok(!bad && hits > 1000 && misses > 1000,
		   "%s loop: 200,000 random buffers agree with a plain search (%d wrong; %d with a word, %d without)",
		   loop, bad, hits, misses);
	}
	return done_testing();
}
