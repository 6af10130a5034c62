/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The blocklist's life cycle: the control-side set, building and
 * publishing tables under RCU, the per-lcore hit counters, and the data
 * path's burst lookup.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>

#include "blocklist_priv.h"
#include "pa_offload.h"
#include "pa_pkt.h"

RTE_LOG_REGISTER(pa_blocklist_logtype, pa.blocklist, INFO);

#define BL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_blocklist_logtype, \
		"pa.blocklist: " fmt "\n", ##__VA_ARGS__)

struct bl_lcore {
	uint64_t hits;
} __rte_cache_aligned;

struct pa_blocklist {
	struct pa_bl_table *live;		/* data path reads this */
	struct bl_lcore *lc;			/* [n_lcores] */
	unsigned int n_lcores;
	struct rte_rcu_qsbr *rcu;
	uint32_t max;
	pthread_mutex_t lock;
	struct pa_bl_set set;			/* what live holds */
	struct pa_offload *off;			/* NIC rules, or NULL */
	uint64_t version;
	double build_ms;
	double update_ms;
};

struct pa_blocklist *
pa_blocklist_create(const struct pa_blocklist_opts *o)
{
	struct pa_blocklist *bl;

	if (o->n_lcores == 0) {
		errno = EINVAL;
		return NULL;
	}
	bl = calloc(1, sizeof(*bl));
	if (bl == NULL)
		return NULL;
	if (posix_memalign((void **)&bl->lc, RTE_CACHE_LINE_SIZE,
			sizeof(*bl->lc) * o->n_lcores) != 0) {
		free(bl);
		errno = ENOMEM;
		return NULL;
	}
	memset(bl->lc, 0, sizeof(*bl->lc) * o->n_lcores);
	bl->n_lcores = o->n_lcores;
	bl->rcu = o->rcu;
	bl->max = o->max_prefixes != 0 ? o->max_prefixes : PA_BLOCKLIST_MAX;
	pthread_mutex_init(&bl->lock, NULL);
	return bl;
}

void
pa_blocklist_destroy(struct pa_blocklist *bl)
{
	if (bl == NULL)
		return;
	pa_bl_table_free(bl->live);
	pa_bl_set_free(&bl->set);
	pthread_mutex_destroy(&bl->lock);
	free(bl->lc);
	free(bl);
}

static double
ms_since(uint64_t t0)
{
	uint64_t hz = rte_get_tsc_hz();

	/* 0 before the EAL is up (unit tests) */
	return hz == 0 ? 0.0 : (double)(rte_get_tsc_cycles() - t0) * 1000.0 /
		(double)hz;
}

/* Build a table of @p s, publish it, free the old one after quiescence;
 * the live set becomes @p s (taken over). Lock held. */
static int
commit(struct pa_blocklist *bl, struct pa_bl_set *s, char *err,
		size_t err_len)
{
	struct pa_bl_table *t, *old = bl->live;
	uint64_t t0 = rte_get_tsc_cycles();

	if (pa_bl_set_count(s) > bl->max) {
		snprintf(err, err_len,
			"%u prefixes: more than the blocklist's limit of %u",
			pa_bl_set_count(s), bl->max);
		pa_bl_set_free(s);
		return -ENOSPC;
	}
	t = pa_bl_table_build(s);
	if (t == NULL) {
		snprintf(err, err_len, "out of memory building the blocklist");
		pa_bl_set_free(s);
		return -ENOMEM;
	}
	bl->build_ms = ms_since(t0);
	/* the NIC never drops what software no longer would */
	pa_offload_blocklist_pre(bl->off);
	__atomic_store_n(&bl->live, t, __ATOMIC_RELEASE);
	if (bl->rcu != NULL)
		rte_rcu_qsbr_synchronize(bl->rcu, RTE_QSBR_THRID_INVALID);
	pa_bl_table_free(old);
	pa_bl_set_free(&bl->set);
	bl->set = *s;
	memset(s, 0, sizeof(*s));
	pa_offload_blocklist_post(bl->off, &bl->set);
	bl->version++;
	bl->update_ms = ms_since(t0);
	BL_LOG(DEBUG, "version %" PRIu64 ": %u prefixes, %zu bytes, built in %.1f ms",
		bl->version, pa_bl_set_count(&bl->set), t->memory,
		bl->build_ms);
	return 0;
}

int
pa_blocklist_replace(struct pa_blocklist *bl, struct pa_bl_set *s, char *err,
		size_t err_len)
{
	int ret;

	pthread_mutex_lock(&bl->lock);
	ret = commit(bl, s, err, err_len);
	pthread_mutex_unlock(&bl->lock);
	return ret;
}

int
pa_blocklist_replace_file(struct pa_blocklist *bl, const char *path,
		char *err, size_t err_len)
{
	struct pa_bl_set s;
	int ret;

	ret = pa_bl_read_file(path, bl->max, &s, err, err_len);
	if (ret != 0)
		return ret;
	return pa_blocklist_replace(bl, &s, err, err_len);
}

int
pa_blocklist_add(struct pa_blocklist *bl, const struct pa_bl_set *s,
		char *err, size_t err_len)
{
	struct pa_bl_set u;
	int ret;

	pthread_mutex_lock(&bl->lock);
	ret = pa_bl_set_union(&bl->set, s, &u);
	if (ret != 0)
		snprintf(err, err_len, "out of memory");
	else
		ret = commit(bl, &u, err, err_len);
	pthread_mutex_unlock(&bl->lock);
	return ret;
}

int
pa_blocklist_delete(struct pa_blocklist *bl, const struct pa_bl_set *s,
		char *err, size_t err_len)
{
	struct pa_bl_set d;
	int ret;

	pthread_mutex_lock(&bl->lock);
	ret = pa_bl_set_minus(&bl->set, s, &d);
	if (ret != 0)
		snprintf(err, err_len, "out of memory");
	else
		ret = commit(bl, &d, err, err_len);
	pthread_mutex_unlock(&bl->lock);
	return ret;
}

static uint64_t
hits_sum(const struct pa_blocklist *bl)
{
	uint64_t h = 0;
	unsigned int l;

	for (l = 0; l < bl->n_lcores; l++)
		h += __atomic_load_n(&bl->lc[l].hits, __ATOMIC_RELAXED);
	return h;
}

void
pa_blocklist_info(struct pa_blocklist *bl, struct pa_blocklist_info *i)
{
	memset(i, 0, sizeof(*i));
	pthread_mutex_lock(&bl->lock);
	i->prefixes4 = bl->set.n4;
	i->prefixes6 = bl->set.n6;
	i->prefixes = pa_bl_set_count(&bl->set);
	i->max_prefixes = bl->max;
	i->memory_bytes = pa_bl_table_memory(bl->live);
	i->set_bytes = (uint64_t)bl->set.cap4 * sizeof(*bl->set.v4) +
		(uint64_t)bl->set.cap6 * sizeof(*bl->set.v6);
	i->version = bl->version;
	i->build_ms = bl->build_ms;
	i->update_ms = bl->update_ms;
	pthread_mutex_unlock(&bl->lock);
	i->hits = hits_sum(bl);
}

json_t *
pa_blocklist_json(struct pa_blocklist *bl, uint32_t limit)
{
	struct pa_blocklist_info in;
	struct pa_ip_prefix p;
	char buf[PA_NET_PREFIX_STRLEN];
	json_t *o, *sample;
	uint32_t i, n;

	sample = json_array();
	if (sample == NULL)
		return NULL;
	pthread_mutex_lock(&bl->lock);
	n = RTE_MIN(limit, pa_bl_set_count(&bl->set));
	for (i = 0; i < n; i++) {
		pa_bl_set_get(&bl->set, i, &p);
		if (json_array_append_new(sample, json_string(
				pa_net_format_prefix(&p, buf, sizeof(buf)))) != 0)
			break;
	}
	pthread_mutex_unlock(&bl->lock);
	pa_blocklist_info(bl, &in);
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:o}",
		"prefixes", (json_int_t)in.prefixes,
		"prefixes4", (json_int_t)in.prefixes4,
		"prefixes6", (json_int_t)in.prefixes6,
		"max_prefixes", (json_int_t)in.max_prefixes,
		"hits", (json_int_t)in.hits,
		"memory_bytes", (json_int_t)in.memory_bytes,
		"set_bytes", (json_int_t)in.set_bytes,
		"version", (json_int_t)in.version,
		"build_ms", in.build_ms,
		"update_ms", in.update_ms,
		"sample", sample);
	return o;
}

bool
pa_blocklist_trace(struct pa_blocklist *bl, const struct pa_ip_addr *a)
{
	const struct pa_bl_table *t;
	bool hit = false;

	pthread_mutex_lock(&bl->lock);
	t = bl->live;
	if (t != NULL) {
		if (a->family == AF_INET)
			hit = bl_lookup4(t, rte_be_to_cpu_32(a->v4.s_addr));
		else if (a->family == AF_INET6)
			hit = pa_bl_table_lookup6(t, a->v6.s6_addr);
	}
	pthread_mutex_unlock(&bl->lock);
	return hit;
}

int
pa_blocklist_export(struct pa_blocklist *bl, struct pa_bl_set *out)
{
	int ret = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&bl->lock);
	out->cap4 = bl->set.n4 + 1;
	out->cap6 = bl->set.n6 + 1;
	out->v4 = malloc(sizeof(*out->v4) * out->cap4);
	out->v6 = malloc(sizeof(*out->v6) * out->cap6);
	if (out->v4 == NULL || out->v6 == NULL) {
		pa_bl_set_free(out);
		ret = -ENOMEM;
	} else {
		out->n4 = bl->set.n4;
		out->n6 = bl->set.n6;
		if (out->n4 != 0)
			memcpy(out->v4, bl->set.v4, sizeof(*out->v4) * out->n4);
		if (out->n6 != 0)
			memcpy(out->v6, bl->set.v6, sizeof(*out->v6) * out->n6);
	}
	pthread_mutex_unlock(&bl->lock);
	return ret;
}

void
pa_blocklist_set_offload(struct pa_blocklist *bl, struct pa_offload *off)
{
	pthread_mutex_lock(&bl->lock);
	if (bl->off != NULL && off != bl->off)
		pa_offload_blocklist_pre(bl->off);
	bl->off = off;
	pa_offload_blocklist_post(off, &bl->set);
	pthread_mutex_unlock(&bl->lock);
}

bool
pa_blocklist_empty(const struct pa_blocklist *bl)
{
	const struct pa_bl_table *t = __atomic_load_n(&bl->live,
		__ATOMIC_ACQUIRE);

	return t == NULL || (t->n4 == 0 && t->n6 == 0);
}

/* ------------------------------------------------------------------ */
/* Data path                                                           */
/* ------------------------------------------------------------------ */

/* Where a packet's source is (v4: host order in lo; v6: hi, lo), or
 * family 0 for non-IP and unreadable headers. */
struct bl_key {
	uint64_t hi, lo;
	uint8_t family;
};

uint16_t
pa_blocklist_filter(struct pa_blocklist *bl, unsigned int lidx,
		struct rte_mbuf **pkts, uint16_t n, uint8_t *hit)
{
	const struct pa_bl_table *t = __atomic_load_n(&bl->live,
		__ATOMIC_ACQUIRE);
	struct bl_key k[PA_BLOCKLIST_BURST_MAX];
	uint16_t i, hits = 0;

	if (unlikely(t == NULL || n > PA_BLOCKLIST_BURST_MAX)) {
		memset(hit, 0, n);
		return 0;
	}
	/* pass 1: the sources, and a prefetch of the word each looks up
	 * first, so that a burst's cache misses overlap */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct pa_pkt_meta *meta = pa_pkt_meta(m);
		uint8_t buf[16];
		const uint8_t *p;

		k[i].family = 0;
		if (meta->flags & PA_PKT_F_IPV4) {
			uint32_t a;

			p = rte_pktmbuf_read(m, meta->l3_off + 12u, 4, buf);
			if (unlikely(p == NULL))
				continue;
			memcpy(&a, p, 4);
			k[i].lo = rte_be_to_cpu_32(a);
			k[i].family = 4;
			if (t->w4 != NULL)
				rte_prefetch0(&t->w4[k[i].lo >> 14]);
		} else if (meta->flags & PA_PKT_F_IPV6) {
			p = rte_pktmbuf_read(m, meta->l3_off + 8u, 16, buf);
			if (unlikely(p == NULL))
				continue;
			bl6_split(p, &k[i].hi, &k[i].lo);
			k[i].family = 6;
			if (t->filter6 != NULL)
				rte_prefetch0(&t->filter6[k[i].hi >>
					(64 - BL6_FILTER_BITS + 6)]);
		}
	}
	/* pass 2 (IPv6 only): where the filter lets a source through, a
	 * prefetch of its slot in each length's table */
	for (i = 0; t->n_h6 != 0 && i < n; i++) {
		uint32_t top;
		unsigned int j;

		if (k[i].family != 6)
			continue;
		top = (uint32_t)(k[i].hi >> (64 - BL6_FILTER_BITS));
		if (!((t->filter6[top >> 6] >> (top & 63)) & 1))
			continue;
		for (j = 0; j < t->n_h6; j++) {
			const struct bl6_hash *h = &t->h6[j];

			rte_prefetch0(&h->keys[bl6_hash_fn(k[i].hi & h->mask_hi,
				k[i].lo & h->mask_lo) & h->mask]);
		}
	}
	/* pass 3: the lookups */
	for (i = 0; i < n; i++) {
		uint8_t h = 0;

		if (k[i].family == 4)
			h = bl_lookup4(t, (uint32_t)k[i].lo);
		else if (k[i].family == 6)
			h = bl_lookup6(t, k[i].hi, k[i].lo);
		hit[i] = h;
		hits += h;
	}
	bl->lc[lidx].hits += hits;
	return hits;
}
