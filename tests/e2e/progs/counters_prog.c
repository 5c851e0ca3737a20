/* SPDX-License-Identifier: MIT */
/*
 * Work whose counters are known (tests/e2e/test_counters.py): each step has a
 * zone that touches fresh memory (2048 pages: 2048 page faults), one that spins (task-clock,
 * instructions) and one that sleeps (a context switch, little task-clock).
 * Linked with libtftracer.so; never calls tft_init.
 *
 * usage: counters_prog [STEPS]
 */
#define TFT_ENABLE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <tftracer/zone.h>
#include <unistd.h>

#define TOUCH_BYTES (8u << 20)
#define SPIN_NS 20000000
#define SLEEP_US 20000

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 4;
	volatile unsigned long x = 0;

	for (int s = 0; s < steps; s++) {
		tft_step_begin("train");
		{
			TFT_ZONE("touch");
			/* fresh pages each time (mmap, not the heap), each written once */
			volatile char *p = mmap(NULL, TOUCH_BYTES, PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				return 3;
			/* one fault per 4 KiB page, wherever transparent huge pages are on */
			madvise((void *)p, TOUCH_BYTES, MADV_NOHUGEPAGE);
			for (size_t i = 0; i < TOUCH_BYTES; i += 4096)
				p[i] = 1;
			x += (unsigned char)p[TOUCH_BYTES - 4096];
			munmap((void *)p, TOUCH_BYTES);
		}
		{
			TFT_ZONE("spin");
			long long t0 = now_ns();
			while (now_ns() - t0 < SPIN_NS)
				x++;
		}
		{
			TFT_ZONE("sleep");
			usleep(SLEEP_US);
		}
		tft_step_end();
	}
	printf("done %d\n", steps);
	return x == 0 ? 4 : 0;
}
