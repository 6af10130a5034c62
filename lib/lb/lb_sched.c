/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schedulers: the choice of a backend for a new flow. Each sees the
 * published service (read-only) and the choosing lcore's own state (its
 * cursors and its flow counts), so none takes a lock.
 */
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
