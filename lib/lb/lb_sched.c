/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schedulers: the choice of a backend for a new flow. Each sees the
 * published service (read-only) and the choosing lcore's own state (its
 * cursors and its flow counts), so none takes a lock. And the stateless
 * side of a choice: which service's Maglev choice explains a NAT reply
 * that matched no flow, asked by the data path and by trace alike.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "lb_priv.h"

/* NSDI'16 Maglev: the lookup table by flow hash. */
static int
sched_maglev(const struct lb_svc *s, struct lb_worker *w, uint32_t hash)
{
	RTE_SET_USED(w);
	return lb_maglev_pick(s, hash);
}

/* Round robin over the usable backends, a cursor per lcore. */
static int
sched_rr(const struct lb_svc *s, struct lb_worker *w, uint32_t hash)
{
	uint32_t c;

	RTE_SET_USED(hash);
	if (s->n_up == 0)
		return -1;
	c = w->cursor[s->slot]++;
	return s->up[c % s->n_up];
}

/* Weighted round robin: walk the Maglev table, whose entries are shared
 * out in proportion to the weights and interleaved by the permutations. */
static int
sched_wrr(const struct lb_svc *s, struct lb_worker *w, uint32_t hash)
{
	uint32_t c;

	RTE_SET_USED(hash);
	if (s->maglev == NULL)
		return -1;
	c = w->cursor[s->slot];
	if (c >= s->m)
		c = 0;
	w->cursor[s->slot] = c + 1;
	return s->maglev[c];
}

/* Weighted least connections over this lcore's active flows (flows are
 * spread over lcores by hash, so each lcore sees a fair sample); ties go
 * to the Maglev choice's side of the list, then to the lower index. */
static int
sched_lc(const struct lb_svc *s, struct lb_worker *w, uint32_t hash)
{
	uint64_t best_flows = 0, flows;
	uint32_t best_weight = 1;
	unsigned int i, k;
	int best = -1;

	if (s->n_up == 0)
		return -1;
	for (k = 0; k < s->n_up; k++) {
		/* start at a hash-chosen place so ties spread */
		i = s->up[(k + hash) % s->n_up];
		const struct lb_backend *b = &s->be[i];
		const struct lb_ctr *c = &w->ctr[b->cslot];

		flows = c->uid == b->uid ? c->flows : 0;
		/* flows / weight < best_flows / best_weight */
		if (best < 0 || flows * best_weight < best_flows * b->weight) {
			best = (int)i;
			best_flows = flows;
			best_weight = b->weight;
		}
	}
	return best;
}

static const struct lb_sched_ops ops_maglev = { "maglev", sched_maglev };
static const struct lb_sched_ops ops_rr = { "rr", sched_rr };
static const struct lb_sched_ops ops_wrr = { "wrr", sched_wrr };
static const struct lb_sched_ops ops_lc = { "lc", sched_lc };

const struct lb_sched_ops *const lb_sched_table[] = {
	[PA_LB_MAGLEV] = &ops_maglev,
	[PA_LB_RR] = &ops_rr,
	[PA_LB_WRR] = &ops_wrr,
	[PA_LB_LC] = &ops_lc,
};

uint32_t
lb_client_hash(const struct lb_svc *s, uint8_t proto, const uint8_t *cl,
		uint16_t cl_port)
{
	uint32_t ports = (uint32_t)rte_be_to_cpu_16(cl_port) << 16 |
		rte_be_to_cpu_16(s->port);
	uint32_t c;

	if (s->family == 4) {
		memcpy(&c, cl, 4);
		return pa_pkt_hash_v4(c, s->vip.v4.s_addr, ports, proto);
	}
	return pa_pkt_hash_v6(cl, s->vip.v6.s6_addr, ports, proto);
}

enum lb_nat_guess
lb_nat_stateless(const struct lb_table *t, uint8_t family, uint8_t proto,
		const uint8_t *be, uint16_t be_port, const uint8_t *cl,
		uint16_t cl_port, const struct lb_svc **out)
{
	const struct lb_svc *one = NULL;
	const struct lb_rev_ent *e;
	unsigned int i, agree = 0, may = 0;

	*out = NULL;
	if (t->rev == NULL)
		return LB_NAT_NOT_BACKEND;
	e = lb_rev_find(t->rev, family, proto, be_port, be);
	if (e == NULL)
		return LB_NAT_NOT_BACKEND;
	for (i = 0; i < e->n; i++) {
		const struct lb_rev_ref *r = &t->rev->ref[e->first + i];
		const struct lb_svc *s = t->svc[r->slot];

		if (s->sched != PA_LB_MAGLEV) {
			may++;
			continue;
		}
		if (lb_maglev_pick(s, lb_client_hash(s, proto, cl, cl_port)) ==
		    (int)r->be) {
			agree++;
			one = s;
		}
	}
	if (agree == 0)
		return LB_NAT_NO_AGREE;
	if (agree + may > 1)
		return LB_NAT_AMBIGUOUS;
	*out = one;
	return LB_NAT_ONE;
}
