/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path's side: the rx stage's classification of ARP and ND
 * frames (pa_neigh_inline.h says which go where; reads the mbuf with
 * rte_pktmbuf_read(), so chains are fine; never writes), and the route
 * stage's next hops.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "pa_neigh.h"

#define ARP_FIXED	8
#define ARP_IPV4	28
#define ND_MIN		24

int
pa_neigh_rx_arp(const struct pa_neigh_fast *nf, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint16_t port_index)
{
	uint8_t buf[ARP_IPV4], etb[2];
	const struct pa_neigh_dp_ent *e;
	const struct pa_neigh_dp *t;
	const uint8_t *a, *et;
	uint32_t len, bit = 1u << (port_index & 31);
	unsigned int hlen, plen;

	if (meta->l3_off < 2 || meta->l3_off > rte_pktmbuf_pkt_len(m))
		return PA_NEIGH_RX_PASS;
	et = rte_pktmbuf_read(m, meta->l3_off - 2, 2, etb);
	if (et == NULL || et[0] != 0x08 || et[1] != 0x06)
		return PA_NEIGH_RX_PASS;
	len = rte_pktmbuf_pkt_len(m) - meta->l3_off;
	if (len < ARP_FIXED)
		return PA_NEIGH_RX_MALFORMED;
	a = rte_pktmbuf_read(m, meta->l3_off, RTE_MIN(len, (uint32_t)ARP_IPV4),
		buf);
	if (a == NULL)
		return PA_NEIGH_RX_MALFORMED;
	hlen = a[4];
	plen = a[5];
	if (len < ARP_FIXED + 2 * (hlen + plen))
		return PA_NEIGH_RX_MALFORMED;
	if (a[0] != 0 || a[1] != 1 || a[2] != 0x08 || a[3] != 0x00 ||
	    hlen != RTE_ETHER_ADDR_LEN || plen != 4)
		return PA_NEIGH_RX_PASS;
	t = __atomic_load_n(&nf->dp, __ATOMIC_ACQUIRE);
	e = pa_neigh_dp_find(t, 4, a + 24);
	if (e == NULL)
		return PA_NEIGH_RX_PASS;
	if ((e->flags & PA_NEIGH_DP_OURS_ANY) || (e->ours_ports & bit))
		return PA_NEIGH_RX_LOCAL;
	if ((e->watch_ports & bit) && memcmp(a + 14, a + 24, 4) == 0)
		return PA_NEIGH_RX_LOCAL;
	return PA_NEIGH_RX_PASS;
}

int
pa_neigh_rx_nd(const struct pa_neigh_fast *nf, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint16_t port_index)
{
	uint8_t buf[ND_MIN], plb[2];
	const struct pa_neigh_dp_ent *e;
	const struct pa_neigh_dp *t;
	const uint8_t *icmp, *pl;
	uint32_t end, bit = 1u << (port_index & 31);

	if (!(meta->flags & PA_PKT_F_L4) || (meta->flags & PA_PKT_F_FRAG))
		return PA_NEIGH_RX_PASS;
	/* the ICMPv6 message ends where the IPv6 payload does */
	pl = rte_pktmbuf_read(m, meta->l3_off + 4, 2, plb);
	if (pl == NULL)
		return PA_NEIGH_RX_PASS;
	end = (uint32_t)meta->l3_off + 40 + ((uint32_t)pl[0] << 8 | pl[1]);
	if (end > rte_pktmbuf_pkt_len(m) || end < meta->l4_off)
		return PA_NEIGH_RX_PASS;
	icmp = rte_pktmbuf_read(m, meta->l4_off, 1, buf);
	if (icmp == NULL || (icmp[0] != 135 && icmp[0] != 136))
		return PA_NEIGH_RX_PASS;
	if (end - meta->l4_off < ND_MIN)
		return PA_NEIGH_RX_MALFORMED;
	icmp = rte_pktmbuf_read(m, meta->l4_off, ND_MIN, buf);
	if (icmp == NULL)
		return PA_NEIGH_RX_MALFORMED;
	t = __atomic_load_n(&nf->dp, __ATOMIC_ACQUIRE);
	e = pa_neigh_dp_find(t, 6, icmp + 8);
	if (e == NULL)
		return PA_NEIGH_RX_PASS;
	if ((e->flags & PA_NEIGH_DP_OURS_ANY) || (e->ours_ports & bit))
		return PA_NEIGH_RX_LOCAL;
	if (icmp[0] == 136 && (e->watch_ports & bit))
		return PA_NEIGH_RX_LOCAL;
	return PA_NEIGH_RX_PASS;
}

int
pa_neigh_route_macs(const struct pa_neigh_fast *nf, struct rte_ether_hdr *eth,
		uint16_t out, bool v6)
{
	const struct pa_neigh_port_l2 *p;
	uint64_t nh;

	if (nf == NULL || out >= RTE_MAX_ETHPORTS)
		return -EHOSTUNREACH;
	p = &nf->l2[out];
	if (p->has_gw) {
		eth->dst_addr = p->gw;
	} else {
		nh = __atomic_load_n(&p->gw_nh[v6], __ATOMIC_RELAXED);
		if (!(nh & PA_NEIGH_NH_VALID))
			return -EHOSTUNREACH;
		memcpy(&eth->dst_addr, &nh, RTE_ETHER_ADDR_LEN);
	}
	if (p->known)
		eth->src_addr = p->mac;
	return 0;
}
