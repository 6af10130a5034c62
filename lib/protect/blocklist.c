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
#include <time.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>

#include "blocklist_priv.h"
#include "pa_clock.h"
#include "pa_err.h"
#include "pa_offload.h"
#include "pa_pkt.h"

RTE_LOG_REGISTER(pa_blocklist_logtype, pa.blocklist, INFO);

#define BL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_blocklist_logtype, \
		"pa.blocklist: " fmt "\n", ##__VA_ARGS__)

struct bl_lcore {
	uint64_t hits;
} __rte_cache_aligned;

/* Past this many prefixes in the delta (added and deleted together), a
 * change rebuilds the base at once. */
#define BL_DELTA_MAX	16384u

struct pa_blocklist {
	struct pa_blocklist_dp dp;		/* first: pa_blocklist_empty() */
	struct bl_view *live;			/* data path reads this */
	struct bl_lcore *lc;			/* [n_lcores] */
	unsigned int n_lcores;
	struct rte_rcu_qsbr *rcu;
	uint32_t max;
	pthread_mutex_t lock;
	pthread_cond_t wake;			/* the merger's */
	/* the live set is (base - del) + add; add and base disjoint, del
	 * in base */
	struct pa_bl_set set;			/* base */
	struct pa_bl_set add, del;		/* the delta */
	struct pa_bl_table *base;		/* built from set */
	struct bl_delta *delta;			/* of add, del; or NULL */
	struct pa_offload *off;			/* NIC rules, or NULL */
	uint64_t version;
	uint64_t base_gen;			/* bumped when set changes */
	uint64_t merges;
	double build_ms;
	double update_ms;
	double merge_ms;
	uint32_t merge_delay_ms;
	uint64_t last_change_ns;		/* CLOCK_MONOTONIC */
	pthread_t merger;
	bool merger_running, merger_stop;
};

static void *merger_main(void *arg);

struct pa_blocklist *
pa_blocklist_create(const struct pa_blocklist_opts *o)
{
	struct pa_blocklist *bl;
	pthread_condattr_t ca;

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
	/* the base of the first change when it is an add */
	bl->base = pa_bl_table_build(&bl->set);
	if (bl->base == NULL) {
		free(bl->lc);
		free(bl);
		errno = ENOMEM;
		return NULL;
	}
	bl->n_lcores = o->n_lcores;
	bl->rcu = o->rcu;
	bl->max = o->max_prefixes != 0 ? o->max_prefixes : PA_BLOCKLIST_MAX;
	bl->merge_delay_ms = o->merge_delay_ms != 0 ? o->merge_delay_ms :
		PA_BLOCKLIST_MERGE_DELAY_MS;
	pthread_mutex_init(&bl->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&bl->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (!o->no_merger) {
		/* a control thread (off the data-path cores) once the EAL is
		 * up; a plain one before (unit tests) */
		if (rte_ctrl_thread_create(&bl->merger, "pa-bl-merge", NULL,
				merger_main, bl) == 0 ||
		    pthread_create(&bl->merger, NULL, merger_main, bl) == 0)
			bl->merger_running = true;
		else
			BL_LOG(WARNING, "no background merge: changes past %u prefixes rebuild the whole table",
				BL_DELTA_MAX);
	}
	return bl;
}

void
pa_blocklist_stop_merger(struct pa_blocklist *bl)
{
	if (bl == NULL || !bl->merger_running)
		return;
	pthread_mutex_lock(&bl->lock);
	bl->merger_stop = true;
	pthread_cond_signal(&bl->wake);
	pthread_mutex_unlock(&bl->lock);
	pthread_join(bl->merger, NULL);
	bl->merger_running = false;
}

void
pa_blocklist_destroy(struct pa_blocklist *bl)
{
	if (bl == NULL)
		return;
	pa_blocklist_stop_merger(bl);
	free(bl->live);
	pa_bl_table_free(bl->base);
	bl_delta_free(bl->delta);
	pa_bl_set_free(&bl->set);
	pa_bl_set_free(&bl->add);
	pa_bl_set_free(&bl->del);
	pthread_cond_destroy(&bl->wake);
	pthread_mutex_destroy(&bl->lock);
	free(bl->lc);
	free(bl);
}

static double
ms_since(uint64_t t0)
{
	return (double)(pa_clock_ns() - t0) / 1e6;
}

static uint32_t
live_count4(const struct pa_blocklist *bl)
{
	return bl->set.n4 - bl->del.n4 + bl->add.n4;
}

static uint32_t
live_count6(const struct pa_blocklist *bl)
{
	return bl->set.n6 - bl->del.n6 + bl->add.n6;
}

/* (base - del) + add into @p out. -ENOMEM. */
static int
live_set(const struct pa_bl_set *b, const struct pa_bl_set *a,
		const struct pa_bl_set *d, struct pa_bl_set *out)
{
	struct pa_bl_set tmp;
	int ret;

	ret = pa_bl_set_minus(b, d, &tmp);
	if (ret != 0)
		return ret;
	ret = pa_bl_set_union(&tmp, a, out);
	pa_bl_set_free(&tmp);
	return ret;
}

/* The first @p limit prefixes of the live set (of each family) into
 * @p out: from the first limit + |del| of the base, and add. Lock held.
 * -ENOMEM. */
static int
live_head(const struct pa_blocklist *bl, uint32_t limit, struct pa_bl_set *out)
{
	struct pa_bl_set head = bl->set;

	head.n4 = (uint32_t)RTE_MIN((uint64_t)head.n4,
		(uint64_t)limit + bl->del.n4);
	head.n6 = (uint32_t)RTE_MIN((uint64_t)head.n6,
		(uint64_t)limit + bl->del.n6);
	return live_set(&head, &bl->add, &bl->del, out);
}

/* The NIC's rules follow the live set (a copy of as much of it as the
 * NICs take, only when some port takes any). Lock held. */
static void
offload_post(struct pa_blocklist *bl)
{
	uint32_t want = pa_offload_blocklist_want(bl->off);
	struct pa_bl_set s;

	if (want == 0)
		return;
	if (bl->add.n4 + bl->add.n6 + bl->del.n4 + bl->del.n6 == 0) {
		pa_offload_blocklist_post(bl->off, &bl->set);
		return;
	}
	if (live_head(bl, want, &s) != 0) {
		/* pre() took the rules out: the software drops still */
		BL_LOG(WARNING, "out of memory: the blocklist's NIC rules stay off until the next change");
		return;
	}
	pa_offload_blocklist_post(bl->off, &s);
	pa_bl_set_free(&s);
}

/* Publish base table @p t with delta @p d (either may be the live one's)
 * for a live set of @p n4 + @p n6 prefixes; returns once no lcore can
 * still read the old view. Lock held. */
static int
publish(struct pa_blocklist *bl, struct pa_bl_table *t, struct bl_delta *d,
		uint32_t n4, uint32_t n6, bool set_changes)
{
	struct bl_view *v = malloc(sizeof(*v)), *old = bl->live;

	if (v == NULL)
		return -ENOMEM;
	v->base = t;
	v->delta = d;
	v->n4 = n4;
	v->n6 = n6;
	/* the NIC never drops what software no longer would */
	if (set_changes)
		pa_offload_blocklist_pre(bl->off);
	__atomic_store_n(&bl->live, v, __ATOMIC_RELEASE);
	__atomic_store_n(&bl->dp.any, n4 != 0 || n6 != 0, __ATOMIC_RELEASE);
	if (bl->rcu != NULL)
		rte_rcu_qsbr_synchronize(bl->rcu, RTE_QSBR_THRID_INVALID);
	free(old);
	return 0;
}

static int
over_limit(struct pa_blocklist *bl, uint32_t n, char *err, size_t err_len)
{
	if (n <= bl->max)
		return 0;
	pa_seterr(err, err_len,
		"%u prefixes: more than the blocklist's limit of %u", n,
		bl->max);
	return -ENOSPC;
}

/* A new base: build a table of @p s, publish it with no delta, free the
 * old ones; the live set becomes @p s (taken over, also on error). Lock
 * held. */
static int
commit_full(struct pa_blocklist *bl, struct pa_bl_set *s, char *err,
		size_t err_len)
{
	struct pa_bl_table *t;
	uint64_t t0 = pa_clock_ns();
	int ret;

	ret = over_limit(bl, pa_bl_set_count(s), err, err_len);
	if (ret != 0) {
		pa_bl_set_free(s);
		return ret;
	}
	t = pa_bl_table_build(s);
	if (t == NULL) {
		pa_seterr(err, err_len, "out of memory building the blocklist");
		pa_bl_set_free(s);
		return -ENOMEM;
	}
	bl->build_ms = ms_since(t0);
	if (publish(bl, t, NULL, s->n4, s->n6, true) != 0) {
		pa_bl_table_free(t);
		pa_seterr(err, err_len, "out of memory building the blocklist");
		pa_bl_set_free(s);
		return -ENOMEM;
	}
	pa_bl_table_free(bl->base);
	bl_delta_free(bl->delta);
	bl->base = t;
	bl->delta = NULL;
	pa_bl_set_free(&bl->set);
	pa_bl_set_free(&bl->add);
	pa_bl_set_free(&bl->del);
	bl->set = *s;
	memset(s, 0, sizeof(*s));
	bl->base_gen++;
	offload_post(bl);
	bl->version++;
	bl->update_ms = ms_since(t0);
	BL_LOG(DEBUG, "version %" PRIu64 ": %u prefixes, %zu bytes, built in %.1f ms",
		bl->version, pa_bl_set_count(&bl->set), t->memory,
		bl->build_ms);
	return 0;
}

/* A change as a new delta over the same base: added @p a and deleted
 * @p d (taken over, also on error). Past the delta's bounds, a new base.
 * Lock held. */
static int
commit_delta(struct pa_blocklist *bl, struct pa_bl_set *a,
		struct pa_bl_set *d, char *err, size_t err_len)
{
	struct bl_delta *dt = NULL;
	uint64_t t0 = pa_clock_ns();
	uint32_t n4 = bl->set.n4 - d->n4 + a->n4;
	uint32_t n6 = bl->set.n6 - d->n6 + a->n6;
	int ret;

	ret = over_limit(bl, n4 + n6, err, err_len);
	if (ret != 0)
		goto out;
	if (pa_bl_set_count(a) + pa_bl_set_count(d) != 0) {
		if (pa_bl_set_count(a) + pa_bl_set_count(d) <= BL_DELTA_MAX)
			dt = bl_delta_build(&bl->set, a, d);
		if (dt == NULL) {
			struct pa_bl_set s;

			if (pa_bl_set_count(a) + pa_bl_set_count(d) <=
			    BL_DELTA_MAX && errno != E2BIG) {
				pa_seterr(err, err_len,
					"out of memory building the blocklist");
				ret = -ENOMEM;
				goto out;
			}
			/* too large for a delta: a new base */
			if (live_set(&bl->set, a, d, &s) != 0) {
				pa_seterr(err, err_len, "out of memory");
				ret = -ENOMEM;
				goto out;
			}
			ret = commit_full(bl, &s, err, err_len);
			goto out;
		}
	}
	bl->build_ms = ms_since(t0);
	ret = publish(bl, bl->base, dt, n4, n6, true);
	if (ret != 0) {
		bl_delta_free(dt);
		pa_seterr(err, err_len, "out of memory building the blocklist");
		goto out;
	}
	bl_delta_free(bl->delta);
	bl->delta = dt;
	pa_bl_set_free(&bl->add);
	pa_bl_set_free(&bl->del);
	bl->add = *a;
	bl->del = *d;
	memset(a, 0, sizeof(*a));
	memset(d, 0, sizeof(*d));
	offload_post(bl);
	bl->version++;
	bl->update_ms = ms_since(t0);
	bl->last_change_ns = pa_clock_ns();
	if (dt != NULL)
		pthread_cond_signal(&bl->wake);
	BL_LOG(DEBUG, "version %" PRIu64 ": %u prefixes, delta +%u -%u, %zu bytes, built in %.2f ms",
		bl->version, n4 + n6, bl->delta != NULL ? bl->delta->n_add : 0,
		bl->delta != NULL ? bl->delta->n_del : 0,
		bl->delta != NULL ? bl->delta->memory : 0, bl->build_ms);
out:
	pa_bl_set_free(a);
	pa_bl_set_free(d);
	return ret;
}

int
pa_blocklist_replace(struct pa_blocklist *bl, struct pa_bl_set *s, char *err,
		size_t err_len)
{
	int ret;

	pthread_mutex_lock(&bl->lock);
	ret = commit_full(bl, s, err, err_len);
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

/* The prefixes of @p s in the base (@p in) or not: binary searches for
 * a small @p s, a merge for a large one. */
static int
split_by_base(const struct pa_bl_set *base, const struct pa_bl_set *s,
		bool in, struct pa_bl_set *out)
{
	struct pa_bl_set notin;
	int ret;

	if ((uint64_t)pa_bl_set_count(s) * 32 < pa_bl_set_count(base))
		return pa_bl_set_filter(s, base, in, out);
	ret = pa_bl_set_minus(s, base, in ? &notin : out);
	if (ret != 0 || !in)
		return ret;
	ret = pa_bl_set_minus(s, &notin, out);
	pa_bl_set_free(&notin);
	return ret;
}

/* An add (@p del false) or a delete of @p s: an add's prefixes not in the
 * base join the added tier and leave the deleted one; a delete's in the
 * base join the deleted tier, and all leave the added one. */
static int
change(struct pa_blocklist *bl, const struct pa_bl_set *s, bool del,
		char *err, size_t err_len)
{
	struct pa_bl_set part = { 0 }, a = { 0 }, d = { 0 };
	int ret;

	pthread_mutex_lock(&bl->lock);
	ret = split_by_base(&bl->set, s, del, &part);
	if (ret == 0)
		ret = del ? pa_bl_set_union(&bl->del, &part, &d) :
			pa_bl_set_union(&bl->add, &part, &a);
	if (ret == 0)
		ret = del ? pa_bl_set_minus(&bl->add, s, &a) :
			pa_bl_set_minus(&bl->del, s, &d);
	pa_bl_set_free(&part);
	if (ret != 0) {
		pa_seterr(err, err_len, "out of memory");
		pa_bl_set_free(&a);
		pa_bl_set_free(&d);
	} else {
		ret = commit_delta(bl, &a, &d, err, err_len);
	}
	pthread_mutex_unlock(&bl->lock);
	return ret;
}

int
pa_blocklist_add(struct pa_blocklist *bl, const struct pa_bl_set *s,
		char *err, size_t err_len)
{
	return change(bl, s, false, err, err_len);
}

int
pa_blocklist_delete(struct pa_blocklist *bl, const struct pa_bl_set *s,
		char *err, size_t err_len)
{
	return change(bl, s, true, err, err_len);
}

/* ------------------------------------------------------------------ */
/* Merging the delta into a new base                                   */
/* ------------------------------------------------------------------ */

/* Is IPv4 key @p k / IPv6 prefix @p e live? Lock held. */
static bool
live_has4(const struct pa_blocklist *bl, uint64_t k)
{
	return pa_bl_set_has4(&bl->add, k) || (pa_bl_set_has4(&bl->set, k) &&
		!pa_bl_set_has4(&bl->del, k));
}

static bool
live_has6(const struct pa_blocklist *bl, const struct pa_bl_v6 *e)
{
	return pa_bl_set_has6(&bl->add, e) || (pa_bl_set_has6(&bl->set, e) &&
		!pa_bl_set_has6(&bl->del, e));
}

/* The delta of the live set over new base @p e, where the two can only
 * differ at the prefixes of @p cand. Lock held. */
static int
rebase(const struct pa_blocklist *bl, const struct pa_bl_set *e,
		const struct pa_bl_set *cand, struct pa_bl_set *a,
		struct pa_bl_set *d)
{
	uint32_t i;

	memset(a, 0, sizeof(*a));
	memset(d, 0, sizeof(*d));
	for (i = 0; i < cand->n4; i++) {
		bool now = live_has4(bl, cand->v4[i]);
		bool base = pa_bl_set_has4(e, cand->v4[i]);
		struct pa_ip_prefix p;

		if (now == base)
			continue;
		pa_bl_set_get(cand, i, &p);
		if (pa_bl_set_push(now ? a : d, &p) != 0)
			goto nomem;
	}
	for (i = 0; i < cand->n6; i++) {
		bool now = live_has6(bl, &cand->v6[i]);
		bool base = pa_bl_set_has6(e, &cand->v6[i]);
		struct pa_ip_prefix p;

		if (now == base)
			continue;
		pa_bl_set_get(cand, cand->n4 + i, &p);
		if (pa_bl_set_push(now ? a : d, &p) != 0)
			goto nomem;
	}
	pa_bl_set_normalise(a);
	pa_bl_set_normalise(d);
	return 0;
nomem:
	pa_bl_set_free(a);
	pa_bl_set_free(d);
	return -ENOMEM;
}

/* Merge the delta into a new base: the live set copied under the lock,
 * its table built without it (changes go on meanwhile), then published
 * with the delta of what changed since. 0 (also: nothing to merge), or
 * -EAGAIN (the base changed meanwhile: a replace), -ENOMEM. */
static int
merge_once(struct pa_blocklist *bl)
{
	struct pa_bl_set e, a0, d0, c1, c2, cand, a, d;
	struct pa_bl_table *t;
	struct bl_delta *dt = NULL;
	uint64_t gen, t0 = pa_clock_ns();
	int ret;

	pthread_mutex_lock(&bl->lock);
	if (pa_bl_set_count(&bl->add) + pa_bl_set_count(&bl->del) == 0) {
		pthread_mutex_unlock(&bl->lock);
		return 0;
	}
	gen = bl->base_gen;
	ret = live_set(&bl->set, &bl->add, &bl->del, &e);
	if (ret == 0 && (ret = pa_bl_set_union(&bl->add, &bl->del, &c1)) != 0)
		pa_bl_set_free(&e);
	pthread_mutex_unlock(&bl->lock);
	if (ret != 0)
		return ret;
	(void)a0;
	(void)d0;
	t = pa_bl_table_build(&e);
	if (t == NULL) {
		pa_bl_set_free(&e);
		pa_bl_set_free(&c1);
		return -ENOMEM;
	}
	pthread_mutex_lock(&bl->lock);
	if (gen != bl->base_gen) {
		ret = -EAGAIN;
		goto drop;
	}
	/* what the live set and e may differ at: the delta then and now */
	ret = pa_bl_set_union(&bl->add, &bl->del, &c2);
	if (ret != 0)
		goto drop;
	ret = pa_bl_set_union(&c1, &c2, &cand);
	pa_bl_set_free(&c2);
	if (ret != 0)
		goto drop;
	ret = rebase(bl, &e, &cand, &a, &d);
	pa_bl_set_free(&cand);
	if (ret != 0)
		goto drop;
	if (pa_bl_set_count(&a) + pa_bl_set_count(&d) != 0) {
		dt = bl_delta_build(&e, &a, &d);
		if (dt == NULL) {
			/* the next change rebuilds (E2BIG) or retries */
			ret = -errno;
			pa_bl_set_free(&a);
			pa_bl_set_free(&d);
			goto drop;
		}
	}
	ret = publish(bl, t, dt, e.n4 - d.n4 + a.n4, e.n6 - d.n6 + a.n6,
		false);
	if (ret != 0) {
		bl_delta_free(dt);
		pa_bl_set_free(&a);
		pa_bl_set_free(&d);
		goto drop;
	}
	pa_bl_table_free(bl->base);
	bl_delta_free(bl->delta);
	pa_bl_set_free(&bl->set);
	pa_bl_set_free(&bl->add);
	pa_bl_set_free(&bl->del);
	bl->base = t;
	bl->delta = dt;
	bl->set = e;
	bl->add = a;
	bl->del = d;
	bl->base_gen++;
	bl->merges++;
	bl->merge_ms = ms_since(t0);
	BL_LOG(DEBUG, "merged: %u prefixes in the base, delta left +%u -%u, %.1f ms",
		pa_bl_set_count(&e), pa_bl_set_count(&a), pa_bl_set_count(&d),
		bl->merge_ms);
	pthread_mutex_unlock(&bl->lock);
	pa_bl_set_free(&c1);
	return 0;
drop:
	pthread_mutex_unlock(&bl->lock);
	pa_bl_table_free(t);
	pa_bl_set_free(&e);
	pa_bl_set_free(&c1);
	return ret;
}

int
pa_blocklist_merge(struct pa_blocklist *bl)
{
	int ret;

	do
		ret = merge_once(bl);
	while (ret == -EAGAIN);
	return ret;
}

/* The merger: merges the delta once no change came for merge_delay_ms
 * (a feed's burst of calls lands in one delta), or once it has waited
 * ten times that (a steady trickle of changes). */
static void *
merger_main(void *arg)
{
	struct pa_blocklist *bl = arg;
	uint64_t failed_at = UINT64_MAX, first = 0;
	int ret;

	pthread_mutex_lock(&bl->lock);
	while (!bl->merger_stop) {
		uint64_t now = pa_clock_ns(), delay =
			(uint64_t)bl->merge_delay_ms * 1000000ull, due;
		struct timespec ts;

		if (pa_bl_set_count(&bl->add) + pa_bl_set_count(&bl->del) == 0 ||
		    failed_at == bl->version) {
			first = 0;
			pthread_cond_wait(&bl->wake, &bl->lock);
			continue;
		}
		if (first == 0)
			first = now;
		due = RTE_MIN(bl->last_change_ns + delay, first + 10 * delay);
		if (now < due) {
			ts.tv_sec = (time_t)(due / 1000000000ull);
			ts.tv_nsec = (long)(due % 1000000000ull);
			pthread_cond_timedwait(&bl->wake, &bl->lock, &ts);
			continue;
		}
		pthread_mutex_unlock(&bl->lock);
		ret = merge_once(bl);
		first = 0;
		pthread_mutex_lock(&bl->lock);
		/* after a failure, wait for the next change */
		failed_at = ret != 0 && ret != -EAGAIN ? bl->version :
			UINT64_MAX;
	}
	pthread_mutex_unlock(&bl->lock);
	return NULL;
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

static uint64_t
set_bytes(const struct pa_bl_set *s)
{
	return (uint64_t)s->cap4 * sizeof(*s->v4) +
		(uint64_t)s->cap6 * sizeof(*s->v6);
}

void
pa_blocklist_info(struct pa_blocklist *bl, struct pa_blocklist_info *i)
{
	memset(i, 0, sizeof(*i));
	pthread_mutex_lock(&bl->lock);
	i->prefixes4 = live_count4(bl);
	i->prefixes6 = live_count6(bl);
	i->prefixes = i->prefixes4 + i->prefixes6;
	i->max_prefixes = bl->max;
	i->delta_bytes = bl->delta != NULL ? bl->delta->memory : 0;
	i->memory_bytes = pa_bl_table_memory(bl->base) + i->delta_bytes;
	i->set_bytes = set_bytes(&bl->set) + set_bytes(&bl->add) +
		set_bytes(&bl->del);
	i->delta_added = pa_bl_set_count(&bl->add);
	i->delta_deleted = pa_bl_set_count(&bl->del);
	i->merges = bl->merges;
	i->merge_ms = bl->merge_ms;
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
	struct pa_bl_set live;
	json_t *o, *sample;
	uint32_t i, n;
	int ret;

	sample = json_array();
	if (sample == NULL)
		return NULL;
	pthread_mutex_lock(&bl->lock);
	ret = live_head(bl, limit, &live);
	pthread_mutex_unlock(&bl->lock);
	if (ret != 0) {
		json_decref(sample);
		return NULL;
	}
	n = RTE_MIN(limit, pa_bl_set_count(&live));
	for (i = 0; i < n; i++) {
		pa_bl_set_get(&live, i, &p);
		if (json_array_append_new(sample, json_string(
				pa_net_format_prefix(&p, buf, sizeof(buf)))) != 0)
			break;
	}
	pa_bl_set_free(&live);
	pa_blocklist_info(bl, &in);
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:o}",
		"prefixes", (json_int_t)in.prefixes,
		"prefixes4", (json_int_t)in.prefixes4,
		"prefixes6", (json_int_t)in.prefixes6,
		"max_prefixes", (json_int_t)in.max_prefixes,
		"hits", (json_int_t)in.hits,
		"memory_bytes", (json_int_t)in.memory_bytes,
		"set_bytes", (json_int_t)in.set_bytes,
		"version", (json_int_t)in.version,
		"delta_added", (json_int_t)in.delta_added,
		"delta_deleted", (json_int_t)in.delta_deleted,
		"delta_bytes", (json_int_t)in.delta_bytes,
		"merges", (json_int_t)in.merges,
		"build_ms", in.build_ms,
		"update_ms", in.update_ms,
		"merge_ms", in.merge_ms,
		"sample", sample);
	return o;
}

bool
pa_blocklist_trace(struct pa_blocklist *bl, const struct pa_ip_addr *a)
{
	const struct bl_view *v;
	bool hit = false;

	pthread_mutex_lock(&bl->lock);
	v = bl->live;
	if (v != NULL) {
		uint64_t hi, lo;

		if (a->family == AF_INET) {
			hit = bl_view_lookup4(v, rte_be_to_cpu_32(
				a->v4.s_addr));
		} else if (a->family == AF_INET6) {
			bl6_split(a->v6.s6_addr, &hi, &lo);
			hit = bl_view_lookup6(v, hi, lo);
		}
	}
	pthread_mutex_unlock(&bl->lock);
	return hit;
}

int
pa_blocklist_export(struct pa_blocklist *bl, struct pa_bl_set *out)
{
	int ret;

	pthread_mutex_lock(&bl->lock);
	ret = live_set(&bl->set, &bl->add, &bl->del, out);
	pthread_mutex_unlock(&bl->lock);
	if (ret != 0)
		memset(out, 0, sizeof(*out));
	return ret;
}

void
pa_blocklist_set_offload(struct pa_blocklist *bl, struct pa_offload *off)
{
	pthread_mutex_lock(&bl->lock);
	if (bl->off != NULL && off != bl->off)
		pa_offload_blocklist_pre(bl->off);
	bl->off = off;
	offload_post(bl);
	pthread_mutex_unlock(&bl->lock);
}

/* ------------------------------------------------------------------ */
/* Data path                                                           */
/* ------------------------------------------------------------------ */

/* Where a packet's source is (v4: host order in lo; v6: hi, lo), or
 * family 0 for non-IP and unreadable headers. */
struct bl_key {
	union {
		uint64_t hi;			/* IPv6 */
		const struct bl4_word *w;	/* IPv4: its word */
	};
	uint64_t lo;		/* IPv4: the address; IPv6 */
	uint32_t fbit;		/* IPv6: the filter's bit */
	uint8_t family;		/* 4, 6: to look up; 0: not */
};

uint16_t
pa_blocklist_filter(struct pa_blocklist *bl, unsigned int lidx,
		struct rte_mbuf **pkts, uint16_t n, uint8_t *hit)
{
	const struct bl_view *v = __atomic_load_n(&bl->live,
		__ATOMIC_ACQUIRE);
	const struct pa_bl_table *t;
	struct bl_key k[PA_BLOCKLIST_BURST_MAX];
	const struct bl4_word *w4;
	const uint64_t *f6;
	const int moff = pa_pkt_meta_offset;
	uint8_t look4, look6;
	uint16_t i, hits = 0, n6 = 0;

	if (unlikely(v == NULL || n > PA_BLOCKLIST_BURST_MAX)) {
		memset(hit, 0, n);
		return 0;
	}
	t = v->base;
	/* the table's arrays in locals: the stores to hit[] (bytes) could
	 * alias them otherwise, and they would be loaded again each time */
	w4 = t->w4;
	f6 = t->filter6;
	/* with a delta, every source is looked up (it may add some) */
	if (v->delta != NULL) {
		look4 = 4;
		look6 = 6;
	} else {
		look4 = w4 != NULL ? 4 : 0;
		look6 = f6 != NULL ? 6 : 0;
	}
	/* pass 1: the sources, and a prefetch of the line each looks up
	 * first (IPv4 word, IPv6 filter), so that a burst's cache misses
	 * overlap */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct pa_pkt_meta *meta = RTE_MBUF_DYNFIELD(m, moff,
			const struct pa_pkt_meta *);
		uint16_t fl = meta->flags;
		uint8_t buf[16], fam = 0;
		const uint8_t *p;

		if (fl & PA_PKT_F_IPV4) {
			uint32_t a;

			p = rte_pktmbuf_read(m, meta->l3_off + 12u, 4, buf);
			if (likely(p != NULL)) {
				memcpy(&a, p, 4);
				a = rte_be_to_cpu_32(a);
				k[i].lo = a;
				fam = look4;
				if (w4 != NULL) {
					/* kept for pass 3 */
					k[i].w = &w4[a >> 14];
					rte_prefetch0(k[i].w);
				}
			}
		} else if (fl & PA_PKT_F_IPV6) {
			p = rte_pktmbuf_read(m, meta->l3_off + 8u, 16, buf);
			if (likely(p != NULL)) {
				bl6_split(p, &k[i].hi, &k[i].lo);
				fam = look6;
				n6++;
				if (f6 != NULL) {
					k[i].fbit = bl6_filter_bit(t, k[i].hi,
						k[i].lo);
					rte_prefetch0(&f6[k[i].fbit >> 6]);
				}
			}
		}
		k[i].family = fam;
	}
	/* pass 2 (IPv6 only): the filter; where it lets a source through,
	 * a prefetch of its slot in each length's table; where not, no
	 * lookup (family 0), unless a delta may add it */
	for (i = 0; n6 != 0 && f6 != NULL && i < n; i++) {
		unsigned int j;

		if (k[i].family != 6)
			continue;
		if (!((f6[k[i].fbit >> 6] >> (k[i].fbit & 63)) & 1)) {
			if (v->delta == NULL)
				k[i].family = 0;
			continue;
		}
		for (j = 0; j < t->s6.n; j++) {
			const struct bl6_hash *h = &t->s6.h[j];

			rte_prefetch0(&h->keys[bl6_hash_fn(k[i].hi & h->mask_hi,
				k[i].lo & h->mask_lo) & h->mask]);
		}
	}
	/* pass 3: the lookups (with the delta's, while there is one) */
	if (likely(v->delta == NULL)) {
		for (i = 0; i < n; i++) {
			uint8_t h = 0;

			if (k[i].family == 4) {
				uint32_t a = (uint32_t)k[i].lo;
				const struct bl4_word *w = k[i].w;
				uint64_t bit = UINT64_C(1) << ((a >> 8) & 63);

				/* a miss: one word, one branch */
				if (unlikely((w->full | w->sub) & bit))
					h = bl_lookup4(t, a);
			} else if (k[i].family == 6) {	/* the filter passed */
				h = bl6_set_match(&t->s6, NULL, k[i].hi,
					k[i].lo);
			}
			hit[i] = h;
			hits += h;
		}
	} else {
		for (i = 0; i < n; i++) {
			uint8_t h = 0;

			if (k[i].family == 4)
				h = bl_view_lookup4(v, (uint32_t)k[i].lo);
			else if (k[i].family == 6)
				h = bl_view_lookup6(v, k[i].hi, k[i].lo);
			hit[i] = h;
			hits += h;
		}
	}
	bl->lc[lidx].hits += hits;
	return hits;
}
