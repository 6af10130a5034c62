/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_STATS_H
#define PA_STATS_H

/**
 * @file
 * Data-path counters: drop reasons and per-lcore counter blocks.
 *
 * Every packet that enters the appliance leaves it exactly once: either
 * transmitted (counted in tx_packets) or dropped with one reason
 * (counted in drops[reason]). Counter blocks are cache-aligned, written
 * only by the lcore that owns them and summed by readers on the control
 * thread; readers see values that may lag by a few packets but never tear
 * (64-bit naturally aligned stores).
 */

#include <stdint.h>

#include <rte_common.h>

#include <jansson.h>

/** Why a packet was dropped. Names (pa_stats_drop_name()) are the keys
 * of the "drops" object in stats_get and in the replay summary. */
enum pa_drop_reason {
	PA_DROP_MALFORMED = 0,	/**< truncated or inconsistent headers */
	PA_DROP_ACL,		/**< denied by an ACL rule or the default */
	PA_DROP_POLICE,		/**< over the rate of a police rule */
	PA_DROP_NON_IP,		/**< non-IP frame with acl.non_ip = drop */
	PA_DROP_NO_BACKEND,	/**< service has no usable backend */
	PA_DROP_MTU,		/**< encapsulated packet exceeds port MTU */
	PA_DROP_RING_FULL,	/**< next stage's ring full (live mode) */
	PA_DROP_TX_FULL,	/**< TX queue full (live mode) */
	PA_DROP_RX_ERROR,	/**< lost by the PMD on receive (replay) */
	PA_DROP_SHUTDOWN,	/**< still in flight when the daemon stopped */
	PA_DROP_LOCAL,		/**< ARP/ND for the appliance itself, handed
				 * to the control side (lib/neigh) */
	PA_DROP_NEIGH_RING_FULL, /**< ... whose ring was full (live mode) */
	PA_DROP_MAX
};

/** Stage identifiers, in data-path order. */
enum pa_stage_id {
	PA_STAGE_RX = 0,
	PA_STAGE_CLASSIFY,
	PA_STAGE_LB,
	PA_STAGE_TX,
	PA_STAGE_MAX
};

/** Counters of one lcore. Written by that lcore only. */
struct pa_lcore_stats {
	uint64_t rx_packets;		/**< received from ports */
	uint64_t tx_packets;		/**< accepted by a TX queue */
	uint64_t stage_packets[PA_STAGE_MAX]; /**< packets into each stage */
	uint64_t drops[PA_DROP_MAX];
	uint64_t busy_polls;		/**< loop iterations that found work */
	uint64_t idle_polls;		/**< loop iterations that found none */
	uint64_t busy_cycles;		/**< TSC cycles spent in busy iterations */
	/** Frames the control side sent (lib/neigh), not in tx_packets:
	 * they were never received. */
	uint64_t ctrl_tx_packets;
	uint64_t ctrl_tx_dropped;	/**< ... refused by a full TX queue */
} __rte_cache_aligned;

/** Name of a drop reason ("malformed", "acl", ...). */
const char *pa_stats_drop_name(enum pa_drop_reason r);

/** Name of a stage ("rx", "classify", "lb", "tx"). */
const char *pa_stats_stage_name(enum pa_stage_id s);

/**
 * Add the counters of @p src to @p dst (both may be read concurrently with
 * the owner writing @p src).
 */
void pa_stats_accumulate(struct pa_lcore_stats *dst,
		const struct pa_lcore_stats *src);

/** Sum of all drop reasons. */
uint64_t pa_stats_total_drops(const struct pa_lcore_stats *s);

/**
 * Build a "drops" object: every reason as a key, zero included.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_stats_drops_json(const struct pa_lcore_stats *s);

#endif /* PA_STATS_H */
