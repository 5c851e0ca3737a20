/* SPDX-License-Identifier: MIT */
/*
 * Functions compiled with -finstrument-functions: under LD_PRELOAD=
 * liblttng-ust-cyg-profile.so each call is an lttng_ust_cyg_profile:
 * func_entry / func_exit pair (LTTng's own function tracing). The last one
 * never returns: the program exits inside it.
 */
#include <stdlib.h>

void cyg_work(int n);
void cyg_never_returns(void);
static volatile int sink;

static void leaf(int i)
{
	sink += i;
}

void cyg_work(int n)
{
	for (int i = 0; i < n; i++)
		leaf(i);
}

void cyg_never_returns(void)
{
	leaf(42);
	exit(0);
}
