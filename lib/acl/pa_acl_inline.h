/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_ACL_INLINE_H
#define PA_ACL_INLINE_H

/**
 * @file
 * What the classify stage asks of lib/acl without a call: whether the
 * live table decides anything at all (pa_acl_forward_all()). Include
 * pa_acl.h, not this file.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

/** Per-lcore counters that do not depend on rules, written by their
 * lcore only (summed by pa_acl_snapshot()). */
struct pa_acl_lcore_extra {
	uint64_t default_hits;		/**< IP packets no rule matched */
	uint64_t non_ip;		/**< non-IP frames */
	uint64_t fc_hits;		/**< IP packets the flow cache knew */
	uint64_t fc_misses;		/**< looked up there and not found */
	uint64_t fc_pauses;		/**< times the cache was left alone
					 * for its poor hit rate */
} __rte_cache_aligned;

/**
 * The first member of struct pa_acl, kept by lib/acl alone (the data
 * path reads forward_all and adds to its own lcore's counters).
 */
struct pa_acl_dp {
	struct pa_acl_lcore_extra *extra;	/**< [n_lcores] */
	/** the live table has no rule and permits by default: stored with
	 * each publication, before the lcores are waited for (like the
	 * table itself) */
	bool forward_all;
};

/**
 * For a burst of @p n IPv4/IPv6 packets (at most 256) that the caller
 * would give pa_acl_classify_ip() on lcore @p lcore_idx and whose
 * verdicts it reads only when some packet is stopped: when the live
 * table has no rule and permits by default, count the burst as
 * pa_acl_classify_ip() would (n default hits; it would return 0 and
 * write PA_ACL_V_FORWARD verdicts) and return true; the call may then
 * be left out. Otherwise false, nothing counted. One load.
 */
static inline bool
pa_acl_forward_all(struct pa_acl *acl, unsigned int lcore_idx, uint16_t n)
{
	struct pa_acl_dp *d = (struct pa_acl_dp *)(void *)acl;

	if (!__atomic_load_n(&d->forward_all, __ATOMIC_ACQUIRE))
		return false;
	d->extra[lcore_idx].default_hits += n;
	return true;
}

#endif /* PA_ACL_INLINE_H */
