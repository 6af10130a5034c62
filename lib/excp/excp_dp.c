/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rx stage's out-of-line half of the exception path (pa_excp_inline.h
 * says which frames go where): the token bucket, the ring, and the ARP
 * reply / neighbour advertisement copies. Reads frames, never writes.
 */
#include <netinet/in.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "pa_excp.h"

#define ARP_OP_REPLY	2
#define ICMP6_NA	136

static int
excp_take(const struct pa_excp_fast *x, unsigned int widx,
		struct rte_mbuf *m, uint16_t port_index)
{
	struct pa_excp_row *row = &x->rows[widx];

	if (!pa_excp_tb_take(&row->tat[port_index], rte_rdtsc(),
	    x->interval[port_index], x->tolerance[port_index]))
		return PA_EXCP_RATE;
	if (rte_ring_mp_enqueue(x->ring[port_index], m) != 0)
		return PA_EXCP_FULL;
	return PA_EXCP_TAKEN;
}

int
pa_excp_punt_frame(const struct pa_excp_fast *x, unsigned int widx,
		struct rte_mbuf *m, uint16_t port_index)
{
	return excp_take(x, widx, m, port_index);
}

/* An ARP reply to one of the port's addresses, or an NA to one: the
 * answers to what the kernel asked. */
static bool
for_kernel(const struct pa_excp_fast *x, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint32_t bit)
{
	uint8_t buf[28];
	const uint8_t *p;

	if (meta->flags & PA_PKT_F_NON_IP) {
		/* lib/neigh checked htype, ptype, lengths: Ethernet/IPv4 */
		p = rte_pktmbuf_read(m, meta->l3_off, 28, buf);
		return p != NULL && p[6] == 0 && p[7] == ARP_OP_REPLY &&
			pa_excp_port_addr(x, 4, p + 24, bit) != NULL;
	}
	if (!(meta->flags & PA_PKT_F_IPV6) || meta->l4_proto != IPPROTO_ICMPV6)
		return false;
	p = rte_pktmbuf_read(m, meta->l4_off, 1, buf);
	if (p == NULL || p[0] != ICMP6_NA)
		return false;
	p = rte_pktmbuf_read(m, meta->l3_off + 24u, 16, buf);
	return p != NULL && pa_excp_port_addr(x, 6, p, bit) != NULL;
}

void
pa_excp_punt_clone(const struct pa_excp_fast *x, unsigned int widx,
		struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		uint16_t port_index)
{
	struct pa_excp_row *row = &x->rows[widx];

	/* a reference covers the first segment only: chains are not shared
	 * (ARP and ND frames are small) */
	if (m->nb_segs != 1 || !for_kernel(x, m, meta, 1u << (port_index & 31)))
		return;
	/* the ring's reference: taken before the mbuf is visible to the
	 * consumer, given back if it never gets there */
	rte_mbuf_refcnt_update(m, 1);
	if (excp_take(x, widx, m, port_index) == PA_EXCP_TAKEN) {
		row->clones++;
		return;
	}
	rte_mbuf_refcnt_update(m, -1);
	row->clones_skipped++;
}
