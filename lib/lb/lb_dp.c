/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lb stage's data path: service lookup, flow table, schedulers'
 * choices, and the rewrites of the three forwarding modes. A burst goes
 * through in passes, each prefetching what the next reads (the flow
 * table's misses hidden behind the other packets' work): find the
 * service candidates and build their flow keys (prefetching their home
 * slots), read the slots (prefetching the candidate's line: its key and
 * entry), then decide and rewrite.
 */
#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "lb_priv.h"
#include "lb_xlat.h"

#define BULK		RTE_HASH_LOOKUP_BULK_MAX	/* 64 */
#define SWEEP_BUSY	64	/* flow entries aged per busy sweep */
#define SWEEP_IDLE	1024	/* ... per idle loop */

#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_RST		0x04
#define TCP_ACK		0x10

/* The TCP/UDP checksum of the header at @p l4 updated by @p d (an IPv4
 * UDP datagram without checksum, @p v4, stays without; a UDP result of 0
 * is sent as 0xffff). */
static __rte_always_inline void
l4_csum_update(uint8_t *l4, uint8_t proto, bool v4, uint32_t d)
{
	uint16_t *sum;

	if (proto == IPPROTO_TCP) {
		sum = (uint16_t *)(l4 + 16);
		*sum = lb_csum_finish(*sum, d);
	} else {
		sum = (uint16_t *)(l4 + 6);
		if (*sum != 0 || !v4) {
			*sum = lb_csum_finish(*sum, d);
			if (*sum == 0)
				*sum = 0xffff;
		}
	}
}

/*
 * Rewrite an address (@p alen bytes at @p addr) and, when @p l4 is set,
 * a port (at @p port) of a packet, fixing the IPv4 header checksum
 * (@p ip4) and the TCP/UDP checksum (covering the pseudo-header).
 */
static __rte_always_inline void
rewrite_addr_port(struct rte_ipv4_hdr *ip4, uint8_t *addr,
		const uint8_t *new_addr, unsigned int alen, uint8_t *l4,
		uint8_t proto, uint16_t *port, uint16_t new_port)
{
	uint32_t d = lb_csum_add_diff(0, addr, new_addr, alen);

	if (ip4 != NULL)
		ip4->hdr_checksum = lb_csum_finish(ip4->hdr_checksum, d);
	if (l4 != NULL) {
		l4_csum_update(l4, proto, ip4 != NULL,
			lb_csum_add_diff(d, port, &new_port, 2));
		*port = new_port;
	}
	memcpy(addr, new_addr, alen);
}

/*
 * Full NAT's rewrite: source and destination addresses (adjacent in both
 * families: @p addrs, 2 x @p alen bytes) and ports (@p l4's first 4
 * bytes) at once, one difference for both checksums (@p ip4: the IPv4
 * header's, NULL for IPv6).
 */
static __rte_always_inline void
rewrite_4tuple(struct rte_ipv4_hdr *ip4, uint8_t *addrs,
		const uint8_t *src, const uint8_t *dst, unsigned int alen,
		uint8_t *l4, uint8_t proto, uint16_t sport, uint16_t dport)
{
	uint16_t ports[2] = { sport, dport };
	uint32_t d = lb_csum_add_diff(0, addrs, src, alen);

	d = lb_csum_add_diff(d, addrs + alen, dst, alen);
	if (ip4 != NULL)
		ip4->hdr_checksum = lb_csum_finish(ip4->hdr_checksum, d);
	l4_csum_update(l4, proto, ip4 != NULL,
		lb_csum_add_diff(d, l4, ports, 4));
	memcpy(addrs, src, alen);
	memcpy(addrs + alen, dst, alen);
	memcpy(l4, ports, 4);
}

/* ------------------------------------------------------------------ */
/* Forwarding modes                                                    */
/* ------------------------------------------------------------------ */

/* Are the IP and L4 headers in the first segment? (They are, except in
 * chains built oddly; the parser gathered them to read them.) */
static __rte_always_inline bool
headers_in_first_seg(const struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	uint32_t need = (meta->flags & PA_PKT_F_L4) ?
		(uint32_t)meta->l4_off + (meta->l4_proto == IPPROTO_TCP ?
			20 : 8) :
		(uint32_t)meta->l3_off + ((meta->flags & PA_PKT_F_IPV4) ?
			20 : 40);

	return rte_pktmbuf_data_len(m) >= need;
}

/* The input port's MAC (NULL when the LB does not know the port). */
static __rte_always_inline const struct rte_ether_addr *
in_mac(const struct pa_lb *lb, const struct rte_mbuf *m)
{
	return m->port < RTE_MAX_ETHPORTS && lb->port[m->port].known ?
		&lb->port[m->port].mac : NULL;
}

/* One token of the ICMP too-big bucket? */
static bool
icmp_token(const struct pa_lb *lb, struct lb_worker *w)
{
	uint64_t add;

	if (w->icmp_tokens < LB_ICMP_BURST) {
		add = (w->now - w->icmp_last) / lb->icmp_tsc_per_token;
		if (add >= LB_ICMP_BURST - w->icmp_tokens) {
			w->icmp_tokens = LB_ICMP_BURST;
			w->icmp_last = w->now;
		} else if (add > 0) {
			w->icmp_tokens += (uint32_t)add;
			w->icmp_last += add * lb->icmp_tsc_per_token;
		}
	}
	if (w->icmp_tokens == 0)
		return false;
	w->icmp_tokens--;
	return true;
}

/* May an answer go back to the frame's source MAC? Not to a group, not
 * to all zeros, not to the input port's own MAC (a spoofed source): the
 * appliance never reflects to a group or to itself (as time exceeded,
 * pa_port_build_time_exceeded()). */
static inline bool
answerable(const struct pa_lb *lb, const struct rte_mbuf *m)
{
	static const struct rte_ether_addr zero;
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m,
		const struct rte_ether_hdr *);
	const struct rte_ether_addr *own = in_mac(lb, m);

	return !rte_is_multicast_ether_addr(&eth->src_addr) &&
		!rte_is_same_ether_addr(&eth->src_addr, &zero) &&
		(own == NULL || !rte_is_same_ether_addr(&eth->src_addr, own));
}

/* Too big for the tunnel: dropped (reason mtu), and a TCP/UDP packet
 * that may not be fragmented (IPv4 DF, any IPv6) becomes, within the
 * rate, the ICMP error its source gets, with next-hop MTU @p mtu. */
static __rte_noinline uint8_t
too_big_build(const struct pa_lb *lb, struct lb_worker *w,
		struct rte_mbuf *m, struct pa_pkt_meta *meta, const uint8_t *inner,
		uint32_t mtu)
{
	w->st.mtu++;
	if ((meta->flags & PA_PKT_F_IPV4) &&
	    !(((const struct rte_ipv4_hdr *)inner)->fragment_offset &
	      rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG)))
		return PA_LB_V_MTU;
	if (meta->l4_proto != IPPROTO_TCP && meta->l4_proto != IPPROTO_UDP)
		return PA_LB_V_MTU;	/* never an error about an error */
	if (!answerable(lb, m))
		return PA_LB_V_MTU;
	if (!icmp_token(lb, w)) {
		w->st.icmp_rate_limited++;
		return PA_LB_V_MTU;
	}
	if (lb_icmp_too_big(m, meta, mtu, in_mac(lb, m)) != 0)
		return PA_LB_V_MTU;
	if (m->port < RTE_MAX_ETHPORTS)
		meta->out_port = m->port;
	w->st.icmp_too_big_sent++;
	return PA_LB_V_MTU_ICMP;
}

/* Backend @p b's counters on this lcore (@p ctr: the lcore's), zeroed
 * when its slot was another backend's. */
static __rte_always_inline struct lb_ctr *
be_ctr(struct lb_ctr *ctr, const struct lb_backend *b)
{
	struct lb_ctr *c = &ctr[b->cslot];

	if (unlikely(c->uid != b->uid)) {
		c->uid = b->uid;
		c->flows = 0;
		c->packets = 0;
		c->bytes = 0;
	}
	return c;
}

/* A MAC as the low 48 bits of a word (memory order), as a next-hop word
 * holds it (lb_nh_word()). */
static __rte_always_inline uint64_t
mac48(const struct rte_ether_addr *a)
{
	uint64_t v = 0;

	memcpy(&v, a, RTE_ETHER_ADDR_LEN);
	return v;
}

/* set_macs()'s port-level part for one (output port, family), read once
 * per chunk: the destination a frame gets when its backend gives no next
 * hop (the port's gateway, configured, else resolved; else the frame's
 * own source, counted as unresolved when wanted), the port's MAC as the
 * source when it knows it, and the port's MTU. */
struct lb_l2 {
	uint32_t key;			/* out | v6 << 16 | 1 << 17; 0: none */
	uint16_t mtu;
	bool known;
	bool reflect;			/* destination: the frame's source */
	bool unres;			/* ... and count neigh_unresolved */
	uint64_t dst;			/* !reflect: the gateway's MAC */
	uint64_t src;			/* known: the port's MAC */
};

/* An lb_l2's key: never 0 (0: none yet). */
static __rte_always_inline uint32_t
l2_key(uint16_t out, bool v6)
{
	return (uint32_t)out | (uint32_t)v6 << 16 | 1u << 17;
}

static __rte_always_inline void
l2_fill(const struct pa_lb *lb, struct lb_l2 *c, uint32_t key)
{
	const struct lb_port *p = &lb->port[key & 0xffff];
	uint64_t nh;

	c->key = key;
	c->mtu = p->mtu;
	c->known = p->known;
	c->src = mac48(&p->mac);
	c->reflect = false;
	c->unres = false;
	if (p->has_gw) {
		c->dst = mac48(&p->gw);
		return;
	}
	nh = __atomic_load_n(&p->gw_nh[(key >> 16) & 1], __ATOMIC_RELAXED);
	c->dst = nh & LB_NH_MAC_MASK;
	if (!(nh & LB_NH_VALID)) {
		c->reflect = true;
		c->unres = (nh & LB_NH_WANTED) != 0;
	}
}

/* What a chunk's pass 2 keeps in registers rather than re-reading after
 * each frame store (a store through a byte pointer may alias anything):
 * the lb's and the worker's fields it uses, and the counters it adds up
 * to write once at the chunk's end. */
struct lb_fast {
	const uint64_t *be_nh;
	struct lb_ctr *ctr;
	uint64_t local6[2];
	uint32_t local4;
	uint16_t ip_id;
	uint32_t unres;			/* neigh_unresolved to add */
	uint32_t balanced;		/* ... balanced */
	struct lb_l2 l2;
};

/* The destination MAC of a frame sent to backend @p b (NULL: none, a
 * NAT reply) on port @p out (set_macs()): its own MAC, else its next hop
 * resolved on that port, else the port's (@p x->l2); @p own_src is the
 * frame's source MAC. */
static __rte_always_inline uint64_t
be_dst(struct lb_fast *x, const struct lb_backend *b, uint16_t out,
		uint64_t own_src)
{
	uint64_t nh;

	/* (pass 2 has read b before: the compiler drops the test there) */
	if (b != NULL) {
		if (b->has_mac)
			return mac48(&b->mac);
		nh = __atomic_load_n(&x->be_nh[b->cslot], __ATOMIC_RELAXED);
		if (nh != 0 && lb_nh_port(nh) == (out & 0xff)) {
			if (likely(nh & LB_NH_VALID))
				return nh & LB_NH_MAC_MASK;
			x->unres++;
		}
	}
	if (x->l2.reflect) {
		x->unres += x->l2.unres;
		return own_src;
	}
	return x->l2.dst;
}

/* The Ethernet header's MACs at @p to, from those at @p from (the same
 * frame, or where its header was before an outer one went in front; the
 * 2 bytes after them, ethertype or first tag, are carried over): what
 * set_macs() writes, in two stores (the words in little-endian memory
 * order, as lb_nh_word() builds a next hop's). */
static __rte_always_inline void
put_macs(struct lb_fast *x, const struct lb_backend *b, uint16_t out,
		uint8_t *to, const uint8_t *from)
{
	uint64_t o, own, dst, src, w0, w1;

	memcpy(&o, from + 6, 8);
	own = o & LB_NH_MAC_MASK;
	dst = be_dst(x, b, out, own);
	src = x->l2.known ? x->l2.src : own;
	w0 = dst | src << 48;
	w1 = src | (o & ~LB_NH_MAC_MASK);
	memcpy(to, &w0, 8);
	memcpy(to + 6, &w1, 8);
}

/* A packet sent to backend @p b: its counters (balanced into the
 * chunk's sum, written at its end). */
static __rte_always_inline void
count_fast(struct lb_fast *x, const struct lb_backend *b, uint32_t len)
{
	struct lb_ctr *c = be_ctr(x->ctr, b);

	c->packets++;
	c->bytes += len;
	x->balanced++;
}

/* The flow key of the flow whose side entry is @p fx. */
static __rte_always_inline void
fx_key(const struct lb_worker *w, const struct lb_fnat_ext *fx,
		struct lb_flow_key *k)
{
	memcpy(k, w->ftab.line[fx - w->fx].key, LB_FLOW_KEY_LEN);
	memset(k->pad2, 0, sizeof(k->pad2));
}

/* A TCP segment of an fnat flow with the PROXY protocol, rewritten: the
 * header goes before the client's first byte (built from the flow's key:
 * the client and the VIP, in the client's family), sequence numbers
 * shift after it (lb_proxy.c). @p mtu: the output port's (0: none). */
static __rte_noinline uint8_t
fnat_proxy_fwd(struct lb_worker *w, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, struct lb_fnat_ext *fx,
		uint32_t mtu)
{
	uint8_t hdr[LB_PROXY_MAX];
	struct lb_flow_key k;
	unsigned int hl;
	int rc;

	rc = lb_proxy_to_backend(&fx->ps, m, meta, NULL, 0, mtu);
	if (rc == LB_PROXY_NEED_HDR) {
		fx_key(w, fx, &k);
		hl = lb_proxy_build(hdr, (enum pa_lb_proxy)fx->proxy, k.family,
			k.src, k.dst, k.sport, k.dport);
		rc = lb_proxy_to_backend(&fx->ps, m, meta, hdr, hl, mtu);
	}
	if (unlikely(rc < 0)) {
		w->st.fnat_proxy_failed++;
		return PA_LB_V_FNAT_XLAT;
	}
	return PA_LB_V_FORWARD;
}

/* A backend's reply of a PROXY flow, rewritten: acknowledgements and
 * SACK blocks shift back (lb_proxy.c). */
static __rte_always_inline void
fnat_proxy_reply(struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		struct lb_fnat_ext *fx)
{
	lb_proxy_to_client(&fx->ps, m, meta);
}

/*
 * A packet of an fnat flow whose backend is of the other family than its
 * VIP: translated (RFC 7915, lb_xlat.c) to pool address -> backend, then
 * addressed as the family it now is. A client's IPv4 packet grows by
 * LB_XLAT_GROWTH: over the port's MTU it is dropped (mtu); TCP's own MSS
 * keeps within it (each side's MSS is its own family's).
 */
static __rte_noinline uint8_t
fnat_xlat_fwd(struct pa_lb *lb, struct lb_worker *w, struct lb_fast *x,
		const struct lb_backend *b, struct rte_mbuf *m,
		struct pa_pkt_meta *meta, struct lb_fnat_ext *fx)
{
	const uint8_t *src = lb->fnat.addr[fx->paddr].addr;
	const uint32_t len = rte_pktmbuf_pkt_len(m);
	const uint16_t out = meta->out_port;
	const bool to6 = b->addr.family == AF_INET6;
	uint8_t *frame;
	uint32_t ilen;
	int rc;

	if (to6)
		rc = lb_xlat_4to6(m, meta, src, b->addr.v6.s6_addr, fx->pport,
			b->port);
	else
		rc = lb_xlat_6to4(m, meta, src, (const uint8_t *)&b->addr.v4,
			fx->pport, b->port, lb_bswap16(x->ip_id++));
	if (unlikely(rc != 0)) {
		w->st.fnat_xlat_failed++;
		return PA_LB_V_FNAT_XLAT;
	}
	/* the port's part of the addressing, for the family it now is */
	l2_fill(lb, &x->l2, l2_key(out, to6));
	ilen = rte_pktmbuf_pkt_len(m) - meta->l3_off;
	if (unlikely(x->l2.mtu != 0 && ilen > x->l2.mtu)) {
		w->st.mtu++;
		return PA_LB_V_MTU;
	}
	count_fast(x, b, len);
	meta->flags &= ~PA_PKT_F_ROUTE;
	frame = rte_pktmbuf_mtod(m, uint8_t *);
	put_macs(x, b, out, frame, frame);
	if (unlikely(fx->proxy != PA_LB_PROXY_NONE) &&
	    meta->l4_proto == IPPROTO_TCP)
		return fnat_proxy_fwd(w, m, meta, fx, x->l2.mtu);
	return PA_LB_V_FORWARD;
}

/* A backend's reply of an fnat flow whose client (key @p k) is of the
 * other family: translated (RFC 7915, lb_xlat.c) to VIP -> client. */
static __rte_noinline uint8_t
fnat_xlat_reply(struct lb_worker *w, struct rte_mbuf *m,
		struct pa_pkt_meta *meta, const struct lb_flow_key *k)
{
	int rc;

	if (k->family == 6)
		rc = lb_xlat_4to6(m, meta, k->dst, k->src, k->dport, k->sport);
	else
		rc = lb_xlat_6to4(m, meta, k->dst, k->src, k->dport, k->sport,
			lb_bswap16(w->ip_id++));
	if (unlikely(rc != 0)) {
		w->st.fnat_xlat_failed++;
		return PA_LB_V_FNAT_XLAT;
	}
	return PA_LB_V_FORWARD;
}

/* A packet to backend @p b in forwarding mode @p mode and family @p fam
 * (constants in pass 2's specialised copies; forward() passes its
 * service's): the rewrite, the counters and the verdict, with what it
 * reads read before it writes the frame. */
static __rte_always_inline uint8_t
fwd_fast(struct pa_lb *lb, struct lb_worker *w, struct lb_fast *x,
		const struct lb_backend *b, struct rte_mbuf *m,
		struct pa_pkt_meta *meta, const uint8_t mode, const uint8_t fam,
		struct lb_fnat_ext *fx)
{
	const uint16_t l3 = meta->l3_off, l4 = meta->l4_off;
	const uint16_t flags = meta->flags, out = meta->out_port;
	const uint32_t len = rte_pktmbuf_pkt_len(m);
	const uint32_t key = l2_key(out, fam == 6);
	uint16_t doff = m->data_off;
	uint8_t *base = m->buf_addr;
	uint8_t *frame = base + doff;
	uint32_t need;

	/* (dsr rewrites the L2 header only) */
	if (mode != PA_LB_DSR) {
		need = (flags & PA_PKT_F_L4) ? (uint32_t)l4 +
			(meta->l4_proto == IPPROTO_TCP ? 20 : 8) :
			(uint32_t)l3 + (fam == 4 ? 20 : 40);
		if (unlikely(m->data_len < need)) {
			w->st.no_room++;
			return PA_LB_V_NO_ROOM;
		}
	}
	if (unlikely(x->l2.key != key))
		l2_fill(lb, &x->l2, key);
	if (mode == PA_LB_IPIP) {
		const unsigned int hlen = fam == 4 ?
			sizeof(struct rte_ipv4_hdr) :
			sizeof(struct rte_ipv6_hdr);
		uint8_t *inner = frame + l3;
		const uint8_t *from;
		uint32_t ilen, mtu = x->l2.mtu;

		if (fam == 4)
			ilen = lb_bswap16(((struct rte_ipv4_hdr *)inner)->
				total_length);
		else
			ilen = sizeof(struct rte_ipv6_hdr) + lb_bswap16(
				((struct rte_ipv6_hdr *)inner)->payload_len);
		if (unlikely(mtu != 0 && ilen + hlen > mtu))
			return too_big_build(lb, w, m, meta, inner, mtu - hlen);
		/* Ethernet padding after the inner packet would end up
		 * inside the tunnel: cut it */
		if (len > l3 + ilen)
			rte_pktmbuf_trim(m, (uint16_t)(len - (l3 + ilen)));
		if (unlikely(hlen > doff)) {
			w->st.no_room++;
			return PA_LB_V_NO_ROOM;
		}
		/* sent: the rest cannot fail */
		count_fast(x, b, len);
		meta->flags = flags & ~PA_PKT_F_ROUTE;
		meta->l4_off = (uint16_t)(l4 + hlen);
		doff = (uint16_t)(doff - hlen);
		m->data_off = doff;
		m->data_len = (uint16_t)(m->data_len + hlen);
		m->pkt_len += hlen;
		frame = base + doff;
		/* the L2 header (VLAN tags included) moves to the new front;
		 * an untagged one is written there from where it was */
		from = frame + hlen;
		if (unlikely(l3 != RTE_ETHER_HDR_LEN)) {
			memmove(frame, frame + hlen, l3);
			from = frame;
		}
		if (fam == 4) {
			const struct rte_ipv4_hdr *in =
				(const void *)(frame + l3 + hlen);
			struct rte_ipv4_hdr *o = (void *)(frame + l3);
			const uint16_t df = in->fragment_offset &
				rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
			const uint8_t tos = in->type_of_service;
			/* the word { 0, tos } in memory order */
			const uint16_t tw = (uint16_t)(RTE_BYTE_ORDER ==
				RTE_LITTLE_ENDIAN ? tos << 8 : tos);
			const uint32_t daddr = b->addr.v4.s_addr;
			const uint16_t tl = lb_bswap16((uint16_t)(ilen + hlen));
			uint16_t id = 0;
			uint32_t sum;

			if (df == 0)
				id = lb_bswap16(x->ip_id++);
			/* the constant words' sum is the backend's; add the
			 * rest from registers */
			sum = b->ip4_sum + tw + tl + id + df;
			sum = (sum & 0xffff) + (sum >> 16);
			sum = (sum & 0xffff) + (sum >> 16);
			put_macs(x, b, out, frame, from);
			o->version_ihl = 0x45;
			o->type_of_service = tos;
			o->total_length = tl;
			o->packet_id = id;
			o->fragment_offset = df;
			o->time_to_live = LB_OUTER_TTL;
			o->next_proto_id = IPPROTO_IPIP;
			o->hdr_checksum = (uint16_t)~sum;
			o->src_addr = x->local4;
			o->dst_addr = daddr;
		} else {
			const struct rte_ipv6_hdr *in =
				(const void *)(frame + l3 + hlen);
			struct rte_ipv6_hdr *o = (void *)(frame + l3);
			const uint32_t tc = (rte_be_to_cpu_32(in->vtc_flow) >>
				20) & 0xff;
			const uint32_t vtc = rte_cpu_to_be_32(6u << 28 |
				tc << 20 | (meta->hash & 0xfffff));
			uint64_t d[2];

			memcpy(d, b->addr.v6.s6_addr, 16);
			put_macs(x, b, out, frame, from);
			/* flow label from the flow hash (RFC 6438) */
			o->vtc_flow = vtc;
			o->payload_len = lb_bswap16((uint16_t)ilen);
			o->proto = IPPROTO_IPV6;
			o->hop_limits = LB_OUTER_TTL;
			memcpy(o->src_addr, x->local6, 16);
			memcpy(o->dst_addr, d, 16);
		}
	} else if (mode == PA_LB_NAT) {
		uint8_t *l3p = frame + l3;
		uint8_t *l4p = (flags & PA_PKT_F_L4) ? frame + l4 : NULL;
		const uint8_t proto = meta->l4_proto;
		const uint16_t bport = b->port;
		uint8_t a[16];

		count_fast(x, b, len);
		meta->flags = flags & ~PA_PKT_F_ROUTE;
		if (l4p != NULL)
			meta->dport = lb_bswap16(bport);
		memcpy(a, b->addr.v6.s6_addr, fam == 4 ? 4 : 16);
		put_macs(x, b, out, frame, frame);
		if (fam == 4) {
			struct rte_ipv4_hdr *ip = (void *)l3p;

			rewrite_addr_port(ip, (uint8_t *)&ip->dst_addr, a, 4,
				l4p, proto, l4p != NULL ?
				(uint16_t *)(l4p + 2) : NULL, bport);
		} else {
			struct rte_ipv6_hdr *ip = (void *)l3p;

			rewrite_addr_port(NULL, ip->dst_addr, a, 16, l4p, proto,
				l4p != NULL ? (uint16_t *)(l4p + 2) : NULL,
				bport);
		}
	} else if (mode == PA_LB_FNAT) {
		/* (only whole TCP/UDP packets get here: an fnat service
		 * drops fragments) */
		uint8_t *l3p = frame + l3;
		uint8_t *l4p = frame + l4;
		const uint8_t *src = lb->fnat.addr[fx->paddr].addr;
		const uint16_t bport = b->port, pport = fx->pport;
		uint8_t a[16];

		if (unlikely(b->addr.family != (fam == 4 ? AF_INET : AF_INET6)))
			return fnat_xlat_fwd(lb, w, x, b, m, meta, fx);
		count_fast(x, b, len);
		meta->flags = flags & ~PA_PKT_F_ROUTE;
		meta->sport = lb_bswap16(pport);
		meta->dport = lb_bswap16(bport);
		memcpy(a, b->addr.v6.s6_addr, fam == 4 ? 4 : 16);
		put_macs(x, b, out, frame, frame);
		if (fam == 4) {
			struct rte_ipv4_hdr *ip = (void *)l3p;

			rewrite_4tuple(ip, (uint8_t *)&ip->src_addr, src, a, 4,
				l4p, meta->l4_proto, pport, bport);
		} else {
			struct rte_ipv6_hdr *ip = (void *)l3p;

			rewrite_4tuple(NULL, ip->src_addr, src, a, 16, l4p,
				meta->l4_proto, pport, bport);
		}
		if (unlikely(fx->proxy != PA_LB_PROXY_NONE) &&
		    meta->l4_proto == IPPROTO_TCP)
			return fnat_proxy_fwd(w, m, meta, fx, x->l2.mtu);
	} else {
		count_fast(x, b, len);
		meta->flags = flags & ~PA_PKT_F_ROUTE;
		put_macs(x, b, out, frame, frame);
	}
	return PA_LB_V_FORWARD;
}

/* Address a frame to its next hop: the backend's MAC, else the backend
 * as the neighbour subsystem resolved it on this port, else the output
 * port's gateway (configured, else resolved), else the neighbour it came
 * from. A wanted but unresolved next hop falls back and is counted. The
 * source is the output port's MAC. The LB has addressed the frame: it is
 * no longer transit for the route pass (PA_PKT_F_ROUTE). (Pass 2 does the
 * same in put_macs(), the port's part read once a chunk.) */
static __rte_always_inline void
set_macs(const struct pa_lb *lb, struct lb_worker *w,
		struct rte_ether_hdr *eth, struct pa_pkt_meta *meta,
		const struct lb_backend *b)
{
	const uint16_t out = meta->out_port;
	struct lb_fast x;

	x.be_nh = lb->be_nh;
	x.unres = 0;
	l2_fill(lb, &x.l2, l2_key(out, !!(meta->flags & PA_PKT_F_IPV6)));
	meta->flags &= ~PA_PKT_F_ROUTE;
	put_macs(&x, b, out, (uint8_t *)eth, (const uint8_t *)eth);
	w->st.neigh_unresolved += x.unres;
}

/* What pass 2 reads once a chunk into @p x, and writes back at its end. */
static __rte_always_inline void
fast_begin(const struct pa_lb *lb, const struct lb_worker *w,
		struct lb_fast *x)
{
	x->be_nh = lb->be_nh;
	x->ctr = w->ctr;
	x->local4 = lb->local4.v4.s_addr;
	memcpy(x->local6, lb->local6.v6.s6_addr, 16);
	x->ip_id = w->ip_id;
	x->unres = 0;
	x->balanced = 0;
	memset(&x->l2, 0, sizeof(x->l2));	/* key 0: none */
}

static __rte_always_inline void
fast_end(struct lb_worker *w, const struct lb_fast *x)
{
	w->ip_id = x->ip_id;
	w->st.balanced += x->balanced;
	w->st.neigh_unresolved += x->unres;
}

/* A packet to backend @p bi of service @p s outside pass 2 (an ICMP
 * error to its flow's backend): fwd_fast() in the service's mode. */
static __rte_noinline uint8_t
forward(struct pa_lb *lb, struct lb_worker *w, const struct lb_svc *s,
		unsigned int bi, struct rte_mbuf *m, struct pa_pkt_meta *meta)
{
	struct lb_fast x;
	uint8_t v;

	fast_begin(lb, w, &x);
	v = fwd_fast(lb, w, &x, &s->be[bi], m, meta, s->forward, s->family,
		NULL);
	fast_end(w, &x);
	return v;
}

/* ------------------------------------------------------------------ */
/* Flows                                                               */
/* ------------------------------------------------------------------ */

static __rte_always_inline const uint8_t *
pkt_src(const uint8_t *l3, uint8_t family)
{
	return family == 4 ? l3 + offsetof(struct rte_ipv4_hdr, src_addr) :
		l3 + offsetof(struct rte_ipv6_hdr, src_addr);
}

static __rte_always_inline const uint8_t *
pkt_dst(const uint8_t *l3, uint8_t family)
{
	return family == 4 ? l3 + offsetof(struct rte_ipv4_hdr, dst_addr) :
		l3 + offsetof(struct rte_ipv6_hdr, dst_addr);
}

/* The flow key of a packet: whole 8-byte words (no memset and byte
 * copies; the bytes are those lb_flow_key_from() gives, padding zero).
 * With AVX2 its first 8 bytes come from the metadata's ports and
 * protocol (adjacent: one 8-byte load) in one byte shuffle, and an IPv4
 * key is 16-byte stores (24 instructions the scalar way, ~12 so). */
static __rte_always_inline void
flow_key_of(struct lb_flow_key *k, const uint8_t *l3,
		const struct pa_pkt_meta *meta, uint8_t family)
{
	const uint64_t z = 0;

#ifdef __AVX2__
	RTE_BUILD_BUG_ON(offsetof(struct pa_pkt_meta, dport) !=
		offsetof(struct pa_pkt_meta, sport) + 2 ||
		offsetof(struct pa_pkt_meta, l4_proto) !=
		offsetof(struct pa_pkt_meta, sport) + 4 ||
		offsetof(struct pa_pkt_meta, sport) + 8 >
		sizeof(struct pa_pkt_meta));
	RTE_BUILD_BUG_ON(offsetof(struct lb_flow_key, src) != 8 ||
		offsetof(struct lb_flow_key, dst) != 24);
	{
		/* { family, proto, sport (network order), dport (...), 0, 0 }
		 * from { sport, dport (host order), proto, ... } */
		const __m128i shuf = _mm_setr_epi8(-1, 4, 1, 0, 3, 2, -1, -1,
			-1, -1, -1, -1, -1, -1, -1, -1);
		const __m128i zero = _mm_setzero_si128();
		__m128i h = _mm_loadl_epi64((const __m128i *)(const void *)
			&meta->sport);
		uint32_t a4;

		h = _mm_or_si128(_mm_shuffle_epi8(h, shuf),
			_mm_cvtsi32_si128(family));
		if (family == 4) {
			memcpy(&a4, l3 + offsetof(struct rte_ipv4_hdr,
				src_addr), 4);
			h = _mm_insert_epi32(h, (int)a4, 2);
			_mm_storeu_si128((__m128i *)(void *)k, h);
			_mm_storeu_si128((__m128i *)(void *)(k->src + 8), zero);
			_mm_storeu_si128((__m128i *)(void *)(k->dst + 8), zero);
			memcpy(k->dst, l3 + offsetof(struct rte_ipv4_hdr,
				dst_addr), 4);
		} else {
			_mm_storel_epi64((__m128i *)(void *)k, h);
			memcpy(k->src, l3 + offsetof(struct rte_ipv6_hdr,
				src_addr), 16);
			memcpy(k->dst, l3 + offsetof(struct rte_ipv6_hdr,
				dst_addr), 16);
			memcpy(k->pad2, &z, 8);
		}
		return;
	}
#endif
	k->family = family;
	k->proto = meta->l4_proto;
	k->sport = lb_bswap16(meta->sport);
	k->dport = lb_bswap16(meta->dport);
	k->pad = 0;
	if (family == 4) {
		uint64_t a = 0, b = 0;

		memcpy(&a, l3 + offsetof(struct rte_ipv4_hdr, src_addr), 4);
		memcpy(&b, l3 + offsetof(struct rte_ipv4_hdr, dst_addr), 4);
		memcpy(k->src, &a, 8);
		memcpy(k->src + 8, &z, 8);
		memcpy(k->dst, &b, 8);
		memcpy(k->dst + 8, &z, 8);
	} else {
		memcpy(k->src, l3 + offsetof(struct rte_ipv6_hdr, src_addr), 16);
		memcpy(k->dst, l3 + offsetof(struct rte_ipv6_hdr, dst_addr), 16);
	}
	memcpy(k->pad2, &z, 8);
}

/* The NAT reply key of a flow: backend to client. */
static void
reply_key_of(struct lb_flow_key *r, const struct lb_flow_key *k,
		const struct lb_backend *b)
{
	memset(r, 0, sizeof(*r));
	r->family = k->family;
	r->proto = k->proto;
	r->sport = b->port;
	r->dport = k->sport;
	memcpy(r->src, k->family == 4 ? (const uint8_t *)&b->addr.v4 :
		b->addr.v6.s6_addr, k->family == 4 ? 4 : 16);
	memcpy(r->dst, k->src, 16);
}

static void
defer_free(struct pa_lb *lb, struct lb_worker *w, int32_t pos)
{
	struct lb_deferred *d;

	if (w->defer_tail - w->defer_head >= LB_DEFER_MAX) {
		w->st.nat_stale++;
		return;
	}
	d = &w->defer[w->defer_tail % LB_DEFER_MAX];
	d->pos = pos;
	d->token = lb->rcu != NULL ? rte_rcu_qsbr_start(lb->rcu) : 0;
	w->defer_tail++;
}

void
lb_worker_reclaim(struct pa_lb *lb, struct lb_worker *w)
{
	struct rte_hash *nat = lb->nat;

	while (w->defer_head != w->defer_tail) {
		struct lb_deferred *d = &w->defer[w->defer_head % LB_DEFER_MAX];

		if (lb->rcu != NULL &&
		    rte_rcu_qsbr_check(lb->rcu, d->token, false) != 1)
			break;
		rte_hash_free_key_with_position(nat, d->pos);
		w->defer_head++;
	}
}

void
lb_flow_forget(struct pa_lb *lb, struct lb_worker *w, int32_t pos)
{
	struct lb_flow *f = lb_ftab_flow(&w->ftab, (uint32_t)pos);
	struct lb_ctr *c = &w->ctr[f->cslot];
	struct lb_svc_ctr *sc = &w->svc_ctr[f->svc_slot];
	const void *key;
	int32_t p;

	if (c->uid == f->be_uid && c->flows > 0)
		c->flows--;
	if (sc->uid == f->svc_uid && sc->flows > 0)
		sc->flows--;
	if ((f->in_use & LB_FLOW_NAT) && lb->nat != NULL &&
	    rte_hash_get_key_with_position(lb->nat, w->nat_pos[pos],
		    (void **)(uintptr_t)&key) == 0) {
		struct lb_flow_key rk = *(const struct lb_flow_key *)key;

		p = rte_hash_del_key(lb->nat, &rk);
		if (p >= 0)
			defer_free(lb, w, p);
	}
	if (f->in_use & LB_FLOW_FNAT)
		lb_fnat_give(lb, w, (uint32_t)pos, f->be_uid,
			lb_fnat_now(lb, w->now));
	lb_ftab_del(&w->ftab, (uint32_t)pos);
	f->in_use = 0;
	w->n_flows--;
}

static __rte_always_inline uint8_t
tcp_tmo(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		uint8_t cur)
{
	uint8_t fl;

	if (meta->l4_proto != IPPROTO_TCP || !(meta->flags & PA_PKT_F_L4))
		return LB_TMO_UDP;
	if (unlikely(rte_pktmbuf_data_len(m) < meta->l4_off + 14u))
		return cur;
	fl = *rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off + 13);
	if (fl & (TCP_FIN | TCP_RST))
		return LB_TMO_TCP_FIN;
	/* a SYN opens (or, after a FIN, reopens) a flow that has not got
	 * past it; one on an established flow leaves it established */
	if ((fl & (TCP_SYN | TCP_ACK)) == TCP_SYN)
		return cur == LB_TMO_TCP ? LB_TMO_TCP : LB_TMO_SYN;
	/* anything else from the client: past its first SYN */
	return cur == LB_TMO_SYN ? LB_TMO_TCP : cur;
}

/* A TCP SYN without ACK (a connection's first packet)? */
static __rte_always_inline bool
pure_syn(const struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	return meta->l4_proto == IPPROTO_TCP && (meta->flags & PA_PKT_F_L4) &&
		rte_pktmbuf_data_len(m) >= meta->l4_off + 14u &&
		(*rte_pktmbuf_mtod_offset(m, const uint8_t *,
			meta->l4_off + 13) & (TCP_SYN | TCP_ACK | TCP_FIN |
			TCP_RST)) == TCP_SYN;
}

/* What flow_new() returns besides a backend index. */
#define LB_NEW_NO_BACKEND	(-1)
#define LB_NEW_SRC_LIMIT	(-2)
#define LB_NEW_MAX_FLOWS	(-3)
#define LB_NEW_FNAT_NO_PORT	(-4)
#define LB_NEW_FNAT_FULL	(-5)
#define LB_NEW_FNAT_FRAG	(-6)

/* The live-flow counter of service @p s on this lcore. */
static __rte_always_inline struct lb_svc_ctr *
svc_ctr_of(struct lb_worker *w, const struct lb_svc *s)
{
	struct lb_svc_ctr *c = &w->svc_ctr[s->slot];

	if (unlikely(c->uid != s->uid)) {
		c->uid = s->uid;
		c->flows = 0;
	}
	return c;
}

/* Is service @p s at its max_flows on this lcore? Its limit is shared
 * among the lb lcores: max_flows / n each, the remainder to the first
 * ones (the sum is max_flows). */
static __rte_noinline bool
svc_full(struct lb_worker *w, const struct lb_svc *s)
{
	uint32_t lim = s->max_flows / w->n_lb +
		(w->lb_ord < s->max_flows % w->n_lb ? 1 : 0);

	return svc_ctr_of(w, s)->flows >= lim;
}

/* A TCP packet without SYN (a connection's packet past its first)? */
static __rte_always_inline bool
tcp_no_syn(const struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	return meta->l4_proto == IPPROTO_TCP && (meta->flags & PA_PKT_F_L4) &&
		rte_pktmbuf_data_len(m) >= meta->l4_off + 14u &&
		(*rte_pktmbuf_mtod_offset(m, const uint8_t *,
			meta->l4_off + 13) & TCP_SYN) == 0;
}

/*
 * The choice for a connection that began before the service's table
 * changed (lb.table_history_s; docs/architecture.md, "Recovery across
 * table changes"): the table current lb.table_history_s ago chose a
 * backend for @p hash; if that backend is still there (same uid) and
 * not down, it is the choice; else the current table's.
 */
static __rte_noinline int
hist_pick(struct pa_lb *lb, struct lb_worker *w, const struct lb_svc *s,
		uint32_t hash, uint64_t now)
{
	const uint64_t at = now - lb->hist_tsc;
	const struct lb_hist *h = NULL;
	int cur = lb_maglev_pick(s, hash);
	unsigned int i, bi;

	/* newest first: the oldest still current at @c at (each entry was
	 * current until its stamp); none: the current table already was */
	for (i = s->n_hist; i-- > 0;) {
		if ((int64_t)(s->hist[i].until - at) > 0) {
			h = &s->hist[i];
			break;
		}
	}
	if (h == NULL || h->maglev == NULL)
		return cur;
	bi = h->maglev[hash % h->m];
	if (bi >= s->n_be || bi >= h->n_be || s->be[bi].uid != h->uid[bi] ||
	    s->be[bi].state == PA_LB_DOWN)
		return cur;
	if ((int)bi != cur)
		w->st.flows_recovered++;
	return (int)bi;
}

/* A new flow: the scheduler's choice, remembered when there is room
 * (its position in *@p pos_out; -1: none). */
static __rte_always_inline int
flow_new(struct pa_lb *lb, struct lb_worker *w, const struct lb_svc *s,
		const struct lb_flow_key *k, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint64_t now, int32_t *pos_out)
{
	const struct lb_backend *b;
	struct lb_flow *f;
	struct lb_ctr *c;
	int bi;
	int32_t pos;

	if (unlikely(s->max_flows != 0) && svc_full(w, s))
		return LB_NEW_MAX_FLOWS;
	if (unlikely(w->src != NULL) && !pa_protect_src_take(w->src,
			k->family, k->src, now))
		return LB_NEW_SRC_LIMIT;
	/* n_hist: a Maglev TCP service whose table changed lately */
	if (unlikely(s->n_hist != 0) && tcp_no_syn(m, meta))
		bi = hist_pick(lb, w, s, meta->hash, now);
	else
		bi = s->ops->pick(s, w, meta->hash);
	if (unlikely(bi < 0))
		return LB_NEW_NO_BACKEND;
	pos = lb_ftab_add(&w->ftab, k, meta->hash);
	if (unlikely(pos < 0)) {
		w->st.flow_table_full++;
		/* full NAT has no stateless answer: its replies need the
		 * mapping */
		if (s->forward == PA_LB_FNAT) {
			w->st.fnat_table_full++;
			return LB_NEW_FNAT_FULL;
		}
		/* full: the stateless choice, so the flow still sticks
		 * (with a history: the choice made above, as stateless) */
		return s->n_hist != 0 ? bi : lb_maglev_pick(s, meta->hash);
	}
	b = &s->be[bi];
	f = lb_ftab_flow(&w->ftab, (uint32_t)pos);
	if (s->forward == PA_LB_FNAT) {
		struct lb_fnat_ext *x = &w->fx[pos];
		uint16_t port;
		uint8_t a;

		if (lb_fnat_take(lb, w, b->addr.family == AF_INET6 ? 6 : 4,
				b->uid, meta->hash, (uint32_t)pos,
				lb_fnat_now(lb, now), &a, &port) != 0) {
			lb_ftab_del(&w->ftab, (uint32_t)pos);
			w->st.fnat_no_port++;
			return LB_NEW_FNAT_NO_PORT;
		}
		x->pport = lb_bswap16(port);
		x->paddr = a;
		x->proxy = s->proxy;
		memset(&x->ps, 0, sizeof(x->ps));
		w->st.fnat_flows++;
	}
	*pos_out = pos;
	f->last = now;
	f->svc_uid = s->uid;
	f->be_uid = b->uid;
	f->cslot = (uint16_t)b->cslot;
	f->svc_slot = s->slot;
	f->be_idx = (uint16_t)bi;
	f->in_use = LB_FLOW_IN_USE |
		(s->forward == PA_LB_FNAT ? LB_FLOW_FNAT : 0);
	if (++w->n_flows > w->st.flows_peak)
		w->st.flows_peak = w->n_flows;
	svc_ctr_of(w, s)->flows++;
	f->tmo = tcp_tmo(m, meta, LB_TMO_SYN);
	c = be_ctr(w->ctr, b);
	c->flows++;
	w->st.flows_created++;
	if (s->forward == PA_LB_NAT) {
		struct lb_flow_key rk;
		uint64_t data = (uint64_t)s->uid << 16 | s->slot;

		reply_key_of(&rk, k, b);
		int32_t np = -1;

		if (rte_hash_add_key_data(lb->nat, &rk, (void *)(uintptr_t)data) == 0)
			np = rte_hash_lookup(lb->nat, &rk);
		else
			w->st.nat_table_full++;
		if (np >= 0) {
			w->nat_pos[pos] = np;
			f->in_use |= LB_FLOW_NAT;
		}
	}
	return bi;
}

/* ------------------------------------------------------------------ */
/* The burst                                                           */
/* ------------------------------------------------------------------ */

/* A SYN (or, @p synack, a SYN-ACK) of a service with an MSS clamp. */
static __rte_noinline void
clamp_mss(struct lb_worker *w, const struct lb_svc *s, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, bool synack)
{
	uint32_t len = rte_pktmbuf_data_len(m) - meta->l4_off;
	uint8_t *tcp = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l4_off);
	uint8_t want = synack ? (TCP_SYN | TCP_ACK) : TCP_SYN;

	if (!(meta->flags & PA_PKT_F_L4) || (meta->flags & PA_PKT_F_FRAG) ||
	    rte_pktmbuf_data_len(m) < meta->l4_off + 20u ||
	    (tcp[13] & (TCP_SYN | TCP_ACK)) != want)
		return;
	if (lb_mss_clamp(tcp, len, s->mss_clamp))
		w->st.mss_clamped++;
}

/*
 * A packet from a nat backend's port that is not for a service: a reply.
 * Matched to its flow (the NAT reply table), else to the one service
 * whose Maglev choice for the client's flow is this backend (the reply
 * of a flow another appliance of the fleet holds, or one held before a
 * restart; docs/scale-out.md); its source goes back to the VIP and
 * service port. A reply from a nat backend that no service's choice
 * explains passes unchanged (counted); one that several explain is
 * dropped (nat_ambiguous): either guess could be wrong.
 */
static __rte_always_inline uint8_t
nat_reply(struct pa_lb *lb, struct lb_worker *w, const struct lb_table *t,
		struct rte_mbuf *m, struct pa_pkt_meta *meta)
{
	uint8_t *l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l3_off);
	uint8_t *l4 = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l4_off);
	uint8_t family = (meta->flags & PA_PKT_F_IPV4) ? 4 : 6;
	struct rte_hash *nat = __atomic_load_n(&lb->nat, __ATOMIC_ACQUIRE);
	const struct lb_svc *s;
	struct lb_flow_key k;

	if (nat == NULL || !headers_in_first_seg(m, meta))
		return PA_LB_V_FORWARD;
	flow_key_of(&k, l3, meta, family);
	s = lb_nat_entry_svc(t, nat, &k);
	if (s != NULL) {
		w->st.nat_replies++;
	} else {
		switch (lb_nat_stateless(t, family, k.proto, k.src, k.sport,
				k.dst, k.dport, &s)) {
		case LB_NAT_ONE:
			w->st.nat_reply_stateless++;
			break;
		case LB_NAT_NO_AGREE:
			w->st.nat_reply_unmatched++;
			return PA_LB_V_FORWARD;
		case LB_NAT_AMBIGUOUS:
			w->st.nat_reply_ambiguous++;
			return PA_LB_V_NAT_AMBIGUOUS;
		default:
			return PA_LB_V_FORWARD;
		}
	}
	if (family == 4) {
		struct rte_ipv4_hdr *ip = (void *)l3;

		rewrite_addr_port(ip, (uint8_t *)&ip->src_addr,
			(const uint8_t *)&s->vip.v4, 4, l4, meta->l4_proto,
			(uint16_t *)l4, s->port);
	} else {
		struct rte_ipv6_hdr *ip = (void *)l3;

		rewrite_addr_port(NULL, ip->src_addr, s->vip.v6.s6_addr, 16, l4,
			meta->l4_proto, (uint16_t *)l4, s->port);
	}
	meta->sport = rte_be_to_cpu_16(s->port);
	if (unlikely(s->mss_clamp != 0) && meta->l4_proto == IPPROTO_TCP)
		clamp_mss(w, s, m, meta, true);
	set_macs(lb, w, rte_pktmbuf_mtod(m, struct rte_ether_hdr *),
		meta, NULL);
	return PA_LB_V_FORWARD;
}

/* A reply's TCP flags move its flow's timeout on: a FIN or RST from the
 * backend ends it as one from the client does; nothing else from the
 * backend (a SYN-ACK included) says the client got past its SYN. */
static __rte_always_inline uint8_t
reply_tmo(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		uint8_t cur)
{
	uint8_t fl;

	if (meta->l4_proto != IPPROTO_TCP ||
	    rte_pktmbuf_data_len(m) < meta->l4_off + 14u)
		return cur;
	fl = *rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off + 13);
	return (fl & (TCP_FIN | TCP_RST)) ? LB_TMO_TCP_FIN : cur;
}

/*
 * The flow of this lcore that pool address @p a and port @p port (host
 * order, in the pool's range) hold, if its protocol is @p proto, its
 * backend @p be:@p be_port (@p family, port in network order) and it is
 * alive: its position, with its key in @p k and its service in *@p sp;
 * else -1. The backend's state does not matter (a draining or down
 * backend's replies and errors still reach their clients). The reply
 * index and the flow's side entry must agree (a port of another lcore's
 * share is never this lcore's).
 */
static int32_t
fnat_flow_of(const struct pa_lb *lb, const struct lb_worker *w,
		const struct lb_table *t, int a, uint16_t port, uint8_t proto,
		uint8_t family, const uint8_t *be, uint16_t be_port, uint64_t now,
		struct lb_flow_key *k, const struct lb_svc **sp)
{
	const struct lb_fnat_pool *p = &lb->fnat;
	const struct lb_backend *b;
	const struct lb_flow *f;
	const struct lb_svc *s;
	uint32_t rp, pos;

	rp = p->addr[a].rpos[port - p->lo];
	if (rp == 0 || w->fx == NULL || lb_fnat_rank(p, port) != w->lb_ord)
		return -1;
	pos = rp - 1;
	f = lb_ftab_flow(&w->ftab, pos);
	if (!(f->in_use & LB_FLOW_FNAT) || w->fx[pos].paddr != a ||
	    w->fx[pos].pport != lb_bswap16(port))
		return -1;
	memcpy(k, w->ftab.line[pos].key, LB_FLOW_KEY_LEN);
	s = t->svc[f->svc_slot];
	if (s == NULL || s->uid != f->svc_uid || f->be_idx >= s->n_be ||
	    k->proto != proto || now - f->last > lb->tmo_tsc[f->tmo])
		return -1;
	b = &s->be[f->be_idx];
	if (b->uid != f->be_uid || b->port != be_port ||
	    !lb_addr_eq(be, pa_ip_bytes(&b->addr), family))
		return -1;
	*sp = s;
	return (int32_t)pos;
}

/*
 * A packet to a pool address and port (pass 1 saw its destination is
 * one, @p a): a backend's reply to an fnat flow of this lcore (the port
 * is of its share; the pipeline steers replies here, pa_lb_fnat_owner()).
 * Its flow is the reply index's at that port, if the reply comes from
 * the flow's backend (address, port, protocol) and the flow is alive;
 * its source becomes the VIP and service port, its destination the
 * client's address and port. Anything else to a pool port is dropped
 * (fnat_unmatched): nothing but the flow's backend may reach a client
 * through it.
 */
static __rte_noinline uint8_t
fnat_reply(struct pa_lb *lb, struct lb_worker *w, const struct lb_table *t,
		struct rte_mbuf *m, struct pa_pkt_meta *meta, int a,
		uint64_t now)
{
	const uint8_t family = (meta->flags & PA_PKT_F_IPV4) ? 4 : 6;
	const unsigned int alen = family == 4 ? 4 : 16;
	uint8_t *l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l3_off);
	uint8_t *l4 = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l4_off);
	const struct lb_svc *s;
	struct lb_fnat_ext *x;
	struct lb_flow_key k;
	struct lb_flow *f;
	int32_t pos;

	if (!headers_in_first_seg(m, meta))
		goto unmatched;
	pos = fnat_flow_of(lb, w, t, a, meta->dport, meta->l4_proto, family,
		pkt_src(l3, family), lb_bswap16(meta->sport), now, &k, &s);
	if (pos < 0)
		goto unmatched;
	f = lb_ftab_flow(&w->ftab, (uint32_t)pos);
	x = &w->fx[pos];
	f->last = now;
	f->tmo = reply_tmo(m, meta, f->tmo);
	if (unlikely(k.family != family)) {
		uint8_t v = fnat_xlat_reply(w, m, meta, &k);

		if (v != PA_LB_V_FORWARD)
			return v;
	} else if (family == 4) {
		struct rte_ipv4_hdr *ip = (void *)l3;

		rewrite_4tuple(ip, (uint8_t *)&ip->src_addr, k.dst, k.src,
			alen, l4, meta->l4_proto, k.dport, k.sport);
	} else {
		struct rte_ipv6_hdr *ip = (void *)l3;

		rewrite_4tuple(NULL, ip->src_addr, k.dst, k.src, alen, l4,
			meta->l4_proto, k.dport, k.sport);
	}
	meta->sport = lb_bswap16(k.dport);
	meta->dport = lb_bswap16(k.sport);
	/* the service's clamp first: the PROXY header's room comes off
	 * what it leaves */
	if (unlikely(s->mss_clamp != 0) && meta->l4_proto == IPPROTO_TCP)
		clamp_mss(w, s, m, meta, true);
	if (unlikely(x->proxy != PA_LB_PROXY_NONE) &&
	    meta->l4_proto == IPPROTO_TCP)
		fnat_proxy_reply(m, meta, x);
	set_macs(lb, w, rte_pktmbuf_mtod(m, struct rte_ether_hdr *),
		meta, NULL);
	w->st.fnat_replies++;
	return PA_LB_V_FORWARD;
unmatched:
	w->st.fnat_reply_unmatched++;
	return PA_LB_V_FNAT_UNMATCHED;
}

/*
 * A backend's ICMP error (or a router's on the way to it) about a packet
 * of an fnat flow: to pool address @p a, quoting pool address:port ->
 * backend:port. The flow is the reply index's at that port (this
 * lcore's share, as for replies), if the quote's destination is its
 * backend; the error goes to the client as one about its own packet
 * (client -> VIP), from the VIP, in the client's family (lb_xlat_icmp()).
 * An error about nothing this lcore holds is dropped (icmp_no_service).
 */
static __rte_noinline uint8_t
fnat_icmp_from_backend(struct pa_lb *lb, struct lb_worker *w,
		const struct lb_table *t, struct rte_mbuf *m,
		struct pa_pkt_meta *meta, int a, uint64_t now)
{
	const struct lb_fnat_pool *p = &lb->fnat;
	const struct lb_svc *s;
	struct lb_icmp_quote q;
	struct lb_flow_key k;
	uint16_t port;

	if (lb_icmp_quote_parse(m, meta, &q) != 0) {
		w->st.icmp_bad_quote++;
		return PA_LB_V_ICMP_BAD_QUOTE;
	}
	port = lb_bswap16(q.sport);
	if (port < p->lo || port > p->hi ||
	    !lb_addr_eq(q.src, p->addr[a].addr, q.family) ||
	    fnat_flow_of(lb, w, t, a, port, q.proto, q.family, q.dst, q.dport,
		    now, &k, &s) < 0)
		goto none;
	if (lb_xlat_icmp(m, meta, k.family, k.dst, k.src, k.src, k.dst,
			k.sport, k.dport, lb_bswap16(w->ip_id++)) != 0) {
		w->st.icmp_bad_quote++;
		return PA_LB_V_ICMP_BAD_QUOTE;
	}
	set_macs(lb, w, rte_pktmbuf_mtod(m, struct rte_ether_hdr *), meta,
		NULL);
	w->st.icmp_errors_forwarded++;
	return PA_LB_V_FORWARD;
none:
	w->st.icmp_no_service++;
	return PA_LB_V_ICMP_NO_SERVICE;
}

/*
 * A client's ICMP error (or a router's on the way to it) about a reply of
 * an fnat flow of service @p s (VIP -> client, quoted): the flow's entry
 * (@p pos; none, expired or its backend gone: the mapping is unknown,
 * dropped as icmp_no_service) says which pool address and port the
 * backend knows it by; the error goes to the backend as one about its own
 * packet
 * (backend -> pool address:port), from the pool address, in the
 * backend's family.
 */
static __rte_noinline uint8_t
fnat_icmp_from_client(struct pa_lb *lb, struct lb_worker *w,
		const struct lb_svc *s, struct rte_mbuf *m,
		struct pa_pkt_meta *meta, int32_t pos, uint64_t now)
{
	const struct lb_fnat_ext *x;
	const struct lb_backend *b;
	const struct lb_flow *f;
	const uint8_t *pa;
	uint8_t bfam;
	int bi = -1;

	if (pos >= 0 && w->fx != NULL) {
		f = lb_ftab_flow(&w->ftab, (uint32_t)pos);
		if ((f->in_use & LB_FLOW_FNAT) &&
		    now - f->last <= lb->tmo_tsc[f->tmo])
			bi = lb_flow_backend(s, f);
	}
	if (bi < 0) {
		w->st.icmp_no_service++;
		return PA_LB_V_ICMP_NO_SERVICE;
	}
	x = &w->fx[pos];
	b = &s->be[bi];
	bfam = b->addr.family == AF_INET6 ? 6 : 4;
	pa = lb->fnat.addr[x->paddr].addr;
	if (lb_xlat_icmp(m, meta, bfam, pa, pa_ip_bytes(&b->addr),
			pa_ip_bytes(&b->addr), pa, b->port, x->pport,
			lb_bswap16(w->ip_id++)) != 0) {
		w->st.icmp_bad_quote++;
		return PA_LB_V_ICMP_BAD_QUOTE;
	}
	set_macs(lb, w, rte_pktmbuf_mtod(m, struct rte_ether_hdr *), meta, b);
	w->st.icmp_errors_forwarded++;
	return PA_LB_V_FORWARD;
}

/*
 * ICMP to a VIP. An echo request is answered in place, out of its input
 * port. An error quotes a packet the VIP sent (a DSR or NAT reply, a
 * SYN-ACK...): reversed, the quote is the flow client -> VIP, hashed as
 * that flow's packets are (pa_pkt_hash_quote(), the parser's hash of the
 * error, which dispatched it to this flow's lcore), so it finds the
 * flow's entry, else the same Maglev choice; the error goes to that backend
 * the way the flow goes (ipip, dsr; nat rewrites the outer destination
 * and the quoted source back to the backend's).
 */
static __rte_noinline uint8_t
icmp_in(struct pa_lb *lb, struct lb_worker *w, const struct lb_table *t,
		struct rte_mbuf *m, struct pa_pkt_meta *meta, uint64_t now)
{
	const uint8_t family = (meta->flags & PA_PKT_F_IPV4) ? 4 : 6;
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *,
		meta->l3_off);
	const struct lb_backend *b;
	struct lb_ctr *c;
	const struct lb_svc *s;
	struct lb_icmp_quote q;
	struct lb_flow_key k;
	enum lb_icmp_kind kind;
	uint32_t hash;
	int32_t pos;
	int sl, bi = -1;

	kind = lb_icmp_kind(m, meta);
	if (kind == LB_ICMP_OTHER)
		return PA_LB_V_FORWARD;
	/* a backend's error about an fnat packet, to the pool address */
	if (unlikely(t->has_fnat) && kind == LB_ICMP_ERROR &&
	    (sl = lb_fnat_find(&lb->fnat, family, pkt_dst(l3, family))) >= 0)
		return fnat_icmp_from_backend(lb, w, t, m, meta, sl, now);
	if (lb_svc_find(t->svc_map, family, LB_SVC_PROTO_VIP, 0,
		    pkt_dst(l3, family)) < 0)
		return PA_LB_V_FORWARD;
	if (kind == LB_ICMP_ECHO) {
		if (!lb->icmp_echo || !answerable(lb, m))
			return PA_LB_V_FORWARD;
		lb_icmp_echo_reply(m, meta, in_mac(lb, m));
		if (m->port < RTE_MAX_ETHPORTS)
			meta->out_port = m->port;
		/* answered to its sender's MAC: not transit for the route
		 * pass of a routed port */
		meta->flags &= ~PA_PKT_F_ROUTE;
		w->st.icmp_echo_replies++;
		return PA_LB_V_FORWARD;
	}
	if (lb_icmp_quote_parse(m, meta, &q) != 0 || q.family != family) {
		w->st.icmp_bad_quote++;
		return PA_LB_V_ICMP_BAD_QUOTE;
	}
	/* the quoted packet left the VIP the error was sent to */
	sl = lb_addr_eq(q.src, pkt_dst(l3, family), family) ?
		lb_svc_find(t->svc_map, family, q.proto, q.sport, q.src) : -1;
	if (sl < 0) {
		w->st.icmp_no_service++;
		return PA_LB_V_ICMP_NO_SERVICE;
	}
	s = t->svc[sl];
	memset(&k, 0, sizeof(k));
	k.family = family;
	k.proto = q.proto;
	k.sport = q.dport;
	k.dport = q.sport;
	memcpy(k.src, q.dst, family == 4 ? 4 : 16);
	memcpy(k.dst, q.src, family == 4 ? 4 : 16);
	/* the flow's hash, the one the parser gave this error (so it is
	 * on the lcore of the flow when the dispatch was by flow hash) */
	hash = q.hash;
	pos = lb_ftab_lookup(&w->ftab, &k, hash);
	if (pos >= 0) {
		const struct lb_flow *f = lb_ftab_flow(&w->ftab, (uint32_t)pos);

		if (now - f->last <= lb->tmo_tsc[f->tmo])
			bi = lb_flow_backend(s, f);
	}
	if (bi < 0)
		bi = lb_maglev_pick(s, hash);
	if (bi < 0) {
		w->st.no_backend++;
		return PA_LB_V_NO_BACKEND;
	}
	if (s->forward == PA_LB_FNAT)
		return fnat_icmp_from_client(lb, w, s, m, meta, pos, now);
	w->st.icmp_errors_forwarded++;
	/* the flow's label (ipip6), the flow's lcore downstream */
	meta->hash = hash;
	if (s->forward != PA_LB_NAT)
		return forward(lb, w, s, (unsigned int)bi, m, meta);
	b = &s->be[bi];
	lb_icmp_nat(m, meta, &q, pa_ip_bytes(&b->addr), b->port);
	set_macs(lb, w, rte_pktmbuf_mtod(m, struct rte_ether_hdr *),
		meta, b);
	c = be_ctr(w->ctr, b);
	c->packets++;
	c->bytes += rte_pktmbuf_pkt_len(m);
	w->st.balanced++;
	return PA_LB_V_FORWARD;
}

/* Pass 2's decision for a packet its fast path did not settle (a
 * fragment, a flow not in the table or not its candidate, expired, whose
 * backend went, a new flow): the backend's index, or LB_NEW_*. */
static __rte_noinline int
decide_slow(struct pa_lb *lb, struct lb_worker *w, const struct lb_svc *s,
		struct rte_mbuf *m, struct pa_pkt_meta *meta,
		const struct lb_flow_key *k, uint32_t sig, int32_t pos,
		bool frag, bool *dirty, uint64_t now, int32_t *pos_out)
{
	struct lb_flow *f;
	int bi;

	*pos_out = -1;
	if (frag) {
		w->st.fragments++;
		if (s->forward == PA_LB_FNAT) {
			w->st.fnat_fragments++;
			return LB_NEW_FNAT_FRAG;
		}
		return lb_maglev_pick(s, meta->hash);
	}
	/* the candidate is the flow when its key is this one (else a hash
	 * collision: look the whole way); once this chunk has changed the
	 * table, candidates may be stale: look again */
	if (*dirty || (pos >= 0 && !lb_ftab_key_eq(&w->ftab.line[pos], k)))
		pos = lb_ftab_lookup(&w->ftab, k, sig);
	if (pos >= 0) {
		f = lb_ftab_flow(&w->ftab, (uint32_t)pos);
		bi = lb_flow_backend(s, f);
		if (likely(bi >= 0 && now - f->last <= lb->tmo_tsc[f->tmo])) {
			f->last = now;
			if (meta->l4_proto == IPPROTO_TCP)
				f->tmo = tcp_tmo(m, meta, f->tmo);
			*pos_out = pos;
			return bi;
		}
		if (bi >= 0)
			w->st.flows_expired++;
		else
			w->st.flows_rescheduled++;
		lb_flow_forget(lb, w, pos);
		*dirty = true;
	}
	if (unlikely(s->syn_defer) && pure_syn(m, meta)) {
		/* protect.syn_defer: the Maglev choice, no entry until the
		 * client's next packet */
		if (unlikely(s->max_flows != 0) && svc_full(w, s))
			return LB_NEW_MAX_FLOWS;
		w->st.syn_stateless++;
		return lb_maglev_pick(s, meta->hash);
	}
	*dirty = true;
	return flow_new(lb, w, s, k, m, meta, now, pos_out);
}

/* What pass 1 leaves pass 2: the candidates (packets a service's), by
 * candidate: the packet's index, its service's slot, its flow key, hash
 * and candidate position (fragments: no key; their bits in frag). */
struct lb_cands {
	uint16_t cand[BULK], slot[BULK];
	int32_t fpos[BULK];
	uint32_t fsig[BULK];
	uint64_t frag;
	struct lb_flow_key fkey[BULK];
};

/* The refused verdicts (flow_new()'s LB_NEW_*, no backend). */
static __rte_noinline uint8_t
refused(struct lb_worker *w, int bi)
{
	if (bi == LB_NEW_SRC_LIMIT) {
		w->st.src_limited++;
		return PA_LB_V_SRC_LIMIT;
	}
	if (bi == LB_NEW_MAX_FLOWS) {
		w->st.max_flows_dropped++;
		return PA_LB_V_MAX_FLOWS;
	}
	if (bi == LB_NEW_FNAT_NO_PORT)
		return PA_LB_V_FNAT_NO_PORT;
	if (bi == LB_NEW_FNAT_FULL)
		return PA_LB_V_FNAT_TABLE_FULL;
	if (bi == LB_NEW_FNAT_FRAG)
		return PA_LB_V_FNAT_FRAGMENT;
	w->st.no_backend++;
	return PA_LB_V_NO_BACKEND;
}

/*
 * Pass 2: decide and rewrite, in packet order. @p single (a constant):
 * every candidate is service @p one's, whose forwarding mode and family
 * are @p mode and @p fam (constants: one copy each, its fields read once
 * a chunk); else each packet's own service, mode and family. A packet of
 * a known flow, its entry current, is decided here (the flow table's
 * candidate compared, the backend checked); any other goes to
 * decide_slow().
 */
static __rte_always_inline void
pass2(struct pa_lb *lb, struct lb_worker *w, const struct lb_table *t,
		struct rte_mbuf **pkts, unsigned int nc, struct lb_cands *cd,
		uint64_t now, uint8_t *verdicts, const struct lb_svc *one,
		const bool single, const uint8_t mode, const uint8_t fam)
{
	const int moff = pa_pkt_meta_offset;
	struct lb_ftab_line *const lines = w->ftab.line;
	uint64_t tmo[LB_TMO_MAX];
	struct lb_fast x;
	bool dirty = false;
	unsigned int j;

	/* one's fields, read once */
	const uint32_t one_uid = single ? one->uid : 0;
	const unsigned int one_nbe = single ? one->n_be : 0;
	const uint16_t one_mss = single ? one->mss_clamp : 0;

	memcpy(tmo, lb->tmo_tsc, sizeof(tmo));
	fast_begin(lb, w, &x);
	for (j = 0; j < nc; j++) {
		struct rte_mbuf *m = pkts[cd->cand[j]];
		struct pa_pkt_meta *meta = RTE_MBUF_DYNFIELD(m, moff,
			struct pa_pkt_meta *);
		const struct lb_svc *s = single ? one :
			t->svc[cd->slot[j]];
		const uint8_t md = single ? mode : s->forward;
		const uint8_t fm = single ? fam : s->family;
		const struct lb_backend *b;
		int32_t pos = cd->fpos[j];
		int bi;

		/* (a fragment's pos is -ENOENT) */
		if (likely(!dirty && pos >= 0)) {
			struct lb_ftab_line *l = &lines[pos];
			struct lb_flow *f = &l->f;

			if (likely(lb_ftab_key_eq(l, &cd->fkey[j]) &&
			    f->svc_uid == (single ? one_uid : s->uid) &&
			    f->be_idx < (single ? one_nbe : s->n_be))) {
				bi = f->be_idx;
				b = &s->be[bi];
				if (likely(b->uid == f->be_uid &&
				    b->state != PA_LB_DOWN &&
				    now - f->last <= tmo[f->tmo])) {
					f->last = now;
					if (meta->l4_proto == IPPROTO_TCP)
						f->tmo = tcp_tmo(m, meta,
							f->tmo);
					goto send;
				}
			}
		}
		bi = decide_slow(lb, w, s, m, meta, &cd->fkey[j], cd->fsig[j],
			pos, (cd->frag >> j) & 1, &dirty, now, &pos);
		if (unlikely(bi < 0)) {
			verdicts[cd->cand[j]] = refused(w, bi);
			continue;
		}
		b = &s->be[bi];
send:
		if (unlikely((single ? one_mss : s->mss_clamp) != 0) &&
		    meta->l4_proto == IPPROTO_TCP)
			clamp_mss(w, s, m, meta, false);
		verdicts[cd->cand[j]] = fwd_fast(lb, w, &x, b, m, meta, md, fm,
			md == PA_LB_FNAT ? &w->fx[pos] : NULL);
	}
	fast_end(w, &x);
}

/* pass2()'s copies, each a function of its own (its registers its own,
 * not shared with pass 1's) */
#define LB_PASS2(name, one, mode, fam)					\
static __rte_noinline void						\
name(struct pa_lb *lb, struct lb_worker *w, const struct lb_table *t,	\
		struct rte_mbuf **pkts, unsigned int nc, struct lb_cands *cd, \
		uint64_t now, uint8_t *verdicts, const struct lb_svc *s) \
{									\
	pass2(lb, w, t, pkts, nc, cd, now, verdicts, s, one, mode, fam);	\
}
LB_PASS2(pass2_any, false, 0, 0)
LB_PASS2(pass2_ipip4, true, PA_LB_IPIP, 4)
LB_PASS2(pass2_ipip6, true, PA_LB_IPIP, 6)
LB_PASS2(pass2_nat4, true, PA_LB_NAT, 4)
LB_PASS2(pass2_nat6, true, PA_LB_NAT, 6)
LB_PASS2(pass2_dsr4, true, PA_LB_DSR, 4)
LB_PASS2(pass2_dsr6, true, PA_LB_DSR, 6)
LB_PASS2(pass2_fnat4, true, PA_LB_FNAT, 4)
LB_PASS2(pass2_fnat6, true, PA_LB_FNAT, 6)

/* pass2() for @p one's mode and family (NULL: each packet's). */
static __rte_always_inline void
pass2_one(struct pa_lb *lb, struct lb_worker *w, const struct lb_table *t,
		struct rte_mbuf **pkts, unsigned int nc, struct lb_cands *cd,
		uint64_t now, uint8_t *verdicts, const struct lb_svc *one)
{
	void (*fn)(struct pa_lb *, struct lb_worker *,
		const struct lb_table *, struct rte_mbuf **, unsigned int,
		struct lb_cands *, uint64_t, uint8_t *,
		const struct lb_svc *);

	if (one == NULL)
		fn = pass2_any;
	else if (one->forward == PA_LB_IPIP)
		fn = one->family == 4 ? pass2_ipip4 : pass2_ipip6;
	else if (one->forward == PA_LB_NAT)
		fn = one->family == 4 ? pass2_nat4 : pass2_nat6;
	else if (one->forward == PA_LB_FNAT)
		fn = one->family == 4 ? pass2_fnat4 : pass2_fnat6;
	else
		fn = one->family == 4 ? pass2_dsr4 : pass2_dsr6;
	fn(lb, w, t, pkts, nc, cd, now, verdicts, one);
}

/* One chunk of at most BULK packets, in two passes and a short one
 * between: find the packets that are a service's and build their flow
 * keys (the service lookup of the previous packet reused when the next
 * goes to the same VIP, port and protocol), prefetching their flow-table
 * slots; read the slots, prefetching the candidates' lines (key and
 * entry); then decide and rewrite (pass2(), specialised when the whole
 * chunk is one service's). */
static void
process_chunk(struct pa_lb *lb, struct lb_worker *w, const struct lb_table *t,
		struct rte_mbuf **pkts, uint16_t n, uint64_t now,
		uint8_t *verdicts)
{
	const int moff = pa_pkt_meta_offset;
	struct lb_cands cd;
	uint16_t reply[BULK], icmp[BULK], freply[BULK];
	uint8_t faddr[BULK];
	unsigned int nc = 0, nr = 0, ni = 0, nf = 0, i, j;
	/* the last service lookup: its (family, proto, port) tag (0: none),
	 * address and answer; the first candidate's service, and whether
	 * another's is in the chunk */
	uint32_t c_tag = 0;
	uint64_t c_a0 = 0, c_a1 = 0;
	int c_sl = -1, sl0 = -1;
	bool mixed = false;

	cd.frag = 0;
	/* pass 1: which packets are a service's, and their flow keys (not
	 * fragments': they are stateless) with the packets' own flow hash
	 * as signature */
	for (i = 0; i < n; i++) {
		struct pa_pkt_meta *meta = RTE_MBUF_DYNFIELD(pkts[i], moff,
			struct pa_pkt_meta *);
		const uint8_t *l3, *dst;
		uint8_t family;
		uint16_t port;
		uint32_t tag;
		uint64_t a0, a1 = 0;
		int sl;

		if (!(meta->flags & (PA_PKT_F_IPV4 | PA_PKT_F_IPV6)))
			continue;
		if (meta->l4_proto != IPPROTO_TCP &&
		    meta->l4_proto != IPPROTO_UDP) {
			if (unlikely(meta->l4_proto == IPPROTO_ICMP ||
				     meta->l4_proto == IPPROTO_ICMPV6) &&
			    (meta->flags & (PA_PKT_F_L4 | PA_PKT_F_FRAG)) ==
			    PA_PKT_F_L4)
				icmp[ni++] = (uint16_t)i;
			continue;
		}
		if (unlikely(meta->flags & PA_PKT_F_FRAG)) {
			port = 0;
		} else if (likely(meta->flags & PA_PKT_F_L4)) {
			if (!lb_bit(t->dport_map, meta->dport))
				goto maybe_reply;
			port = lb_bswap16(meta->dport);
		} else {
			continue;
		}
		family = (meta->flags & PA_PKT_F_IPV4) ? 4 : 6;
		l3 = rte_pktmbuf_mtod_offset(pkts[i], const uint8_t *,
			meta->l3_off);
		dst = pkt_dst(l3, family);
		if (family == 4) {
			uint32_t d;

			memcpy(&d, dst, 4);
			a0 = d;
		} else {
			memcpy(&a0, dst, 8);
			memcpy(&a1, dst + 8, 8);
		}
		tag = (uint32_t)family << 24 | (uint32_t)meta->l4_proto << 16 |
			port;
		if (tag == c_tag && a0 == c_a0 && a1 == c_a1) {
			sl = c_sl;
		} else {
			sl = lb_svc_find(t->svc_map, family, meta->l4_proto,
				port, dst);
			c_tag = tag;
			c_a0 = a0;
			c_a1 = a1;
			c_sl = sl;
			if (sl >= 0) {
				if (sl0 < 0)
					sl0 = sl;
				else if (sl != sl0)
					mixed = true;
			}
		}
		if (sl < 0)
			goto maybe_reply;
		/* ipip writes its outer header into the headroom: a line the
		 * PMD never touched */
		rte_prefetch0_write(rte_pktmbuf_mtod(pkts[i], uint8_t *) -
			RTE_CACHE_LINE_SIZE);
		cd.slot[nc] = (uint16_t)sl;
		if (likely(!(meta->flags & PA_PKT_F_FRAG))) {
			flow_key_of(&cd.fkey[nc], l3, meta, family);
			/* the flow hash the parser left for later
			 * (PA_PKT_F_HASH_LATER: rtc's rx stage): only the
			 * packets a service balances need it, and this is
			 * the pass that reads their headers first (such a
			 * packet is a fast path's, its L3 header at
			 * PA_PKT_FAST_L3) */
			pa_pkt_hash_later(l3 - PA_PKT_FAST_L3, meta);
			cd.fsig[nc] = meta->hash;
			lb_ftab_prefetch(&w->ftab, meta->hash);
		} else {
			cd.frag |= 1ULL << nc;
		}
		cd.cand[nc++] = (uint16_t)i;
		continue;
maybe_reply:
		/* a backend's reply to a pool address and port (full NAT) */
		if (unlikely(t->has_fnat) && (meta->flags & PA_PKT_F_L4) &&
		    !(meta->flags & PA_PKT_F_FRAG) &&
		    meta->dport >= lb->fnat.lo && meta->dport <= lb->fnat.hi) {
			const uint8_t fam = (meta->flags & PA_PKT_F_IPV4) ? 4 : 6;
			int a = lb_fnat_find(&lb->fnat, fam, pkt_dst(
				rte_pktmbuf_mtod_offset(pkts[i], const uint8_t *,
					meta->l3_off), fam));

			if (a >= 0) {
				faddr[nf] = (uint8_t)a;
				freply[nf++] = (uint16_t)i;
				continue;
			}
		}
		if (t->has_nat && (meta->flags & PA_PKT_F_L4) &&
		    !(meta->flags & PA_PKT_F_FRAG) &&
		    lb_bit(t->reply_map, meta->sport))
			reply[nr++] = (uint16_t)i;
	}

	/* their flows' slots (prefetched in pass 1): the candidate position
	 * of each, whose line (key and entry) is prefetched for pass 2 to
	 * compare and use */
	for (j = 0; j < nc; j++) {
		int32_t p;

		if (unlikely(cd.frag != 0) && ((cd.frag >> j) & 1)) {
			cd.fpos[j] = -ENOENT;
			continue;
		}
		p = lb_ftab_candidate(&w->ftab, cd.fsig[j]);
		cd.fpos[j] = p;
		if (p >= 0) {
			rte_prefetch0(&w->ftab.line[p]);
			if (t->has_fnat && w->fx != NULL)
				rte_prefetch0(&w->fx[p]);
		}
	}

	if (nc != 0)
		pass2_one(lb, w, t, pkts, nc, &cd, now, verdicts,
			mixed ? NULL : t->svc[sl0]);

	for (j = 0; j < nr; j++)
		verdicts[reply[j]] = nat_reply(lb, w, t, pkts[reply[j]],
			pa_pkt_meta(pkts[reply[j]]));
	for (j = 0; j < nf; j++)
		verdicts[freply[j]] = fnat_reply(lb, w, t, pkts[freply[j]],
			pa_pkt_meta(pkts[freply[j]]), faddr[j], now);
	for (j = 0; j < ni; j++)
		verdicts[icmp[j]] = icmp_in(lb, w, t, pkts[icmp[j]],
			pa_pkt_meta(pkts[icmp[j]]), now);
}

void
pa_lb_process(struct pa_lb *lb, unsigned int lcore_idx,
		struct rte_mbuf **pkts, uint16_t n, uint64_t now,
		uint8_t *verdicts)
{
	const struct lb_table *t = __atomic_load_n(&lb->live, __ATOMIC_ACQUIRE);
	struct lb_worker *w = __atomic_load_n(&lb->w[lcore_idx],
		__ATOMIC_ACQUIRE);
	uint16_t off, c;

	memset(verdicts, PA_LB_V_FORWARD, n);
	if (t == NULL || t->n_services == 0 || w == NULL)
		return;
	/* flows to come: pa_lb_poll() is due (pa_lb_poll_due()) */
	if (unlikely(__atomic_load_n(&lb->dp.poll[lcore_idx],
			__ATOMIC_RELAXED) == 0))
		__atomic_fetch_or(&lb->dp.poll[lcore_idx], 1, __ATOMIC_RELAXED);
	w->now = now;
	for (off = 0; off < n; off += c) {
		c = RTE_MIN((uint16_t)(n - off), (uint16_t)BULK);
		process_chunk(lb, w, t, pkts + off, c, now, verdicts + off);
	}
}

/* ------------------------------------------------------------------ */
/* Housekeeping                                                        */
/* ------------------------------------------------------------------ */

void
pa_lb_poll(struct pa_lb *lb, unsigned int lcore_idx, uint64_t now, bool idle)
{
	uint32_t due = __atomic_load_n(&lb->dp.poll[lcore_idx],
		__ATOMIC_ACQUIRE);
	struct lb_worker *w = __atomic_load_n(&lb->w[lcore_idx],
		__ATOMIC_ACQUIRE);
	const struct lb_table *t;
	unsigned int k, budget;
	uint32_t pos, ahead;

	if (w == NULL)
		return;
	if (unlikely(!w->running))
		__atomic_store_n(&w->running, true, __ATOMIC_RELEASE);
	if (unlikely(w->trace_req != w->trace_done)) {
		uint32_t req = __atomic_load_n(&w->trace_req, __ATOMIC_ACQUIRE);
		int32_t p = w->trace_pos >= 0 ?
			lb_trace_at(&w->ftab, w->trace_pos) :
			lb_ftab_lookup(&w->ftab, &w->trace_key, w->trace_sig);
		const struct lb_flow *tf = p >= 0 ?
			lb_ftab_flow(&w->ftab, (uint32_t)p) : NULL;

		w->trace_hit = tf != NULL && now - tf->last <=
			lb->tmo_tsc[tf->tmo];
		if (tf != NULL)
			lb_trace_copy(w, p);
		__atomic_store_n(&w->trace_done, req, __ATOMIC_RELEASE);
	}
	if (w->defer_head != w->defer_tail)
		lb_worker_reclaim(lb, w);
	/* the flow index's size (lb_ftab.h): a step a pass while a resize
	 * is due or under way; a flow the new index has no room for
	 * (crafted hashes) is forgotten, and made anew by its next packet */
	if (unlikely(lb_ftab_resize_due(&w->ftab))) {
		int32_t p = lb_ftab_resize_step(&w->ftab, LB_FTAB_GROW_STEP);

		if (unlikely(p >= 0))
			lb_flow_forget(lb, w, p);
	}

	if (w->n_flows == 0) {
		/* nothing left here (no deferred free, no index resize):
		 * not due until lib/lb says so (a question asked since
		 * keeps it due) */
		if (w->defer_head == w->defer_tail &&
		    !lb_ftab_resize_due(&w->ftab))
			__atomic_compare_exchange_n(&lb->dp.poll[lcore_idx],
				&due, 0, false, __ATOMIC_RELAXED,
				__ATOMIC_RELAXED);
		return;
	}
	if (!idle) {
		uint64_t gap = now - w->last_sweep, period;

		/* SWEEP_BUSY positions every sweep_tsc at most, and the
		 * hw positions in use once per period at most: a sweep when
		 * gap >= period x SWEEP_BUSY / hw. The period is a share of
		 * the shortest timeout (sweep_period_tsc, lb.c), or
		 * LB_SWEEP_PERIOD_MS while fewer than 1/8 of the positions
		 * are free: dead flows are not left to fill the table */
		if (gap < lb->sweep_tsc)
			return;
		period = lb->sweep_period_tsc;
		if (unlikely(w->ftab.n_free < w->ftab.n_pos / 8))
			period = lb->tsc_hz * LB_SWEEP_PERIOD_MS / 1000;
		if (gap < period && gap * w->ftab.hw < period * SWEEP_BUSY)
			return;
	}
	w->last_sweep = now;
	/* (the clock of what a sweep forgets: an fnat port's time_wait_s
	 * starts now, not at the lcore's last burst) */
	w->now = now;
	t = __atomic_load_n(&lb->live, __ATOMIC_ACQUIRE);
	/* the positions below the high-water mark: at 10k flows in a
	 * table of 1M, a sweep of the whole table would read 1M lines,
	 * most of them free, and take 100 times as long to age a flow */
	budget = RTE_MIN(idle ? (unsigned int)SWEEP_IDLE :
		(unsigned int)SWEEP_BUSY, w->ftab.hw);
	pos = w->sweep < w->ftab.hw ? w->sweep : 0;
	/* each line swept prefetches the one a busy sweep (SWEEP_BUSY
	 * positions) ahead: a sweep reads the lines the previous one
	 * prefetched a sweep period before, rather than missing on each in
	 * turn (at 1M flows they are in DRAM, and a busy sweep's 4 KB is
	 * too short a stream for the hardware prefetcher to hide) */
	ahead = (pos + SWEEP_BUSY) % w->ftab.hw;
	for (k = 0; k < budget; k++) {
		struct lb_flow *f = lb_ftab_flow(&w->ftab, pos);

		rte_prefetch0(lb_ftab_flow(&w->ftab, ahead));
		if (++ahead >= w->ftab.hw)
			ahead = 0;
		if (f->in_use) {
			const struct lb_svc *s = t->svc[f->svc_slot];

			if (s == NULL || lb_flow_backend(s, f) < 0) {
				w->st.flows_backend_gone++;
				lb_flow_forget(lb, w, (int32_t)pos);
			} else if (now - f->last > lb->tmo_tsc[f->tmo]) {
				w->st.flows_expired++;
				lb_flow_forget(lb, w, (int32_t)pos);
			}
		}
		if (++pos >= w->ftab.hw)
			pos = 0;
	}
	w->sweep = pos;
}
