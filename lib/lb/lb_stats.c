/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load balancer's reporting: one snapshot of its counters, services
 * and backends taken under its lock, and the JSON renderings of it
 * (stats_get's "lb", lb_service_list). The exporter and telemetry walk
 * the same struct.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "lb_priv.h"
#include "pa_clock.h"

/* Sum of the lcores' counters of one backend. */
static void
backend_counts(const struct pa_lb *lb, uint32_t uid, uint32_t cslot,
		struct pa_lb_backend_snapshot *b)
{
	unsigned int l;

	memset(b, 0, sizeof(*b));
	for (l = 0; l < lb->n_lcores; l++) {
		const struct lb_ctr *c;

		if (lb->w[l] == NULL)
			continue;
		c = &lb->w[l]->ctr[cslot];
		if (__atomic_load_n(&c->uid, __ATOMIC_RELAXED) != uid)
			continue;
		b->flows += c->flows;
		b->packets += c->packets;
		b->bytes += c->bytes;
	}
}

static void
service_free(struct pa_lb_service_snapshot *v)
{
	free(v->cfg.backends);
	free(v->backends);
	memset(v, 0, sizeof(*v));
}

/* What is left of backend @p i's grace, in ms (-1: not in one): its end
 * against the clock of pa_lb_health_publish(), as last seen plus the
 * time since. */
static int64_t
grace_left(const struct pa_lb *lb, const struct lb_svc_ctl *c,
		unsigned int i)
{
	const struct lb_be_health *hc = &c->be_hc[i];
	uint64_t now;

	if (hc->grace == LB_GRACE_NONE)
		return -1;
	if (hc->grace == LB_GRACE_START)
		return c->cfg.health.grace_ms;
	now = lb->hc_clock_ms + (uint64_t)RTE_MAX(pa_clock_ms() -
		lb->hc_clock_at, (int64_t)0);
	return hc->grace_end_ms > now ? (int64_t)(hc->grace_end_ms - now) : 0;
}

/* A service's configuration without its holes, and its counters. */
static int
service_fill(const struct pa_lb *lb, const struct lb_svc_ctl *c,
		struct pa_lb_service_snapshot *v)
{
	const struct lb_svc *s = lb->live != NULL ? lb->live->svc[c - lb->ctl] :
		NULL;
	unsigned int i, n = 0;

	memset(v, 0, sizeof(*v));
	v->cfg = c->cfg;
	v->cfg.backends = NULL;
	v->cfg.n_backends = 0;
	if (c->n_slots > 0) {
		v->cfg.backends = calloc(c->n_slots, sizeof(*v->cfg.backends));
		v->backends = calloc(c->n_slots, sizeof(*v->backends));
		if (v->cfg.backends == NULL || v->backends == NULL) {
			service_free(v);
			return -ENOMEM;
		}
	}
	for (i = 0; i < c->n_slots; i++) {
		if (c->be_uid[i] == 0)
			continue;
		v->cfg.backends[n] = c->cfg.backends[i];
		backend_counts(lb, c->be_uid[i], c->be_cslot[i],
			&v->backends[n]);
		v->backends[n].health = (enum pa_lb_health)c->be_hc[i].health;
		v->backends[n].health_last =
			lb_health_result_name(c->be_hc[i].last);
		v->backends[n].health_code = c->be_hc[i].code;
		v->backends[n].health_latency_us = c->be_hc[i].latency_us;
		v->backends[n].health_probes = c->be_hc[i].probes;
		v->backends[n].health_failures = c->be_hc[i].failures;
		v->backends[n].health_agent_pct = c->be_hc[i].agent_pct;
		v->backends[n].health_agent_state =
			(enum pa_lb_agent_state)c->be_hc[i].agent_state;
		v->backends[n].health_weight = lb_effective_weight(c, i);
		v->backends[n].health_grace_ms_left = grace_left(lb, c, i);
		if (c->be_hc[i].health == PA_LB_HEALTH_DOWN)
			v->health_down++;
		v->flows += v->backends[n].flows;
		n++;
	}
	v->cfg.n_backends = n;
	v->usable_backends = s != NULL ? s->n_up : 0;
	v->build_ms = s != NULL ? s->build_ms : 0.0;
	v->panic = c->panic;
	v->panics = c->panics;
	v->table_hash = s != NULL ? s->table_hash : 0;
	return 0;
}

/* The lcores' counters: no lock (each is its lcore's, read as it is). */
static void
snapshot_counters(const struct pa_lb *lb, struct pa_lb_snapshot *s)
{
	struct lb_lcore_stats sum;
	unsigned int l, i;
	const uint64_t *src;
	uint64_t *d;

	memset(&sum, 0, sizeof(sum));
	for (l = 0; l < lb->n_lcores; l++) {
		/* made with the first service, perhaps just now */
		const struct lb_worker *w = __atomic_load_n(&lb->w[l],
			__ATOMIC_ACQUIRE);

		if (w == NULL)
			continue;
		src = (const uint64_t *)&w->st;
		d = (uint64_t *)&sum;
		for (i = 0; i < sizeof(sum) / sizeof(uint64_t); i++)
			d[i] += src[i];
		s->flow_table_capacity += w->ftab.n_pos;
		s->flow_index_slots += (uint64_t)__atomic_load_n(
			&w->ftab.mask, __ATOMIC_RELAXED) + 1;
	}
	s->flows = sum.flows_created - sum.flows_expired -
		sum.flows_backend_gone - sum.flows_rescheduled;
	s->flow_table_bytes = __atomic_load_n(&lb->ft_bytes, __ATOMIC_RELAXED);
	s->balanced = sum.balanced;
	s->flows_created = sum.flows_created;
	s->flows_expired = sum.flows_expired;
	s->flows_rescheduled = sum.flows_rescheduled;
	s->flows_backend_gone = sum.flows_backend_gone;
	s->flow_table_full = sum.flow_table_full;
	s->fragments = sum.fragments;
	s->nat_replies = sum.nat_replies;
	s->nat_table_full = sum.nat_table_full;
	s->nat_reply_stateless = sum.nat_reply_stateless;
	s->nat_reply_unmatched = sum.nat_reply_unmatched;
	s->nat_reply_ambiguous = sum.nat_reply_ambiguous;
	s->no_backend = sum.no_backend;
	s->mtu = sum.mtu;
	s->no_room = sum.no_room;
	s->neigh_unresolved = sum.neigh_unresolved;
	s->icmp_echo_replies = sum.icmp_echo_replies;
	s->icmp_errors_forwarded = sum.icmp_errors_forwarded;
	s->icmp_bad_quote = sum.icmp_bad_quote;
	s->icmp_no_service = sum.icmp_no_service;
	s->icmp_too_big_sent = sum.icmp_too_big_sent;
	s->icmp_rate_limited = sum.icmp_rate_limited;
	s->mss_clamped = sum.mss_clamped;
	s->flows_peak = sum.flows_peak;
	s->syn_stateless = sum.syn_stateless;
	s->src_limited = sum.src_limited;
	s->max_flows_dropped = sum.max_flows_dropped;
	s->flows_recovered = sum.flows_recovered;
	s->fnat.flows_created = sum.fnat_flows;
	s->fnat.no_port = sum.fnat_no_port;
	s->fnat.table_full = sum.fnat_table_full;
	s->fnat.fragments = sum.fnat_fragments;
	s->fnat.replies = sum.fnat_replies;
	s->fnat.reply_unmatched = sum.fnat_reply_unmatched;
	s->fnat.xlat_failed = sum.fnat_xlat_failed;
	s->fnat.proxy_failed = sum.fnat_proxy_failed;
	s->fnat.time_wait_skips = sum.fnat_time_wait;
	s->fnat.n_addrs = lb->fnat.n_addrs;
	s->fnat.ports = lb->fnat.n_addrs != 0 ?
		(uint32_t)lb->fnat.hi - lb->fnat.lo + 1 : 0;
	s->fnat.flows = 0;
	for (i = 0; i < lb->fnat.n_addrs; i++) {
		const struct lb_fnat_addr *a = &lb->fnat.addr[i];

		s->fnat.addr[i].addr = a->ip;
		s->fnat.addr[i].in_use = lb_fnat_in_use(lb, i);
		s->fnat.flows += s->fnat.addr[i].in_use;
	}
}

/* The control state's counts (services, backends, health, panic, the
 * builds): under the lock. */
static void
snapshot_shape(const struct pa_lb *lb, struct lb_shape *h)
{
	unsigned int i, j;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used)
			continue;
		for (j = 0; j < c->n_slots; j++) {
			if (c->be_uid[j] == 0)
				continue;
			h->backends++;
			if (c->be_hc[j].health == PA_LB_HEALTH_DOWN)
				h->health_down++;
			if (c->be_hc[j].grace != LB_GRACE_NONE)
				h->health_grace++;
		}
		if (c->panic)
			h->panic_services++;
	}
	h->panics = lb->panics;
	h->services = lb->n_services;
	h->version = lb->version;
	h->builds = lb->builds;
	h->build_ms = lb->last_build_ms;
	h->build_ms_max = lb->max_build_ms;
}

static void
shape_apply(const struct lb_shape *h, struct pa_lb_snapshot *s)
{
	s->backends = h->backends;
	s->health_down = h->health_down;
	s->health_grace = h->health_grace;
	s->panic_services = h->panic_services;
	s->panics = h->panics;
	s->services = h->services;
	s->version = h->version;
	s->builds = h->builds;
	s->build_ms = h->build_ms;
	s->build_ms_max = h->build_ms_max;
}

static int
snapshot_locked(struct pa_lb *lb, unsigned int flags,
		struct pa_lb_snapshot *s)
{
	struct lb_shape h;
	unsigned int i;

	snapshot_counters(lb, s);
	snapshot_shape(lb, &h);
	shape_apply(&h, s);
	/* what a stats_get that finds the lock busy reports */
	pthread_mutex_lock(&lb->shape_lock);
	lb->shape = h;
	pthread_mutex_unlock(&lb->shape_lock);
	if (!(flags & PA_LB_SNAPSHOT_SERVICES) || lb->n_services == 0)
		return 0;
	s->svc = calloc(lb->n_services, sizeof(*s->svc));
	if (s->svc == NULL)
		return -ENOMEM;
	for (i = 0; i < PA_LB_MAX_SERVICES &&
			s->n_services < lb->n_services; i++) {
		if (!lb->ctl[i].used)
			continue;
		if (service_fill(lb, &lb->ctl[i], &s->svc[s->n_services]) != 0)
			return -ENOMEM;
		s->n_services++;
	}
	return 0;
}

int
pa_lb_snapshot(struct pa_lb *lb, unsigned int flags, struct pa_lb_snapshot *s)
{
	int rc;

	memset(s, 0, sizeof(*s));
	if (!(flags & PA_LB_SNAPSHOT_SERVICES)) {
		struct timespec dl;

		/* stats_get: a table build (its RCU wait included) may hold
		 * the lock for long; after LB_STATS_WAIT_MS the counters
		 * are read without it, the counts of services, backends and
		 * health as the last snapshot under the lock saw them */
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_nsec += LB_STATS_WAIT_MS * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		if (pthread_mutex_clocklock(&lb->lock, CLOCK_MONOTONIC,
				&dl) != 0) {
			struct lb_shape h;

			snapshot_counters(lb, s);
			pthread_mutex_lock(&lb->shape_lock);
			h = lb->shape;
			lb->stats_lock_busy++;
			s->stats_lock_busy = lb->stats_lock_busy;
			pthread_mutex_unlock(&lb->shape_lock);
			shape_apply(&h, s);
			return 0;
		}
	} else {
		pthread_mutex_lock(&lb->lock);
	}
	rc = snapshot_locked(lb, flags, s);
	pthread_mutex_lock(&lb->shape_lock);
	s->stats_lock_busy = lb->stats_lock_busy;
	pthread_mutex_unlock(&lb->shape_lock);
	pthread_mutex_unlock(&lb->lock);
	if (rc != 0)
		pa_lb_snapshot_free(s);
	return rc;
}

void
pa_lb_snapshot_free(struct pa_lb_snapshot *s)
{
	unsigned int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n_services; i++)
		service_free(&s->svc[i]);
	free(s->svc);
	s->svc = NULL;
	s->n_services = 0;
}

static json_t *snapshot_json_base(const struct pa_lb_snapshot *s);

/* stats_get's "lb.fnat" (NULL when out of memory: the caller's
 * json_object_set_new() fails). */
static json_t *
fnat_json(const struct pa_lb_fnat_snapshot *f)
{
	char buf[INET6_ADDRSTRLEN];
	json_t *o, *pool;
	unsigned int i;

	pool = json_array();
	for (i = 0; pool != NULL && i < f->n_addrs; i++) {
		if (json_array_append_new(pool, json_pack("{s:s, s:I, s:I}",
				"addr", pa_net_format_ip(&f->addr[i].addr, buf,
					sizeof(buf)),
				"ports", (json_int_t)f->ports,
				"in_use", (json_int_t)f->addr[i].in_use)) != 0) {
			json_decref(pool);
			return NULL;
		}
	}
	if (pool == NULL)
		return NULL;
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
		"flows", (json_int_t)f->flows,
		"flows_created", (json_int_t)f->flows_created,
		"no_port", (json_int_t)f->no_port,
		"table_full", (json_int_t)f->table_full,
		"fragments", (json_int_t)f->fragments,
		"replies", (json_int_t)f->replies,
		"reply_unmatched", (json_int_t)f->reply_unmatched,
		"xlat_failed", (json_int_t)f->xlat_failed,
		"proxy_failed", (json_int_t)f->proxy_failed,
		"time_wait_skips", (json_int_t)f->time_wait_skips,
		"pool", pool);
	return o;
}

json_t *
pa_lb_snapshot_json(const struct pa_lb_snapshot *s)
{
	json_t *o = snapshot_json_base(s);

	if (o != NULL && (json_object_set_new(o, "health_down",
			json_integer((json_int_t)s->health_down)) != 0 ||
	    json_object_set_new(o, "health_grace",
			json_integer((json_int_t)s->health_grace)) != 0 ||
	    json_object_set_new(o, "panic_services",
			json_integer((json_int_t)s->panic_services)) != 0 ||
	    json_object_set_new(o, "panics",
			json_integer((json_int_t)s->panics)) != 0 ||
	    json_object_set_new(o, "flows_peak",
			json_integer((json_int_t)s->flows_peak)) != 0 ||
	    json_object_set_new(o, "syn_stateless",
			json_integer((json_int_t)s->syn_stateless)) != 0 ||
	    json_object_set_new(o, "src_limited",
			json_integer((json_int_t)s->src_limited)) != 0 ||
	    json_object_set_new(o, "max_flows_dropped",
			json_integer((json_int_t)s->max_flows_dropped)) != 0 ||
	    json_object_set_new(o, "flows_recovered",
			json_integer((json_int_t)s->flows_recovered)) != 0 ||
	    json_object_set_new(o, "stats_lock_busy",
			json_integer((json_int_t)s->stats_lock_busy)) != 0 ||
	    (s->fnat.n_addrs != 0 && json_object_set_new(o, "fnat",
			fnat_json(&s->fnat)) != 0))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
snapshot_json_base(const struct pa_lb_snapshot *s)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}",
		"services", (json_int_t)s->services,
		"backends", (json_int_t)s->backends,
		"flows", (json_int_t)s->flows,
		"flow_table_capacity", (json_int_t)s->flow_table_capacity,
		"flow_index_slots", (json_int_t)s->flow_index_slots,
		"flow_table_bytes", (json_int_t)s->flow_table_bytes,
		"balanced", (json_int_t)s->balanced,
		"flows_created", (json_int_t)s->flows_created,
		"flows_expired", (json_int_t)s->flows_expired,
		"flows_rescheduled", (json_int_t)s->flows_rescheduled,
		"flows_backend_gone", (json_int_t)s->flows_backend_gone,
		"flow_table_full", (json_int_t)s->flow_table_full,
		"fragments", (json_int_t)s->fragments,
		"nat_replies", (json_int_t)s->nat_replies,
		"nat_table_full", (json_int_t)s->nat_table_full,
		"nat_reply_stateless", (json_int_t)s->nat_reply_stateless,
		"nat_reply_unmatched", (json_int_t)s->nat_reply_unmatched,
		"nat_reply_ambiguous", (json_int_t)s->nat_reply_ambiguous,
		"no_backend", (json_int_t)s->no_backend,
		"mtu", (json_int_t)s->mtu,
		"version", (json_int_t)s->version,
		"builds", (json_int_t)s->builds,
		"no_room", (json_int_t)s->no_room,
		"neigh_unresolved", (json_int_t)s->neigh_unresolved,
		"icmp_echo_replies", (json_int_t)s->icmp_echo_replies,
		"icmp_errors_forwarded", (json_int_t)s->icmp_errors_forwarded,
		"icmp_bad_quote", (json_int_t)s->icmp_bad_quote,
		"icmp_no_service", (json_int_t)s->icmp_no_service,
		"icmp_too_big_sent", (json_int_t)s->icmp_too_big_sent,
		"icmp_rate_limited", (json_int_t)s->icmp_rate_limited,
		"mss_clamped", (json_int_t)s->mss_clamped,
		"build_ms", s->build_ms,
		"build_ms_max", s->build_ms_max);
}

/* A backend's "health", and what its last probe said when it had one. */
static int
backend_health_json(json_t *b, const struct pa_lb_backend_snapshot *v)
{
	int rc = 0;

	static const char *const agent[] = { "up", "drain", "down" };

	rc |= json_object_set_new(b, "health",
		json_string(pa_lb_health_name(v->health)));
	if (v->health_agent_pct >= 0 ||
	    v->health_agent_state != PA_LB_AGENT_NONE) {
		rc |= json_object_set_new(b, "health_agent",
			json_string(agent[v->health_agent_state]));
		if (v->health_agent_pct >= 0)
			rc |= json_object_set_new(b, "health_agent_pct",
				json_integer(v->health_agent_pct));
		rc |= json_object_set_new(b, "health_weight",
			json_integer(v->health_weight));
	}
	if (v->health_grace_ms_left >= 0)
		rc |= json_object_set_new(b, "health_grace_ms_left",
			json_integer(v->health_grace_ms_left));
	if (v->health_probes == 0)
		return rc;
	rc |= json_object_set_new(b, "health_last",
		json_string(v->health_last));
	rc |= json_object_set_new(b, "health_latency_ms",
		json_real(v->health_latency_us / 1000.0));
	if (v->health_code != 0)
		rc |= json_object_set_new(b, "health_code",
			json_integer(v->health_code));
	rc |= json_object_set_new(b, "health_probes",
		json_integer((json_int_t)v->health_probes));
	rc |= json_object_set_new(b, "health_failures",
		json_integer((json_int_t)v->health_failures));
	return rc;
}

json_t *
pa_lb_service_snapshot_json(const struct pa_lb_service_snapshot *v)
{
	json_t *o = pa_lb_config_service_to_json(&v->cfg), *bes, *b;
	char hash[24];
	unsigned int j;
	int rc = 0;

	if (o == NULL)
		return NULL;
	bes = json_object_get(o, "backends");
	for (j = 0; j < v->cfg.n_backends; j++) {
		b = json_array_get(bes, j);
		if (b == NULL)
			goto fail;
		rc |= json_object_set_new(b, "flows",
			json_integer((json_int_t)v->backends[j].flows));
		rc |= json_object_set_new(b, "packets",
			json_integer((json_int_t)v->backends[j].packets));
		rc |= json_object_set_new(b, "bytes",
			json_integer((json_int_t)v->backends[j].bytes));
		rc |= backend_health_json(b, &v->backends[j]);
	}
	rc |= json_object_set_new(o, "flows",
		json_integer((json_int_t)v->flows));
	rc |= json_object_set_new(o, "usable_backends",
		json_integer((json_int_t)v->usable_backends));
	rc |= json_object_set_new(o, "build_ms", json_real(v->build_ms));
	rc |= json_object_set_new(o, "panic", json_boolean(v->panic));
	rc |= json_object_set_new(o, "panics",
		json_integer((json_int_t)v->panics));
	rc |= json_object_set_new(o, "health_down",
		json_integer((json_int_t)v->health_down));
	snprintf(hash, sizeof(hash), "%016" PRIx64, v->table_hash);
	rc |= json_object_set_new(o, "table_hash", json_string(hash));
	if (rc != 0)
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

json_t *
pa_lb_snapshot_services_json(const struct pa_lb_snapshot *s)
{
	json_t *arr = json_array(), *o;
	unsigned int i;

	if (arr == NULL)
		return NULL;
	for (i = 0; i < s->n_services; i++) {
		o = pa_lb_service_snapshot_json(&s->svc[i]);
		if (o == NULL || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *
pa_lb_services_json(struct pa_lb *lb)
{
	struct pa_lb_snapshot s;
	json_t *o;

	if (pa_lb_snapshot(lb, PA_LB_SNAPSHOT_SERVICES, &s) != 0)
		return NULL;
	o = pa_lb_snapshot_services_json(&s);
	pa_lb_snapshot_free(&s);
	return o;
}

json_t *
pa_lb_stats_json(struct pa_lb *lb)
{
	struct pa_lb_snapshot s;

	if (pa_lb_snapshot(lb, 0, &s) != 0)
		return NULL;
	return pa_lb_snapshot_json(&s);
}

/* ------------------------------------------------------------------ */
/* lb_service_list as text                                            */
/* ------------------------------------------------------------------ */

/*
 * The same text as json_dumps(pa_lb_snapshot_services_json(), JSON_COMPACT)
 * without a jansson tree per backend: each service's own keys are still
 * rendered by jansson (pa_lb_service_snapshot_json() with no backends),
 * its "backends" array is written here, key by key in the order of
 * pa_lb_config_backend_to_json() and pa_lb_service_snapshot_json()
 * (tests/unit/lb compares the two renderings byte for byte). A backend's
 * strings (addresses, names of states and results) need no escaping.
 */

struct tbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void
tb_reserve(struct tbuf *b, size_t more)
{
	char *n;
	size_t cap;

	if (b->oom || b->len + more + 1 <= b->cap)
		return;
	cap = b->cap != 0 ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	n = realloc(b->p, cap);
	if (n == NULL) {
		b->oom = true;
		return;
	}
	b->p = n;
	b->cap = cap;
}

static void
tb_put(struct tbuf *b, const char *s, size_t n)
{
	tb_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
tb_str(struct tbuf *b, const char *s)
{
	tb_put(b, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
tb_printf(struct tbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	tb_reserve(b, 64);
	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		tb_reserve(b, (size_t)n);
		if (b->oom)
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* A real as jansson writes it (jsonp_dtostr(): "%.17g", ".0" when it
 * would read back as an integer, no '+' nor leading zeros in the
 * exponent). */
void
lb_real_text(double v, char *buf, size_t len)
{
	char *e, *d, *s;

	snprintf(buf, len, "%.17g", v);
	if (strchr(buf, '.') == NULL && strchr(buf, 'e') == NULL &&
	    strlen(buf) + 3 <= len)
		snprintf(buf + strlen(buf), len - strlen(buf), ".0");
	e = strchr(buf, 'e');
	if (e == NULL)
		return;
	s = e + 1;
	if (*s == '-')
		s++;
	else if (*s == '+')
		memmove(s, s + 1, strlen(s + 1) + 1);
	d = s;
	while (*d == '0' && d[1] != '\0')
		d++;
	if (d != s)
		memmove(s, d, strlen(d) + 1);
}

static void
backend_text(struct tbuf *b, const struct pa_config_backend *be,
		const struct pa_lb_backend_snapshot *v)
{
	static const char *const agent[] = { "up", "drain", "down" };
	char ip[INET6_ADDRSTRLEN], mac[PA_NET_MAC_STRLEN], real[40];

	tb_printf(b, "{\"addr\":\"%s\",\"port\":%u,\"weight\":%u",
		pa_net_format_ip(&be->addr, ip, sizeof(ip)), be->port,
		be->weight);
	if (be->has_mac)
		tb_printf(b, ",\"mac\":\"%s\"",
			pa_net_format_mac(be->mac, mac, sizeof(mac)));
	tb_printf(b, ",\"state\":\"%s\",\"flows\":%" PRIu64 ",\"packets\":%"
		PRIu64 ",\"bytes\":%" PRIu64 ",\"health\":\"%s\"",
		pa_lb_config_state_names[be->state], v->flows, v->packets,
		v->bytes, pa_lb_health_name(v->health));
	if (v->health_agent_pct >= 0 ||
	    v->health_agent_state != PA_LB_AGENT_NONE) {
		tb_printf(b, ",\"health_agent\":\"%s\"",
			agent[v->health_agent_state]);
		if (v->health_agent_pct >= 0)
			tb_printf(b, ",\"health_agent_pct\":%d",
				(int)v->health_agent_pct);
		tb_printf(b, ",\"health_weight\":%u",
			(unsigned int)v->health_weight);
	}
	if (v->health_grace_ms_left >= 0)
		tb_printf(b, ",\"health_grace_ms_left\":%" PRId64,
			(int64_t)v->health_grace_ms_left);
	if (v->health_probes != 0) {
		lb_real_text(v->health_latency_us / 1000.0, real,
			sizeof(real));
		tb_printf(b, ",\"health_last\":\"%s\",\"health_latency_ms\":%s",
			v->health_last, real);
		if (v->health_code != 0)
			tb_printf(b, ",\"health_code\":%u",
				(unsigned int)v->health_code);
		tb_printf(b, ",\"health_probes\":%" PRIu64
			",\"health_failures\":%" PRIu64,
			(uint64_t)v->health_probes,
			(uint64_t)v->health_failures);
	}
	tb_put(b, "}", 1);
}

/* One service: jansson's rendering of its own keys with its backends
 * written here in place of the empty array. */
static void
service_text(struct tbuf *b, const struct pa_lb_service_snapshot *v)
{
	static const char key[] = "\"backends\":[]";
	struct pa_lb_service_snapshot head = *v;
	json_t *o;
	char *txt, *at;
	unsigned int j;

	head.cfg.n_backends = 0;
	o = pa_lb_service_snapshot_json(&head);
	txt = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	/* the key's quotes are unescaped: no string value holds it */
	at = txt != NULL ? strstr(txt, key) : NULL;
	if (at == NULL) {
		free(txt);
		b->oom = true;
		return;
	}
	tb_put(b, txt, (size_t)(at - txt) + sizeof(key) - 2);
	for (j = 0; j < v->cfg.n_backends; j++) {
		if (j > 0)
			tb_put(b, ",", 1);
		backend_text(b, &v->cfg.backends[j], &v->backends[j]);
	}
	tb_str(b, at + sizeof(key) - 2);
	free(txt);
}

char *
pa_lb_snapshot_services_text(const struct pa_lb_snapshot *s, size_t *len)
{
	struct tbuf b = { 0 };
	unsigned int i;

	tb_put(&b, "[", 1);
	for (i = 0; i < s->n_services; i++) {
		if (i > 0)
			tb_put(&b, ",", 1);
		service_text(&b, &s->svc[i]);
	}
	tb_put(&b, "]", 1);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	if (len != NULL)
		*len = b.len;
	return b.p;
}

char *
pa_lb_services_text(struct pa_lb *lb, size_t *len)
{
	struct pa_lb_snapshot s;
	char *t;

	if (pa_lb_snapshot(lb, PA_LB_SNAPSHOT_SERVICES, &s) != 0)
		return NULL;
	t = pa_lb_snapshot_services_text(&s, len);
	pa_lb_snapshot_free(&s);
	return t;
}

/* ------------------------------------------------------------------ */
/* Views of the configuration                                          */
/* ------------------------------------------------------------------ */

/* Copy a service's configuration without its holes. */
static int
ctl_export(const struct lb_svc_ctl *c, struct pa_config_service *out)
{
	unsigned int i, n = 0;

	*out = c->cfg;
	out->backends = NULL;
	out->n_backends = 0;
	if (lb_live_backends(c) == 0)
		return 0;
	out->backends = calloc(lb_live_backends(c), sizeof(*out->backends));
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
	slot = lb_find_service(lb, name);
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
