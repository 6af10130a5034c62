/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load balancer's life cycle (create, per-lcore flow tables and
 * workers, destroy) and what it is told of the network: backends' and
 * gateways' next hops, and the addresses it answers for. Services and
 * backends are lb_update.c, the tables it publishes lb_build.c, health
 * lb_hc.c, trace lb_trace.c, the views lb_stats.c, the data path lb_dp.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "lb_priv.h"
#include "pa_err.h"

RTE_LOG_REGISTER(pa_lb_logtype, pa.lb, INFO);

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
	    w->svc_ctr == NULL || lb_fnat_worker_init(lb, w) != 0 ||
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
	lb_fnat_worker_fini(w);
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
int
lb_tables_make(struct pa_lb *lb, char *err, size_t err_len)
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

/* What pa_lb_fnat_owner() reads of the pool. */
static void
fnat_steering(struct pa_lb *lb)
{
	const struct lb_fnat_pool *p = &lb->fnat;
	struct pa_lb_dp *d = &lb->dp;
	unsigned int i;

	if (p->n_addrs == 0)
		return;
	d->fnat_lo = p->lo;
	d->fnat_hi = p->hi;
	d->fnat_share = p->share;
	d->fnat_n_lb = (uint8_t)p->n_lb;
	memcpy(d->fnat_lcore, lb->rank_lcore, sizeof(d->fnat_lcore));
	for (i = 0; i < p->n_addrs; i++) {
		if (p->addr[i].family == 4)
			memcpy(&d->fnat_v4[d->fnat_n4++], p->addr[i].addr, 4);
		else
			memcpy(d->fnat_v6[d->fnat_n6++], p->addr[i].addr, 16);
	}
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
	lb->hist_tsc = (uint64_t)lc->table_history_s * lb->tsc_hz;
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
	for (i = 0, n_lb = 0; i < o->n_lcores; i++)
		if (lb->runs_lb[i])
			lb->rank_lcore[n_lb++] = (uint8_t)i;
	if (lb_fnat_init(lb, &lc->fnat, err, err_len) != 0)
		goto fail;
	fnat_steering(lb);
	per = lb->n_lb > 0 ? lb->ft.size / lb->n_lb : 0;
	if (per < PA_LB_MIN_LCORE_FLOWS)
		per = PA_LB_MIN_LCORE_FLOWS;
	lb->per_lcore = per;
	/* an empty table, so the data path always has one */
	if (lb_commit(lb, 0, NULL, true, err, err_len) != 0)
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
			lb_ctl_clear(lb, &lb->ctl[i]);
	if (lb->live != NULL) {
		for (i = 0; i < PA_LB_MAX_SERVICES; i++)
			lb_svc_free(lb->live->svc[i]);
		rte_free(lb->live->svc_map);
		rte_free(lb->live->rev);
		rte_free(lb->live);
	}
	if (!exiting) {
		for (i = 0; i < PA_LB_MAX_LCORES; i++)
			worker_free(lb->w[i]);
		rte_hash_free(lb->nat);
		lb_fnat_fini(lb);
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
