/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_OFFLOAD_H
#define PA_OFFLOAD_H

/**
 * @file
 * SmartNIC offload with rte_flow: the source blocklist's prefixes, and
 * the ACL's drop rules that no better non-drop rule overlaps, become NIC
 * drop rules (the ACL's through the hook it calls on every change,
 * pa_acl_set_hook(): pa_offload_acl_pre() / pa_offload_acl_post()).
 *
 * At start each port is probed: rte_flow_validate() of an ingress rule
 * "ETH / IPV4 src 192.0.2.0/24 / END -> COUNT, DROP" (then without COUNT).
 * A port that accepts it is "capable"; the blocklist's prefixes, up to
 * PA_OFFLOAD_MAX_RULES per port (IPv6 ones when the port also validates an
 * IPV6 rule), are then created there as drop rules; everything else stays
 * in software. The software blocklist always holds the whole set: the NIC
 * drops a subset of what software would drop, earlier, so the two can
 * never disagree on a packet's fate.
 *
 * On every blocklist change the port's rules are destroyed before the new
 * software table is published and created again after it (a window of
 * milliseconds where software alone drops; never one where the NIC drops
 * a prefix software no longer has). A rule the NIC refuses turns that
 * port's offload off (its rules destroyed, "reason" says why) until the
 * next change tries again.
 *
 * Hits of offloaded rules are the NIC's COUNT where it has one (reported
 * apart: "hits"); software counts only what reaches it.
 *
 * Threads: control thread only (the blocklist's lock is held by the
 * blocklist when it calls pa_offload_blocklist_*()).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_flow.h>

#include <jansson.h>

#include "pa_blocklist.h"
#include "pa_config.h"
#include "pa_net.h"

/** Most blocklist rules put in one port's NIC. */
#define PA_OFFLOAD_MAX_RULES	4096u
/** Most ports probed. */
#define PA_OFFLOAD_MAX_PORTS	16u

/** Most ACL drop rules put in one port's NIC. */
#define PA_OFFLOAD_MAX_ACL	1024u

/** One rte_flow rule and the storage its items and actions point to. */
struct pa_flow_rule {
	struct rte_flow_attr attr;
	/** ETH, IPV4|IPV6, [TCP|UDP,] END */
	struct rte_flow_item pattern[4];
	struct rte_flow_action actions[3];	/**< [COUNT,] DROP, END */
	struct rte_flow_item_ipv4 v4, v4_mask;
	struct rte_flow_item_ipv6 v6, v6_mask;
	struct rte_flow_item_tcp tcp, tcp_mask;
	struct rte_flow_item_udp udp, udp_mask;
	struct rte_flow_action_count count;
};

/**
 * Translate a source prefix into an ingress drop rule: pattern ETH (any) /
 * IPV4 or IPV6 with hdr.src_addr = the prefix, mask = its netmask / END;
 * actions [COUNT,] DROP / END. A /0 has an all-zero mask (every packet of
 * the family). The rule points into @p r: do not copy it.
 * @return 0, or -EINVAL (family neither IPv4 nor IPv6, length too long).
 */
int pa_offload_rule_prefix(const struct pa_ip_prefix *p, bool count,
		struct pa_flow_rule *r);

/**
 * Translate an ACL drop rule, for packets of @p family (AF_INET or
 * AF_INET6: a rule whose prefixes are both "any" needs one of each):
 * ETH / IPV4|IPV6 (src, dst prefixes; next_proto_id / proto when the rule
 * names one) / TCP|UDP (a port that is one number, not a range) / END ->
 * [COUNT,] DROP. The NIC then drops a subset of what the ACL drops: a
 * packet without the L4 header (a non-first fragment) does not match an
 * L4 item and reaches the ACL, which drops it.
 * @return 0; -ENOTSUP (a port range that is not one port or "any", ports
 * with a protocol other than TCP or UDP, a rule of the other family, an
 * action other than drop); -EINVAL.
 */
int pa_offload_rule_acl(const struct pa_config_acl_rule *r, int family,
		bool count, struct pa_flow_rule *fr);

/**
 * May ACL rule @p i of @p rules (@p n, any order) be dropped by the NIC
 * without changing any packet's fate? Yes when it is a drop rule and no
 * rule ranked above it (higher priority, or equal and lower id) whose
 * action is not drop could match a packet it matches (prefixes, protocol
 * and in_port compared; ports are not, so the answer may be no when it is
 * yes).
 */
bool pa_offload_acl_safe(const struct pa_config_acl_rule *rules,
		unsigned int n, unsigned int i);

struct pa_offload;

/** Before the ACL publishes a change: destroy the NIC's ACL rules
 * (@p off: a struct pa_offload; the signature of struct pa_acl_hook). */
void pa_offload_acl_pre(void *off);

/** After it: create NIC rules for the safe drop rules of @p rules (up to
 * PA_OFFLOAD_MAX_ACL a port; a rule with in_port only on that port). */
void pa_offload_acl_post(void *off, const struct pa_config_acl_rule *rules,
		unsigned int n);

struct pa_offload_opts {
	unsigned int n_ports;
	uint16_t port_id[PA_OFFLOAD_MAX_PORTS];
	const char *name[PA_OFFLOAD_MAX_PORTS];	/**< kept by the caller */
	uint32_t max_rules;			/**< 0: PA_OFFLOAD_MAX_RULES */
};

/** Probe every port (rte_flow_validate). NULL with errno ENOMEM. */
struct pa_offload *pa_offload_create(const struct pa_offload_opts *o);

/** Destroy the rules created and free. NULL ignored. */
void pa_offload_destroy(struct pa_offload *off);

/** How many of the blocklist's first prefixes pa_offload_blocklist_post()
 * can use (0: no port takes any, NULL included): the blocklist copies no
 * more of its set than that. */
uint32_t pa_offload_blocklist_want(const struct pa_offload *off);

/** Before a new blocklist is published: destroy the NIC rules. */
void pa_offload_blocklist_pre(struct pa_offload *off);

/** After @p s went live in software: create its rules (up to the bound)
 * on the capable ports. */
void pa_offload_blocklist_post(struct pa_offload *off,
		const struct pa_bl_set *s);

/** pipeline_get's "offload": {PORT: {"capable", "active", "blocklist",
 * "acl_drop", "hits", "reason"}}. New reference, NULL on ENOMEM. */
json_t *pa_offload_json(struct pa_offload *off);

/** Let @p bl keep @p off in step with its changes (NULL: none); calls
 * pa_offload_blocklist_post() with the live set at once. */
void pa_blocklist_set_offload(struct pa_blocklist *bl,
		struct pa_offload *off);

#endif /* PA_OFFLOAD_H */
