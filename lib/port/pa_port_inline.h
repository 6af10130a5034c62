/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_PORT_INLINE_H
#define PA_PORT_INLINE_H

/**
 * @file
 * The data path's side of port roles. Include pa_port.h, not this file.
 *
 * What a routed port takes (pa_port_l2_class())
 * ---------------------------------------------
 * - unicast frames for its own MAC;
 * - broadcast (ff:ff:ff:ff:ff:ff) and IPv6 all-nodes (33:33:00:00:00:01);
 * - IPv6 solicited-node groups (33:33:ff:xx:xx:xx), but only the
 *   neighbour solicitations / advertisements in them that the neighbour
 *   subsystem takes (targets: the port's addresses, the VIPs,
 *   lb.local_addr6, the full-NAT pool): the rx stage drops the rest of
 *   this class.
 * Everything else (other unicast MACs, IPv4 multicast 01:00:5e:..., other
 * IPv6 groups 33:33:..., link-local protocols 01:80:c2:...) is dropped
 * with reason "not_ours" and never sent anywhere.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>

/** Classes of destination MAC, for a routed port. */
enum pa_port_l2 {
	PA_PORT_L2_OURS = 0,	/**< unicast to the port's MAC */
	PA_PORT_L2_GROUP,	/**< broadcast or IPv6 all-nodes */
	PA_PORT_L2_SNM,		/**< an IPv6 solicited-node group */
	PA_PORT_L2_FOREIGN,	/**< anything else: not ours */
};

/** The 48 bits of a MAC loaded as the first 6 bytes of a uint64_t. */
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
#define PA_PORT_MAC_MASK	UINT64_C(0x0000ffffffffffff)
#else
#define PA_PORT_MAC_MASK	UINT64_C(0xffffffffffff0000)
#endif

/** @p mac as compared by pa_port_l2_class(). */
static inline uint64_t
pa_port_mac64(const struct rte_ether_addr *mac)
{
	uint64_t v = 0;

	memcpy(&v, mac->addr_bytes, RTE_ETHER_ADDR_LEN);
	return v & PA_PORT_MAC_MASK;
}

/** The class of a group (multicast bit set) or foreign destination. */
static inline enum pa_port_l2
pa_port_l2_group(const uint8_t *dst)
{
	static const uint8_t all_nodes[6] = { 0x33, 0x33, 0, 0, 0, 1 };

	if (!(dst[0] & 1))
		return PA_PORT_L2_FOREIGN;
	if ((dst[0] & dst[1] & dst[2] & dst[3] & dst[4] & dst[5]) == 0xff)
		return PA_PORT_L2_GROUP;
	if (memcmp(dst, all_nodes, 6) == 0)
		return PA_PORT_L2_GROUP;
	if (dst[0] == 0x33 && dst[1] == 0x33 && dst[2] == 0xff)
		return PA_PORT_L2_SNM;
	return PA_PORT_L2_FOREIGN;
}

/**
 * Class of the destination MAC of a frame (at least 8 readable bytes at
 * @p eth, as any parsed frame has) arriving on a routed port whose MAC is
 * @p own (pa_port_mac64()). One compare for frames to the port's MAC.
 */
static __rte_always_inline enum pa_port_l2
pa_port_l2_class(const uint8_t *eth, uint64_t own)
{
	uint64_t d;

	memcpy(&d, eth, sizeof(d));
	if (likely(((d ^ own) & PA_PORT_MAC_MASK) == 0))
		return PA_PORT_L2_OURS;
	return pa_port_l2_group(eth);
}

/**
 * Is an IPv4 destination (network order) for the port itself: one of its
 * addresses @p addr4, the directed broadcast of one of its subnets
 * @p bcast4 (0: none), or limited broadcast / multicast (never routed)?
 */
static __rte_always_inline bool
pa_port_local4(const uint32_t *addr4, const uint32_t *bcast4, unsigned int n,
		uint32_t dst)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (dst == addr4[i] || (bcast4[i] != 0 && dst == bcast4[i]))
			return true;
	return unlikely((rte_be_to_cpu_32(dst) >> 28) == 0xe ||
		dst == UINT32_MAX);
}

/** Same for IPv6: one of its addresses, multicast (ff00::/8), or
 * link-local (fe80::/10: never routed, RFC 4291 2.5.6; the kernel_if's
 * own link-local is one, pa_port.ll6). */
static __rte_always_inline bool
pa_port_local6(const uint8_t (*addr6)[16], unsigned int n,
		const uint8_t *dst)
{
	unsigned int i;

	if (unlikely(dst[0] == 0xff || (dst[0] == 0xfe &&
	    (dst[1] & 0xc0) == 0x80)))
		return true;
	for (i = 0; i < n; i++)
		if (memcmp(dst, addr6[i], 16) == 0)
			return true;
	return false;
}

/**
 * Decrement the TTL of the IPv4 header at @p ip (at least 20 bytes) and
 * update its checksum incrementally (RFC 1624, eqn. 3: HC' = ~(~HC + ~m +
 * m')), so that a header whose checksum was right stays right. The caller
 * has checked TTL > 1.
 */
static __rte_always_inline void
pa_port_ttl_dec4(uint8_t *ip)
{
	uint16_t hc, m, m2;
	uint32_t sum;

	/* the 16-bit word holding the TTL (and the protocol) */
	m = (uint16_t)(ip[8] << 8 | ip[9]);
	ip[8]--;
	m2 = (uint16_t)(ip[8] << 8 | ip[9]);
	hc = (uint16_t)(ip[10] << 8 | ip[11]);
	sum = (uint16_t)~hc + (uint32_t)(uint16_t)~m + m2;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	hc = (uint16_t)~sum;
	ip[10] = (uint8_t)(hc >> 8);
	ip[11] = (uint8_t)hc;
}

/** A token bucket of ICMP errors (one per lcore; no lock). */
struct pa_port_bucket {
	uint64_t last;		/**< time of the last refill */
	uint64_t per_token;	/**< time units per token; 0: no limit */
	uint32_t tokens;
	uint32_t burst;
};

/** Set a bucket up, full. @p per_token 0: unlimited. */
static inline void
pa_port_bucket_init(struct pa_port_bucket *b, uint64_t now,
		uint64_t per_token, uint32_t burst)
{
	b->last = now;
	b->per_token = per_token;
	b->tokens = burst;
	b->burst = burst;
}

/** Take a token at time @p now (monotonic). @return whether there was one. */
static inline bool
pa_port_bucket_take(struct pa_port_bucket *b, uint64_t now)
{
	uint64_t add;

	if (b->per_token == 0)
		return true;
	if (now > b->last) {
		add = (now - b->last) / b->per_token;
		if (add >= b->burst - b->tokens) {
			b->tokens = b->burst;
			b->last = now;
		} else if (add != 0) {
			b->tokens += (uint32_t)add;
			b->last += add * b->per_token;
		}
	}
	if (b->tokens == 0)
		return false;
	b->tokens--;
	return true;
}

#endif /* PA_PORT_INLINE_H */
