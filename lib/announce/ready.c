/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Readiness (links, tables, lcores making progress), drain, and the host
 * routes of the VIPs and of the full-NAT pool kept in step with them on
 * the control thread.
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/rtnetlink.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "pa_announce.h"
#include "pa_err.h"
#include "pa_lb.h"
#include "pa_pipeline.h"
#include "pa_port.h"

RTE_LOG_REGISTER(pa_announce_logtype, pa.announce, INFO);
#define LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_announce_logtype, "pa.announce: " fmt "\n", \
		##__VA_ARGS__)

#define ERROR_LOG_MS	1000	/* at most one failure logged a second */

/* One distinct address (a VIP, or a full-NAT pool address that is no
 * port's) and whether its route is in the kernel table. */
struct route_slot {
	struct pa_ip_addr addr;
	bool wanted;			/* a service has it, or the pool */
	bool pool;			/* lb.fnat's, not a VIP */
	bool installed;
};

struct pa_ready {
	const struct pa_config *cfg;
	const struct pa_port_set *ports;
	struct pa_pipeline *pl;
	struct pa_lb *lb;
	bool tables_loaded;
	bool announce;
	uint32_t table;
	char ifname[PA_CONFIG_IFNAME_MAX];
	uint32_t oif;
	struct pa_announce_nl nl;

	/* any thread (atomics) */
	bool started;
	bool stopping;
	bool term_drain;
	unsigned int n_routes;
	uint64_t beat_ms;		/* the control thread's last poll */
	uint32_t flush_epoch;		/* bumped by each backstop flush */
	uint64_t backstop_flushes;

	/* main thread (pa_ready_backstop()) */
	struct pa_watchdog bs_wd;
	bool bs_wd_on;
	bool bs_fired;

	/* control thread */
	bool draining;
	bool ready;
	bool evaluated;
	uint64_t next_eval_ms;
	uint64_t next_link_ms;
	uint64_t retry_at_ms;
	uint64_t reassert_at_ms;
	uint64_t last_error_log_ms;
	uint64_t now_ms;
	bool link_down[PA_CONFIG_MAX_PORTS];
	bool wd_on;
	struct pa_watchdog wd;
	unsigned int lcore_id[PA_WATCHDOG_MAX];
	unsigned int n_reasons;
	char reasons[PA_READY_MAX_REASONS][PA_READY_REASON_LEN];
	bool have_version;
	uint64_t lb_version;
	uint32_t seen_epoch;
	struct route_slot *slots;
	unsigned int n_slots, cap_slots;
	/* counters */
	uint64_t route_adds, route_deletes, route_errors, stale_removed;
	uint64_t route_reasserts;
	uint64_t not_ready_transitions;
};

struct pa_ready *
pa_ready_create(const struct pa_ready_opts *o, char *err, size_t err_len)
{
	struct pa_ready *h;
	unsigned int removed = 0;
	int port, ret;

	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		pa_seterr(err, err_len, "health: out of memory");
		return NULL;
	}
	h->cfg = o->cfg;
	h->ports = o->ports;
	h->pl = o->pl;
	h->lb = o->lb;
	h->tables_loaded = o->tables_loaded;
	h->nl.fd = -1;
	h->announce = o->announce && o->cfg->announce.present;
	if (!h->announce)
		return h;
	h->table = o->cfg->announce.table;
	port = pa_announce_port(o->cfg);
	if (port < 0) {
		pa_seterr(err, err_len, "announce: no port with a kernel_if");
		goto fail;
	}
	memcpy(h->ifname, o->cfg->ports[port].kernel_if, sizeof(h->ifname));
	h->oif = if_nametoindex(h->ifname);
	if (h->oif == 0) {
		pa_seterr(err, err_len, "announce: kernel_if '%s': %s",
			h->ifname, strerror(errno));
		goto fail;
	}
	ret = pa_announce_nl_open(&h->nl, PA_ANNOUNCE_NL_TIMEOUT_MS);
	if (ret != 0) {
		pa_seterr(err, err_len, "announce: netlink socket: %s",
			strerror(-ret));
		goto fail;
	}
	ret = pa_announce_nl_flush(&h->nl, h->table, PA_ANNOUNCE_RTPROT,
		&removed);
	if (ret != 0) {
		pa_seterr(err, err_len,
			"announce: cannot remove the stale routes of table %u: %s",
			h->table, strerror(-ret));
		goto fail;
	}
	h->stale_removed = removed;
	if (removed != 0)
		LOG(NOTICE, "removed %u stale routes (proto %d) from table %u",
			removed, PA_ANNOUNCE_RTPROT, h->table);
	return h;
fail:
	pa_announce_nl_close(&h->nl);
	free(h);
	return NULL;
}

/* Add (or re-add: @p again, counted apart) or withdraw one route. */
static int
route_change_ex(struct pa_ready *h, struct route_slot *s, bool add,
		bool again)
{
	struct pa_announce_route r = {
		.dst = s->addr,
		.dst_len = s->addr.family == AF_INET ? 32 : 128,
		.table = h->table,
		.protocol = PA_ANNOUNCE_RTPROT,
		/* a withdrawal names no device: whatever route of ours
		 * the VIP has in the table goes (the kernel matches the
		 * protocol) */
		.oif = add ? h->oif : 0,
	};
	char a[64];
	int ret;

	ret = pa_announce_nl_route(&h->nl, add ? RTM_NEWROUTE : RTM_DELROUTE,
		&r);
	if (ret == -ENODEV) {
		/* the kernel_if was re-created: look it up again */
		h->oif = if_nametoindex(h->ifname);
		if (h->oif != 0 && add) {
			r.oif = h->oif;
			ret = pa_announce_nl_route(&h->nl, add ?
				RTM_NEWROUTE : RTM_DELROUTE, &r);
		}
	}
	if (ret != 0) {
		h->route_errors++;
		if (h->now_ms - h->last_error_log_ms >= ERROR_LOG_MS ||
		    h->last_error_log_ms == 0) {
			h->last_error_log_ms = h->now_ms;
			LOG(WARNING, "cannot %s the route of %s in table %u: %s",
				add ? "add" : "withdraw",
				pa_net_format_ip(&s->addr, a, sizeof(a)),
				h->table, strerror(-ret));
		}
		return ret;
	}
	s->installed = add;
	if (again)
		h->route_reasserts++;
	else if (add)
		h->route_adds++;
	else
		h->route_deletes++;
	return 0;
}

static int
route_change(struct pa_ready *h, struct route_slot *s, bool add)
{
	return route_change_ex(h, s, add, false);
}

void
pa_ready_destroy(struct pa_ready *h)
{
	unsigned int i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n_slots; i++)
		if (h->slots[i].installed)
			(void)route_change(h, &h->slots[i], false);
	pa_announce_nl_close(&h->nl);
	free(h->slots);
	free(h);
}

void
pa_ready_set_started(struct pa_ready *h)
{
	if (h != NULL)
		__atomic_store_n(&h->started, true, __ATOMIC_RELEASE);
}

void
pa_ready_set_stopping(struct pa_ready *h)
{
	if (h != NULL)
		__atomic_store_n(&h->stopping, true, __ATOMIC_RELEASE);
}

void
pa_ready_request_drain(struct pa_ready *h)
{
	if (h != NULL)
		__atomic_store_n(&h->term_drain, true, __ATOMIC_RELEASE);
}

unsigned int
pa_ready_routes(const struct pa_ready *h)
{
	return h != NULL ? __atomic_load_n(&h->n_routes, __ATOMIC_ACQUIRE) : 0;
}

void
pa_ready_set_draining(struct pa_ready *h, bool draining)
{
	if (h == NULL)
		return;
	h->draining = draining;
	h->next_eval_ms = 0;	/* act at the next poll */
}

static bool
is_draining(const struct pa_ready *h)
{
	return h->draining || __atomic_load_n(&h->term_drain, __ATOMIC_ACQUIRE);
}

static void
add_reason(struct pa_ready *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
add_reason(struct pa_ready *h, const char *fmt, ...)
{
	va_list ap;

	if (h->n_reasons >= PA_READY_MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(h->reasons[h->n_reasons], PA_READY_REASON_LEN, fmt, ap);
	va_end(ap);
	h->n_reasons++;
}

static void
check_links(struct pa_ready *h)
{
	struct rte_eth_link link;
	unsigned int i;

	if (h->ports == NULL)
		return;
	if (h->now_ms >= h->next_link_ms) {
		for (i = 0; i < h->ports->n && i < PA_CONFIG_MAX_PORTS; i++) {
			memset(&link, 0, sizeof(link));
			h->link_down[i] = rte_eth_link_get_nowait(
				h->ports->port[i].port_id, &link) != 0 ||
				link.link_status != RTE_ETH_LINK_UP;
		}
		h->next_link_ms = h->now_ms + PA_READY_LINK_MS;
	}
	for (i = 0; i < h->ports->n && i < PA_CONFIG_MAX_PORTS; i++)
		if (h->link_down[i])
			add_reason(h, "port %s: link down",
				h->ports->port[i].name);
}

static void
check_lcores(struct pa_ready *h)
{
	uint64_t counts[PA_WATCHDOG_MAX];
	struct pa_lcore_stats st;
	unsigned int i, n;

	if (h->pl == NULL)
		return;
	n = RTE_MIN(pa_pipeline_lcore_count(h->pl), (unsigned int)PA_WATCHDOG_MAX);
	if (!h->wd_on) {
		pa_watchdog_init(&h->wd, n, h->cfg->pipeline.stall_ms);
		h->wd_on = true;
	}
	for (i = 0; i < h->wd.n; i++) {
		if (pa_pipeline_lcore_stats(h->pl, i, &h->lcore_id[i], &st) != 0)
			counts[i] = h->wd.count[i];
		else
			counts[i] = st.busy_polls + st.idle_polls;
	}
	if (pa_watchdog_update(&h->wd, counts, h->now_ms) == 0)
		return;
	for (i = 0; i < h->wd.n; i++)
		if (h->wd.stalled[i])
			add_reason(h, "lcore %u: no progress for %llu ms",
				h->lcore_id[i], (unsigned long long)
				pa_watchdog_stalled_ms(&h->wd, i, h->now_ms));
}

static void
evaluate(struct pa_ready *h)
{
	bool was = h->ready;

	h->n_reasons = 0;
	if (!__atomic_load_n(&h->started, __ATOMIC_ACQUIRE))
		add_reason(h, "starting");
	if (__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE))
		add_reason(h, "stopping");
	if (!h->tables_loaded)
		add_reason(h, "tables not loaded");
	check_links(h);
	/* the lcores count loops once they run */
	if (__atomic_load_n(&h->started, __ATOMIC_ACQUIRE))
		check_lcores(h);
	h->ready = h->n_reasons == 0;
	if (h->evaluated && was && !h->ready) {
		h->not_ready_transitions++;
		/* a stop is no trouble worth a warning */
		if (__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE))
			LOG(INFO, "stopping");
		else
			LOG(WARNING, "not ready: %s%s", h->reasons[0],
				h->n_reasons > 1 ? " (and more)" : "");
	} else if (h->evaluated && !was && h->ready) {
		LOG(NOTICE, "ready");
	}
	h->evaluated = true;
}

static struct route_slot *
slot_of(struct pa_ready *h, const struct pa_ip_addr *a)
{
	struct route_slot *s;
	unsigned int i;

	for (i = 0; i < h->n_slots; i++)
		if (pa_ip_equal(&h->slots[i].addr, a))
			return &h->slots[i];
	if (h->n_slots == h->cap_slots) {
		unsigned int cap = h->cap_slots != 0 ? h->cap_slots * 2 : 16;

		s = realloc(h->slots, cap * sizeof(*s));
		if (s == NULL)
			return NULL;
		h->slots = s;
		h->cap_slots = cap;
	}
	s = &h->slots[h->n_slots++];
	memset(s, 0, sizeof(*s));
	s->addr = *a;
	return s;
}

/* Is @p a a routed port's own address (the port's kernel_if has it: no
 * host route of ours)? */
static bool
port_addr(const struct pa_config *cfg, const struct pa_ip_addr *a)
{
	unsigned int i, j;

	for (i = 0; i < cfg->n_ports; i++)
		for (j = 0; j < cfg->ports[i].n_addrs; j++)
			if (pa_ip_equal(&cfg->ports[i].addrs[j].addr, a))
				return true;
	return false;
}

/* Which VIPs the services have now (when services or backends changed:
 * pa_lb_config_version(), not the health checks' tables), and the
 * full-NAT pool's addresses that are no port's: the fleet's replies to
 * this appliance's mappings must come back to it. */
static void
sync_vips(struct pa_ready *h)
{
	const struct pa_config_fnat *fn = &h->cfg->lb.fnat;
	struct pa_ip_addr *vips = NULL, *be = NULL;
	unsigned int n_vips = 0, n_be = 0, i;
	struct route_slot *s;
	uint64_t v = 0;

	if (h->lb != NULL) {
		v = pa_lb_config_version(h->lb);
		if (h->have_version && v == h->lb_version)
			return;
		if (pa_lb_addresses(h->lb, &vips, &n_vips, &be, &n_be) != 0)
			return;		/* try again next time */
	} else if (h->have_version) {
		return;
	}
	for (i = 0; i < h->n_slots; i++)
		h->slots[i].wanted = false;
	for (i = 0; i < n_vips; i++) {
		s = slot_of(h, &vips[i]);
		if (s == NULL)
			goto out;	/* no memory: try again */
		s->wanted = true;
	}
	for (i = 0; fn->present && i < fn->n_addrs; i++) {
		if (port_addr(h->cfg, &fn->addrs[i]))
			continue;
		s = slot_of(h, &fn->addrs[i]);
		if (s == NULL)
			goto out;
		s->wanted = true;
		s->pool = true;
	}
	h->lb_version = v;
	h->have_version = true;
out:
	free(vips);
	free(be);
}

static void
sync_routes(struct pa_ready *h)
{
	bool on = h->ready && !is_draining(h);
	unsigned int i, j, n = 0;
	bool failed = false;

	for (i = 0; i < h->n_slots; i++) {
		struct route_slot *s = &h->slots[i];
		bool want = on && s->wanted;

		if (want == s->installed)
			continue;
		/* adds wait out a failure; withdrawals never wait */
		if (want && h->now_ms < h->retry_at_ms)
			continue;
		if (route_change(h, s, want) != 0)
			failed = true;
	}
	/* what the appliance believes is in the table must be: a route
	 * deleted by hand (ip route flush) comes back */
	if (h->reassert_at_ms == 0)
		h->reassert_at_ms = h->now_ms + PA_ANNOUNCE_REASSERT_MS;
	if (on && h->now_ms >= h->reassert_at_ms && !failed) {
		h->reassert_at_ms = h->now_ms + PA_ANNOUNCE_REASSERT_MS;
		for (i = 0; i < h->n_slots && !failed; i++) {
			if (!h->slots[i].installed || !h->slots[i].wanted)
				continue;
			/* on failure it stays "installed": whether it is
			 * there is unknown, and a withdrawal must not skip it */
			if (route_change_ex(h, &h->slots[i], true, true) != 0)
				failed = true;
		}
	}
	if (failed)
		h->retry_at_ms = h->now_ms + PA_ANNOUNCE_RETRY_MS;
	for (i = 0, j = 0; i < h->n_slots; i++) {
		if (!h->slots[i].wanted && !h->slots[i].installed)
			continue;
		if (h->slots[i].installed)
			n++;
		h->slots[j++] = h->slots[i];
	}
	h->n_slots = j;
	__atomic_store_n(&h->n_routes, n, __ATOMIC_RELEASE);
}

/* Whether lcore loop counters moved, from the main thread. */
static bool
backstop_lcore_stalled(struct pa_ready *h, uint64_t now_ms)
{
	uint64_t counts[PA_WATCHDOG_MAX];
	struct pa_lcore_stats st;
	unsigned int i, n;

	if (h->pl == NULL)
		return false;
	if (!h->bs_wd_on) {
		n = RTE_MIN(pa_pipeline_lcore_count(h->pl),
			(unsigned int)PA_WATCHDOG_MAX);
		pa_watchdog_init(&h->bs_wd, n, h->cfg->pipeline.stall_ms);
		h->bs_wd_on = true;
	}
	for (i = 0; i < h->bs_wd.n; i++)
		counts[i] = pa_pipeline_lcore_stats(h->pl, i, NULL, &st) != 0 ?
			h->bs_wd.count[i] : st.busy_polls + st.idle_polls;
	return pa_watchdog_update(&h->bs_wd, counts, now_ms) != 0;
}

bool
pa_ready_backstop(struct pa_ready *h, uint64_t now_ms, bool force)
{
	struct pa_announce_nl nl;
	unsigned int removed = 0;
	uint64_t beat;
	bool stalled;
	int ret;

	if (h == NULL || !h->announce ||
	    !__atomic_load_n(&h->started, __ATOMIC_ACQUIRE))
		return false;
	stalled = backstop_lcore_stalled(h, now_ms);
	beat = __atomic_load_n(&h->beat_ms, __ATOMIC_ACQUIRE);
	if (!force) {
		if (beat == 0 || now_ms - beat < h->cfg->pipeline.stall_ms ||
		    !stalled) {
			h->bs_fired = false;
			return false;
		}
		if (h->bs_fired)
			return false;	/* once per episode */
	}
	if (pa_ready_routes(h) == 0 && !force)
		return false;
	h->bs_fired = true;
	ret = pa_announce_nl_open(&nl, PA_ANNOUNCE_NL_TIMEOUT_MS);
	if (ret == 0) {
		ret = pa_announce_nl_flush(&nl, h->table, PA_ANNOUNCE_RTPROT,
			&removed);
		pa_announce_nl_close(&nl);
	}
	__atomic_fetch_add(&h->flush_epoch, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&h->backstop_flushes, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->n_routes, 0, __ATOMIC_RELEASE);
	LOG(WARNING, "%s: %u route(s) withdrawn from table %u by the main thread%s%s",
		force ? "stopping" :
		"an lcore and the control thread make no progress",
		removed, h->table, ret != 0 ? ": " : "",
		ret != 0 ? strerror(-ret) : "");
	return true;
}

int
pa_ready_poll(struct pa_ready *h, uint64_t now_ms)
{
	uint32_t epoch;
	unsigned int i;

	if (h == NULL)
		return INT32_MAX;
	h->now_ms = now_ms;
	__atomic_store_n(&h->beat_ms, now_ms, __ATOMIC_RELEASE);
	/* the main thread flushed the table meanwhile: nothing is in it */
	epoch = __atomic_load_n(&h->flush_epoch, __ATOMIC_ACQUIRE);
	if (epoch != h->seen_epoch) {
		h->seen_epoch = epoch;
		for (i = 0; i < h->n_slots; i++)
			h->slots[i].installed = false;
		h->next_eval_ms = 0;
	}
	/* stopping or draining act at once; the rest every eval period */
	if (now_ms < h->next_eval_ms &&
	    !__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE) &&
	    !(is_draining(h) && pa_ready_routes(h) != 0))
		return (int)(h->next_eval_ms - now_ms);
	h->next_eval_ms = now_ms + PA_READY_EVAL_MS;
	evaluate(h);
	if (h->announce) {
		sync_vips(h);
		sync_routes(h);
	}
	return PA_READY_EVAL_MS;
}

static bool
vip_announced(const struct pa_ready *h, const struct pa_ip_addr *a)
{
	unsigned int i;

	for (i = 0; i < h->n_slots; i++)
		if (h->slots[i].installed && pa_ip_equal(&h->slots[i].addr, a))
			return true;
	return false;
}

void
pa_ready_snapshot(const struct pa_ready *h, struct pa_ready_snapshot *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	if (h == NULL)
		return;
	s->ready = h->ready && h->evaluated;
	s->draining = is_draining(h);
	s->announce = h->announce;
	s->table = h->table;
	s->routes = pa_ready_routes(h);
	for (i = 0; i < h->n_slots; i++) {
		if (h->slots[i].wanted && h->slots[i].pool)
			s->pool_addrs++;
		else if (h->slots[i].wanted)
			s->vips++;
	}
	s->route_adds = h->route_adds;
	s->route_deletes = h->route_deletes;
	s->route_errors = h->route_errors;
	s->route_reasserts = h->route_reasserts;
	s->stale_removed = h->stale_removed;
	s->not_ready_transitions = h->not_ready_transitions;
	s->backstop_flushes = __atomic_load_n(&h->backstop_flushes,
		__ATOMIC_RELAXED);
	s->n_lcores = h->wd_on ? h->wd.n : 0;
	for (i = 0; i < s->n_lcores; i++) {
		s->lcore_id[i] = h->lcore_id[i];
		s->lcore_stalled[i] = h->wd.stalled[i];
		s->lcore_stalls[i] = h->wd.stalls[i];
	}
	if (!h->evaluated) {
		s->n_reasons = 1;
		snprintf(s->reasons[0], PA_READY_REASON_LEN, "starting");
		return;
	}
	s->n_reasons = h->n_reasons;
	memcpy(s->reasons, h->reasons, sizeof(s->reasons));
}

static json_t *
reasons_json(const struct pa_ready_snapshot *s)
{
	json_t *a = json_array();
	unsigned int i;

	for (i = 0; a != NULL && i < s->n_reasons; i++)
		if (json_array_append_new(a, json_string(s->reasons[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
services_json(const struct pa_ready *h)
{
	struct pa_lb_snapshot ls;
	json_t *o = json_object(), *svc;
	char vip[64];
	unsigned int i;
	int rc = 0;

	if (o == NULL || h->lb == NULL)
		return o;
	if (pa_lb_snapshot(h->lb, PA_LB_SNAPSHOT_SERVICES, &ls) != 0) {
		json_decref(o);
		return NULL;
	}
	for (i = 0; i < ls.n_services; i++) {
		const struct pa_lb_service_snapshot *v = &ls.svc[i];

		svc = json_pack("{s:s, s:i, s:s, s:I, s:I, s:b}",
			"vip", pa_net_format_ip(&v->cfg.vip, vip, sizeof(vip)),
			"port", (int)v->cfg.port,
			"proto", v->cfg.proto == IPPROTO_TCP ? "tcp" : "udp",
			"backends", (json_int_t)v->cfg.n_backends,
			"usable_backends", (json_int_t)v->usable_backends,
			"announced", vip_announced(h, &v->cfg.vip));
		rc |= json_object_set_new(o, v->cfg.name, svc);
	}
	pa_lb_snapshot_free(&ls);
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
pa_ready_json(struct pa_ready *h)
{
	struct pa_ready_snapshot *s;
	json_t *o, *lc, *an = NULL, *routes;
	char key[16], a[64], p[80];
	unsigned int i;
	int rc = 0;

	s = malloc(sizeof(*s));
	if (s == NULL)
		return NULL;
	pa_ready_snapshot(h, s);
	o = json_pack("{s:b, s:b, s:o}", "ready", s->ready,
		"draining", s->draining, "reasons", reasons_json(s));
	if (o == NULL)
		goto fail;
	rc |= json_object_set_new(o, "services", services_json(h));
	lc = json_object();
	for (i = 0; lc != NULL && i < s->n_lcores; i++) {
		snprintf(key, sizeof(key), "%u", s->lcore_id[i]);
		rc |= json_object_set_new(lc, key, json_pack("{s:b, s:I, s:I}",
			"progress", !s->lcore_stalled[i],
			"stalled_ms", (json_int_t)(s->lcore_stalled[i] ?
				pa_watchdog_stalled_ms(&h->wd, i, h->now_ms) : 0),
			"stalls", (json_int_t)s->lcore_stalls[i]));
	}
	rc |= json_object_set_new(o, "lcores", lc);
	if (s->announce) {
		routes = json_array();
		for (i = 0; routes != NULL && i < h->n_slots; i++) {
			if (!h->slots[i].installed)
				continue;
			snprintf(p, sizeof(p), "%s/%d",
				pa_net_format_ip(&h->slots[i].addr, a, sizeof(a)),
				h->slots[i].addr.family == AF_INET ? 32 : 128);
			rc |= json_array_append_new(routes, json_string(p));
		}
		an = json_pack("{s:I, s:i, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I}",
			"table", (json_int_t)s->table,
			"protocol", PA_ANNOUNCE_RTPROT,
			"dev", h->ifname,
			"routes", routes,
			"route_adds", (json_int_t)s->route_adds,
			"route_deletes", (json_int_t)s->route_deletes,
			"route_errors", (json_int_t)s->route_errors,
			"route_reasserts", (json_int_t)s->route_reasserts,
			"stale_removed", (json_int_t)s->stale_removed,
			"backstop_flushes", (json_int_t)s->backstop_flushes);
		if (an == NULL)
			rc = -1;
	}
	rc |= json_object_set_new(o, "announce", an != NULL ? an : json_null());
	if (rc != 0)
		goto fail;
	free(s);
	return o;
fail:
	json_decref(o);
	free(s);
	return NULL;
}

int
pa_ready_http(struct pa_ready *h, char **text, size_t *len,
		unsigned int *code)
{
	struct pa_ready_snapshot *s;
	json_t *o;
	char *t;

	s = malloc(sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	pa_ready_snapshot(h, s);
	o = json_pack("{s:b, s:b, s:o}", "ready", s->ready,
		"draining", s->draining, "reasons", reasons_json(s));
	*code = s->ready && !s->draining ? 200 : 503;
	free(s);
	if (o == NULL)
		return -ENOMEM;
	t = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (t == NULL)
		return -ENOMEM;
	/* one line */
	*len = strlen(t);
	*text = realloc(t, *len + 2);
	if (*text == NULL) {
		free(t);
		return -ENOMEM;
	}
	(*text)[(*len)++] = '\n';
	(*text)[*len] = '\0';
	return 0;
}
