/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_CSUM_H
#define PA_LB_CSUM_H

/*
 * The checksum kit of lib/lb's rewrites (the data path, lb_proxy.c,
 * lb_xlat.c): RFC 1624 incremental updates (HC' = ~(~HC + ~m + m')) and
 * the sum of bytes over an mbuf chain. Standalone: the modules include it
 * without lb_priv.h.
 */

#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

/** Add ~old + new of @p len bytes (even; 16-bit words from the start of
 * the checksummed data, at any address) to the difference @p s. */
static __rte_always_inline uint32_t
lb_csum_add_diff(uint32_t s, const void *oldp, const void *newp,
		unsigned int len)
{
	const uint8_t *o = oldp, *n = newp;
	uint16_t a, b;
	unsigned int i;

	for (i = 0; i < len; i += 2) {
		memcpy(&a, o + i, 2);
		memcpy(&b, n + i, 2);
		s += (uint16_t)~a;
		s += b;
	}
	return s;
}

/** Checksum @p old_sum (memory order) updated by the difference
 * @p diff. */
static __rte_always_inline uint16_t
lb_csum_finish(uint16_t old_sum, uint32_t diff)
{
	uint32_t s = (uint16_t)~old_sum + diff;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/** The checksum field at @p field (any address) updated by @p diff. */
static __rte_always_inline void
lb_csum_apply(uint8_t *field, uint32_t diff)
{
	uint16_t c;

	memcpy(&c, field, 2);
	c = lb_csum_finish(c, diff);
	memcpy(field, &c, 2);
}

/**
 * The ones' complement sum (folded, memory order, not complemented) of
 * @p len bytes of @p m from packet offset @p off, over its segments (the
 * caller knows they are there). DPDK 22.11's rte_raw_cksum_mbuf() drops
 * carries when a segment ends at an odd offset, hence this one: each
 * segment's sum folded, byte-swapped when it starts at an odd offset of
 * the data.
 */
static inline uint16_t
lb_csum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint32_t s = 0, done = 0, n;
	uint16_t part;

	while (m != NULL && off >= rte_pktmbuf_data_len(m)) {
		off -= rte_pktmbuf_data_len(m);
		m = m->next;
	}
	for (; m != NULL && done < len; m = m->next, off = 0) {
		n = RTE_MIN(len - done, rte_pktmbuf_data_len(m) - off);
		part = rte_raw_cksum(rte_pktmbuf_mtod_offset(m, const uint8_t *,
			off), n);
		s += (done & 1) ? (uint16_t)(part << 8 | part >> 8) : part;
		done += n;
	}
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

#endif /* PA_LB_CSUM_H */
