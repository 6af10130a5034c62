/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Full NAT's source pool (lb_fnat.h): the addresses, each lcore's share
 * of their ports, handing ports out and taking them back.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "lb_priv.h"
#include "pa_err.h"

int
lb_fnat_init(struct pa_lb *lb, const struct pa_config_fnat *cfg, char *err,
		size_t err_len)
{
	struct lb_fnat_pool *p = &lb->fnat;
	unsigned int i, n_ports;

	memset(p, 0, sizeof(*p));
	if (cfg == NULL || !cfg->present || cfg->n_addrs == 0)
		return 0;
	p->lo = cfg->port_lo != 0 ? cfg->port_lo : PA_CONFIG_FNAT_DEF_PORT_LO;
	p->hi = cfg->port_hi != 0 ? cfg->port_hi : PA_CONFIG_FNAT_DEF_PORT_HI;
	if (p->hi < p->lo) {
		pa_seterr(err, err_len, "$.lb.fnat.ports: %u-%u is empty",
			p->lo, p->hi);
		return -EINVAL;
	}
	n_ports = (unsigned int)p->hi - p->lo + 1;
	p->n_lb = RTE_MAX(lb->n_lb, 1u);
	if (n_ports < p->n_lb) {
		pa_seterr(err, err_len,
			"$.lb.fnat.ports: %u ports cannot be shared by %u lb lcores (one each at least)",
			n_ports, p->n_lb);
		return -EINVAL;
	}
	p->share = n_ports / p->n_lb;
	p->time_wait_s = cfg->time_wait_s;
	for (i = 0; i < cfg->n_addrs; i++) {
		struct lb_fnat_addr *a = &p->addr[i];
		const unsigned int f = cfg->addrs[i].family == AF_INET6;

		a->family = f ? 6 : 4;
		memcpy(a->addr, pa_ip_bytes(&cfg->addrs[i]), f ? 16 : 4);
		a->ip = cfg->addrs[i];
		a->rpos = rte_zmalloc_socket("pa_lb_fnat_rpos", (size_t)n_ports *
			sizeof(*a->rpos), RTE_CACHE_LINE_SIZE, lb->socket);
		a->tw_until = rte_zmalloc_socket("pa_lb_fnat_tw", (size_t)n_ports *
			sizeof(*a->tw_until), RTE_CACHE_LINE_SIZE, lb->socket);
		a->tw_be = rte_zmalloc_socket("pa_lb_fnat_twbe", (size_t)n_ports *
			sizeof(*a->tw_be), RTE_CACHE_LINE_SIZE, lb->socket);
		p->n_addrs = i + 1;
		if (a->rpos == NULL || a->tw_until == NULL || a->tw_be == NULL) {
			lb_fnat_fini(lb);
			pa_seterr(err, err_len, "out of memory for the fnat pool");
			return -ENOMEM;
		}
		p->fam[f][p->n_fam[f]++] = (uint8_t)i;
	}
	return 0;
}

void
lb_fnat_fini(struct pa_lb *lb)
{
	struct lb_fnat_pool *p = &lb->fnat;
	unsigned int i;

	for (i = 0; i < p->n_addrs; i++) {
		rte_free(p->addr[i].rpos);
		rte_free(p->addr[i].tw_until);
		rte_free(p->addr[i].tw_be);
	}
	memset(p, 0, sizeof(*p));
}

int
lb_fnat_worker_init(struct pa_lb *lb, struct lb_worker *w)
{
	const struct lb_fnat_pool *p = &lb->fnat;
	unsigned int i, k;
	uint16_t lo;
	uint32_t n;

	if (p->n_addrs == 0)
		return 0;
	lo = (uint16_t)(p->lo + w->lb_ord * p->share);
	n = w->lb_ord + 1 == p->n_lb ?
		(uint32_t)p->hi - lo + 1 : p->share;
	w->fshare = rte_zmalloc_socket("pa_lb_fnat_share", p->n_addrs *
		sizeof(*w->fshare), RTE_CACHE_LINE_SIZE, lb->socket);
	w->fx = rte_zmalloc_socket("pa_lb_fnat_ext", (size_t)w->ftab.n_pos *
		sizeof(*w->fx), RTE_CACHE_LINE_SIZE, lb->socket);
	if (w->fshare == NULL || w->fx == NULL)
		goto nomem;
	for (i = 0; i < p->n_addrs; i++) {
		struct lb_fnat_share *s = &w->fshare[i];

		s->lo = lo;
		s->n = n;
		s->head = 0;
		s->n_free = n;
		s->ring = rte_malloc_socket("pa_lb_fnat_ring", n *
			sizeof(*s->ring), RTE_CACHE_LINE_SIZE, lb->socket);
		if (s->ring == NULL)
			goto nomem;
		for (k = 0; k < n; k++)
			s->ring[k] = (uint16_t)(lo + k);
	}
	return 0;
nomem:
	lb_fnat_worker_fini(w);
	return -ENOMEM;
}

void
lb_fnat_worker_fini(struct lb_worker *w)
{
	unsigned int i;

	if (w->fshare != NULL) {
		/* (a share without its ring ends the ones made) */
		for (i = 0; i < PA_CONFIG_FNAT_MAX_ADDRS &&
		     w->fshare[i].ring != NULL; i++)
			rte_free(w->fshare[i].ring);
	}
	rte_free(w->fshare);
	rte_free(w->fx);
	w->fshare = NULL;
	w->fx = NULL;
}

/* Take a port of share @p s (pool address @p a) for backend @p be_uid:
 * the one at the front of the ring, unless its last flow went to the
 * same backend under time_wait_s ago; then, a few more (each passed over
 * goes to the back: the ring stays in the order ports were freed, give
 * or take those). @return the port (host order), or 0. */
static uint16_t
share_take(struct lb_worker *w, const struct lb_fnat_pool *p,
		const struct lb_fnat_addr *a, struct lb_fnat_share *s,
		uint32_t be_uid, uint32_t now_s)
{
	unsigned int tries = RTE_MIN(s->n_free, 4u);
	uint16_t port;
	uint32_t o;

	while (tries-- > 0) {
		port = s->ring[s->head];
		s->head = s->head + 1 == s->n ? 0 : s->head + 1;
		o = (uint32_t)(port - p->lo);
		if (a->tw_be[o] != be_uid ||
		    (int32_t)(now_s - a->tw_until[o]) >= 0) {
			s->n_free--;
			return port;
		}
		/* to the back (the slot just left is the tail) */
		w->st.fnat_time_wait++;
		s->ring[(s->head + s->n_free - 1) % s->n] = port;
	}
	return 0;
}

int
lb_fnat_take(struct pa_lb *lb, struct lb_worker *w, uint8_t family,
		uint32_t be_uid, uint32_t hash, uint32_t pos, uint32_t now_s,
		uint8_t *paddr, uint16_t *pport)
{
	const struct lb_fnat_pool *p = &lb->fnat;
	const unsigned int f = family == 6, n = p->n_fam[f];
	unsigned int i, k, ai;
	uint16_t port;

	if (n == 0)
		return -ENOSPC;
	/* the addresses in turn, from one that moves with each flow (the
	 * hash keeps a flood of one source from walking them in step) */
	k = (w->fnat_next++ + hash) % n;
	for (i = 0; i < n; i++, k = k + 1 == n ? 0 : k + 1) {
		ai = p->fam[f][k];
		if (w->fshare[ai].n_free == 0)
			continue;
		port = share_take(w, p, &p->addr[ai], &w->fshare[ai], be_uid,
			now_s);
		if (port == 0)
			continue;
		p->addr[ai].rpos[port - p->lo] = pos + 1;
		*paddr = (uint8_t)ai;
		*pport = port;
		return 0;
	}
	return -ENOSPC;
}

void
lb_fnat_give(struct pa_lb *lb, struct lb_worker *w, uint32_t pos,
		uint32_t be_uid, uint32_t now_s)
{
	const struct lb_fnat_pool *p = &lb->fnat;
	struct lb_fnat_ext *x = &w->fx[pos];
	const struct lb_fnat_addr *a;
	struct lb_fnat_share *s;
	uint16_t port;
	uint32_t o;

	if (x->pport == 0 || x->paddr >= p->n_addrs)
		return;
	port = rte_be_to_cpu_16(x->pport);
	a = &p->addr[x->paddr];
	s = &w->fshare[x->paddr];
	o = (uint32_t)(port - p->lo);
	if (a->rpos[o] == pos + 1)
		a->rpos[o] = 0;
	a->tw_be[o] = be_uid;
	a->tw_until[o] = now_s + p->time_wait_s;
	if (s->n_free < s->n) {
		s->ring[(s->head + s->n_free) % s->n] = port;
		s->n_free++;
	}
	memset(x, 0, sizeof(*x));
}

uint64_t
lb_fnat_in_use(const struct pa_lb *lb, unsigned int a)
{
	uint64_t used = 0;
	unsigned int i;

	for (i = 0; i < lb->n_lcores; i++) {
		const struct lb_worker *w = __atomic_load_n(&lb->w[i],
			__ATOMIC_ACQUIRE);

		if (w == NULL || w->fshare == NULL)
			continue;
		used += w->fshare[a].n - __atomic_load_n(&w->fshare[a].n_free,
			__ATOMIC_RELAXED);
	}
	return used;
}
