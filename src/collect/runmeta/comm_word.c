/* SPDX-License-Identifier: MIT */
/*
 * The comm-word scan (comm_word.h): candidates are found 16 (SSE2) or 32
 * (AVX2) bytes at a time by their first and fourth bytes, then checked.
 */
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "collect/runmeta/comm_word.h"
#ifdef TFT_COMM_AVX2
#include <immintrin.h>
#endif

int tft_rm_comm_word_from(const uint8_t *p, size_t n, size_t i)
{
#ifdef __SSE2__
	for (; i + 19 <= n; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(p + i));
		__m128i s = _mm_cmpeq_epi8(a, _mm_set1_epi8('S'));
		__m128i r = _mm_cmpeq_epi8(a, _mm_set1_epi8('R'));
		__m128i h = _mm_cmpeq_epi8(a, _mm_set1_epi8('H'));
		__m128i nc = _mm_or_si128(_mm_cmpeq_epi8(a, _mm_set1_epi8('N')),
					  _mm_cmpeq_epi8(a, _mm_set1_epi8('C')));
		__m128i d, m;
		unsigned bits;

		/* Most blocks hold none of the five first letters: the fourth is not loaded. */
		if (!_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(s, r), _mm_or_si128(h, nc))))
			continue;
		d = _mm_loadu_si128((const __m128i *)(p + i + 3));
		s = _mm_and_si128(s, _mm_cmpeq_epi8(d, _mm_set1_epi8('d')));
		r = _mm_and_si128(r, _mm_cmpeq_epi8(d, _mm_set1_epi8('v')));
		h = _mm_and_si128(h, _mm_cmpeq_epi8(d, _mm_set1_epi8('o')));
		nc = _mm_and_si128(nc, _mm_cmpeq_epi8(d, _mm_set1_epi8('l')));
		m = _mm_or_si128(_mm_or_si128(s, r), _mm_or_si128(h, nc));
		for (bits = (unsigned)_mm_movemask_epi8(m); bits; bits &= bits - 1)
			if (tft_rm_comm_at(p + i + (size_t)__builtin_ctz(bits)))
				return 1;
	}
#endif
	for (; i + 4 <= n; i++)
		if (tft_rm_comm_at(p + i))
			return 1;
	return 0;
}

#ifdef TFT_COMM_AVX2
/*
 * The same test 32 bytes at a time where the CPU has AVX2: the parallel
 * import's track prediction runs it over whole devices (par_predict.c),
 * and the three-operand forms drop the SSE2 loop's register copies too.
 */
__attribute__((target("avx2"))) int tft_rm_comm_word_avx2(const uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; i + 35 <= n; i += 32) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(p + i));
		__m256i s = _mm256_cmpeq_epi8(a, _mm256_set1_epi8('S'));
		__m256i r = _mm256_cmpeq_epi8(a, _mm256_set1_epi8('R'));
		__m256i h = _mm256_cmpeq_epi8(a, _mm256_set1_epi8('H'));
		__m256i nc = _mm256_or_si256(_mm256_cmpeq_epi8(a, _mm256_set1_epi8('N')),
					     _mm256_cmpeq_epi8(a, _mm256_set1_epi8('C')));
		__m256i d, m;
		uint32_t bits;

		if (!_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(s, r),
							  _mm256_or_si256(h, nc))))
			continue;
		d = _mm256_loadu_si256((const __m256i *)(p + i + 3));
		s = _mm256_and_si256(s, _mm256_cmpeq_epi8(d, _mm256_set1_epi8('d')));
		r = _mm256_and_si256(r, _mm256_cmpeq_epi8(d, _mm256_set1_epi8('v')));
		h = _mm256_and_si256(h, _mm256_cmpeq_epi8(d, _mm256_set1_epi8('o')));
		nc = _mm256_and_si256(nc, _mm256_cmpeq_epi8(d, _mm256_set1_epi8('l')));
		m = _mm256_or_si256(_mm256_or_si256(s, r), _mm256_or_si256(h, nc));
		for (bits = (uint32_t)_mm256_movemask_epi8(m); bits; bits &= bits - 1)
			if (tft_rm_comm_at(p + i + (size_t)__builtin_ctz(bits)))
				return 1;
	}
	return tft_rm_comm_word_from(p, n, i);
}
#endif
