/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_ACL_H
#define PA_ACL_H

/**
 * @file
 * The classify stage's table: a 5-tuple ACL on IPv4 and IPv6 built on
 * DPDK's rte_acl, with actions permit, drop, mark (DSCP) and police
 * (rte_meter srTCM in packets per second), and per-rule counters.
 *
 * Semantics (CONTRACT section 4):
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

/** The rules as JSON objects of the config schema plus "hits" and
 * "bytes" (sorted by priority, then id). */
json_t *pa_acl_rules_json(const struct pa_acl *acl);

/** "acl" part of stats_get: rules, default, non_ip, default_hits,
 * non_ip_frames (non-IP frames seen, forwarded or dropped), version,
 * builds (full builds), build_ms (last change), memory_bytes (heap growth
 * of the last full build), algorithm. */
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
 */
void pa_acl_classify(struct pa_acl *acl, unsigned int lcore_idx,
		struct rte_mbuf **pkts, uint16_t n, uint8_t *verdicts);

/**
 * Make @p acl the ACL that the acl_* methods and trace_packet use, and
 * @p running the configuration they keep in step (config_get). NULL
 * detaches. Control thread.
 */
void pa_acl_rpc_set(struct pa_acl *acl, struct pa_config *running);

/** The ACL set with pa_acl_rpc_set(), or NULL. */
struct pa_acl *pa_acl_rpc_get(void);

extern int pa_acl_logtype;

#endif /* PA_ACL_H */
