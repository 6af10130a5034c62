/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace_packet's LB part: the same choice as the data path, asked of the
 * lcore that holds the flow (read-only), or taken from the tables.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "lb_priv.h"

#define TRACE_WAIT_NS	200000000ULL	/* an lcore answers in microseconds */

uint32_t
lb_trace_hash(const struct pa_flow_key *fk, bool fragment)
{
	uint32_t ports = fragment ? 0 :
		(uint32_t)rte_be_to_cpu_16(fk->sport) << 16 |
		rte_be_to_cpu_16(fk->dport);

	if (fk->family == 4)
		return pa_pkt_hash_v4(fk->v4.src, fk->v4.dst, ports, fk->proto);
	return pa_pkt_hash_v6(fk->v6.src, fk->v6.dst, ports, fk->proto);
}

/* Ask lcore @p w for its entry of @p k (read-only).
 * @return 1 (found, in @p out), 0 (none) or -EBUSY (no answer). */
static int
trace_ask(struct pa_lb *lb, unsigned int l, struct lb_worker *w,
		const struct lb_flow_key *k, hash_sig_t sig, struct lb_flow *out)
{
	const struct lb_flow *f;
	uint64_t deadline;
	uint32_t req;
	int32_t pos;

	if (__atomic_load_n(&w->running, __ATOMIC_ACQUIRE)) {
		w->trace_key = *k;
		w->trace_sig = sig;
		req = w->trace_req + 1;
		__atomic_store_n(&w->trace_req, req, __ATOMIC_RELEASE);
		__atomic_fetch_add(&lb->dp.poll[l], 1, __ATOMIC_RELEASE);
		deadline = rte_get_timer_cycles() + rte_get_timer_hz() *
			TRACE_WAIT_NS / 1000000000ULL;
		while (__atomic_load_n(&w->trace_done, __ATOMIC_ACQUIRE) != req) {
			if (!__atomic_load_n(&w->running, __ATOMIC_ACQUIRE))
				goto direct;
			if (rte_get_timer_cycles() > deadline)
				return -EBUSY;
			rte_pause();
		}
		*out = w->trace_flow;
		return w->trace_hit ? 1 : 0;
	}
direct:
	/* the lcore has left the data path: nobody writes its table, and
	 * its flows age by its clock, which stopped with it */
	if (__atomic_load_n(&w->running, __ATOMIC_ACQUIRE))
		return -EBUSY;
	pos = lb_ftab_lookup(&w->ftab, k, sig);
	if (pos < 0)
		return 0;
	f = lb_ftab_flow(&w->ftab, (uint32_t)pos);
	if (!f->in_use || w->now - f->last > lb->tmo_tsc[f->tmo])
		return 0;
	*out = *f;
	return 1;
}

/* A packet of no service: a nat backend's reply? As the data path's
 * nat_reply() judges it: from a port of some nat backend, its NAT reply
 * entry, else the one service whose Maglev choice for the client is
 * this backend. The reply table is lock-free for readers. */
static void
trace_nat_reply(struct pa_lb *lb, const struct lb_table *t,
		const struct pa_flow_key *key, struct pa_lb_trace_result *res)
{
	struct rte_hash *nat = __atomic_load_n(&lb->nat, __ATOMIC_ACQUIRE);
	const struct lb_svc *s;
	struct lb_flow_key k;

	if (!t->has_nat || nat == NULL ||
	    !lb_bit(t->reply_map, rte_be_to_cpu_16(key->sport)))
		return;
	lb_flow_key_from(&k, key);
	s = lb_nat_entry_svc(t, nat, &k);
	if (s != NULL) {
		res->nat_reply = "flow";
	} else {
		switch (lb_nat_stateless(t, k.family, k.proto, k.src, k.sport,
				k.dst, k.dport, &s)) {
		case LB_NAT_ONE:
			res->nat_reply = "maglev";
			break;
		case LB_NAT_NO_AGREE:
			res->nat_reply = "unmatched";
			return;
		case LB_NAT_AMBIGUOUS:
			res->nat_reply = "ambiguous";
			return;
		default:
			return;
		}
	}
	snprintf(res->nat_service, sizeof(res->nat_service), "%s", s->name);
	res->nat_vip = s->vip;
	res->nat_vport = rte_be_to_cpu_16(s->port);
}

int
pa_lb_trace(struct pa_lb *lb, const struct pa_flow_key *key, bool fragment,
		struct pa_lb_trace_result *res)
{
	struct lb_flow_key fk;
	struct lb_flow f;
	const struct lb_table *t;
	const struct lb_svc *s;
	unsigned int l;
	int bi = -1, ret = 0, r, slot;

	memset(res, 0, sizeof(*res));
	if (key->family != 4 && key->family != 6)
		return -EINVAL;
	pthread_mutex_lock(&lb->lock);
	t = lb->live;
	if (t == NULL || t->n_services == 0 ||
	    (key->proto != IPPROTO_TCP && key->proto != IPPROTO_UDP))
		goto out;
	slot = lb_svc_find(t->svc_map, key->family, key->proto,
		fragment ? 0 : key->dport,
		key->family == 4 ? (const uint8_t *)&key->v4.dst : key->v6.dst);
	if (slot < 0) {
		if (!fragment)
			trace_nat_reply(lb, t, key, res);
		goto out;
	}
	s = t->svc[slot];
	res->service_found = true;
	snprintf(res->service, sizeof(res->service), "%s", s->name);
	if (!fragment) {
		lb_flow_key_from(&fk, key);
		for (l = 0; l < lb->n_lcores && bi < 0; l++) {
			if (lb->w[l] == NULL)
				continue;
			r = trace_ask(lb, l, lb->w[l], &fk,
				lb_trace_hash(key, false), &f);
			if (r < 0) {
				ret = r;
				goto out;
			}
			if (r == 0)
				continue;
			bi = lb_flow_backend(s, &f);
			if (bi >= 0)
				res->existing_flow = true;
		}
	}
	if (bi < 0) {
		if (fragment || s->sched == PA_LB_MAGLEV)
			bi = lb_maglev_pick(s, lb_trace_hash(key, fragment));
		else if (s->n_up > 0)
			res->reason = "new flow: the scheduler chooses at its first packet";
		if (bi < 0 && s->n_up == 0)
			res->reason = "no_backend";
	}
	if (bi >= 0) {
		res->backend_found = true;
		res->backend = s->be[bi].addr;
	}
out:
	pthread_mutex_unlock(&lb->lock);
	return ret;
}
