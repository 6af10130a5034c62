/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_ACL_H
#define PA_ACL_H

/**
 * @file
 * The classify stage's table: a 5-tuple ACL on IPv4 and IPv6 built on
 * DPDK's rte_acl, with actions permit, drop, mark (DSCP) and police
 * (rte_meter srTCM in packets per second), and per-rule counters.
 *
 * Semantics (docs/configuration.md):
 * - A rule matches when its src/dst prefixes, sport/dport ranges, protocol
 *   and in_port all match. A prefix "any" matches both families; a rule
 *   with an IPv4 prefix matches only IPv4 packets, with an IPv6 one only
 *   IPv6.
 * - Higher priority wins; on equal priority the lower id wins.
 * - Packets without L4 ports — ICMP/ICMPv6, non-first fragments, protocols
 *   other than TCP, UDP and SCTP — match the port fields as "any" (only
 *   addresses, protocol and in_port decide).
 * - No rule matches: the default action (permit or drop). Non-IP frames:
 *   forwarded, or dropped (reason non_ip) when acl.non_ip is "drop".
 *
 * Concurrency: one control thread mutates (pa_acl_rule_add() and friends);
 * data-path lcores call pa_acl_classify() concurrently. A change builds new
 * rte_acl contexts off the data path, publishes them with one pointer store,
 * waits for every lcore to pass a quiescent state (rte_rcu_qsbr) and frees
 * the old ones: a packet is classified by the old table or the new one,
 * never by a half-built one. A failed build returns an error and leaves the
 * old table in force. Counters are per lcore, indexed by a stable slot per
 * rule id, so they survive rebuilds for rules that survive.
 *
 * Cost of a change: each family has base contexts (the rules of the
 * last full build or fold) and small delta contexts (rules added since, at
 * most 256). pa_acl_rule_add() and pa_acl_rule_delete() rebuild the delta
 * only (milliseconds, whatever the table size): a deleted base rule is
 * voided and the base rules below it that overlap it are copied into the
 * delta. A packet takes the better match of the tiers. A control thread
 * ("pa-acl-fold") folds the delta into a new base in the background, off
 * the RPC path, and publishes it the same way, so the delta stays small.
 * pa_acl_rules_replace(), and a change that would overflow the delta,
 * rebuild everything (and make a fold in progress start again).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include <jansson.h>

#include "pa_acl_config.h"
#include "pa_config.h"
#include "pa_net.h"
#include "pa_pkt.h"

/** Verdict of one packet (what the caller must do with it). */
enum pa_acl_verdict {
	PA_ACL_V_FORWARD = 0,	/**< permitted (possibly re-marked) */
	PA_ACL_V_DROP_ACL,	/**< drop, reason "acl" */
	PA_ACL_V_DROP_POLICE,	/**< drop, reason "police" */
	PA_ACL_V_DROP_NON_IP,	/**< drop, reason "non_ip" */
};

struct pa_acl;

struct pa_acl_opts {
	struct rte_rcu_qsbr *rcu;	/**< the data path's QSBR variable */
	unsigned int n_lcores;		/**< data-path lcores (counter sets) */
	int socket;			/**< NUMA socket of the classify lcores */
	/** The configuration: acl section loaded at creation; port names
	 * (config order = port index) for in_port. */
	const struct pa_config *cfg;
	/** ethdev port id -> port index (RTE_MAX_ETHPORTS entries, 0xffff
	 * for none), to match in_port against m->port. */
	const uint16_t *port_index_of;
	/** No background folding: the delta tier is folded into the base
	 * only by the add that would overflow it (deterministic; tests). */
	bool no_folder;
};

/**
 * Create the ACL and load @p cfg->acl (may be absent: empty, permit).
 * @return NULL with the reason in @p err.
 */
struct pa_acl *pa_acl_create(const struct pa_acl_opts *o, char *err,
		size_t err_len);

void pa_acl_destroy(struct pa_acl *acl);

/**
 * Stop the background folder (a fold in progress finishes or is dropped;
 * later changes rebuild in the caller). Its folds publish through the
 * RCU variable given at create: stop it before that is freed. NULL-safe,
 * idempotent; pa_acl_destroy() stops it too.
 */
void pa_acl_stop_folder(struct pa_acl *acl);

/* ---- Control plane: control thread only. 0 or -errno, reason in err. */

/** Add one rule. -EEXIST: duplicate id; -EINVAL: family mix etc. */
int pa_acl_rule_add(struct pa_acl *acl, const struct pa_config_acl_rule *r,
		char *err, size_t err_len);

/** Delete a rule by id. -ENOENT when there is none. */
int pa_acl_rule_delete(struct pa_acl *acl, uint32_t id, char *err,
		size_t err_len);

/** Atomically replace the whole table (default, non_ip, rules). */
int pa_acl_rules_replace(struct pa_acl *acl, const struct pa_config_acl *a,
		char *err, size_t err_len);

/**
 * Told of every change of the rule set (pa_acl_rule_add(),
 * pa_acl_rule_delete(), pa_acl_rules_replace()): @p pre before the new
 * table is built and published, @p post after it (also when the change
 * failed) with the rules then live. The SmartNIC offload (lib/protect)
 * keeps its drop rules in step this way. Called with the ACL's lock
 * held: they must not call the ACL back.
 */
struct pa_acl_hook {
	void (*pre)(void *arg);
	void (*post)(void *arg, const struct pa_config_acl_rule *rules,
		unsigned int n);
	void *arg;
};

/** Set (or with NULL clear) the hook; a new one's post is called at once
 * with the live rules. Control thread. */
void pa_acl_set_hook(struct pa_acl *acl, const struct pa_acl_hook *h);

/** The rules as JSON objects of the config schema plus "hits" and
 * "bytes" (sorted by priority, then id). */
json_t *pa_acl_rules_json(const struct pa_acl *acl);

/** Counters of one rule in a struct pa_acl_snapshot. */
struct pa_acl_rule_counters {
	uint32_t id;			/**< the rule's id */
	uint64_t hits;			/**< packets that matched it */
	uint64_t bytes;			/**< their bytes (frame lengths) */
};

/**
 * The ACL's state and counters at one moment: what stats_get ("acl"),
 * the Prometheus exporter and telemetry report. Counters count since
 * the ACL was created (a rule's since it was added).
 */
struct pa_acl_snapshot {
	uint32_t rules;			/**< rules in the live table */
	enum pa_acl_action def;		/**< default action: permit or drop */
	bool non_ip_drop;		/**< acl.non_ip is "drop" */
	uint64_t default_hits;		/**< packets no rule matched */
	uint64_t non_ip_frames;		/**< non-IP frames seen (forwarded or
					 * dropped) */
	uint64_t version;		/**< bumped by every change */
	uint64_t folds;			/**< delta tier folded into the base */
	uint64_t delta_rules;		/**< rules in the delta tier */
	uint64_t builds;		/**< full builds */
	double build_ms;		/**< build time of the last change, ms */
	double update_ms;		/**< last change until live, ms */
	uint64_t memory_bytes;		/**< heap growth of the last full build */
	uint32_t flow_cache_entries;	/**< per lcore and family (0: off) */
	uint64_t flow_cache_hits;	/**< IP packets whose verdict the flow
					 * cache held */
	uint64_t flow_cache_misses;	/**< IP packets it did not hold */
	uint64_t flow_cache_pauses;	/**< times an lcore left its cache
					 * alone for a poor hit rate */
	const char *algorithm;		/**< pa_acl_algorithm() (static) */
	/** Per-rule counters, sorted by id; only with
	 * PA_ACL_SNAPSHOT_RULES (else 0 and NULL). Owned by the snapshot:
	 * pa_acl_snapshot_free(). */
	unsigned int n_rule_counters;
	struct pa_acl_rule_counters *rule_counters;
};

/** pa_acl_snapshot() flag: fill the per-rule counters too. */
#define PA_ACL_SNAPSHOT_RULES	0x1u

/**
 * Fill @p s with the ACL's state and counters (and with
 * PA_ACL_SNAPSHOT_RULES in @p flags, each rule's). Control thread.
 * @return 0, or -ENOMEM (@p s then holds nothing to free).
 */
int pa_acl_snapshot(const struct pa_acl *acl, unsigned int flags,
		struct pa_acl_snapshot *s);

/** Free what a snapshot holds (its per-rule counters); NULL ignored. */
void pa_acl_snapshot_free(struct pa_acl_snapshot *s);

/** "acl" part of stats_get rendered from a snapshot: rules, default,
 * non_ip, default_hits, non_ip_frames, version, folds, delta_rules,
 * builds, build_ms, update_ms, memory_bytes, algorithm,
 * flow_cache_entries, flow_cache_hits, flow_cache_misses,
 * flow_cache_pauses.
 * @return new reference, or NULL on allocation failure. */
json_t *pa_acl_snapshot_json(const struct pa_acl_snapshot *s);

/** "acl" part of stats_get: pa_acl_snapshot() (without rules) rendered
 * by pa_acl_snapshot_json(). */
json_t *pa_acl_stats_json(const struct pa_acl *acl);

/** Copy the live rule set into @p out (replacing its rules; allocated,
 * freed by pa_config_free()). For config_get / config_save. */
int pa_acl_export(const struct pa_acl *acl, struct pa_config_acl *out);

/** Name of the rte_acl classify algorithm in use ("avx512x32", "avx2",
 * "sse", "scalar", ...). */
const char *pa_acl_algorithm(const struct pa_acl *acl);

/**
 * Classify a described packet on the live table with the data path's
 * code (trace_packet). Control thread.
 * @param in_port  port index, or -1 for "any/unknown"
 * @param rule_id  matching rule id, 0 when the default action applied
 * @param action   the action of the rule or default
 */
int pa_acl_trace(struct pa_acl *acl, const struct pa_flow_key *key,
		bool has_ports, int in_port, uint32_t *rule_id,
		enum pa_acl_action *action);

/* ---- Data path. */

/**
 * Classify a burst on lcore @p lcore_idx (0..n_lcores-1): look up every
 * packet, count the rule hits, apply mark (rewrites DSCP / traffic class,
 * fixes the IPv4 checksum) and police, and write each packet's verdict.
 * Packets need parsed metadata (pa_pkt_meta()). In-port is m->port mapped
 * to the port index given at creation. At most 256 packets per call (the
 * pipeline's largest burst).
 * @return how many verdicts are not PA_ACL_V_FORWARD (0: the caller
 *         keeps the whole burst as it is)
 */
uint16_t pa_acl_classify(struct pa_acl *acl, unsigned int lcore_idx,
		struct rte_mbuf **pkts, uint16_t n, uint8_t *verdicts);

/**
 * pa_acl_classify() of a burst the caller knows to be all IPv4 or IPv6
 * (the parser's flags: no PA_PKT_F_NON_IP): with no rule, every packet
 * takes the default and is counted in default_hits, with no look at
 * each packet. Same verdicts, counters and result.
 */
uint16_t pa_acl_classify_ip(struct pa_acl *acl, unsigned int lcore_idx,
		struct rte_mbuf **pkts, uint16_t n, uint8_t *verdicts);

/* pa_acl_forward_all() (pa_acl_inline.h): whether a burst need not be
 * classified at all (a table without rules that permits). */

/**
 * The context of the acl_* methods (RPC subsystem "acl", bound by the
 * application with pa_rpc_bind("acl", ctx)): the ACL they change and the
 * running configuration they keep in step with it (config_get,
 * config_save). Owned by the application; both pointers are borrowed.
 */
struct pa_acl_rpc_ctx {
	struct pa_acl *acl;
	struct pa_config *running;	/**< may be NULL: nothing kept in step */
};

extern int pa_acl_logtype;

#include "pa_acl_inline.h"

#endif /* PA_ACL_H */
