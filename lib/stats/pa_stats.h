/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_STATS_H
#define PA_STATS_H

/**
 * @file
 * Data-path counters: drop reasons and per-lcore counter blocks.
 *
 * Every packet that enters the appliance leaves it exactly once: either
 * transmitted (counted in tx_packets) or dropped with one reason
 * (counted in drops[reason]), so rx_packets = tx_packets + drops. The
 * ICMP errors the data path generates (time exceeded, fragmentation
 * needed / packet too big) are counted apart (icmp_tx_packets, ...), never
 * in tx_packets: the packet that caused one is counted as dropped. Counter blocks are cache-aligned, written
 * only by the lcore that owns them and summed by readers on the control
 * thread; readers see values that may lag by a few packets but never tear
 * (64-bit naturally aligned stores).
 */

#include <stdbool.h>
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
				 * to the control side (lib/neigh), and
				 * frames handed to a kernel_if (lib/excp) */
	PA_DROP_NEIGH_RING_FULL, /**< ... whose ring was full (live mode) */
	PA_DROP_EXCP_FULL,	/**< for a port's own address, its kernel
				 * interface's ring full (lib/excp) */
	PA_DROP_EXCP_RATE,	/**< ... over the exception path's rate */
	PA_DROP_NOT_OURS,	/**< routed port: frame for another MAC, or
				 * for a multicast group the port does not
				 * handle (never reflected) */
	PA_DROP_TO_SELF,	/**< routed port: for the port itself (its
				 * addresses, broadcast, handled multicast)
				 * and consumed by nothing in the data path */
	PA_DROP_TTL,		/**< transit with TTL / hop limit <= 1 (ICMP
				 * time exceeded sent back, rate-limited) */
	PA_DROP_NO_ROUTE,	/**< transit, but the out port's gateway is
				 * unknown or not resolved */
	PA_DROP_ICMP_BAD_QUOTE,	/**< ICMP error to a VIP quoting garbage */
	PA_DROP_ICMP_NO_SERVICE, /**< ICMP error to a VIP quoting no
				 * service's flow */
	PA_DROP_NO_SERVICE,	/**< routed port: to a VIP or lb.local_addr,
				 * matching no service (never routed back out) */
	PA_DROP_HANDOVER_FULL,	/**< rtc: an ICMP error for another worker's
				 * flow, that worker's hand-over ring full
				 * (live mode) */
	PA_DROP_NAT_AMBIGUOUS,	/**< a nat backend's reply matching no flow
				 * that several nat services' Maglev
				 * choices explain */
	PA_DROP_SRC_LIMIT,	/**< a new flow over its source prefix's
				 * token bucket (protect.src_new_flows) */
	PA_DROP_MAX_FLOWS,	/**< a new flow of a service at its
				 * max_flows live flows */
	PA_DROP_BLOCKLIST,	/**< source in the blocklist (classify,
				 * before the ACL) */
	PA_DROP_FNAT_NO_PORT,	/**< a new fnat flow, no pool port free of
				 * its backend's family */
	PA_DROP_FNAT_TABLE_FULL, /**< a new fnat flow, flow table full */
	PA_DROP_FNAT_FRAGMENT,	/**< a fragment to an fnat service */
	PA_DROP_FNAT_UNMATCHED,	/**< to a pool address and port, no flow */
	PA_DROP_FNAT_XLAT,	/**< an fnat packet that cannot be made
				 * into its backend's (no room, IPv4
				 * options, IPv6 extension headers) */
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
	uint64_t sleeps;		/**< idle back-off sleeps (adaptive polling) */
	uint64_t sleep_cycles;		/**< TSC cycles spent in those sleeps */
	/** Frames the control side sent (lib/neigh), not in tx_packets:
	 * they were never received. */
	uint64_t ctrl_tx_packets;
	uint64_t ctrl_tx_dropped;	/**< ... refused by a full TX queue */
	/** ICMP errors the data path generated, sent on a TX queue: time
	 * exceeded (routed ports; the packet that caused one is counted
	 * under drop reason "ttl") and fragmentation needed / packet too
	 * big (the lb stage; reason "mtu"). Not in tx_packets. */
	uint64_t icmp_tx_packets;
	uint64_t icmp_tx_dropped;	/**< ... refused by a full TX queue */
	uint64_t icmp_rate_limited;	/**< not sent: over the lcore's rate */
	uint64_t icmp_not_sent;		/**< not sent: not allowed (about an
					 * ICMP error, a non-first fragment, a
					 * multicast source), no source address
					 * on the port, no mbuf, ring full */
	/** rtc, RSS steering: ICMP errors this worker received for a flow
	 * that another worker's RX queue receives, handed to that worker */
	uint64_t handover_packets;
	/** ... and those this worker took from its hand-over ring */
	uint64_t handover_received;
} __rte_cache_aligned;

/*
 * Latency histogram.
 *
 * Log-scale buckets over the whole uint64_t range of a value in TSC
 * cycles, HdrHistogram-like: values 0..15 have a bucket each; above, every
 * power of two [2^e, 2^(e+1)) is split into 16 linear sub-buckets of width
 * 2^(e-4). A bucket is at most 1/16 (6.25%) of its lower bound wide, so a
 * percentile reported as its bucket's midpoint is within 1/32 of the
 * exact value. 976 buckets, 7.8 KB.
 *
 * One histogram per data-path lcore, written only by that lcore (plain
 * 64-bit stores: readers never see a torn value, but may see a bucket
 * one update ahead of the sum), merged by readers with
 * pa_stats_latency_merge(). The total count is the sum of the buckets.
 */

#define PA_STATS_LAT_SUB_BITS	4
#define PA_STATS_LAT_SUB	(1u << PA_STATS_LAT_SUB_BITS)
/** Number of buckets. */
#define PA_STATS_LAT_BUCKETS	(PA_STATS_LAT_SUB + \
	(64 - PA_STATS_LAT_SUB_BITS) * PA_STATS_LAT_SUB)

struct pa_stats_latency {
	uint64_t max;			/**< largest value recorded */
	uint64_t sum;			/**< sum of the values (wraps only after
					 * ~2^64 cycles in total) */
	uint64_t bucket[PA_STATS_LAT_BUCKETS];	/**< counts */
} __rte_cache_aligned;

/** Bucket index of a value (inline: pa_stats_inline.h). */
static inline unsigned int pa_stats_latency_bucket(uint64_t v);

/** Record @p count values equal to @p v (owner lcore only; inline). */
static inline void pa_stats_latency_add(struct pa_stats_latency *h,
		uint64_t v, uint64_t count);

/** Smallest value of bucket @p i (i < PA_STATS_LAT_BUCKETS). */
uint64_t pa_stats_latency_bucket_lower(unsigned int i);

/** Largest value of bucket @p i (inclusive; UINT64_MAX for the last). */
uint64_t pa_stats_latency_bucket_upper(unsigned int i);

/** Add the histogram @p src to @p dst (@p src may be written meanwhile
 * by its owner). */
void pa_stats_latency_merge(struct pa_stats_latency *dst,
		const struct pa_stats_latency *src);

/** Number of values recorded (sum of the buckets). */
uint64_t pa_stats_latency_count(const struct pa_stats_latency *h);

/**
 * Quantile @p q (0 < q <= 1) of the recorded values: the midpoint of the
 * bucket that holds the value of rank ceil(q * count) in sorted order,
 * never above the recorded maximum; the maximum itself for the top rank
 * (q = 1). 0 when the histogram is empty.
 */
uint64_t pa_stats_latency_quantile(const struct pa_stats_latency *h,
		double q);

/**
 * A latency histogram summed up in nanoseconds: the figures stats_get,
 * the Prometheus exporter and telemetry report. Plain values, owned by
 * whoever holds the struct.
 */
struct pa_stats_latency_summary {
	bool enabled;		/**< false: latency off (the rest is 0) */
	uint64_t count;		/**< values recorded */
	uint64_t mean_ns;	/**< mean, rounded to the nanosecond */
	uint64_t p50_ns;	/**< pa_stats_latency_quantile(0.5) */
	uint64_t p90_ns;	/**< ... 0.9 */
	uint64_t p99_ns;	/**< ... 0.99 */
	uint64_t p999_ns;	/**< ... 0.999 */
	uint64_t max_ns;	/**< the largest value */
};

/**
 * Sum up a histogram of TSC cycles in nanoseconds (values rounded, at
 * most INT64_MAX). @p h NULL (latency off): enabled false, the rest 0.
 */
void pa_stats_latency_summarize(const struct pa_stats_latency *h,
		uint64_t tsc_hz, struct pa_stats_latency_summary *out);

/**
 * The stats_get view of a summary: {"enabled", "count", "mean_ns",
 * "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"}.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_stats_latency_summary_json(
		const struct pa_stats_latency_summary *s);

/**
 * pa_stats_latency_summarize() then pa_stats_latency_summary_json().
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_stats_latency_json(const struct pa_stats_latency *h,
		uint64_t tsc_hz);

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

#include "pa_stats_inline.h"

/**
 * The "icmp_errors" object of stats_get and of the replay summary: the
 * ICMP errors the data path generated (icmp_tx_packets, icmp_tx_dropped,
 * icmp_rate_limited, icmp_not_sent) from summed counters.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_stats_icmp_errors_json(const struct pa_lcore_stats *s);

/** {"packets": N, "received": N}: rtc hand-overs of quoted ICMP errors
 * (handover_packets, handover_received). New reference or NULL. */
json_t *pa_stats_handover_json(const struct pa_lcore_stats *s);

#endif /* PA_STATS_H */
