/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load balancer's published objects: a service's read-only record
 * (its Maglev table, backends and prebuilt rewrites), the (VIP, port,
 * protocol) map, the NAT reply index, and the RCU commit that makes a new
 * table live (lb_commit()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "lb_priv.h"
#include "pa_clock.h"
#include "pa_err.h"

void
lb_svc_free(struct lb_svc *s)
{
	unsigned int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n_hist; i++)
		rte_free(s->hist[i].uid);
	rte_free(s->hist);
	rte_free(s->maglev);
	rte_free(s->up);
	rte_free(s);
}

/* Copy into @p d a table of @p m entries (NULL: none) and the uids of
 * @p n_be slots (from @p uid, else from @p be), current until @p until.
 * @return 0 or -ENOMEM. */
static int
hist_fill(struct pa_lb *lb, struct lb_hist *d, uint64_t until, uint32_t m,
		const uint16_t *maglev, unsigned int n_be, const uint32_t *uid,
		const struct lb_backend *be)
{
	size_t tbytes = maglev != NULL ? (size_t)m * sizeof(*d->maglev) : 0;
	unsigned int i;
	uint8_t *p;

	p = rte_malloc_socket("pa_lb_hist", tbytes +
		RTE_MAX(n_be, 1u) * sizeof(*d->uid), sizeof(uint32_t),
		lb->socket);
	if (p == NULL)
		return -ENOMEM;
	d->until = until;
	d->m = m;
	d->n_be = n_be;
	/* uid[] first (the allocation lb_svc_free() frees), then maglev[] */
	d->uid = (uint32_t *)p;
	d->maglev = maglev != NULL ? (uint16_t *)(p + RTE_MAX(n_be, 1u) *
		sizeof(*d->uid)) : NULL;
	if (maglev != NULL)
		memcpy(d->maglev, maglev, tbytes);
	for (i = 0; i < n_be; i++)
		d->uid[i] = uid != NULL ? uid[i] : be[i].uid;
	return 0;
}

/* Was @p h current at some time of the window before @p now? (Signed:
 * another lcore's TSC may be a little behind the stamp.) */
static bool
hist_live(const struct pa_lb *lb, const struct lb_hist *h, uint64_t now)
{
	return (int64_t)(now - h->until) < (int64_t)lb->hist_tsc;
}

int
lb_svc_history(struct pa_lb *lb, struct lb_svc *s, const struct lb_svc *prev,
		uint64_t now)
{
	struct lb_hist *h;
	unsigned int i, n = 0, want = 0;
	bool changed;

	/* a Maglev TCP service of the same life, not deferring SYNs (its
	 * handshake's ACK makes the entry: the history would move it) nor
	 * fnat (a flow without its mapping cannot continue anyway) */
	if (lb->hist_tsc == 0 || prev == NULL || prev->uid != s->uid ||
	    s->sched != PA_LB_MAGLEV || prev->sched != PA_LB_MAGLEV ||
	    s->proto != IPPROTO_TCP || s->syn_defer ||
	    s->forward == PA_LB_FNAT)
		return 0;
	changed = prev->table_hash != s->table_hash ||
		(prev->maglev == NULL) != (s->maglev == NULL);
	if (changed)
		want++;
	for (i = 0; i < prev->n_hist && want < LB_HIST_MAX; i++)
		if (hist_live(lb, &prev->hist[i], now))
			want++;
	if (want == 0)
		return 0;
	h = rte_zmalloc_socket("pa_lb_hists", want * sizeof(*h), 0,
		lb->socket);
	if (h == NULL)
		return -ENOMEM;
	if (changed && hist_fill(lb, &h[n++], now, prev->m, prev->maglev,
			prev->n_be, NULL, prev->be) != 0)
		goto nomem;
	for (i = 0; i < prev->n_hist && n < want; i++) {
		const struct lb_hist *o = &prev->hist[i];

		if (!hist_live(lb, o, now))
			continue;
		if (hist_fill(lb, &h[n], o->until, o->m, o->maglev, o->n_be,
				o->uid, NULL) != 0)
			goto nomem;
		n++;
	}
	s->hist = h;
	s->n_hist = n;
	return 0;
nomem:
	for (i = 0; i < n; i++)
		rte_free(h[i].uid);
	rte_free(h);
	return -ENOMEM;
}

bool
lb_be_usable(const struct pa_config_backend *b, uint32_t uid)
{
	return uid != 0 && b->state == PA_LB_UP && b->weight > 0;
}

/* The weight in force: the configured one scaled by the agent's
 * percentage (at least 1 unless the agent said 0 %). */
uint32_t
lb_effective_weight(const struct lb_svc_ctl *c, unsigned int i)
{
	uint32_t w = c->cfg.backends[i].weight;
	int pct = c->be_hc[i].agent_pct;

	if (pct < 0 || w == 0)
		return w;
	if (pct == 0)
		return 0;
	w = (w * (uint32_t)pct + 50) / 100;
	return w == 0 ? 1 : w;
}

/* Down by the checks: health, or the agent said "down". */
bool
lb_be_down_hc(const struct lb_svc_ctl *c, unsigned int i)
{
	return c->be_hc[i].health == PA_LB_HEALTH_DOWN ||
		c->be_hc[i].agent_state == PA_LB_AGENT_DOWN;
}

/* Would take new flows but for the checks' "down": its state, its
 * effective weight and its agent allow it. */
static bool
be_usable_admin(const struct lb_svc_ctl *c, unsigned int i)
{
	return lb_be_usable(&c->cfg.backends[i], c->be_uid[i]) &&
		lb_effective_weight(c, i) > 0 &&
		c->be_hc[i].agent_state != PA_LB_AGENT_DRAIN;
}

/* Usable for new flows, checks considered (panic: their "down" ignored). */
static bool
be_usable_hc(const struct lb_svc_ctl *c, unsigned int i, bool panic)
{
	return be_usable_admin(c, i) && (panic || !lb_be_down_hc(c, i));
}

/* Every backend that would take new flows is down by the checks (and
 * there is one). */
bool
lb_ctl_panic(const struct lb_svc_ctl *c)
{
	unsigned int i, n_admin = 0;

	for (i = 0; i < c->n_slots; i++) {
		if (!be_usable_admin(c, i))
			continue;
		if (!lb_be_down_hc(c, i))
			return false;
		n_admin++;
	}
	return n_admin > 0;
}

/* FNV-1a over the table's entries as backend addresses: a number two
 * appliances can compare (the indexes into be[] differ between them). */
static uint64_t
table_hash(const struct lb_svc *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned int i, j, len = s->family == 4 ? 4 : 16;
	const uint8_t *a;

	if (s->maglev == NULL)
		return 0;
	for (i = 0; i < s->m; i++) {
		a = pa_ip_bytes(&s->be[s->maglev[i]].addr);
		for (j = 0; j < len; j++) {
			h ^= a[j];
			h *= 0x100000001b3ULL;
		}
	}
	return h;
}

/* Sum of the constant words of an outer IPv4 header to @p b (see
 * lb_backend.ip4_sum). */
static uint32_t
outer4_sum(const struct pa_lb *lb, const struct lb_backend *b)
{
	const uint8_t head[4] = { 0x45, 0, LB_OUTER_TTL, IPPROTO_IPIP };
	const uint16_t *w;
	uint32_t sum = 0;
	uint16_t x[2];
	unsigned int i;

	memcpy(x, head, sizeof(x));
	sum += x[0];
	sum += x[1];
	w = (const uint16_t *)&lb->local4.v4;
	for (i = 0; i < 2; i++)
		sum += w[i];
	w = (const uint16_t *)&b->addr.v4;
	for (i = 0; i < 2; i++)
		sum += w[i];
	return sum;
}

/* A new read-only service from its control record. */
struct lb_svc *
lb_svc_build(struct pa_lb *lb, const struct lb_svc_ctl *c, unsigned int slot,
		char *err, size_t err_len)
{
	const struct pa_config_service *cfg = &c->cfg;
	struct pa_lb_maglev_backend *mb = NULL;
	void *scratch = NULL;
	struct lb_svc *s;
	unsigned int i, n_up = 0;
	double t0;

	s = rte_zmalloc_socket("pa_lb_svc", sizeof(*s) +
		(size_t)c->n_slots * sizeof(s->be[0]), 0, lb->socket);
	if (s == NULL)
		goto nomem;
	s->uid = c->uid;
	s->slot = (uint16_t)slot;
	s->family = cfg->vip.family == AF_INET ? 4 : 6;
	s->proto = cfg->proto;
	s->port = rte_cpu_to_be_16(cfg->port);
	s->forward = (uint8_t)cfg->forward;
	s->sched = (uint8_t)cfg->scheduler;
	s->mss_clamp = cfg->mss_clamp;
	s->max_flows = cfg->max_flows;
	/* a SYN needs no entry where the choice is a function of the flow
	 * (Maglev) and no reply entry is wanted (not nat) */
	s->syn_defer = lb->protect.syn_defer && cfg->proto == IPPROTO_TCP &&
		cfg->scheduler == PA_LB_MAGLEV && cfg->forward != PA_LB_NAT &&
		cfg->forward != PA_LB_FNAT;
	s->proxy = cfg->forward == PA_LB_FNAT && cfg->proto == IPPROTO_TCP ?
		(uint8_t)cfg->proxy_protocol : PA_LB_PROXY_NONE;
	s->ops = lb_sched_table[cfg->scheduler];
	s->vip = cfg->vip;
	snprintf(s->name, sizeof(s->name), "%s", cfg->name);
	s->m = cfg->table_size;
	s->n_be = c->n_slots;
	s->panic = lb_ctl_panic(c);
	for (i = 0; i < c->n_slots; i++) {
		const struct pa_config_backend *b = &cfg->backends[i];
		struct lb_backend *d = &s->be[i];

		d->uid = c->be_uid[i];
		d->cslot = c->be_cslot[i];
		if (d->uid == 0)
			continue;
		d->state = (uint8_t)b->state;
		/* down by the checks: its flows move, as for "down" (in
		 * its grace: they stay, as for "drain"); the agent's drain
		 * keeps them, as "drain" */
		if (!s->panic && lb_be_down_hc(c, i) &&
		    c->be_hc[i].grace == LB_GRACE_NONE)
			d->state = PA_LB_DOWN;
		else if (!s->panic && lb_be_down_hc(c, i) &&
			 d->state == PA_LB_UP)
			d->state = PA_LB_DRAIN;
		else if (c->be_hc[i].agent_state == PA_LB_AGENT_DRAIN &&
			 d->state == PA_LB_UP)
			d->state = PA_LB_DRAIN;
		d->has_mac = b->has_mac;
		d->port = rte_cpu_to_be_16(b->port != 0 ? b->port : cfg->port);
		d->weight = lb_effective_weight(c, i);
		memcpy(d->mac.addr_bytes, b->mac, RTE_ETHER_ADDR_LEN);
		d->addr = b->addr;
		if (s->family == 4 && b->addr.family == AF_INET)
			d->ip4_sum = outer4_sum(lb, d);
		if (be_usable_hc(c, i, s->panic))
			n_up++;
	}
	s->n_up = n_up;
	if (n_up == 0)
		return s;

	s->up = rte_malloc_socket("pa_lb_up", n_up * sizeof(*s->up), 0,
		lb->socket);
	s->maglev = rte_malloc_socket("pa_lb_maglev",
		(size_t)s->m * sizeof(*s->maglev), RTE_CACHE_LINE_SIZE,
		lb->socket);
	mb = calloc(n_up, sizeof(*mb));
	scratch = malloc(pa_lb_maglev_scratch_size(n_up));
	if (s->up == NULL || s->maglev == NULL || mb == NULL || scratch == NULL)
		goto nomem;
	n_up = 0;
	for (i = 0; i < c->n_slots; i++) {
		if (!be_usable_hc(c, i, s->panic))
			continue;
		s->up[n_up] = (uint16_t)i;
		mb[n_up].key = pa_ip_bytes(&s->be[i].addr);
		mb[n_up].key_len = s->family == 4 ? 4 : 16;
		mb[n_up].weight = s->be[i].weight;
		n_up++;
	}
	t0 = pa_clock_s() * 1e3;
	if (pa_lb_maglev_build(mb, n_up, s->m, s->maglev, scratch) != 0) {
		pa_seterr(err, err_len, "service '%s': %u usable backends do not fit a table of %u",
			cfg->name, n_up, s->m);
		free(mb);
		free(scratch);
		lb_svc_free(s);
		rte_errno = EINVAL;
		return NULL;
	}
	/* the table holds indexes into up[]; make them indexes into be[] */
	for (i = 0; i < s->m; i++)
		s->maglev[i] = s->up[s->maglev[i]];
	s->table_hash = table_hash(s);
	s->build_ms = pa_clock_s() * 1e3 - t0;
	lb->builds++;
	lb->last_build_ms = s->build_ms;
	if (s->build_ms > lb->max_build_ms)
		lb->max_build_ms = s->build_ms;
	free(mb);
	free(scratch);
	return s;
nomem:
	free(mb);
	free(scratch);
	lb_svc_free(s);
	pa_seterr(err, err_len, "out of memory building service '%s'", cfg->name);
	rte_errno = ENOMEM;
	return NULL;
}

static void
bit_set(uint8_t *map, uint16_t bit)
{
	map[bit >> 3] |= (uint8_t)(1u << (bit & 7));
}

/* Put (family, proto, port, addr) -> slot in @p m, or, if the key is
 * there (fragments' port-0 entries), keep the service with the lowest
 * port. */
static void
svc_map_put(struct lb_svc_map *m, struct lb_svc *const *svc,
		const struct lb_svc *s, uint8_t proto, uint16_t port)
{
	const uint8_t *addr = pa_ip_bytes(&s->vip);
	unsigned int alen = s->family == 4 ? 4 : 16;
	uint32_t i = lb_svc_hash(s->family, proto, port, addr) & m->mask;
	struct lb_svc_ent *e;

	for (;; i = (i + 1) & m->mask) {
		e = &m->ent[i];
		if (e->family == 0)
			break;
		if (e->family == s->family && e->proto == proto &&
		    e->port == port && memcmp(e->addr, addr, alen) == 0) {
			if (rte_be_to_cpu_16(svc[e->slot]->port) >
			    rte_be_to_cpu_16(s->port))
				e->slot = s->slot;
			return;
		}
	}
	e->family = s->family;
	e->proto = proto;
	e->port = port;
	e->slot = s->slot;
	memcpy(e->addr, addr, alen);
}

/* The (vip, port, proto) -> slot table for a set of services, fragments'
 * entries included. */
static struct lb_svc_map *
svc_map_build(struct pa_lb *lb, struct lb_svc *const *svc, char *err,
		size_t err_len)
{
	struct lb_svc_map *m;
	unsigned int i, n = 0;
	uint32_t size;

	for (i = 0; i < PA_LB_MAX_SERVICES; i++)
		if (svc[i] != NULL)
			n++;
	/* three entries a service (its own, its VIP's fragments, its VIP
	 * for ICMP), at most half full */
	size = rte_align32pow2(RTE_MAX(16u, 6 * n));
	m = rte_zmalloc_socket("pa_lb_svcmap", sizeof(*m) +
		(size_t)size * sizeof(m->ent[0]), RTE_CACHE_LINE_SIZE,
		lb->socket);
	if (m == NULL) {
		pa_seterr(err, err_len, "out of memory for the service table");
		return NULL;
	}
	m->mask = size - 1;
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		if (svc[i] == NULL)
			continue;
		svc_map_put(m, svc, svc[i], svc[i]->proto, svc[i]->port);
		svc_map_put(m, svc, svc[i], svc[i]->proto, 0);
		svc_map_put(m, svc, svc[i], LB_SVC_PROTO_VIP, 0);
	}
	return m;
}

/* One (backend, service) pair of the NAT reply index, while building. */
struct rev_tmp {
	struct lb_rev_ent key;		/* family, proto, port, addr */
	struct lb_rev_ref ref;
};

static int
rev_key_cmp(const struct lb_rev_ent *x, const struct lb_rev_ent *y)
{
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

static int
rev_tmp_cmp(const void *a, const void *b)
{
	const struct rev_tmp *x = a, *y = b;
	int c = rev_key_cmp(&x->key, &y->key);

	if (c != 0)
		return c;
	return x->ref.slot < y->ref.slot ? -1 : x->ref.slot > y->ref.slot;
}

/*
 * The NAT reply index of a set of services (struct lb_rev_map) in *@p out:
 * every backend of every nat service, whatever its state (a backend that
 * is down or draining is no Maglev choice: the decision says so); NULL
 * when no service forwards by nat. @return 0 or -ENOMEM with the reason.
 */
static int
rev_build(struct pa_lb *lb, struct lb_svc *const *svc,
		struct lb_rev_map **out, char *err, size_t err_len)
{
	struct rev_tmp *tmp = NULL;
	struct lb_rev_map *m = NULL;
	struct lb_rev_ent *e = NULL;
	unsigned int i, j, n = 0, cap = 0, keys = 0;
	uint32_t size, h;

	*out = NULL;
	for (i = 0; i < PA_LB_MAX_SERVICES; i++)
		if (svc[i] != NULL && svc[i]->forward == PA_LB_NAT)
			cap += svc[i]->n_be;
	if (cap == 0)
		return 0;
	tmp = calloc(cap, sizeof(*tmp));
	if (tmp == NULL)
		goto nomem;
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct lb_svc *s = svc[i];

		if (s == NULL || s->forward != PA_LB_NAT)
			continue;
		for (j = 0; j < s->n_be; j++) {
			const struct lb_backend *b = &s->be[j];
			struct rev_tmp *r = &tmp[n];

			if (b->uid == 0)
				continue;
			r->key.family = s->family;
			r->key.proto = s->proto;
			r->key.port = b->port;
			memcpy(r->key.addr, pa_ip_bytes(&b->addr),
				s->family == 4 ? 4 : 16);
			r->ref.slot = s->slot;
			r->ref.be = (uint16_t)j;
			n++;
		}
	}
	qsort(tmp, n, sizeof(*tmp), rev_tmp_cmp);
	for (i = 0; i < n; i++)
		if (i == 0 || rev_key_cmp(&tmp[i - 1].key, &tmp[i].key) != 0)
			keys++;
	size = rte_align32pow2(RTE_MAX(16u, 2 * keys));
	m = rte_zmalloc_socket("pa_lb_rev", sizeof(*m) +
		(size_t)size * sizeof(m->ent[0]) +
		(size_t)RTE_MAX(n, 1u) * sizeof(m->ref[0]), RTE_CACHE_LINE_SIZE,
		lb->socket);
	if (m == NULL)
		goto nomem;
	m->mask = size - 1;
	m->n_ref = n;
	m->ref = (struct lb_rev_ref *)&m->ent[size];
	for (i = 0; i < n; i++) {
		const struct lb_rev_ent *k = &tmp[i].key;

		m->ref[i] = tmp[i].ref;
		if (e != NULL && rev_key_cmp(e, k) == 0) {
			e->n++;
			continue;
		}
		h = lb_svc_hash(k->family, k->proto, k->port, k->addr) & m->mask;
		while (m->ent[h].family != 0)
			h = (h + 1) & m->mask;
		e = &m->ent[h];
		*e = *k;
		e->n = 1;
		e->first = i;
	}
	free(tmp);
	*out = m;
	return 0;
nomem:
	free(tmp);
	pa_seterr(err, err_len, "out of memory for the NAT reply index");
	return -ENOMEM;
}

static void
table_maps(struct lb_table *t)
{
	unsigned int i, j;

	memset(t->dport_map, 0, sizeof(t->dport_map));
	memset(t->reply_map, 0, sizeof(t->reply_map));
	t->has_nat = false;
	t->has_fnat = false;
	t->n_services = 0;
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct lb_svc *s = t->svc[i];

		if (s == NULL)
			continue;
		t->n_services++;
		bit_set(t->dport_map, rte_be_to_cpu_16(s->port));
		if (s->forward == PA_LB_FNAT)
			t->has_fnat = true;
		if (s->forward != PA_LB_NAT)
			continue;
		t->has_nat = true;
		for (j = 0; j < s->n_be; j++)
			if (s->be[j].uid != 0)
				bit_set(t->reply_map,
					rte_be_to_cpu_16(s->be[j].port));
	}
}

/*
 * Publish a table where slot @p slot holds @p s (NULL: removed), wait
 * until no lcore can see the old one, free what only the old one used.
 */
int
lb_commit(struct pa_lb *lb, unsigned int slot, struct lb_svc *s,
		bool set_changed, char *err, size_t err_len)
{
	struct lb_table *old = lb->live, *t;
	struct lb_svc *prev;

	t = rte_zmalloc_socket("pa_lb_table", sizeof(*t), RTE_CACHE_LINE_SIZE,
		lb->socket);
	if (t == NULL) {
		pa_seterr(err, err_len, "out of memory for the LB table");
		return -ENOMEM;
	}
	if (old != NULL)
		memcpy(t->svc, old->svc, sizeof(t->svc));
	prev = t->svc[slot];
	t->svc[slot] = s;
	if (set_changed || old == NULL) {
		t->svc_map = svc_map_build(lb, t->svc, err, err_len);
		if (t->svc_map == NULL) {
			rte_free(t);
			return -ENOMEM;
		}
	} else {
		t->svc_map = old->svc_map;
	}
	table_maps(t);
	if (rev_build(lb, t->svc, &t->rev, err, err_len) != 0) {
		if (t->svc_map != (old != NULL ? old->svc_map : NULL))
			rte_free(t->svc_map);
		rte_free(t);
		return -ENOMEM;
	}

	__atomic_store_n(&lb->live, t, __ATOMIC_RELEASE);
	__atomic_store_n(&lb->dp.active, t->n_services > 0, __ATOMIC_RELEASE);
	if (lb->rcu != NULL)
		rte_rcu_qsbr_synchronize(lb->rcu, RTE_QSBR_THRID_INVALID);
	__atomic_add_fetch(&lb->version, 1, __ATOMIC_RELEASE);
	if (old != NULL) {
		if (old->svc_map != t->svc_map)
			rte_free(old->svc_map);
		rte_free(old->rev);
		rte_free(old);
	}
	if (prev != s)
		lb_svc_free(prev);
	return 0;
}
