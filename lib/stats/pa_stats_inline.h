/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_STATS_INLINE_H
#define PA_STATS_INLINE_H

/* Hot-path part of pa_stats.h: latency histogram updates. Include
 * pa_stats.h, not this file. */

#include <rte_branch_prediction.h>
#include <rte_common.h>

static inline unsigned int
pa_stats_latency_bucket(uint64_t v)
{
	unsigned int e, shift;

	if (v < PA_STATS_LAT_SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);	/* >= SUB_BITS */
	shift = e - PA_STATS_LAT_SUB_BITS;
	return PA_STATS_LAT_SUB + shift * PA_STATS_LAT_SUB +
		(unsigned int)(v >> shift) - PA_STATS_LAT_SUB;
}

static inline void
pa_stats_latency_add(struct pa_stats_latency *h, uint64_t v, uint64_t count)
{
	h->bucket[pa_stats_latency_bucket(v)] += count;
	h->sum += v * count;
	if (unlikely(v > h->max))
		h->max = v;
}

#endif /* PA_STATS_INLINE_H */
