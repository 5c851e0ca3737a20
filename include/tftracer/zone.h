/* SPDX-License-Identifier: MIT */
/*
 * Instrumentation macros over the runtime API of tftracer.h. They compile to
 * nothing unless TFT_ENABLE is defined, so instrumented code costs nothing in
 * builds that do not trace. Names must be string literals (they go into
 * static call-site descriptors).
 *
 *   TFT_ZONE("forward");                       scoped zone: ends with the block (GCC/Clang)
 *   TFT_ZONE_BEGIN(z, "step_fn"); ... TFT_ZONE_END(z);   explicit pair, same thread
 *   TFT_ZONE_BEGIN_CAT(z, "matmul", "op");     with a category
 *   TFT_INSTANT("checkpoint");
 *   TFT_COUNTER("loss", 0.25);
 *   TFT_FLOW_BEGIN("batch", id); ... TFT_FLOW_END("batch", id);   any threads
 *   TFT_MEM_ALLOC(p, n); TFT_MEM_FREE(p);
 *   TFT_STEP_BEGIN("train"); TFT_STEP_END();
 *   TFT_THREAD_NAME("loader");
 */
#ifndef TFTRACER_ZONE_H
#define TFTRACER_ZONE_H

#include "tftracer/tftracer.h"

#define TFT_CONCAT_I_(a, b) a##b
#define TFT_CONCAT_(a, b) TFT_CONCAT_I_(a, b)

#ifdef TFT_ENABLE

/* Define a static call-site descriptor `var`. */
#define TFT_SITE(var, name, cat)                                                        \
	static const struct tft_site var = { (name), (cat), __FILE__, (uint32_t)__LINE__, 0 }

#define TFT_ZONE_BEGIN_CAT(ctx, name, cat)                                             \
	TFT_SITE(TFT_CONCAT_(tft_site_, ctx), name, cat);                                  \
	struct tft_zone ctx = tft_zone_begin(&TFT_CONCAT_(tft_site_, ctx))
#define TFT_ZONE_BEGIN(ctx, name) TFT_ZONE_BEGIN_CAT(ctx, name, NULL)
#define TFT_ZONE_END(ctx) tft_zone_end(ctx)

/* A zone that ends when the enclosing block exits (cleanup attribute). */
#define TFT_ZONE_CAT(name, cat) TFT_ZONE_I_(name, cat, __COUNTER__)
#define TFT_ZONE(name) TFT_ZONE_CAT(name, NULL)
#define TFT_ZONE_I_(name, cat, n) TFT_ZONE_I2_(name, cat, n)
#define TFT_ZONE_I2_(name, cat, n)                                                      \
	TFT_SITE(tft_site_scoped_##n, name, cat);                                            \
	struct tft_zone tft_zone_scoped_##n __attribute__((cleanup(tft_zone_cleanup))) =    \
		tft_zone_begin(&tft_site_scoped_##n)

#define TFT_INSTANT(name)                                                               \
	do {                                                                            \
		TFT_SITE(tft_site_, name, NULL);                                         \
		tft_instant(&tft_site_);                                                \
	} while (0)
#define TFT_COUNTER(name, value)                                                        \
	do {                                                                            \
		TFT_SITE(tft_site_, name, NULL);                                         \
		tft_counter(&tft_site_, (double)(value));                               \
	} while (0)
#define TFT_FLOW_BEGIN(name, id)                                                        \
	do {                                                                            \
		TFT_SITE(tft_site_, name, NULL);                                         \
		tft_flow_begin(&tft_site_, (uint64_t)(id));                             \
	} while (0)
#define TFT_FLOW_END(name, id)                                                          \
	do {                                                                            \
		TFT_SITE(tft_site_, name, NULL);                                         \
		tft_flow_end(&tft_site_, (uint64_t)(id));                               \
	} while (0)
#define TFT_MEM_ALLOC(ptr, bytes) tft_mem_alloc((ptr), (size_t)(bytes))
#define TFT_MEM_FREE(ptr) tft_mem_free(ptr)
#define TFT_STEP_BEGIN(name) ((void)tft_step_begin(name))
#define TFT_STEP_END() ((void)tft_step_end())
#define TFT_THREAD_NAME(name) ((void)tft_thread_name(name))

#else /* !TFT_ENABLE: everything compiles out */

#define TFT_SITE(var, name, cat) struct tft_site_unused_
#define TFT_ZONE_BEGIN_CAT(ctx, name, cat) ((void)0)
#define TFT_ZONE_BEGIN(ctx, name) ((void)0)
#define TFT_ZONE_END(ctx) ((void)0)
#define TFT_ZONE_CAT(name, cat) ((void)0)
#define TFT_ZONE(name) ((void)0)
#define TFT_INSTANT(name) ((void)0)
#define TFT_COUNTER(name, value) ((void)0)
#define TFT_FLOW_BEGIN(name, id) ((void)0)
#define TFT_FLOW_END(name, id) ((void)0)
#define TFT_MEM_ALLOC(ptr, bytes) ((void)0)
#define TFT_MEM_FREE(ptr) ((void)0)
#define TFT_STEP_BEGIN(name) ((void)0)
#define TFT_STEP_END() ((void)0)
#define TFT_THREAD_NAME(name) ((void)0)

#endif /* TFT_ENABLE */
#endif /* TFTRACER_ZONE_H */
