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

/* an lcore answers in microseconds, but a shared CPU may not run it for
 * a while (a busy machine, the lcore asleep in an idle back-off) */
#define TRACE_WAIT_NS	2000000000ULL

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

/* What an lcore says of a flow (trace_ask()). */
struct trace_ans {
	struct lb_flow f;
	struct lb_fnat_ext fx;		/* pport 0: not an fnat flow */
	uint8_t key[LB_FLOW_KEY_LEN];	/* the flow's key */
};

/* Ask lcore @p w for its entry of @p k, or, @p pos >= 0, for the flow at
 * that position (read-only).
 * @return 1 (found, in @p out), 0 (none) or -EBUSY (no answer). */
static int
trace_ask(struct pa_lb *lb, unsigned int l, struct lb_worker *w,
		const struct lb_flow_key *k, hash_sig_t sig, int32_t pos,
		struct trace_ans *out)
{
	const struct lb_flow *f;
	uint64_t deadline;
	uint32_t req;

	if (__atomic_load_n(&w->running, __ATOMIC_ACQUIRE)) {
		if (k != NULL)
			w->trace_key = *k;
		w->trace_sig = sig;
		w->trace_pos = pos;
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
		if (!w->trace_hit)
			return 0;
		out->f = w->trace_flow;
		out->fx = w->trace_fx;
		memcpy(out->key, w->trace_line, LB_FLOW_KEY_LEN);
		return 1;
	}
direct:
	/* the lcore has left the data path: nobody writes its table, and
	 * its flows age by its clock, which stopped with it */
	if (__atomic_load_n(&w->running, __ATOMIC_ACQUIRE))
		return -EBUSY;
	pos = pos >= 0 ? lb_trace_at(&w->ftab, pos) :
		lb_ftab_lookup(&w->ftab, k, sig);
	if (pos < 0)
		return 0;
	f = lb_ftab_flow(&w->ftab, (uint32_t)pos);
	if (!f->in_use || w->now - f->last > lb->tmo_tsc[f->tmo])
		return 0;
	out->f = *f;
	if (w->fx != NULL && (f->in_use & LB_FLOW_FNAT))
		out->fx = w->fx[pos];
	else
		memset(&out->fx, 0, sizeof(out->fx));
	memcpy(out->key, w->ftab.line[pos].key, LB_FLOW_KEY_LEN);
	return 1;
}

/* An address of the flow key's form (family, bytes) as a pa_ip_addr. */
static void
trace_ip(struct pa_ip_addr *a, uint8_t family, const uint8_t *b)
{
	memset(a, 0, sizeof(*a));
	if (family == 4) {
		a->family = AF_INET;
		memcpy(&a->v4, b, 4);
	} else {
		a->family = AF_INET6;
		memcpy(a->v6.s6_addr, b, 16);
	}
}

/* A TCP/UDP packet to a pool address and a port of the pool's range:
 * a backend's reply to an fnat flow? As the data path's fnat_reply()
 * judges it: the flow that holds the port (the reply index), asked of
 * the lcore whose share the port is, if the packet comes from that
 * flow's backend. @return 1 (such a packet: @p res says), 0 (not one)
 * or -EBUSY. */
static int
trace_fnat_reply(struct pa_lb *lb, const struct lb_table *t,
		const struct pa_flow_key *key, struct pa_lb_trace_result *res)
{
	const struct lb_fnat_pool *p = &lb->fnat;
	const uint16_t dport = rte_be_to_cpu_16(key->dport);
	const uint8_t *src = key->family == 4 ?
		(const uint8_t *)&key->v4.src : key->v6.src;
	const struct lb_backend *b;
	const struct lb_svc *s;
	struct lb_flow_key k;
	struct trace_ans ans;
	struct lb_worker *w;
	unsigned int l;
	uint32_t rp;
	int a, r;

	if (!t->has_fnat || p->n_addrs == 0 || dport < p->lo ||
	    dport > p->hi)
		return 0;
	a = lb_fnat_find(p, key->family, key->family == 4 ?
		(const uint8_t *)&key->v4.dst : key->v6.dst);
	if (a < 0)
		return 0;
	res->fnat_reply = "unmatched";
	l = lb->rank_lcore[lb_fnat_rank(p, dport)];
	w = l < lb->n_lcores ? lb->w[l] : NULL;
	rp = __atomic_load_n(&p->addr[a].rpos[dport - p->lo],
		__ATOMIC_RELAXED);
	if (w == NULL || rp == 0)
		return 1;
	r = trace_ask(lb, l, w, NULL, 0, (int32_t)(rp - 1), &ans);
	if (r <= 0)
		return r < 0 ? r : 1;
	memcpy(&k, ans.key, LB_FLOW_KEY_LEN);
	memset(k.pad2, 0, sizeof(k.pad2));
	if (ans.fx.pport != key->dport || ans.fx.paddr != a ||
	    k.proto != key->proto)
		return 1;
	s = t->svc[ans.f.svc_slot];
	if (s == NULL || s->uid != ans.f.svc_uid || ans.f.be_idx >= s->n_be)
		return 1;
	b = &s->be[ans.f.be_idx];
	if (b->uid != ans.f.be_uid || b->port != key->sport ||
	    b->addr.family != (key->family == 4 ? AF_INET : AF_INET6) ||
	    !lb_addr_eq(pa_ip_bytes(&b->addr), src, key->family))
		return 1;
	res->fnat_reply = "flow";
	snprintf(res->fnat_service, sizeof(res->fnat_service), "%s", s->name);
	trace_ip(&res->fnat_vip, k.family, k.dst);
	res->fnat_vport = rte_be_to_cpu_16(k.dport);
	trace_ip(&res->fnat_client, k.family, k.src);
	res->fnat_cport = rte_be_to_cpu_16(k.sport);
	return 1;
}

/* An fnat service's flow: the pool address and port it holds (@p fx of
 * its flow, NULL: a new flow), or the pool addresses of its backend's
 * family (@p bi; -1: not known, those of every backend's family) that a
 * new flow takes one of. */
static void
trace_fnat_pool(const struct pa_lb *lb, const struct lb_svc *s, int bi,
		const struct lb_fnat_ext *fx, struct pa_lb_trace_result *res)
{
	const struct lb_fnat_pool *p = &lb->fnat;
	bool fam[2] = { false, false };
	unsigned int f, i;

	res->fnat = true;
	if (fx != NULL && fx->pport != 0 && fx->paddr < p->n_addrs) {
		res->fnat_held = true;
		res->fnat_port = rte_be_to_cpu_16(fx->pport);
		res->fnat_n_addrs = 1;
		res->fnat_addrs[0] = p->addr[fx->paddr].ip;
		return;
	}
	if (bi >= 0) {
		fam[s->be[bi].addr.family == AF_INET6] = true;
	} else {
		for (i = 0; i < s->n_be; i++)
			if (s->be[i].uid != 0)
				fam[s->be[i].addr.family == AF_INET6] = true;
	}
	for (f = 0; f < 2; f++) {
		if (!fam[f])
			continue;
		for (i = 0; i < p->n_fam[f]; i++)
			res->fnat_addrs[res->fnat_n_addrs++] =
				p->addr[p->fam[f][i]].ip;
	}
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
	struct lb_fnat_ext fx;
	struct lb_flow_key fk;
	struct trace_ans ans;
	const struct lb_table *t;
	const struct lb_svc *s;
	unsigned int l;
	int bi = -1, ret = 0, r, slot;

	memset(res, 0, sizeof(*res));
	memset(&fx, 0, sizeof(fx));
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
		if (fragment)
			goto out;
		ret = trace_fnat_reply(lb, t, key, res);
		if (ret == 0)
			trace_nat_reply(lb, t, key, res);
		ret = ret < 0 ? ret : 0;
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
				lb_trace_hash(key, false), -1, &ans);
			if (r < 0) {
				ret = r;
				goto out;
			}
			if (r == 0)
				continue;
			bi = lb_flow_backend(s, &ans.f);
			if (bi >= 0) {
				res->existing_flow = true;
				fx = ans.fx;
			}
		}
	}
	if (fragment && s->forward == PA_LB_FNAT) {
		/* no reassembly: the data path drops it */
		res->reason = "fnat_fragment";
		goto out;
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
	if (s->forward == PA_LB_FNAT)
		trace_fnat_pool(lb, s, bi, res->existing_flow ? &fx : NULL,
			res);
out:
	pthread_mutex_unlock(&lb->lock);
	return ret;
}
