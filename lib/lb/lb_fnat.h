/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_FNAT_H
#define PA_LB_FNAT_H

/*
 * Full NAT's source pool (lb.fnat; docs/configuration.md, "Full NAT").
 *
 * Every pool address has the same port range [lo, hi]; each lb lcore owns
 * a contiguous share of it, the same share of every address (rank r of
 * n: ports lo + r x len .. lo + (r + 1) x len - 1, the last share taking
 * the remainder), so that a reply's destination port names the lcore
 * whose flow table holds its flow (pa_lb_fnat_owner(): the pipeline
 * steers replies there) and no lock is needed: an lcore hands out and
 * takes back only its own ports.
 *
 * A (pool address, port) serves one flow at a time. Its lcore keeps the
 * free ports of each of its shares in a FIFO ring (a port freed goes to
 * the back: the one handed out is the one free the longest), with, by
 * port, when its last flow ended and to which backend: a port is handed
 * out to that same backend again only time_wait_s after (the backend's
 * TIME_WAIT for the old connection would take the new SYN for a stray
 * segment of it).
 *
 * The reply index: by pool address, by port, the position (+ 1) of the
 * flow in its lcore's flow table (0: none), written by that lcore only;
 * a reply's lookup is an array load and a check of the flow's line (the
 * reply's source must be the flow's backend).
 *
 * Included by lb_priv.h.
 */

#include <stdbool.h>
#include <stdint.h>

#include "lb_proxy.h"

/** A flow's full-NAT side entry (by position, beside its line). */
struct lb_fnat_ext {
	uint16_t pport;			/* its pool port, network order; 0:
					 * none (not an fnat flow) */
	uint8_t paddr;			/* its pool address's index */
	uint8_t proxy;			/* enum pa_lb_proxy of its service */
	uint32_t pad;
	struct lb_proxy_state ps;	/* PROXY protocol (proxy_protocol) */
};

_Static_assert(sizeof(struct lb_fnat_ext) == 16, "16-byte side entries");

/** One pool address as the data path sees it. */
struct lb_fnat_addr {
	/* first: aligned, the checksum differences read it in 16-bit
	 * words */
	uint8_t addr[16];		/* IPv4: first 4 bytes, rest zero */
	uint8_t family;			/* 4 or 6 */
	struct pa_ip_addr ip;		/* the same, as configured */
	uint32_t *rpos;			/* by port - lo: flow position + 1 */
	uint32_t *tw_until;		/* by port - lo: second (pa_lb's
					 * clock) before which it may not
					 * serve tw_be again */
	uint32_t *tw_be;		/* by port - lo: uid of the backend
					 * of its last flow */
};

/** One lcore's share of one pool address: a FIFO ring of free ports. */
struct lb_fnat_share {
	uint16_t lo;			/* first port (host order) */
	uint16_t pad;
	uint32_t n;			/* ports in the share */
	uint32_t head;			/* next to hand out */
	uint32_t n_free;
	uint16_t *ring;			/* n slots: ports (host order) */
};

/** The pool (immutable after pa_lb_create(), but the ports' state). */
struct lb_fnat_pool {
	unsigned int n_addrs;		/* 0: no pool */
	uint16_t lo, hi;		/* the port range (host order) */
	uint32_t share;			/* ports of each share (the last
					 * one's: share + the remainder) */
	uint32_t time_wait_s;
	unsigned int n_lb;		/* shares (lb lcores) */
	struct lb_fnat_addr addr[PA_CONFIG_FNAT_MAX_ADDRS];
	/* by family (0: IPv4, 1: IPv6): its addresses' indexes */
	unsigned int n_fam[2];
	uint8_t fam[2][PA_CONFIG_FNAT_MAX_ADDRS];
};

/** The pool address index of @p addr (@p family), or -1. */
static __rte_always_inline int
lb_fnat_find(const struct lb_fnat_pool *p, uint8_t family,
		const uint8_t *addr)
{
	const unsigned int f = family == 6;
	unsigned int i;

	for (i = 0; i < p->n_fam[f]; i++) {
		const struct lb_fnat_addr *a = &p->addr[p->fam[f][i]];

		if (lb_addr_eq(a->addr, addr, family))
			return p->fam[f][i];
	}
	return -1;
}

/** The lb rank that owns @p port (host order, in [lo, hi]). */
static __rte_always_inline unsigned int
lb_fnat_rank(const struct lb_fnat_pool *p, uint16_t port)
{
	unsigned int r = (unsigned int)(port - p->lo) / p->share;

	return r < p->n_lb ? r : p->n_lb - 1;
}

#endif /* PA_LB_FNAT_H */
