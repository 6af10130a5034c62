/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load balancer's control side: services and backends, the published
 * table and its RCU updates, per-lcore flow tables, counters, trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "lb_priv.h"
#include "pa_clock.h"
#include "pa_err.h"

RTE_LOG_REGISTER(pa_lb_logtype, pa.lb, INFO);
#define LB_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_lb_logtype, "pa.lb: " fmt "\n", ##__VA_ARGS__)

#define TRACE_WAIT_NS	200000000ULL	/* an lcore answers in microseconds */

static unsigned int hash_seq;

static int tables_make(struct pa_lb *lb, char *err, size_t err_len);

void
lb_flow_key_from(struct lb_flow_key *k, const struct pa_flow_key *fk)
{
	memset(k, 0, sizeof(*k));
	k->family = fk->family;
	k->proto = fk->proto;
	k->sport = fk->sport;
	k->dport = fk->dport;
	if (fk->family == 4) {
		memcpy(k->src, &fk->v4.src, 4);
		memcpy(k->dst, &fk->v4.dst, 4);
	} else {
		memcpy(k->src, fk->v6.src, 16);
		memcpy(k->dst, fk->v6.dst, 16);
	}
}

/* ------------------------------------------------------------------ */
/* Building published objects                                          */
/* ------------------------------------------------------------------ */

static void
svc_free(struct lb_svc *s)
{
	if (s == NULL)
		return;
	rte_free(s->maglev);
	rte_free(s->up);
	rte_free(s);
}

static bool
be_usable(const struct pa_config_backend *b, uint32_t uid)
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
static bool
be_down_hc(const struct lb_svc_ctl *c, unsigned int i)
{
	return c->be_hc[i].health == PA_LB_HEALTH_DOWN ||
		c->be_hc[i].agent_state == PA_LB_AGENT_DOWN;
}

/* Would take new flows but for the checks' "down": its state, its
 * effective weight and its agent allow it. */
static bool
be_usable_admin(const struct lb_svc_ctl *c, unsigned int i)
{
	return be_usable(&c->cfg.backends[i], c->be_uid[i]) &&
		lb_effective_weight(c, i) > 0 &&
		c->be_hc[i].agent_state != PA_LB_AGENT_DRAIN;
}

/* Usable for new flows, checks considered (panic: their "down" ignored). */
static bool
be_usable_hc(const struct lb_svc_ctl *c, unsigned int i, bool panic)
{
	return be_usable_admin(c, i) && (panic || !be_down_hc(c, i));
}

/* Every backend that would take new flows is down by the checks (and
 * there is one). */
static bool
ctl_panic(const struct lb_svc_ctl *c)
{
	unsigned int i, n_admin = 0;

	for (i = 0; i < c->n_slots; i++) {
		if (!be_usable_admin(c, i))
			continue;
		if (!be_down_hc(c, i))
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
static struct lb_svc *
svc_build(struct pa_lb *lb, const struct lb_svc_ctl *c, unsigned int slot,
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
		cfg->scheduler == PA_LB_MAGLEV && cfg->forward != PA_LB_NAT;
	s->ops = lb_sched_table[cfg->scheduler];
	s->vip = cfg->vip;
	snprintf(s->name, sizeof(s->name), "%s", cfg->name);
	s->m = cfg->table_size;
	s->n_be = c->n_slots;
	s->panic = ctl_panic(c);
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
		if (!s->panic && be_down_hc(c, i) &&
		    c->be_hc[i].grace == LB_GRACE_NONE)
			d->state = PA_LB_DOWN;
		else if (!s->panic && be_down_hc(c, i) &&
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
		if (s->family == 4)
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
		svc_free(s);
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
	svc_free(s);
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
	t->n_services = 0;
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct lb_svc *s = t->svc[i];

		if (s == NULL)
			continue;
		t->n_services++;
		bit_set(t->dport_map, rte_be_to_cpu_16(s->port));
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
static int
commit(struct pa_lb *lb, unsigned int slot, struct lb_svc *s,
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
		svc_free(prev);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Control records                                                     */
/* ------------------------------------------------------------------ */

static int
find_service(const struct pa_lb *lb, const char *name)
{
	unsigned int i;

	for (i = 0; i < PA_LB_MAX_SERVICES; i++)
		if (lb->ctl[i].used && strcmp(lb->ctl[i].cfg.name, name) == 0)
			return (int)i;
	return -1;
}

static int
find_backend(const struct lb_svc_ctl *c, const struct pa_ip_addr *a)
{
	unsigned int i;

	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] != 0 && pa_ip_equal(&c->cfg.backends[i].addr, a))
			return (int)i;
	return -1;
}

/* Slot of service @p name, or -ENOENT with the reason. */
static int
service_slot(const struct pa_lb *lb, const char *name, char *err,
		size_t err_len)
{
	int slot = find_service(lb, name);

	if (slot < 0) {
		pa_seterr(err, err_len, "no service '%s'", name);
		return -ENOENT;
	}
	return slot;
}

/* Index of backend @p a of the service in @p slot, or -ENOENT with the
 * reason. */
static int
backend_index(const struct pa_lb *lb, int slot, const struct pa_ip_addr *a,
		char *err, size_t err_len)
{
	char buf[INET6_ADDRSTRLEN];
	int i = find_backend(&lb->ctl[slot], a);

	if (i < 0) {
		pa_seterr(err, err_len, "service '%s' has no backend %s",
			lb->ctl[slot].cfg.name,
			pa_net_format_ip(a, buf, sizeof(buf)));
		return -ENOENT;
	}
	return i;
}

/* Forget the holes at the end of the slots. */
static void
ctl_trim(struct lb_svc_ctl *c)
{
	while (c->n_slots > 0 && c->be_uid[c->n_slots - 1] == 0)
		c->n_slots--;
	c->cfg.n_backends = c->n_slots;
}

static uint32_t
new_uid(struct pa_lb *lb)
{
	if (++lb->next_uid == 0)
		lb->next_uid = 1;
	return lb->next_uid;
}

static void
ctl_clear(struct pa_lb *lb, struct lb_svc_ctl *c)
{
	unsigned int i;

	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] != 0)
			lb->cslot_free[lb->n_cslot_free++] = c->be_cslot[i];
	pa_lb_config_service_clear(&c->cfg);
	free(c->be_uid);
	free(c->be_cslot);
	free(c->be_hc);
	memset(c, 0, sizeof(*c));
}

/* Room for one more backend slot. */
static int
ctl_grow(struct lb_svc_ctl *c)
{
	unsigned int cap = c->cap_slots != 0 ? c->cap_slots * 2 : 8;
	struct pa_config_backend *b;
	struct lb_be_health *hc;
	uint32_t *u, *cs;

	if (c->n_slots < c->cap_slots)
		return 0;
	b = realloc(c->cfg.backends, cap * sizeof(*b));
	if (b == NULL)
		return -ENOMEM;
	c->cfg.backends = b;
	u = realloc(c->be_uid, cap * sizeof(*u));
	if (u == NULL)
		return -ENOMEM;
	c->be_uid = u;
	cs = realloc(c->be_cslot, cap * sizeof(*cs));
	if (cs == NULL)
		return -ENOMEM;
	c->be_cslot = cs;
	hc = realloc(c->be_hc, cap * sizeof(*hc));
	if (hc == NULL)
		return -ENOMEM;
	c->be_hc = hc;
	c->cap_slots = cap;
	return 0;
}

static unsigned int
live_backends(const struct lb_svc_ctl *c)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] != 0)
			n++;
	return n;
}

/* Checks of a backend against its service beyond the loader's. */
static int
backend_check(const struct lb_svc_ctl *c, const struct pa_config_backend *be,
		char *err, size_t err_len)
{
	char buf[INET6_ADDRSTRLEN];

	if (be->addr.family != c->cfg.vip.family) {
		pa_seterr(err, err_len, "backend %s: address family differs from the service's",
			pa_net_format_ip(&be->addr, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (c->cfg.forward != PA_LB_NAT && be->port != 0 &&
	    be->port != c->cfg.port) {
		pa_seterr(err, err_len, "backend %s: only \"nat\" can change the destination port",
			pa_net_format_ip(&be->addr, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (c->cfg.forward == PA_LB_DSR && !be->has_mac) {
		pa_seterr(err, err_len, "backend %s: \"dsr\" needs the backend's \"mac\"",
			pa_net_format_ip(&be->addr, buf, sizeof(buf)));
		return -EINVAL;
	}
	return 0;
}

/* Append @p be to @p c in a fresh slot (or a hole). */
static int
ctl_add_backend(struct pa_lb *lb, struct lb_svc_ctl *c,
		const struct pa_config_backend *be, char *err, size_t err_len)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned int i;

	if (find_backend(c, &be->addr) >= 0) {
		pa_seterr(err, err_len, "service '%s' already has backend %s",
			c->cfg.name, pa_net_format_ip(&be->addr, buf,
				sizeof(buf)));
		return -EEXIST;
	}
	if (live_backends(c) >= PA_LB_MAX_SVC_BACKENDS ||
	    live_backends(c) + 1 >= c->cfg.table_size) {
		pa_seterr(err, err_len, "service '%s' is full (%u backends at most with table_size %u)",
			c->cfg.name, RTE_MIN((unsigned int)PA_LB_MAX_SVC_BACKENDS,
				c->cfg.table_size - 1), c->cfg.table_size);
		return -ENOSPC;
	}
	if (lb->n_cslot_free == 0) {
		pa_seterr(err, err_len, "too many backends (%u in all at most)",
			PA_LB_MAX_BACKENDS);
		return -ENOSPC;
	}
	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] == 0)
			break;
	if (i == c->n_slots) {
		if (ctl_grow(c) != 0) {
			pa_seterr(err, err_len, "out of memory");
			return -ENOMEM;
		}
		c->n_slots++;
		c->cfg.n_backends = c->n_slots;
	}
	c->cfg.backends[i] = *be;
	c->be_uid[i] = new_uid(lb);
	c->be_cslot[i] = lb->cslot_free[--lb->n_cslot_free];
	memset(&c->be_hc[i], 0, sizeof(c->be_hc[i]));
	c->be_hc[i].agent_pct = -1;
	lb->cs_svc[c->be_cslot[i]] = (uint16_t)(c - lb->ctl);
	lb->cs_be[c->be_cslot[i]] = i;
	/* no lcore reads a free slot: forget its last owner's next hop (the
	 * neighbour subsystem publishes this backend's when it sees the
	 * change) */
	__atomic_store_n(&lb->be_nh[c->be_cslot[i]], 0, __ATOMIC_RELAXED);
	return (int)i;
}

/* Undo ctl_add_backend() of slot @p i (the add was never published). */
static void
ctl_drop_backend(struct pa_lb *lb, struct lb_svc_ctl *c, unsigned int i)
{
	lb->cslot_free[lb->n_cslot_free++] = c->be_cslot[i];
	c->be_uid[i] = 0;
	memset(&c->cfg.backends[i], 0, sizeof(c->cfg.backends[i]));
	ctl_trim(c);
}

/* Count and log a service's way into and out of panic (its table as
 * just published). */
static void
ctl_panic_note(struct pa_lb *lb, struct lb_svc_ctl *c)
{
	bool panic = ctl_panic(c);

	if (panic == c->panic)
		return;
	c->panic = panic;
	if (panic) {
		c->panics++;
		lb->panics++;
		LB_LOG(WARNING, "service '%s': every backend is down by health: panic, balancing over all of them",
			c->cfg.name);
	} else {
		LB_LOG(NOTICE, "service '%s': out of panic", c->cfg.name);
	}
}

static int
rebuild_publish(struct pa_lb *lb, unsigned int slot, bool set_changed,
		char *err, size_t err_len)
{
	struct lb_svc *s;
	int ret;

	s = svc_build(lb, &lb->ctl[slot], slot, err, err_len);
	if (s == NULL)
		return -rte_errno;
	ret = commit(lb, slot, s, set_changed, err, err_len);
	if (ret != 0) {
		svc_free(s);
		return ret;
	}
	ctl_panic_note(lb, &lb->ctl[slot]);
	/* whatever the checks said is in it */
	lb->ctl[slot].hc_dirty = false;
	return 0;
}

static int
service_add_locked(struct pa_lb *lb, const struct pa_config_service *svc,
		char *err, size_t err_len)
{
	char buf[INET6_ADDRSTRLEN];
	struct lb_svc_ctl *c;
	unsigned int i, slot;
	int ret;

	if (find_service(lb, svc->name) >= 0) {
		pa_seterr(err, err_len, "service '%s' exists", svc->name);
		return -EEXIST;
	}
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct pa_config_service *o = &lb->ctl[i].cfg;

		if (lb->ctl[i].used && pa_ip_equal(&o->vip, &svc->vip) &&
		    o->port == svc->port && o->proto == svc->proto) {
			pa_seterr(err, err_len, "%s port %u %s is already service '%s'",
				pa_net_format_ip(&svc->vip, buf, sizeof(buf)),
				svc->port, svc->proto == IPPROTO_TCP ? "tcp" :
				"udp", o->name);
			return -EEXIST;
		}
	}
	if (svc->max_flows > lb->ft.size) {
		pa_seterr(err, err_len, "max_flows %u is more than the flow table holds (lb.flow_table.size %u)",
			svc->max_flows, lb->ft.size);
		return -EINVAL;
	}
	if (svc->forward == PA_LB_IPIP &&
	    ((svc->vip.family == AF_INET && !lb->has_local4) ||
	     (svc->vip.family == AF_INET6 && !lb->has_local6))) {
		pa_seterr(err, err_len, "forward \"ipip\" for an %s service needs lb.%s (the outer source address)",
			svc->vip.family == AF_INET ? "IPv4" : "IPv6",
			svc->vip.family == AF_INET ? "local_addr" :
			"local_addr6");
		return -EINVAL;
	}
	for (slot = 0; slot < PA_LB_MAX_SERVICES; slot++)
		if (!lb->ctl[slot].used)
			break;
	if (slot == PA_LB_MAX_SERVICES) {
		pa_seterr(err, err_len, "too many services (%u at most)",
			PA_LB_MAX_SERVICES);
		return -ENOSPC;
	}
	ret = tables_make(lb, err, err_len);
	if (ret != 0)
		return ret;
	if (svc->forward == PA_LB_NAT && lb->nat == NULL) {
		struct rte_hash_parameters hp = { 0 };
		char name[RTE_HASH_NAMESIZE];
		struct rte_hash *h;

		snprintf(name, sizeof(name), "pa_lbnat_%u",
			__atomic_fetch_add(&hash_seq, 1, __ATOMIC_RELAXED));
		hp.name = name;
		hp.entries = lb->nat_size;
		hp.key_len = sizeof(struct lb_flow_key);
		hp.hash_func = rte_hash_crc;
		hp.socket_id = lb->socket;
		hp.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			RTE_HASH_EXTRA_FLAGS_MULTI_WRITER_ADD |
			RTE_HASH_EXTRA_FLAGS_NO_FREE_ON_DEL;
		h = rte_hash_create(&hp);
		if (h == NULL) {
			pa_seterr(err, err_len, "cannot create the NAT reply table (%u entries): %s",
				lb->nat_size, rte_strerror(rte_errno));
			return -ENOMEM;
		}
		__atomic_store_n(&lb->nat, h, __ATOMIC_RELEASE);
	}

	c = &lb->ctl[slot];
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->cfg = *svc;
	c->cfg.backends = NULL;
	c->cfg.n_backends = 0;
	c->uid = new_uid(lb);
	for (i = 0; i < svc->n_backends; i++) {
		ret = backend_check(c, &svc->backends[i], err, err_len);
		if (ret >= 0)
			ret = ctl_add_backend(lb, c, &svc->backends[i], err,
				err_len);
		if (ret < 0)
			goto fail;
	}
	ret = rebuild_publish(lb, slot, true, err, err_len);
	if (ret != 0)
		goto fail;
	lb->n_services++;
	return 0;
fail:
	ctl_clear(lb, c);
	return ret;
}

int
pa_lb_service_add(struct pa_lb *lb, const struct pa_config_service *svc,
		char *err, size_t err_len)
{
	int ret;

	pthread_mutex_lock(&lb->lock);
	ret = service_add_locked(lb, svc, err, err_len);
	if (ret == 0)
		__atomic_add_fetch(&lb->cfg_version, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lb->lock);
	if (ret == 0)
		LB_LOG(INFO, "service '%s' added (%u backends)", svc->name,
			svc->n_backends);
	return ret;
}

int
pa_lb_service_delete(struct pa_lb *lb, const char *name, char *err,
		size_t err_len)
{
	int slot, ret;

	pthread_mutex_lock(&lb->lock);
	slot = service_slot(lb, name, err, err_len);
	if (slot < 0) {
		ret = slot;
		goto out;
	}
	ret = commit(lb, (unsigned int)slot, NULL, true, err, err_len);
	if (ret != 0)
		goto out;
	ctl_clear(lb, &lb->ctl[slot]);
	lb->n_services--;
out:
	if (ret == 0)
		__atomic_add_fetch(&lb->cfg_version, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

int
pa_lb_backend_add(struct pa_lb *lb, const char *service,
		const struct pa_config_backend *be, char *err, size_t err_len)
{
	struct lb_svc_ctl *c;
	int slot, i, ret;

	pthread_mutex_lock(&lb->lock);
	slot = service_slot(lb, service, err, err_len);
	if (slot < 0) {
		ret = slot;
		goto out;
	}
	c = &lb->ctl[slot];
	ret = backend_check(c, be, err, err_len);
	if (ret != 0)
		goto out;
	i = ctl_add_backend(lb, c, be, err, err_len);
	if (i < 0) {
		ret = i;
		goto out;
	}
	ret = rebuild_publish(lb, (unsigned int)slot, false, err, err_len);
	if (ret != 0)
		ctl_drop_backend(lb, c, (unsigned int)i);
out:
	if (ret == 0)
		__atomic_add_fetch(&lb->cfg_version, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

int
pa_lb_backend_delete(struct pa_lb *lb, const char *service,
		const struct pa_ip_addr *addr, char *err, size_t err_len)
{
	struct pa_config_backend saved;
	struct lb_svc_ctl *c;
	uint32_t uid, cslot;
	int slot, i, ret;

	pthread_mutex_lock(&lb->lock);
	slot = service_slot(lb, service, err, err_len);
	i = slot < 0 ? slot : backend_index(lb, slot, addr, err, err_len);
	if (i < 0) {
		ret = i;
		goto out;
	}
	c = &lb->ctl[slot];
	saved = c->cfg.backends[i];
	uid = c->be_uid[i];
	cslot = c->be_cslot[i];
	c->be_uid[i] = 0;
	memset(&c->cfg.backends[i], 0, sizeof(c->cfg.backends[i]));
	ret = rebuild_publish(lb, (unsigned int)slot, false, err, err_len);
	if (ret != 0) {
		c->be_uid[i] = uid;
		c->cfg.backends[i] = saved;
		goto out;
	}
	/* after the publish: no lcore counts on this slot any more */
	lb->cslot_free[lb->n_cslot_free++] = cslot;
	ctl_trim(c);
out:
	if (ret == 0)
		__atomic_add_fetch(&lb->cfg_version, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

int
pa_lb_backend_set(struct pa_lb *lb, const char *service,
		const struct pa_ip_addr *addr, const uint32_t *weight,
		const enum pa_lb_state *state, char *err, size_t err_len)
{
	struct pa_config_backend saved;
	struct lb_svc_ctl *c;
	int slot, i, ret;

	pthread_mutex_lock(&lb->lock);
	slot = service_slot(lb, service, err, err_len);
	i = slot < 0 ? slot : backend_index(lb, slot, addr, err, err_len);
	if (i < 0) {
		ret = i;
		goto out;
	}
	c = &lb->ctl[slot];
	saved = c->cfg.backends[i];
	if (weight != NULL)
		c->cfg.backends[i].weight = *weight;
	if (state != NULL)
		c->cfg.backends[i].state = *state;
	ret = rebuild_publish(lb, (unsigned int)slot, false, err, err_len);
	if (ret != 0)
		c->cfg.backends[i] = saved;
out:
	if (ret == 0)
		__atomic_add_fetch(&lb->cfg_version, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Health                                                              */
/* ------------------------------------------------------------------ */

static const char *const health_names[] = { "unknown", "up", "down" };

const char *
pa_lb_health_name(enum pa_lb_health h)
{
	return (unsigned int)h <= PA_LB_HEALTH_DOWN ? health_names[h] : "?";
}

/* The probe results lib/health reports, kept as an index. */
static const char *const health_results[] = {
	"none", "ok", "refused", "timeout", "unreachable", "bad_status",
	"bad_reply", "error",
};

const char *
lb_health_result_name(uint8_t i)
{
	return i < RTE_DIM(health_results) ? health_results[i] : "?";
}

static uint8_t
result_index(const char *r)
{
	unsigned int i;

	for (i = 0; r != NULL && i < RTE_DIM(health_results); i++)
		if (strcmp(r, health_results[i]) == 0)
			return (uint8_t)i;
	return 0;
}

/* Backend @p i of @p c was (@p was) or was not down by the checks
 * before a report: start its grace as it goes down (stamped by the next
 * pa_lb_health_publish()), end it as it comes back. */
static void
grace_note(struct pa_lb *lb, struct lb_svc_ctl *c, unsigned int i, bool was)
{
	bool down = be_down_hc(c, i);

	if (down == was)
		return;
	if (down && c->cfg.health.grace_ms > 0) {
		c->be_hc[i].grace = LB_GRACE_START;
		lb->grace_next_ms = 0;
	} else {
		c->be_hc[i].grace = LB_GRACE_NONE;
	}
}

/* Stamp the graces just started, end those due at @p now_ms (their
 * backends' flows move with the service's next table), and find the
 * next end. Not every round: only when one is due or a table is. */
static void
grace_scan(struct pa_lb *lb, uint64_t now_ms)
{
	char buf[INET6_ADDRSTRLEN];
	uint64_t next = UINT64_MAX;
	unsigned int i, j;

	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used)
			continue;
		for (j = 0; j < c->n_slots; j++) {
			struct lb_be_health *hc = &c->be_hc[j];

			if (c->be_uid[j] == 0 || hc->grace == LB_GRACE_NONE)
				continue;
			if (hc->grace == LB_GRACE_START) {
				hc->grace = LB_GRACE_ON;
				hc->grace_end_ms = now_ms +
					c->cfg.health.grace_ms;
			} else if (hc->grace_end_ms <= now_ms) {
				hc->grace = LB_GRACE_NONE;
				c->hc_dirty = true;
				lb->hc_pending = true;
				LB_LOG(NOTICE, "service '%s' backend %s: down by health for its grace of %u ms: its flows move",
					c->cfg.name, pa_net_format_ip(
						&c->cfg.backends[j].addr, buf,
						sizeof(buf)),
					c->cfg.health.grace_ms);
				continue;
			}
			if (hc->grace_end_ms < next)
				next = hc->grace_end_ms;
		}
	}
	lb->grace_next_ms = next;
}

int
pa_lb_backend_health(struct pa_lb *lb, uint32_t cslot, uint32_t uid,
		const struct pa_lb_health_report *r)
{
	char buf[INET6_ADDRSTRLEN];
	struct lb_be_health *hc, saved;
	struct lb_svc_ctl *c;
	unsigned int i;
	bool before, after, was;
	int ret = 0;

	if (cslot >= PA_LB_MAX_BACKENDS || uid == 0)
		return -ENOENT;
	pthread_mutex_lock(&lb->lock);
	c = &lb->ctl[lb->cs_svc[cslot]];
	i = lb->cs_be[cslot];
	if (!c->used || i >= c->n_slots || c->be_uid[i] != uid) {
		ret = -ENOENT;
		goto out;
	}
	hc = &c->be_hc[i];
	saved = *hc;
	hc->last = result_index(r->last);
	hc->code = r->code;
	hc->latency_us = r->latency_us;
	hc->probes = r->probes;
	hc->failures = r->failures;
	if (r->health == saved.health)
		goto out;
	before = saved.health == PA_LB_HEALTH_DOWN;
	after = r->health == PA_LB_HEALTH_DOWN;
	was = be_down_hc(c, i);
	hc->health = (uint8_t)r->health;
	grace_note(lb, c, i, was);
	LB_LOG(NOTICE, "service '%s' backend %s: health %s -> %s (last probe: %s%s%s)",
		c->cfg.name, pa_net_format_ip(&c->cfg.backends[i].addr, buf,
			sizeof(buf)), health_names[saved.health],
		health_names[r->health], health_results[hc->last],
		be_usable(&c->cfg.backends[i], uid) ? "" :
		"; its state keeps it out anyway",
		hc->grace == LB_GRACE_START ?
		"; its flows stay for its grace_ms" : "");
	if (before == after)
		goto out;
	c->hc_dirty = true;
	lb->hc_pending = true;
	ret = 1;
out:
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

static const char *const agent_names[] = { "up", "drain", "down" };

int
pa_lb_backend_agent(struct pa_lb *lb, uint32_t cslot, uint32_t uid,
		int pct, enum pa_lb_agent_state st)
{
	char buf[INET6_ADDRSTRLEN];
	struct lb_be_health *hc;
	struct lb_svc_ctl *c;
	unsigned int i;
	bool was;
	int ret = 0;

	if (cslot >= PA_LB_MAX_BACKENDS || uid == 0 || pct > 100 ||
	    (unsigned int)st > PA_LB_AGENT_DOWN)
		return -ENOENT;
	pthread_mutex_lock(&lb->lock);
	c = &lb->ctl[lb->cs_svc[cslot]];
	i = lb->cs_be[cslot];
	if (!c->used || i >= c->n_slots || c->be_uid[i] != uid) {
		ret = -ENOENT;
		goto out;
	}
	hc = &c->be_hc[i];
	if (hc->agent_pct == (pct < 0 ? -1 : pct) && hc->agent_state == st)
		goto out;
	was = be_down_hc(c, i);
	hc->agent_pct = (int8_t)(pct < 0 ? -1 : pct);
	hc->agent_state = (uint8_t)st;
	grace_note(lb, c, i, was);
	LB_LOG(NOTICE, "service '%s' backend %s: agent says %s %d%%: weight %u of %u",
		c->cfg.name, pa_net_format_ip(&c->cfg.backends[i].addr, buf,
			sizeof(buf)), agent_names[st], pct < 0 ? 100 : pct,
		lb_effective_weight(c, i), c->cfg.backends[i].weight);
	c->hc_dirty = true;
	lb->hc_pending = true;
	ret = 1;
out:
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

int
pa_lb_health_publish(struct pa_lb *lb, uint64_t now_ms)
{
	char err[PA_CONFIG_ERR_MAX];
	uint64_t next = UINT64_MAX, due;
	unsigned int i;

	pthread_mutex_lock(&lb->lock);
	lb->hc_clock_ms = now_ms;
	lb->hc_clock_at = pa_clock_ms();
	/* nothing pending, no grace due: the usual case, every round */
	if (!lb->hc_pending && now_ms < lb->grace_next_ms) {
		next = lb->grace_next_ms;
		pthread_mutex_unlock(&lb->lock);
		return next == UINT64_MAX ? -1 : (int)(next - now_ms);
	}
	/* a grace due, just started, or maybe just ended by a report
	 * (grace_next_ms may be early then): the scan costs less than the
	 * build that follows */
	if (lb->grace_next_ms != UINT64_MAX)
		grace_scan(lb, now_ms);
	lb->hc_pending = false;
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used || !c->hc_dirty)
			continue;
		due = c->hc_pub_ms + PA_LB_HEALTH_PUBLISH_GAP_MS;
		if (c->hc_pub_ms != 0 && due > now_ms) {
			if (due < next)
				next = due;
			lb->hc_pending = true;
			continue;
		}
		if (rebuild_publish(lb, i, false, err, sizeof(err)) != 0) {
			/* kept dirty: tried again after the gap */
			LB_LOG(ERR, "service '%s': health changes not applied yet: %s",
				c->cfg.name, err);
		}
		c->hc_pub_ms = now_ms;
		if (c->hc_dirty) {
			lb->hc_pending = true;
			if (now_ms + PA_LB_HEALTH_PUBLISH_GAP_MS < next)
				next = now_ms + PA_LB_HEALTH_PUBLISH_GAP_MS;
		}
	}
	if (lb->grace_next_ms < next)
		next = lb->grace_next_ms;
	pthread_mutex_unlock(&lb->lock);
	return next == UINT64_MAX ? -1 : (int)(next - now_ms);
}

unsigned int
pa_lb_health_targets(struct pa_lb *lb,
		void (*fn)(void *arg, const struct pa_lb_health_target *t),
		void *arg)
{
	struct pa_lb_health_target t;
	unsigned int i, j, n = 0;

	pthread_mutex_lock(&lb->lock);
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used || !c->cfg.health.present ||
		    (c->cfg.health.type == PA_HEALTH_NONE &&
		     c->cfg.health.agent_port == 0))
			continue;
		for (j = 0; j < c->n_slots; j++) {
			const struct pa_config_backend *b = &c->cfg.backends[j];

			if (c->be_uid[j] == 0)
				continue;
			t.cslot = c->be_cslot[j];
			t.uid = c->be_uid[j];
			t.service = c->cfg.name;
			t.forward = c->cfg.forward;
			t.addr = b->addr;
			t.port = b->port != 0 ? b->port : c->cfg.port;
			t.health = &c->cfg.health;
			fn(arg, &t);
			n++;
		}
	}
	pthread_mutex_unlock(&lb->lock);
	return n;
}

/* ------------------------------------------------------------------ */
/* Views                                                               */
/* ------------------------------------------------------------------ */

/* Copy a service's configuration without its holes. */
static int
ctl_export(const struct lb_svc_ctl *c, struct pa_config_service *out)
{
	unsigned int i, n = 0;

	*out = c->cfg;
	out->backends = NULL;
	out->n_backends = 0;
	if (live_backends(c) == 0)
		return 0;
	out->backends = calloc(live_backends(c), sizeof(*out->backends));
	if (out->backends == NULL)
		return -ENOMEM;
	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] != 0)
			out->backends[n++] = c->cfg.backends[i];
	out->n_backends = n;
	return 0;
}

int
pa_lb_service_get(const struct pa_lb *lb, const char *name,
		struct pa_config_service *out)
{
	struct pa_lb *l = (struct pa_lb *)(uintptr_t)lb;
	int slot, ret;

	pthread_mutex_lock(&l->lock);
	slot = find_service(lb, name);
	ret = slot < 0 ? -ENOENT : ctl_export(&lb->ctl[slot], out);
	pthread_mutex_unlock(&l->lock);
	return ret;
}

int
pa_lb_export(const struct pa_lb *lb, struct pa_config_lb *out)
{
	struct pa_lb *l = (struct pa_lb *)(uintptr_t)lb;
	struct pa_config_service *svcs = NULL;
	unsigned int i, n = 0;
	int ret = 0;

	pthread_mutex_lock(&l->lock);
	if (lb->n_services > 0) {
		svcs = calloc(lb->n_services, sizeof(*svcs));
		if (svcs == NULL) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < PA_LB_MAX_SERVICES && n < lb->n_services; i++) {
		if (!lb->ctl[i].used)
			continue;
		ret = ctl_export(&lb->ctl[i], &svcs[n]);
		if (ret != 0)
			goto out;
		n++;
	}
	for (i = 0; i < out->n_services; i++)
		pa_lb_config_service_clear(&out->services[i]);
	free(out->services);
	out->services = svcs;
	out->n_services = n;
	svcs = NULL;
out:
	if (svcs != NULL) {
		for (i = 0; i < n; i++)
			pa_lb_config_service_clear(&svcs[i]);
		free(svcs);
	}
	pthread_mutex_unlock(&l->lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Trace                                                               */
/* ------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------ */
/* Life cycle                                                          */
/* ------------------------------------------------------------------ */

/* Busy ageing sweeps go round the positions in use once per
 * SWEEP_PER_TMO-th of the shortest timeout (tcp_fin_timeout's 10 s by
 * default: every 1.25 s), but no more often than once per
 * LB_SWEEP_PERIOD_MS and no less often than once per SWEEP_PERIOD_MAX_S.
 * A hit checks the timeout, so a sweep only reclaims: an entry lingers at
 * most 1/SWEEP_PER_TMO of its timeout past it, and the table holds at
 * most that share more entries than live flows. A table short of free
 * positions is swept at LB_SWEEP_PERIOD_MS (pa_lb_poll()). */
#define SWEEP_PER_TMO		8
#define SWEEP_PERIOD_MAX_S	10	/* (x hw in pa_lb_poll(): no overflow) */

static uint64_t
sweep_period(const struct pa_lb *lb)
{
	uint64_t tmo = lb->tmo_tsc[0];
	unsigned int i;

	for (i = 1; i < LB_TMO_MAX; i++)
		tmo = RTE_MIN(tmo, lb->tmo_tsc[i]);
	return RTE_MIN(RTE_MAX(tmo / SWEEP_PER_TMO,
		lb->tsc_hz * LB_SWEEP_PERIOD_MS / 1000),
		lb->tsc_hz * SWEEP_PERIOD_MAX_S);
}

static void worker_free(struct lb_worker *w);

static void
ftab_free(struct lb_ftab *t)
{
	rte_free(t->buf[0]);
	rte_free(t->buf[1]);
	rte_free(t->line);
	rte_free(t->free);
	rte_free(t->sig);
	memset(t, 0, sizeof(*t));
}

/* A flow table of @p size flows on @p socket. Its positions are one
 * more than it holds (the last never used), as they were with rte_hash
 * (max key id + 1): flow_table_capacity reads the same. Its index
 * (lb_ftab.h) grows up to slots, in two buffers: the whole and half. */
static int
ftab_create(struct lb_ftab *t, uint32_t size, int socket)
{
	uint32_t n = size + 1, slots = rte_align32pow2(n + n / 3 + 1), i;
	uint64_t *big, *half = NULL;

	memset(t, 0, sizeof(*t));
	t->n_pos = n;
	big = rte_zmalloc_socket("pa_lb_ftab_idx", (size_t)slots *
		sizeof(*big), RTE_CACHE_LINE_SIZE, socket);
	if (slots > LB_FTAB_MIN_SLOTS)
		half = rte_zmalloc_socket("pa_lb_ftab_idx2", (size_t)slots / 2 *
			sizeof(*half), RTE_CACHE_LINE_SIZE, socket);
	t->buf[0] = big;
	t->buf[1] = half;
	t->free = rte_malloc_socket("pa_lb_ftab_free", (size_t)n *
		sizeof(*t->free), RTE_CACHE_LINE_SIZE, socket);
	t->line = rte_zmalloc_socket("pa_lb_ftab_lines", (size_t)n *
		sizeof(*t->line), RTE_CACHE_LINE_SIZE, socket);
	t->sig = rte_zmalloc_socket("pa_lb_ftab_sig", (size_t)n *
		sizeof(*t->sig), RTE_CACHE_LINE_SIZE, socket);
	if (big == NULL || (slots > LB_FTAB_MIN_SLOTS && half == NULL) ||
	    t->free == NULL || t->line == NULL || t->sig == NULL) {
		ftab_free(t);
		return -ENOMEM;
	}
	lb_ftab_index_init(t, big, half, slots, LB_FTAB_MIN_SLOTS);
	/* positions 0 .. size - 1, 0 first */
	for (i = 0; i < size; i++)
		t->free[i] = size - 1 - i;
	t->n_free = size;
	return 0;
}

static struct lb_worker *
worker_create(struct pa_lb *lb, unsigned int idx, unsigned int ord,
		uint32_t size, char *err, size_t err_len)
{
	struct lb_worker *w;

	w = rte_zmalloc_socket("pa_lb_worker", sizeof(*w), RTE_CACHE_LINE_SIZE,
		lb->socket);
	if (w == NULL)
		goto nomem;
	if (ftab_create(&w->ftab, size, lb->socket) != 0) {
		rte_free(w);
		goto nomem;
	}
	w->nat_pos = rte_malloc_socket("pa_lb_nat_pos",
		(size_t)w->ftab.n_pos * sizeof(*w->nat_pos),
		RTE_CACHE_LINE_SIZE, lb->socket);
	w->cursor = rte_zmalloc_socket("pa_lb_cursor", PA_LB_MAX_SERVICES *
		sizeof(*w->cursor), RTE_CACHE_LINE_SIZE, lb->socket);
	w->ctr = rte_zmalloc_socket("pa_lb_ctr", PA_LB_MAX_BACKENDS *
		sizeof(*w->ctr), RTE_CACHE_LINE_SIZE, lb->socket);
	w->svc_ctr = rte_zmalloc_socket("pa_lb_svc_ctr", PA_LB_MAX_SERVICES *
		sizeof(*w->svc_ctr), RTE_CACHE_LINE_SIZE, lb->socket);
	w->n_lb = lb->n_lb;
	w->lb_ord = ord;
	if (lb->protect.src_new_flows.enabled)
		w->src = pa_protect_src_create(&lb->protect, lb->n_lb, 0,
			lb->tsc_hz, lb->socket);
	if (w->nat_pos == NULL || w->cursor == NULL || w->ctr == NULL ||
	    w->svc_ctr == NULL ||
	    (lb->protect.src_new_flows.enabled && w->src == NULL)) {
		worker_free(w);
		goto nomem;
	}
	return w;
nomem:
	pa_seterr(err, err_len, "out of memory for the flow table of lcore %u (%u flows)",
		idx, size);
	return NULL;
}

static void
worker_free(struct lb_worker *w)
{
	if (w == NULL)
		return;
	ftab_free(&w->ftab);
	rte_free(w->nat_pos);
	rte_free(w->cursor);
	rte_free(w->ctr);
	rte_free(w->svc_ctr);
	pa_protect_src_free(w->src);
	rte_free(w);
}

/* Bytes allocated from the DPDK heap of @p socket. */
static uint64_t
heap_bytes(int socket)
{
	struct rte_malloc_socket_stats st;

	if (rte_malloc_get_socket_stats(socket < 0 ? 0 : socket, &st) != 0)
		return 0;
	return st.heap_allocsz_bytes;
}

/*
 * The flow tables, made with the first service (an appliance that only
 * filters does not carry 97 MB of empty tables for the default 1M
 * flows). Published with release stores: the data path reads them once
 * it sees a table with services, which is published after.
 */
static int
tables_make(struct pa_lb *lb, char *err, size_t err_len)
{
	uint64_t heap_before;
	struct lb_worker *w;
	unsigned int i, ord = 0;

	if (lb->tables_made)
		return 0;
	heap_before = heap_bytes(lb->socket);
	for (i = 0; i < lb->n_lcores; i++) {
		if (!lb->runs_lb[i])
			continue;
		if (lb->w[i] != NULL) {
			ord++;
			continue;
		}
		w = worker_create(lb, i, ord++, lb->per_lcore, err, err_len);
		if (w == NULL)
			return -ENOMEM;
		__atomic_store_n(&lb->w[i], w, __ATOMIC_RELEASE);
		__atomic_store_n(&lb->dp.poll[i], 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&lb->ft_bytes, heap_bytes(lb->socket) - heap_before,
		__ATOMIC_RELAXED);
	lb->tables_made = true;
	return 0;
}

struct pa_lb *
pa_lb_create(const struct pa_lb_opts *o, char *err, size_t err_len)
{
	const struct pa_config_lb *lc = &o->cfg->lb;
	unsigned int i, n_lb = 0;
	uint32_t per;
	struct pa_lb *lb;

	if (o->n_lcores > PA_LB_MAX_LCORES) {
		pa_seterr(err, err_len, "too many lcores for the LB (%u at most)",
			PA_LB_MAX_LCORES);
		return NULL;
	}
	lb = calloc(1, sizeof(*lb));
	if (lb == NULL) {
		pa_seterr(err, err_len, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&lb->lock, NULL);
	pthread_mutex_init(&lb->shape_lock, NULL);
	lb->rcu = o->rcu;
	lb->socket = o->socket;
	lb->n_lcores = o->n_lcores;
	lb->tsc_hz = rte_get_tsc_hz();
	lb->ft = lc->flow_table;
	if (lb->ft.size == 0) {
		/* a config made in code, not by the loader */
		lb->ft.size = 1048576;
		lb->ft.tcp_timeout = 300;
		lb->ft.tcp_fin_timeout = 10;
		lb->ft.udp_timeout = 30;
	}
	lb->tmo_tsc[LB_TMO_TCP] = lb->ft.tcp_timeout * lb->tsc_hz;
	lb->tmo_tsc[LB_TMO_TCP_FIN] = lb->ft.tcp_fin_timeout * lb->tsc_hz;
	lb->tmo_tsc[LB_TMO_UDP] = lb->ft.udp_timeout * lb->tsc_hz;
	lb->protect = o->cfg->protect;
	lb->protect.blocklist = NULL;	/* not ours (lib/protect's) */
	lb->tmo_tsc[LB_TMO_SYN] = lb->protect.syn_timeout_s != 0 &&
		lb->protect.syn_timeout_s < lb->ft.tcp_timeout ?
		lb->protect.syn_timeout_s * lb->tsc_hz :
		lb->tmo_tsc[LB_TMO_TCP];
	lb->sweep_tsc = lb->tsc_hz * LB_SWEEP_BUSY_US / 1000000;
	lb->sweep_period_tsc = sweep_period(lb);
	lb->nat_size = lb->ft.size;
	lb->has_local4 = lc->has_local_addr;
	lb->local4 = lc->local_addr;
	lb->has_local6 = lc->has_local_addr6;
	lb->local6 = lc->local_addr6;
	lb->icmp_echo = lc->icmp_echo;
	lb->icmp_tsc_per_token = RTE_MAX(lb->tsc_hz / LB_ICMP_RATE, (uint64_t)1);
	lb->grace_next_ms = UINT64_MAX;

	lb->cslot_free = malloc(PA_LB_MAX_BACKENDS * sizeof(*lb->cslot_free));
	lb->cs_svc = calloc(PA_LB_MAX_BACKENDS, sizeof(*lb->cs_svc));
	lb->cs_be = calloc(PA_LB_MAX_BACKENDS, sizeof(*lb->cs_be));
	lb->be_nh = rte_zmalloc_socket("pa_lb_nh", PA_LB_MAX_BACKENDS *
		sizeof(*lb->be_nh), RTE_CACHE_LINE_SIZE, lb->socket);
	if (lb->cslot_free == NULL || lb->be_nh == NULL || lb->cs_svc == NULL ||
	    lb->cs_be == NULL) {
		pa_seterr(err, err_len, "out of memory");
		goto fail;
	}
	for (i = 0; i < PA_LB_MAX_BACKENDS; i++)
		lb->cslot_free[i] = PA_LB_MAX_BACKENDS - 1 - i;
	lb->n_cslot_free = PA_LB_MAX_BACKENDS;

	if (o->ports != NULL) {
		for (i = 0; i < o->ports->n; i++) {
			const struct pa_port *p = &o->ports->port[i];
			const struct pa_config_port *cp = &o->cfg->ports[i];
			struct lb_port *lp = &lb->port[p->port_id];

			lp->known = true;
			lp->mac = p->mac;
			lp->mtu = p->mtu;
			lp->has_gw = cp->has_gateway_mac;
			memcpy(lp->gw.addr_bytes, cp->gateway_mac,
				RTE_ETHER_ADDR_LEN);
		}
	}

	for (i = 0; i < o->n_lcores; i++) {
		lb->runs_lb[i] = o->runs_lb == NULL || o->runs_lb[i];
		if (lb->runs_lb[i])
			n_lb++;
	}
	lb->n_lb = n_lb;
	per = n_lb > 0 ? lb->ft.size / n_lb : 0;
	if (per < PA_LB_MIN_LCORE_FLOWS)
		per = PA_LB_MIN_LCORE_FLOWS;
	lb->per_lcore = per;
	/* an empty table, so the data path always has one */
	if (commit(lb, 0, NULL, true, err, err_len) != 0)
		goto fail;
	lb->version = 0;
	for (i = 0; i < lc->n_services; i++) {
		char why[PA_CONFIG_ERR_MAX];

		if (pa_lb_service_add(lb, &lc->services[i], why,
				sizeof(why)) != 0) {
			pa_seterr(err, err_len, "$.lb.services[%u]: %s", i, why);
			goto fail;
		}
	}
	LB_LOG(INFO, "%u services; flow tables of %u flows on %u lcores%s",
		lb->n_services, per, n_lb, lb->tables_made ? "" :
		", made with the first service");
	return lb;
fail:
	pa_lb_destroy(lb);
	return NULL;
}

static void
lb_destroy(struct pa_lb *lb, bool exiting)
{
	unsigned int i;

	if (lb == NULL)
		return;
	for (i = 0; i < PA_LB_MAX_SERVICES; i++)
		if (lb->ctl[i].used)
			ctl_clear(lb, &lb->ctl[i]);
	if (lb->live != NULL) {
		for (i = 0; i < PA_LB_MAX_SERVICES; i++)
			svc_free(lb->live->svc[i]);
		rte_free(lb->live->svc_map);
		rte_free(lb->live->rev);
		rte_free(lb->live);
	}
	if (!exiting) {
		for (i = 0; i < PA_LB_MAX_LCORES; i++)
			worker_free(lb->w[i]);
		rte_hash_free(lb->nat);
	}
	free(lb->cslot_free);
	free(lb->cs_svc);
	free(lb->cs_be);
	rte_free(lb->be_nh);
	pthread_mutex_destroy(&lb->lock);
	pthread_mutex_destroy(&lb->shape_lock);
	free(lb);
}

void
pa_lb_destroy(struct pa_lb *lb)
{
	lb_destroy(lb, false);
}

void
pa_lb_destroy_at_exit(struct pa_lb *lb)
{
	lb_destroy(lb, true);
}

void
pa_lb_lcore_exit(struct pa_lb *lb, unsigned int lcore_idx)
{
	struct lb_worker *w;

	if (lb == NULL || lcore_idx >= lb->n_lcores)
		return;
	w = lb->w[lcore_idx];
	if (w != NULL)
		__atomic_store_n(&w->running, false, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* Neighbours                                                          */
/* ------------------------------------------------------------------ */

unsigned int
pa_lb_neigh_set(struct pa_lb *lb, const struct pa_ip_addr *addr,
		uint16_t port_id, const uint8_t *mac, bool wanted)
{
	uint64_t word = lb_nh_word(mac, port_id, wanted);
	unsigned int i, j, n = 0;

	if (lb == NULL)
		return 0;
	pthread_mutex_lock(&lb->lock);
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used)
			continue;
		for (j = 0; j < c->n_slots; j++) {
			if (c->be_uid[j] == 0 || c->cfg.backends[j].has_mac ||
			    !pa_ip_equal(&c->cfg.backends[j].addr, addr))
				continue;
			__atomic_store_n(&lb->be_nh[c->be_cslot[j]],
				mac != NULL || wanted ? word : 0,
				__ATOMIC_RELAXED);
			n++;
		}
	}
	pthread_mutex_unlock(&lb->lock);
	return n;
}

void
pa_lb_gateway_set(struct pa_lb *lb, uint16_t port_id, int family,
		const uint8_t *mac, bool wanted)
{
	if (lb == NULL || port_id >= RTE_MAX_ETHPORTS)
		return;
	__atomic_store_n(&lb->port[port_id].gw_nh[family == AF_INET6],
		mac != NULL || wanted ? lb_nh_word(mac, port_id, wanted) : 0,
		__ATOMIC_RELAXED);
}

/* Append @p a to @p arr (of @p n), duplicates included (addr_unique()
 * removes them). */
static int
addr_put(struct pa_ip_addr **arr, unsigned int *n, unsigned int *cap,
		const struct pa_ip_addr *a)
{
	struct pa_ip_addr *p;

	if (*n == *cap) {
		*cap = *cap != 0 ? *cap * 2 : 16;
		p = realloc(*arr, *cap * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		*arr = p;
	}
	(*arr)[(*n)++] = *a;
	return 0;
}

/* Address order (family, then bytes), then position: equal addresses
 * sort together, the first of them first. @p base: the addresses. */
static int
addr_ix_cmp(const void *x, const void *y, void *base)
{
	unsigned int i = *(const unsigned int *)x, j = *(const unsigned int *)y;
	const struct pa_ip_addr *a = (const struct pa_ip_addr *)base + i;
	const struct pa_ip_addr *b = (const struct pa_ip_addr *)base + j;
	int d;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	d = memcmp(pa_ip_bytes(a), pa_ip_bytes(b),
		a->family == AF_INET ? 4 : 16);
	if (d != 0)
		return d;
	return i < j ? -1 : i > j;
}

/* Keep the first of each address of @p arr, in their order: a sort of
 * the positions, not a scan per address (10,000 backends cost 50
 * million comparisons that way, at every change of the LB). */
static int
addr_unique(struct pa_ip_addr *arr, unsigned int *n)
{
	unsigned int *ix, i, k;
	bool *dup;

	if (*n < 2)
		return 0;
	ix = malloc(*n * sizeof(*ix));
	dup = calloc(*n, sizeof(*dup));
	if (ix == NULL || dup == NULL) {
		free(ix);
		free(dup);
		return -ENOMEM;
	}
	for (i = 0; i < *n; i++)
		ix[i] = i;
	qsort_r(ix, *n, sizeof(*ix), addr_ix_cmp, arr);
	for (i = 1; i < *n; i++)
		if (pa_ip_equal(&arr[ix[i - 1]], &arr[ix[i]]))
			dup[ix[i]] = true;
	for (i = 0, k = 0; i < *n; i++)
		if (!dup[i])
			arr[k++] = arr[i];
	*n = k;
	free(ix);
	free(dup);
	return 0;
}

int
pa_lb_addresses(struct pa_lb *lb, struct pa_ip_addr **vips,
		unsigned int *n_vips, struct pa_ip_addr **backends,
		unsigned int *n_backends)
{
	unsigned int i, j, cv = 0, cb = 0;
	int ret = 0;

	*vips = NULL;
	*backends = NULL;
	*n_vips = 0;
	*n_backends = 0;
	if (lb == NULL)
		return 0;
	pthread_mutex_lock(&lb->lock);
	for (i = 0; i < PA_LB_MAX_SERVICES && ret == 0; i++) {
		const struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used)
			continue;
		ret = addr_put(vips, n_vips, &cv, &c->cfg.vip);
		for (j = 0; j < c->n_slots && ret == 0; j++)
			if (c->be_uid[j] != 0 && !c->cfg.backends[j].has_mac)
				ret = addr_put(backends, n_backends, &cb,
					&c->cfg.backends[j].addr);
	}
	if (ret == 0)
		ret = addr_unique(*vips, n_vips);
	if (ret == 0)
		ret = addr_unique(*backends, n_backends);
	pthread_mutex_unlock(&lb->lock);
	if (ret != 0) {
		free(*vips);
		free(*backends);
		*vips = NULL;
		*backends = NULL;
		*n_vips = 0;
		*n_backends = 0;
	}
	return ret;
}

uint64_t
pa_lb_config_version(const struct pa_lb *lb)
{
	if (lb == NULL)
		return 0;
	return __atomic_load_n(&lb->cfg_version, __ATOMIC_ACQUIRE);
}

uint64_t
pa_lb_version(const struct pa_lb *lb)
{
	if (lb == NULL)
		return 0;
	return __atomic_load_n(&lb->version, __ATOMIC_ACQUIRE);
}
