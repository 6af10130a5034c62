/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_CAPTURE_INLINE_H
#define PA_CAPTURE_INLINE_H

/**
 * @file
 * The data path's side of the capture (included by pa_capture.h): is a
 * drop reason being captured, and hand a dropped mbuf over. Only on the
 * drop path; a reason not captured costs one load and a test.
 */

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>

/** True when dropped packets of reason @p r are being captured. */
static __rte_always_inline bool
pa_capture_wanted(const struct pa_capture_tap *t, enum pa_drop_reason r)
{
	return t != NULL &&
		((__atomic_load_n(&t->mask, __ATOMIC_ACQUIRE) >> r) & 1u) != 0;
}

/** The mbuf's capture mark (valid once it is on the ring). */
static __rte_always_inline struct pa_capture_mark *
pa_capture_mark(const struct pa_capture_tap *t, struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, t->mark_offset, struct pa_capture_mark *);
}

/**
 * Try once to put a dropped mbuf, marked with its reason and the time,
 * on the ring.
 * @return true when the ring took it (the control side frees it),
 *         false when it is full (the mbuf is still the caller's).
 */
static __rte_always_inline bool
pa_capture_offer(struct pa_capture_tap *t, struct rte_mbuf *m,
		enum pa_drop_reason r)
{
	struct pa_capture_mark *mk = pa_capture_mark(t, m);

	uint64_t tsc = rte_rdtsc();

	mk->tsc_lo = (uint32_t)tsc;
	mk->tsc_hi = (uint32_t)(tsc >> 32);
	mk->reason = (uint8_t)r;
	return rte_ring_mp_enqueue(t->ring, m) == 0;
}

/** Whether a full ring should be waited for (replay) rather than lose. */
static __rte_always_inline bool
pa_capture_should_wait(const struct pa_capture_tap *t)
{
	return __atomic_load_n(&t->wait, __ATOMIC_RELAXED) != 0;
}

/** Count a packet lost to a full ring (lcore @p idx only). */
static __rte_always_inline void
pa_capture_count_lost(struct pa_capture_tap *t, unsigned int idx,
		enum pa_drop_reason r)
{
	if (likely(idx <= PA_CAPTURE_CTRL_SLOT))
		t->lcore[idx].lost[r]++;
}

#endif /* PA_CAPTURE_INLINE_H */
