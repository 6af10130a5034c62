/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour subsystem's control side: the cache and its timers, the
 * answers, the solicitations, the address table the rx stage reads, and
 * the MACs it publishes to the LB. Everything here runs on the control
 * thread under n->lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "pa_clock.h"
#include "pa_err.h"
#include "pa_lb.h"
#include "pa_neigh.h"

RTE_LOG_REGISTER(pa_neigh_logtype, pa.neigh, INFO);
#define NEIGH_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_neigh_logtype, "pa.neigh: " fmt "\n", \
		##__VA_ARGS__)

#define POLL_BURST	64
#define POLL_MAX	512		/* frames handled by one poll */
#define FRAME_MAX	2048		/* bytes of a frame looked at */
#define RETIRED_MAX	16
#define TARGET_GATEWAY	0x01
#define TARGET_BACKEND	0x02

static unsigned int seq;

struct neigh_key {
	uint8_t family;			/* 4 or 6 */
	uint8_t pad;
	uint16_t port;			/* port index */
	uint8_t addr[16];
};

struct neigh_ent {
	bool used;
	bool has_mac;
	uint8_t state;			/* enum pa_neigh_state */
	uint8_t target;			/* TARGET_* */
	uint8_t want;			/* targets_refresh() scratch */
	uint8_t probes;			/* solicitations sent this round */
	uint8_t mac[6];
	struct neigh_key key;
	uint64_t updated_ms;		/* created, confirmed or changed */
	uint64_t next_ms;		/* next timer */
};

struct neigh_port {
	uint16_t port_id;
	char name[PA_CONFIG_NAME_MAX];
	uint8_t mac[6];
	const struct pa_config_port *cp;
	bool has_ll6;			/**< the kernel_if's link-local */
	uint8_t ll6[16];
	struct rte_ring *tx;
	struct rte_mempool *pool;
};

struct neigh_ctr {
	uint64_t rx;
	uint64_t arp_requests_in, arp_replies_in, ns_in, na_in;
	uint64_t arp_replies_out, arp_requests_out, na_out, ns_out;
	uint64_t learned, resolved, failed, unsolicited, conflicts, not_ours;
	uint64_t cache_full, no_source, tx_no_mbuf, tx_ring_full, unknown_port;
	uint64_t invalid[PA_NEIGH_BAD_MAX];
};

struct retired {
	struct pa_neigh_dp *dp;
	uint64_t token;
};

struct pa_neigh {
	struct pa_neigh_fast fast;	/* first: the data path's */
	pthread_mutex_t lock;
	struct pa_neigh_opts o;	/* as created; 0s made the defaults */

	unsigned int n_ports;
	struct neigh_port port[PA_CONFIG_MAX_PORTS];

	struct rte_hash *h;		/* neigh_key -> position */
	struct neigh_ent *ent;		/* by position */
	uint32_t n_pos;
	uint32_t n_used;

	uint64_t lb_version;
	struct pa_ip_addr *vips;	/* answered on every port */
	unsigned int n_vips;
	struct pa_ip_addr *backends;	/* resolved where on-link */
	unsigned int n_backends;

	unsigned int n_retired;
	struct retired retired[RETIRED_MAX];

	/* handled frames the drop ring had no room for yet (replay) */
	unsigned int n_pend;
	struct rte_mbuf *pend[POLL_MAX];

	struct neigh_ctr c;
	uint8_t frame[FRAME_MAX];
	uint8_t out[256];
};

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

uint64_t
pa_neigh_now_ms(void)
{
	return (uint64_t)pa_clock_ms();
}

static const char *const state_names[] = {
	[PA_NEIGH_INCOMPLETE] = "incomplete",
	[PA_NEIGH_REACHABLE] = "reachable",
	[PA_NEIGH_STALE] = "stale",
	[PA_NEIGH_PROBE] = "probe",
	[PA_NEIGH_FAILED] = "failed",
};

const char *
pa_neigh_state_name(enum pa_neigh_state s)
{
	return (unsigned int)s < RTE_DIM(state_names) ? state_names[s] :
		"unknown";
}

static uint8_t
fam(const struct pa_ip_addr *a)
{
	return a->family == AF_INET ? 4 : 6;
}

static void
key_make(struct neigh_key *k, uint8_t family, const uint8_t *addr,
		unsigned int port)
{
	memset(k, 0, sizeof(*k));
	k->family = family;
	k->port = (uint16_t)port;
	memcpy(k->addr, addr, family == 4 ? 4 : 16);
}

/* The address of @p family (4 or 6) whose bytes are @p addr. */
static void
addr_of(uint8_t family, const uint8_t *addr, struct pa_ip_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = family == 4 ? AF_INET : AF_INET6;
	memcpy(a->family == AF_INET ? (uint8_t *)&a->v4 : a->v6.s6_addr,
		addr, family == 4 ? 4 : 16);
}

static void
key_addr(const struct neigh_key *k, struct pa_ip_addr *a)
{
	addr_of(k->family, k->addr, a);
}

/* Is @p addr on one of port @p pi's connected subnets (and not one of
 * its own addresses)? */
static bool
on_link(const struct pa_neigh *n, unsigned int pi, uint8_t family,
		const uint8_t *addr)
{
	const struct pa_config_port *cp = n->port[pi].cp;
	struct pa_ip_addr a;
	unsigned int i;

	if (cp == NULL)
		return false;
	addr_of(family, addr, &a);
	for (i = 0; i < cp->n_addrs; i++)
		if (pa_ip_equal(&cp->addrs[i].addr, &a))
			return false;
	for (i = 0; i < cp->n_addrs; i++)
		if (pa_ip_prefix_contains(&cp->addrs[i], &a))
			return true;
	return false;
}

/* The port's address to send from towards @p target: one whose subnet
 * holds it, else the first of its family; NULL if it has none. */
static const uint8_t *
source_addr(const struct pa_neigh *n, unsigned int pi, uint8_t family,
		const uint8_t *target)
{
	const struct pa_config_port *cp = n->port[pi].cp;
	const uint8_t *first = NULL;
	struct pa_ip_addr a;
	unsigned int i;

	if (cp == NULL)
		return NULL;
	addr_of(family, target, &a);
	for (i = 0; i < cp->n_addrs; i++) {
		if (fam(&cp->addrs[i].addr) != family)
			continue;
		if (pa_ip_prefix_contains(&cp->addrs[i], &a))
			return pa_ip_bytes(&cp->addrs[i].addr);
		if (first == NULL)
			first = pa_ip_bytes(&cp->addrs[i].addr);
	}
	return first;
}

/* The appliance's own address on port @p pi? */
static bool
is_ours(const struct pa_neigh *n, unsigned int pi, uint8_t family,
		const uint8_t *addr)
{
	const struct pa_neigh_dp_ent *e = pa_neigh_dp_find(n->fast.dp, family,
		addr);

	return e != NULL && ((e->flags & PA_NEIGH_DP_OURS_ANY) ||
		(e->ours_ports & (1u << pi)));
}

static bool
usable(const struct neigh_ent *e)
{
	return e->has_mac && (e->state == PA_NEIGH_REACHABLE ||
		e->state == PA_NEIGH_STALE || e->state == PA_NEIGH_PROBE);
}

/* The route stage's word for port @p port_id's gateway of @p family
 * (NULL: unresolved). */
static void
gateway_publish(struct pa_neigh *n, uint16_t port_id, uint8_t family,
		const uint8_t *mac)
{
	uint64_t w = 0;

	if (port_id >= RTE_MAX_ETHPORTS)
		return;
	if (mac != NULL) {
		memcpy(&w, mac, RTE_ETHER_ADDR_LEN);
		w = (w & PA_NEIGH_NH_MAC_MASK) | PA_NEIGH_NH_VALID;
	}
	__atomic_store_n(&n->fast.l2[port_id].gw_nh[family == 6], w,
		__ATOMIC_RELAXED);
}

/* Tell the LB and the route stage what they should use for this entry,
 * if it is a target. */
static void
publish(struct pa_neigh *n, const struct neigh_ent *e)
{
	const uint8_t *mac = usable(e) ? e->mac : NULL;
	uint16_t port_id = n->port[e->key.port].port_id;
	struct pa_ip_addr a;

	if (e->target & TARGET_GATEWAY) {
		gateway_publish(n, port_id, e->key.family, mac);
		pa_lb_gateway_set(n->o.lb, port_id,
				e->key.family == 6 ? AF_INET6 : AF_INET, mac,
				true);
	}
	if (e->target & TARGET_BACKEND) {
		key_addr(&e->key, &a);
		pa_lb_neigh_set(n->o.lb, &a, port_id, mac, true);
	}
}

/* ------------------------------------------------------------------ */
/* Sending                                                             */
/* ------------------------------------------------------------------ */

static int
send_frame(struct pa_neigh *n, unsigned int pi, const uint8_t *buf,
		uint32_t len)
{
	struct neigh_port *p = &n->port[pi];
	struct rte_mbuf *m;
	char *d;

	if (len == 0 || p->pool == NULL || p->tx == NULL) {
		n->c.tx_no_mbuf++;
		return -ENOBUFS;
	}
	m = rte_pktmbuf_alloc(p->pool);
	if (m == NULL) {
		n->c.tx_no_mbuf++;
		return -ENOBUFS;
	}
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		n->c.tx_no_mbuf++;
		return -ENOBUFS;
	}
	memcpy(d, buf, len);
	m->port = p->port_id;
	if (rte_ring_mp_enqueue(p->tx, m) != 0) {
		rte_pktmbuf_free(m);
		n->c.tx_ring_full++;
		return -ENOBUFS;
	}
	return 0;
}

/* A request (broadcast, or unicast to the MAC we have when probing). */
static int
solicit(struct pa_neigh *n, struct neigh_ent *e, bool unicast)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[6];
	const struct neigh_port *p = &n->port[e->key.port];
	const uint8_t *src = source_addr(n, e->key.port, e->key.family,
		e->key.addr);
	uint8_t dst[16], mdst[6];
	uint32_t len;

	if (src == NULL) {
		n->c.no_source++;
		return -EADDRNOTAVAIL;
	}
	unicast = unicast && e->has_mac;
	if (e->key.family == 4) {
		len = pa_neigh_build_arp(n->out, sizeof(n->out), NULL, 0, 1,
			unicast ? e->mac : bcast, p->mac, src, zero,
			e->key.addr);
		if (send_frame(n, e->key.port, n->out, len) == 0)
			n->c.arp_requests_out++;
		return 0;
	}
	if (unicast) {
		memcpy(dst, e->key.addr, 16);
		memcpy(mdst, e->mac, 6);
	} else {
		pa_neigh_solicited_node(e->key.addr, dst);
		mdst[0] = 0x33;
		mdst[1] = 0x33;
		memcpy(mdst + 2, dst + 12, 4);
	}
	len = pa_neigh_build_nd(n->out, sizeof(n->out), NULL, 0, 135, mdst,
		p->mac, src, dst, e->key.addr, 0, p->mac);
	if (send_frame(n, e->key.port, n->out, len) == 0)
		n->c.ns_out++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The cache                                                           */
/* ------------------------------------------------------------------ */

static struct neigh_ent *
ent_find(struct pa_neigh *n, uint8_t family, const uint8_t *addr,
		unsigned int port)
{
	struct neigh_key k;
	int32_t pos;

	key_make(&k, family, addr, port);
	pos = rte_hash_lookup(n->h, &k);
	return pos >= 0 && n->ent[pos].used ? &n->ent[pos] : NULL;
}

static void
ent_delete(struct pa_neigh *n, struct neigh_ent *e)
{
	rte_hash_del_key(n->h, &e->key);
	memset(e, 0, sizeof(*e));
	n->n_used--;
}

/* Make room by forgetting the oldest entry that is not a target. */
static bool
evict_one(struct pa_neigh *n)
{
	struct neigh_ent *old = NULL;
	uint32_t i;

	for (i = 0; i < n->n_pos; i++) {
		struct neigh_ent *e = &n->ent[i];

		if (e->used && e->target == 0 && e->want == 0 &&
		    (old == NULL || e->updated_ms < old->updated_ms))
			old = e;
	}
	if (old == NULL)
		return false;
	ent_delete(n, old);
	return true;
}

static struct neigh_ent *
ent_new(struct pa_neigh *n, uint8_t family, const uint8_t *addr,
		unsigned int port, bool may_evict, uint64_t now)
{
	struct neigh_ent *e;
	struct neigh_key k;
	int32_t pos;

	if (n->n_used >= n->o.max_entries && (!may_evict || !evict_one(n))) {
		n->c.cache_full++;
		return NULL;
	}
	key_make(&k, family, addr, port);
	pos = rte_hash_add_key(n->h, &k);
	if (pos < 0) {
		n->c.cache_full++;
		return NULL;
	}
	e = &n->ent[pos];
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->key = k;
	e->updated_ms = now;
	e->next_ms = now;
	n->n_used++;
	return e;
}

/* Start asking for a target: the first request at once. */
static void
start_incomplete(struct pa_neigh *n, struct neigh_ent *e, uint64_t now)
{
	e->state = PA_NEIGH_INCOMPLETE;
	e->probes = 1;
	e->next_ms = now + n->o.retrans_ms;
	solicit(n, e, false);
}

/* The MAC of an entry from a reply (@p confirm) or from something the
 * neighbour sent on its own (a request, a gratuitous ARP, an
 * unsolicited NA with override). */
static void
learn(struct pa_neigh *n, struct neigh_ent *e, const uint8_t *mac,
		bool confirm, uint64_t now)
{
	bool changed = !e->has_mac || memcmp(e->mac, mac, 6) != 0;
	bool was = usable(e);

	if (!changed && !confirm && e->state != PA_NEIGH_INCOMPLETE &&
	    e->state != PA_NEIGH_FAILED)
		return;
	memcpy(e->mac, mac, 6);
	e->has_mac = true;
	e->probes = 0;
	e->updated_ms = now;
	if (confirm) {
		e->state = PA_NEIGH_REACHABLE;
	} else {
		e->state = PA_NEIGH_STALE;
		/* a target confirms the news by unicast probes */
		e->next_ms = now;
	}
	if (!was || changed)
		n->c.resolved += e->target != 0;
	if (!was || changed)
		publish(n, e);
}

/* ------------------------------------------------------------------ */
/* The address table of the data path                                  */
/* ------------------------------------------------------------------ */

static struct pa_neigh_dp_ent *
dp_slot(struct pa_neigh_dp *t, uint8_t family, const uint8_t *addr)
{
	const unsigned int alen = family == 4 ? 4 : 16;
	uint32_t i;

	for (i = pa_neigh_dp_hash(family, addr) & t->mask;;
	     i = (i + 1) & t->mask) {
		struct pa_neigh_dp_ent *e = &t->ent[i];

		if (e->family == 0) {
			e->family = family;
			memcpy(e->addr, addr, alen);
			t->n++;
			return e;
		}
		if (e->family == family && memcmp(e->addr, addr, alen) == 0)
			return e;
	}
}

static void
retire_reap(struct pa_neigh *n, bool wait)
{
	unsigned int i, k = 0;

	for (i = 0; i < n->n_retired; i++) {
		struct retired *r = &n->retired[i];

		if (n->o.rcu == NULL ||
		    rte_rcu_qsbr_check(n->o.rcu, r->token, wait && i == 0) == 1)
			rte_free(r->dp);
		else
			n->retired[k++] = *r;
	}
	n->n_retired = k;
}

/* Build and publish the table: our addresses and the watched ones. The
 * old table is freed once the lcores have moved on (never waited for
 * here, so the control thread cannot stall on a blocked lcore). */
static int
dp_publish(struct pa_neigh *n)
{
	const struct pa_config *cfg = n->o.cfg;
	struct pa_neigh_dp *t, *old;
	struct pa_neigh_dp_ent *e;
	unsigned int i, j, count = n->n_vips + 2 + n->n_used;
	uint32_t size;

	for (i = 0; i < n->n_ports; i++)
		if (n->port[i].cp != NULL)
			count += n->port[i].cp->n_addrs + 1;
	if (cfg != NULL && cfg->lb.fnat.present)
		count += cfg->lb.fnat.n_addrs;
	size = rte_align32pow2(RTE_MAX(16u, 2 * count));
	t = rte_zmalloc_socket("pa_neigh_dp", sizeof(*t) +
		(size_t)size * sizeof(t->ent[0]), RTE_CACHE_LINE_SIZE,
		n->o.socket);
	if (t == NULL)
		return -ENOMEM;
	t->mask = size - 1;
	for (i = 0; i < n->n_vips; i++)
		dp_slot(t, fam(&n->vips[i]), pa_ip_bytes(&n->vips[i]))->flags |=
			PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_VIP;
	/* the LB's share of these; a port that has one too keeps the rest */
	if (cfg != NULL && cfg->lb.has_local_addr)
		dp_slot(t, 4, pa_ip_bytes(&cfg->lb.local_addr))->flags |=
			PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_LB_LOCAL;
	if (cfg != NULL && cfg->lb.has_local_addr6)
		dp_slot(t, 6, pa_ip_bytes(&cfg->lb.local_addr6))->flags |=
			PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_LB_LOCAL;
	for (i = 0; cfg != NULL && cfg->lb.fnat.present &&
	     i < cfg->lb.fnat.n_addrs; i++) {
		const struct pa_ip_addr *a = &cfg->lb.fnat.addrs[i];

		e = dp_slot(t, fam(a), pa_ip_bytes(a));
		e->flags |= PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_LB_POOL;
		e->pool_lo = cfg->lb.fnat.port_lo;
		e->pool_hi = cfg->lb.fnat.port_hi;
	}
	for (i = 0; i < n->n_ports; i++) {
		const struct pa_config_port *cp = n->port[i].cp;

		for (j = 0; cp != NULL && j < cp->n_addrs; j++) {
			e = dp_slot(t, fam(&cp->addrs[j].addr),
				pa_ip_bytes(&cp->addrs[j].addr));
			e->ours_ports |= 1u << i;
		}
		/* the kernel_if's link-local: the port's, like its addr */
		if (n->port[i].has_ll6)
			dp_slot(t, 6, n->port[i].ll6)->ours_ports |= 1u << i;
	}
	for (i = 0; i < n->n_pos; i++) {
		const struct neigh_ent *x = &n->ent[i];

		if (!x->used || x->target == 0)
			continue;
		dp_slot(t, x->key.family, x->key.addr)->watch_ports |=
			1u << x->key.port;
	}
	old = n->fast.dp;
	__atomic_store_n(&n->fast.dp, t, __ATOMIC_RELEASE);
	if (old == NULL)
		return 0;
	if (n->n_retired == RETIRED_MAX)
		retire_reap(n, true);
	if (n->n_retired == RETIRED_MAX) {
		rte_rcu_qsbr_synchronize(n->o.rcu, RTE_QSBR_THRID_INVALID);
		retire_reap(n, false);
	}
	n->retired[n->n_retired].dp = old;
	n->retired[n->n_retired].token = n->o.rcu != NULL ?
		rte_rcu_qsbr_start(n->o.rcu) : 0;
	n->n_retired++;
	if (n->o.rcu == NULL)
		retire_reap(n, false);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Targets: gateways and on-link backends                              */
/* ------------------------------------------------------------------ */

static void
want(struct pa_neigh *n, const struct pa_ip_addr *a, unsigned int pi,
		uint8_t what, uint64_t now)
{
	struct neigh_ent *e = ent_find(n, fam(a), pa_ip_bytes(a), pi);

	if (e == NULL) {
		e = ent_new(n, fam(a), pa_ip_bytes(a), pi, true, now);
		if (e == NULL)
			return;
		e->state = PA_NEIGH_INCOMPLETE;
		e->probes = 0;
	}
	e->want |= what;
}

/* Follow the configuration and the LB: which addresses each port
 * resolves; new targets are asked for at once, every target's MAC (or
 * its absence) is told to the LB again (new backends have fresh slots).
 * Only when services or backends change (pa_lb_config_version()): the
 * tables the health checks publish change no address, and a fleet of
 * 10,000 checked backends publishes several a second. */
static int
targets_refresh(struct pa_neigh *n, uint64_t now)
{
	struct pa_ip_addr *vips = NULL, *bes = NULL;
	unsigned int n_vips = 0, n_bes = 0, i, p;
	uint32_t k;
	int ret;

	n->lb_version = pa_lb_config_version(n->o.lb);
	ret = pa_lb_addresses(n->o.lb, &vips, &n_vips, &bes, &n_bes);
	if (ret != 0)
		return ret;
	free(n->vips);
	free(n->backends);
	n->vips = vips;
	n->n_vips = n_vips;
	n->backends = bes;
	n->n_backends = n_bes;

	for (k = 0; k < n->n_pos; k++)
		n->ent[k].want = 0;
	for (p = 0; p < n->n_ports; p++) {
		const struct pa_config_port *cp = n->port[p].cp;

		for (i = 0; cp != NULL && i < 2; i++)
			if (cp->has_gateway[i])
				want(n, &cp->gateway[i], p, TARGET_GATEWAY,
						now);
		for (i = 0; i < n_bes; i++)
			if (on_link(n, p, fam(&bes[i]), pa_ip_bytes(&bes[i])))
				want(n, &bes[i], p, TARGET_BACKEND, now);
	}
	for (k = 0; k < n->n_pos; k++) {
		struct neigh_ent *e = &n->ent[k];
		uint8_t gone;

		if (!e->used)
			continue;
		gone = e->target & ~e->want;
		if ((gone & TARGET_GATEWAY) && !(e->want & TARGET_GATEWAY)) {
			gateway_publish(n, n->port[e->key.port].port_id,
				e->key.family, NULL);
			pa_lb_gateway_set(n->o.lb, n->port[e->key.port].port_id,
				e->key.family == 6 ? AF_INET6 : AF_INET, NULL,
				false);
		}
		if (e->want != 0 && e->target == 0 && !usable(e) &&
		    e->probes == 0)
			start_incomplete(n, e, now);
		e->target = e->want;
		e->want = 0;
		if (e->target != 0)
			publish(n, e);
	}
	return dp_publish(n);
}

/* ------------------------------------------------------------------ */
/* Receiving                                                           */
/* ------------------------------------------------------------------ */

static void
handle_arp(struct pa_neigh *n, unsigned int pi, const struct pa_neigh_msg *m,
		uint64_t now)
{
	const struct neigh_port *p = &n->port[pi];
	const uint8_t *tags = n->frame + 12;
	uint16_t n_tags = (uint16_t)(m->l3_off - 14);
	bool gratuitous = memcmp(m->sender_ip, m->target_ip, 4) == 0;
	bool probe = memcmp(m->sender_ip, "\0\0\0\0", 4) == 0;
	struct neigh_ent *e;
	uint32_t len;

	if (m->type == PA_NEIGH_MSG_ARP_REQUEST)
		n->c.arp_requests_in++;
	else
		n->c.arp_replies_in++;
	if (!probe && is_ours(n, pi, 4, m->sender_ip)) {
		/* someone else uses our address */
		n->c.conflicts++;
		return;
	}
	if (memcmp(m->sender_mac, p->mac, 6) == 0) {
		n->c.invalid[PA_NEIGH_BAD_SENDER]++;
		return;
	}
	e = probe ? NULL : ent_find(n, 4, m->sender_ip, pi);
	if (is_ours(n, pi, 4, m->target_ip)) {
		if (m->type == PA_NEIGH_MSG_ARP_REQUEST) {
			len = pa_neigh_build_arp(n->out, sizeof(n->out), tags,
				n_tags, 2, m->sender_mac, p->mac, m->target_ip,
				m->sender_mac, m->sender_ip);
			if (send_frame(n, pi, n->out, len) == 0)
				n->c.arp_replies_out++;
			if (probe)
				return;
			/* a host that asks for us: known (stale) */
			if (e == NULL && on_link(n, pi, 4, m->sender_ip)) {
				e = ent_new(n, 4, m->sender_ip, pi, false, now);
				if (e != NULL)
					n->c.learned++;
			}
			if (e != NULL)
				learn(n, e, m->sender_mac, false, now);
			return;
		}
		/* a reply to us: only for what we asked */
		if (e == NULL) {
			n->c.unsolicited++;
			return;
		}
		learn(n, e, m->sender_mac, true, now);
		return;
	}
	if (gratuitous && e != NULL) {
		/* an announcement of a neighbour we track */
		learn(n, e, m->sender_mac, false, now);
		return;
	}
	if (gratuitous)
		n->c.unsolicited++;
	else
		n->c.not_ours++;
}

static void
handle_nd(struct pa_neigh *n, unsigned int pi, const struct pa_neigh_msg *m,
		uint64_t now)
{
	static const uint8_t all_nodes[16] = {
		0xff, 0x02, [15] = 0x01
	};
	static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	static const uint8_t zero[16];
	const struct neigh_port *p = &n->port[pi];
	const uint8_t *tags = n->frame + 12;
	uint16_t n_tags = (uint16_t)(m->l3_off - 14);
	bool dad = memcmp(m->sender_ip, zero, 16) == 0;
	struct neigh_ent *e;
	uint32_t len;

	if (m->type == PA_NEIGH_MSG_NS)
		n->c.ns_in++;
	else
		n->c.na_in++;
	if (!dad && is_ours(n, pi, 6, m->sender_ip)) {
		n->c.conflicts++;
		return;
	}
	if (m->has_mac && memcmp(m->sender_mac, p->mac, 6) == 0) {
		n->c.invalid[PA_NEIGH_BAD_SENDER]++;
		return;
	}
	if (m->type == PA_NEIGH_MSG_NS) {
		if (!is_ours(n, pi, 6, m->target_ip)) {
			n->c.not_ours++;
			return;
		}
		/* RFC 4861 7.2.4: solicited, override; a DAD probe gets an
		 * unsolicited answer to all nodes */
		len = pa_neigh_build_nd(n->out, sizeof(n->out), tags, n_tags,
			136, dad ? all_nodes_mac : (m->has_mac ? m->sender_mac :
			m->eth_src), p->mac, m->target_ip,
			dad ? all_nodes : m->sender_ip, m->target_ip,
			(uint8_t)(PA_NEIGH_NA_O | (dad ? 0 : PA_NEIGH_NA_S)),
			p->mac);
		if (send_frame(n, pi, n->out, len) == 0)
			n->c.na_out++;
		if (dad || !m->has_mac)
			return;
		e = ent_find(n, 6, m->sender_ip, pi);
		if (e == NULL && on_link(n, pi, 6, m->sender_ip)) {
			e = ent_new(n, 6, m->sender_ip, pi, false, now);
			if (e != NULL)
				n->c.learned++;
		}
		if (e != NULL)
			learn(n, e, m->sender_mac, false, now);
		return;
	}
	/* NA */
	if (is_ours(n, pi, 6, m->target_ip)) {
		n->c.conflicts++;
		return;
	}
	e = ent_find(n, 6, m->target_ip, pi);
	if (e == NULL) {
		n->c.unsolicited++;
		return;
	}
	if (!m->has_mac) {
		/* RFC 4861 7.2.5: nothing to learn without the option unless
		 * it confirms the MAC we have */
		if (e->has_mac && (m->nd_flags & PA_NEIGH_NA_S) &&
		    e->state != PA_NEIGH_INCOMPLETE)
			learn(n, e, e->mac, true, now);
		return;
	}
	if (e->has_mac && memcmp(e->mac, m->sender_mac, 6) != 0 &&
	    !(m->nd_flags & PA_NEIGH_NA_O) && e->state != PA_NEIGH_INCOMPLETE &&
	    e->state != PA_NEIGH_FAILED) {
		/* no override: keep the MAC we have */
		if (e->state == PA_NEIGH_REACHABLE) {
			e->state = PA_NEIGH_STALE;
			e->next_ms = now;
		}
		return;
	}
	learn(n, e, m->sender_mac, (m->nd_flags & PA_NEIGH_NA_S) != 0, now);
}

static void
handle(struct pa_neigh *n, struct rte_mbuf *m, uint64_t now)
{
	struct pa_neigh_msg msg;
	uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)FRAME_MAX);
	const uint8_t *d;
	int pi, ret;

	n->c.rx++;
	pi = n->o.ports != NULL ? pa_port_index(n->o.ports, m->port) : -1;
	if (pi < 0 || (unsigned int)pi >= n->n_ports) {
		n->c.unknown_port++;
		return;
	}
	d = rte_pktmbuf_read(m, 0, len, n->frame);
	if (d == NULL) {
		n->c.invalid[PA_NEIGH_BAD_TRUNCATED]++;
		return;
	}
	if (d != n->frame)
		memcpy(n->frame, d, len);
	ret = pa_neigh_parse(n->frame, len, &msg);
	if (ret < 0) {
		n->c.invalid[-ret]++;
		return;
	}
	if (msg.family == 4)
		handle_arp(n, (unsigned int)pi, &msg, now);
	else
		handle_nd(n, (unsigned int)pi, &msg, now);
}

/* A handled frame: to the capture when "local" is captured (the replay's
 * drops file, capture_start), else freed. A replay's tap waits: a frame
 * the full ring refuses is kept for the next poll (the outcome must not
 * depend on timing); live, it is freed and counted as lost. */
static void
dispose(struct pa_neigh *n, struct rte_mbuf *m)
{
	struct pa_capture_tap *t = n->o.capture;

	if (!pa_capture_wanted(t, PA_DROP_LOCAL)) {
		rte_pktmbuf_free(m);
		return;
	}
	if (n->n_pend == 0 && pa_capture_offer(t, m, PA_DROP_LOCAL))
		return;
	if (!pa_capture_should_wait(t)) {
		pa_capture_count_lost(t, PA_CAPTURE_CTRL_SLOT, PA_DROP_LOCAL);
		rte_pktmbuf_free(m);
		return;
	}
	n->pend[n->n_pend++] = m;
}

static void
pend_flush(struct pa_neigh *n)
{
	unsigned int k = 0;

	while (k < n->n_pend &&
	       pa_capture_offer(n->o.capture, n->pend[k], PA_DROP_LOCAL))
		k++;
	memmove(n->pend, n->pend + k, (n->n_pend - k) * sizeof(n->pend[0]));
	n->n_pend -= k;
}

/* ------------------------------------------------------------------ */
/* Timers                                                              */
/* ------------------------------------------------------------------ */

static void
fail(struct pa_neigh *n, struct neigh_ent *e, uint64_t now)
{
	bool was = usable(e);

	n->c.failed++;
	e->state = PA_NEIGH_FAILED;
	e->has_mac = false;
	e->probes = 0;
	e->updated_ms = now;
	if (e->target == 0) {
		ent_delete(n, e);
		return;
	}
	e->next_ms = now + n->o.failed_retry_ms;
	if (was)
		publish(n, e);
}

static void
timers(struct pa_neigh *n, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < n->n_pos; i++) {
		struct neigh_ent *e = &n->ent[i];

		if (!e->used)
			continue;
		switch (e->state) {
		case PA_NEIGH_INCOMPLETE:
			if (now < e->next_ms)
				break;
			if (e->probes < n->o.probes) {
				e->probes++;
				e->next_ms = now + n->o.retrans_ms;
				solicit(n, e, false);
			} else {
				fail(n, e, now);
			}
			break;
		case PA_NEIGH_REACHABLE:
			if (now - e->updated_ms < n->o.reachable_ms)
				break;
			e->state = PA_NEIGH_STALE;
			e->next_ms = now;
			/* fall through */
		case PA_NEIGH_STALE:
			if (e->target != 0) {
				if (now < e->next_ms)
					break;
				e->state = PA_NEIGH_PROBE;
				e->probes = 1;
				e->next_ms = now + n->o.retrans_ms;
				solicit(n, e, true);
			} else if (now - e->updated_ms >= n->o.gc_ms) {
				ent_delete(n, e);
			}
			break;
		case PA_NEIGH_PROBE:
			if (now < e->next_ms)
				break;
			if (e->probes < n->o.probes) {
				e->probes++;
				e->next_ms = now + n->o.retrans_ms;
				solicit(n, e, true);
			} else {
				fail(n, e, now);
			}
			break;
		case PA_NEIGH_FAILED:
			if (e->target == 0)
				ent_delete(n, e);
			else if (now >= e->next_ms)
				start_incomplete(n, e, now);
			break;
		default:
			break;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Life cycle and poll                                                 */
/* ------------------------------------------------------------------ */

unsigned int
pa_neigh_poll(struct pa_neigh *n, uint64_t now_ms)
{
	struct rte_mbuf *pkts[POLL_BURST];
	unsigned int got, i, total = 0;

	if (n == NULL)
		return 0;
	pthread_mutex_lock(&n->lock);
	if (pa_lb_config_version(n->o.lb) != n->lb_version &&
	    targets_refresh(n, now_ms) != 0)
		NEIGH_LOG(WARNING, "out of memory following the LB's changes");
	if (n->n_pend != 0)
		pend_flush(n);
	while (total < POLL_MAX && n->n_pend + POLL_BURST <= POLL_MAX) {
		got = rte_ring_sc_dequeue_burst(n->fast.rx, (void **)pkts,
			POLL_BURST, NULL);
		if (got == 0)
			break;
		for (i = 0; i < got; i++) {
			handle(n, pkts[i], now_ms);
			dispose(n, pkts[i]);
		}
		total += got;
	}
	if (!n->o.replay)
		timers(n, now_ms);
	if (n->n_retired != 0)
		retire_reap(n, false);
	pthread_mutex_unlock(&n->lock);
	return total;
}

bool
pa_neigh_idle(struct pa_neigh *n)
{
	unsigned int i;
	bool idle;

	if (n == NULL)
		return true;
	pthread_mutex_lock(&n->lock);
	idle = rte_ring_empty(n->fast.rx) && n->n_pend == 0;
	for (i = 0; i < n->n_ports && idle; i++)
		if (n->port[i].tx != NULL && !rte_ring_empty(n->port[i].tx))
			idle = false;
	pthread_mutex_unlock(&n->lock);
	return idle;
}

struct rte_ring *
pa_neigh_rx_ring(const struct pa_neigh *n)
{
	return n->fast.rx;
}

struct rte_ring *
pa_neigh_tx_ring(const struct pa_neigh *n, unsigned int port_index)
{
	return port_index < n->n_ports ? n->port[port_index].tx : NULL;
}

const struct pa_neigh_fast *
pa_neigh_fast(const struct pa_neigh *n)
{
	return &n->fast;
}

struct pa_neigh *
pa_neigh_create(const struct pa_neigh_opts *o, uint64_t now_ms, char *err,
		size_t err_len)
{
	struct rte_hash_parameters hp = { 0 };
	char name[RTE_RING_NAMESIZE];
	struct pa_neigh *n;
	unsigned int i, id = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);

	n = calloc(1, sizeof(*n));
	if (n == NULL) {
		pa_seterr(err, err_len, "neighbours: out of memory");
		return NULL;
	}
	pthread_mutex_init(&n->lock, NULL);
	n->o = *o;
	n->o.socket = o->socket < 0 ? 0 : o->socket;
	n->o.reachable_ms = o->reachable_ms != 0 ? o->reachable_ms :
		PA_NEIGH_DEF_REACHABLE_MS;
	n->o.retrans_ms = o->retrans_ms != 0 ? o->retrans_ms :
		PA_NEIGH_DEF_RETRANS_MS;
	n->o.probes = o->probes != 0 ? o->probes : PA_NEIGH_DEF_PROBES;
	n->o.failed_retry_ms = o->failed_retry_ms != 0 ? o->failed_retry_ms :
		PA_NEIGH_DEF_FAILED_RETRY_MS;
	n->o.gc_ms = o->gc_ms != 0 ? o->gc_ms : PA_NEIGH_DEF_GC_MS;
	n->o.max_entries = o->max_entries != 0 ? o->max_entries :
		PA_NEIGH_DEF_MAX_ENTRIES;

	snprintf(name, sizeof(name), "pa_neigh_rx%u", id);
	n->fast.rx = rte_ring_create(name, PA_NEIGH_RX_RING, n->o.socket,
		RING_F_SC_DEQ);
	if (n->fast.rx == NULL) {
		pa_seterr(err, err_len, "neighbours: ring %s: %s", name,
			rte_strerror(rte_errno));
		goto fail;
	}
	n->n_ports = o->ports != NULL ? RTE_MIN(o->ports->n,
		(unsigned int)PA_CONFIG_MAX_PORTS) : 0;
	for (i = 0; i < n->n_ports; i++) {
		const struct pa_port *pp = &o->ports->port[i];
		struct neigh_port *p = &n->port[i];

		p->port_id = pp->port_id;
		snprintf(p->name, sizeof(p->name), "%s", pp->name);
		memcpy(p->mac, pp->mac.addr_bytes, 6);
		p->pool = pp->pool;
		p->has_ll6 = pp->has_ll6;
		memcpy(p->ll6, pp->ll6, 16);
		p->cp = o->cfg != NULL && i < o->cfg->n_ports ?
			&o->cfg->ports[i] : NULL;
		if (pp->port_id < RTE_MAX_ETHPORTS) {
			struct pa_neigh_port_l2 *l2 = &n->fast.l2[pp->port_id];

			l2->known = true;
			l2->mac = pp->mac;
			if (p->cp != NULL && p->cp->has_gateway_mac) {
				l2->has_gw = true;
				memcpy(l2->gw.addr_bytes, p->cp->gateway_mac,
					RTE_ETHER_ADDR_LEN);
			}
		}
		snprintf(name, sizeof(name), "pa_neigh_tx%u_%u", id, i);
		p->tx = rte_ring_create(name, PA_NEIGH_TX_RING, pp->socket < 0 ?
			0 : pp->socket, RING_F_SC_DEQ);
		if (p->tx == NULL) {
			pa_seterr(err, err_len, "neighbours: ring %s: %s", name,
				rte_strerror(rte_errno));
			goto fail;
		}
	}
	snprintf(name, sizeof(name), "pa_neigh_%u", id);
	hp.name = name;
	hp.entries = RTE_MAX(n->o.max_entries, 8u);
	hp.key_len = sizeof(struct neigh_key);
	hp.socket_id = n->o.socket;
	n->h = rte_hash_create(&hp);
	if (n->h == NULL) {
		pa_seterr(err, err_len, "neighbours: cache of %u entries: %s",
			n->o.max_entries, rte_strerror(rte_errno));
		goto fail;
	}
	n->n_pos = (uint32_t)rte_hash_max_key_id(n->h) + 1;
	n->ent = calloc(n->n_pos, sizeof(*n->ent));
	if (n->ent == NULL) {
		pa_seterr(err, err_len, "neighbours: out of memory");
		goto fail;
	}
	pthread_mutex_lock(&n->lock);
	if (targets_refresh(n, now_ms) != 0) {
		pthread_mutex_unlock(&n->lock);
		pa_seterr(err, err_len, "neighbours: out of memory");
		goto fail;
	}
	pthread_mutex_unlock(&n->lock);
	NEIGH_LOG(INFO, "%u ports, %u VIPs answered, %u targets, cache of %u",
		n->n_ports, n->n_vips, n->n_used, n->o.max_entries);
	return n;
fail:
	pa_neigh_destroy(n);
	return NULL;
}

static void
ring_free_all(struct rte_ring *r)
{
	struct rte_mbuf *m;

	if (r == NULL)
		return;
	while (rte_ring_dequeue(r, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(r);
}

void
pa_neigh_destroy(struct pa_neigh *n)
{
	unsigned int i;

	if (n == NULL)
		return;
	ring_free_all(n->fast.rx);
	rte_pktmbuf_free_bulk(n->pend, n->n_pend);
	for (i = 0; i < n->n_ports; i++)
		ring_free_all(n->port[i].tx);
	for (i = 0; i < n->n_retired; i++)
		rte_free(n->retired[i].dp);
	rte_free(n->fast.dp);
	rte_hash_free(n->h);
	free(n->ent);
	free(n->vips);
	free(n->backends);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

/* ------------------------------------------------------------------ */
/* Views                                                               */
/* ------------------------------------------------------------------ */

int
pa_neigh_lookup(struct pa_neigh *n, const struct pa_ip_addr *addr,
		unsigned int port_index, enum pa_neigh_state *state,
		uint8_t mac[6])
{
	struct neigh_ent *e;
	int ret = -ENOENT;

	pthread_mutex_lock(&n->lock);
	e = ent_find(n, fam(addr), pa_ip_bytes(addr), port_index);
	if (e != NULL) {
		*state = (enum pa_neigh_state)e->state;
		if (mac != NULL) {
			if (e->has_mac)
				memcpy(mac, e->mac, 6);
			else
				memset(mac, 0, 6);
		}
		ret = 0;
	}
	pthread_mutex_unlock(&n->lock);
	return ret;
}

static int
ent_cmp(const void *a, const void *b)
{
	const struct neigh_ent *x = *(const struct neigh_ent *const *)a;
	const struct neigh_ent *y = *(const struct neigh_ent *const *)b;

	if (x->key.port != y->key.port)
		return x->key.port < y->key.port ? -1 : 1;
	if (x->key.family != y->key.family)
		return x->key.family < y->key.family ? -1 : 1;
	return memcmp(x->key.addr, y->key.addr, 16);
}

json_t *
pa_neigh_list_json(struct pa_neigh *n, uint64_t now_ms)
{
	struct neigh_ent **v = NULL;
	json_t *arr = json_array(), *o;
	char ip[INET6_ADDRSTRLEN], mac[24];
	struct pa_ip_addr a;
	unsigned int k = 0, i;

	if (arr == NULL || n == NULL)
		return arr;
	pthread_mutex_lock(&n->lock);
	if (n->n_used > 0) {
		v = calloc(n->n_used, sizeof(*v));
		if (v == NULL)
			goto nomem;
	}
	for (i = 0; i < n->n_pos && k < n->n_used; i++)
		if (n->ent[i].used)
			v[k++] = &n->ent[i];
	if (k > 1)
		qsort(v, k, sizeof(*v), ent_cmp);
	for (i = 0; i < k; i++) {
		const struct neigh_ent *e = v[i];

		key_addr(&e->key, &a);
		pa_net_format_ip(&a, ip, sizeof(ip));
		pa_net_format_mac(e->mac, mac, sizeof(mac));
		o = json_pack("{s:s, s:o, s:s, s:s, s:f, s:o, s:i}",
			"address", ip,
			"mac", e->has_mac ? json_string(mac) : json_null(),
			"port", n->port[e->key.port].name,
			"state", pa_neigh_state_name(
				(enum pa_neigh_state)e->state),
			"age", now_ms >= e->updated_ms ?
				(double)(now_ms - e->updated_ms) / 1000.0 : 0.0,
			"target", e->target & TARGET_GATEWAY ?
				json_string("gateway") :
				e->target & TARGET_BACKEND ?
				json_string("backend") : json_null(),
			"probes", (int)e->probes);
		if (o == NULL || json_array_append_new(arr, o) != 0)
			goto nomem;
	}
	pthread_mutex_unlock(&n->lock);
	free(v);
	return arr;
nomem:
	pthread_mutex_unlock(&n->lock);
	free(v);
	json_decref(arr);
	return NULL;
}

void
pa_neigh_snapshot(struct pa_neigh *n, const struct pa_lcore_stats *sum,
		struct pa_neigh_snapshot *s)
{
	struct neigh_ctr c;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&n->lock);
	c = n->c;
	s->entries = n->n_used;
	for (i = 0; i < n->n_pos; i++)
		if (n->ent[i].used && n->ent[i].state < PA_NEIGH_STATE_MAX)
			s->states[n->ent[i].state]++;
	pthread_mutex_unlock(&n->lock);
	s->rx = c.rx;
	s->arp_requests_in = c.arp_requests_in;
	s->arp_replies_in = c.arp_replies_in;
	s->ns_in = c.ns_in;
	s->na_in = c.na_in;
	s->arp_replies_out = c.arp_replies_out;
	s->arp_requests_out = c.arp_requests_out;
	s->na_out = c.na_out;
	s->ns_out = c.ns_out;
	s->learned = c.learned;
	s->resolved = c.resolved;
	s->failed = c.failed;
	s->unsolicited = c.unsolicited;
	s->conflicts = c.conflicts;
	s->not_ours = c.not_ours;
	s->cache_full = c.cache_full;
	s->no_source_address = c.no_source;
	s->tx_no_mbuf = c.tx_no_mbuf;
	s->tx_ring_full = c.tx_ring_full;
	s->unknown_port = c.unknown_port;
	memcpy(s->invalid, c.invalid, sizeof(s->invalid));
	if (sum != NULL) {
		s->has_lcore_tx = true;
		s->tx_sent = sum->ctrl_tx_packets;
		s->tx_dropped = sum->ctrl_tx_dropped;
	}
}
