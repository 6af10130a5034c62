/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_INLINE_H
#define PA_LB_INLINE_H

/**
 * @file
 * What the worker loop asks of lib/lb once a pass without a call: is
 * there a service (pa_lb_active()), and has pa_lb_poll() anything to do
 * on this lcore (pa_lb_poll_due()). Include pa_lb.h, not this file.
 */

#include <stdbool.h>
#include <stdint.h>

/**
 * The first member of struct pa_lb, kept by lib/lb alone (the data path
 * only reads it).
 */
struct pa_lb_dp {
	/** the live table has a service: stored with each publication,
	 * before the lcores are waited for (like the table itself) */
	bool active;
	/**
	 * By lcore: non-zero while pa_lb_poll() may have something to do
	 * there. Set when the lcore's flow table is made, by its
	 * pa_lb_process() (flows), and by pa_lb_trace() after it asks the
	 * lcore (each question adds one); the lcore's own pa_lb_poll()
	 * sets it to 0, unless it changed meanwhile, when it finds no flow,
	 * no question, no deferred free and no resize of its flow index
	 * due or under way.
	 */
	uint32_t poll[PA_LB_MAX_LCORES];
};

/** True when the LB has at least one service (the stage can be skipped
 * otherwise; one load). */
static inline bool
pa_lb_active(const struct pa_lb *lb)
{
	return lb != NULL && __atomic_load_n(&((const struct pa_lb_dp *)
		(const void *)lb)->active, __ATOMIC_RELAXED);
}

/** True when pa_lb_poll() has something to do on lcore @p lcore_idx
 * (else the call may be left out; one load). */
static inline bool
pa_lb_poll_due(const struct pa_lb *lb, unsigned int lcore_idx)
{
	return __atomic_load_n(&((const struct pa_lb_dp *)(const void *)lb)->
		poll[lcore_idx], __ATOMIC_ACQUIRE) != 0;
}

#endif /* PA_LB_INLINE_H */
