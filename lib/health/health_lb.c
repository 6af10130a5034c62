/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LB's backends checked: the prober's targets kept in step with the
 * LB (by counter slot and uid), its verdicts reported back, on a thread
 * of its own (pa_health_lb_start()) or driven by the caller.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <rte_lcore.h>
#include <rte_log.h>

#include "pa_clock.h"
#include "pa_err.h"
#include "pa_health_lb.h"

RTE_LOG_REGISTER(pa_health_logtype, pa.health, INFO);
#define HC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_health_logtype, "pa.health: " fmt "\n", \
		##__VA_ARGS__)

/* Where probes of one family leave from. */
struct hc_src {
	char ifname[PA_HEALTH_IFNAME_MAX];
	struct pa_ip_prefix pfx;	/* the port's address, as configured */
};

/* Prober slots: a backend's check at its counter slot, its agent check
 * at AGENT_SLOT + its counter slot. */
#define AGENT_SLOT	PA_LB_MAX_BACKENDS
#define N_SLOTS		(2 * PA_LB_MAX_BACKENDS)
/* The thread's longest wait: how soon it sees the LB's changes (a
 * backend added, a service's checks changed). */
#define THREAD_POLL_MS	50

struct pa_health_lb {
	struct pa_lb *lb;
	struct pa_health *h;
	uint64_t version;		/* the LB's, at the last sync */
	bool synced;
	uint32_t *uid;			/* per counter slot: the target's
					 * backend, 0 = none */
	uint32_t *seen;			/* per counter slot: sync number */
	uint32_t sync_no;
	unsigned int n_src;
	struct hc_src src[PA_CONFIG_MAX_PORTS * PA_CONFIG_MAX_ADDRS];
	uint64_t no_source;
	uint64_t syncs;
	int64_t publish_at;		/* ms: pending health tables; -1 none */
	/* the thread (pa_health_lb_start()) */
	bool started;
	bool stop;			/* atomic: the thread ends */
	int wake_fd;			/* eventfd: wakes the thread to stop */
	pthread_t tid;
	/* the counters as of the last round, for other threads */
	pthread_mutex_t snap_lock;
	struct pa_health_lb_snapshot snap;
};

static void snap_update(struct pa_health_lb *x);

/* The port to probe @p a from: the one whose subnet holds it, else the
 * first of its family. */
static const struct hc_src *
source_for(const struct pa_health_lb *x, const struct pa_ip_addr *a)
{
	const struct hc_src *first = NULL;
	unsigned int i;

	for (i = 0; i < x->n_src; i++) {
		if (x->src[i].pfx.addr.family != a->family)
			continue;
		if (pa_ip_prefix_contains(&x->src[i].pfx, a))
			return &x->src[i];
		if (first == NULL)
			first = &x->src[i];
	}
	return first;
}

static void
on_probe(void *arg, unsigned int idx, const struct pa_health_info *in)
{
	struct pa_health_lb *x = arg;
	enum pa_lb_agent_state st;
	struct pa_lb_health_report r = {
		.health = in->status == PA_HEALTH_STATUS_UP ? PA_LB_HEALTH_UP :
			in->status == PA_HEALTH_STATUS_DOWN ?
			PA_LB_HEALTH_DOWN : PA_LB_HEALTH_UNKNOWN,
		.last = pa_health_result_name(in->last),
		.code = in->last_status_code,
		.latency_us = in->last_latency_us,
		.probes = in->probes,
		.failures = in->failures,
	};

	if (x->uid[idx] == 0)
		return;
	if (idx >= AGENT_SLOT) {
		/* an agent that cannot be reached changes nothing: what it
		 * said last holds */
		st = in->agent_state == PA_HEALTH_AGENT_DRAIN ?
			PA_LB_AGENT_DRAIN :
			in->agent_state == PA_HEALTH_AGENT_DOWN ?
			PA_LB_AGENT_DOWN : PA_LB_AGENT_NONE;
		(void)pa_lb_backend_agent(x->lb, idx - AGENT_SLOT, x->uid[idx],
			in->agent_pct, st);
		return;
	}
	/* -ENOENT: deleted meanwhile; the next sync drops the target */
	(void)pa_lb_backend_health(x->lb, idx, x->uid[idx], &r);
}

struct pa_health_lb *
pa_health_lb_create(const struct pa_health_lb_opts *o, char *err,
		size_t err_len)
{
	struct pa_health_opts ho = {
		.max_targets = N_SLOTS,
		.max_inflight = o->max_inflight,
	};
	struct pa_health_lb *x;
	unsigned int i, j;

	x = calloc(1, sizeof(*x));
	if (x == NULL)
		goto nomem;
	x->lb = o->lb;
	x->publish_at = -1;
	x->wake_fd = -1;
	pthread_mutex_init(&x->snap_lock, NULL);
	x->uid = calloc(N_SLOTS, sizeof(*x->uid));
	x->seen = calloc(N_SLOTS, sizeof(*x->seen));
	if (x->uid == NULL || x->seen == NULL)
		goto nomem;
	for (i = 0; i < o->cfg->n_ports; i++) {
		const struct pa_config_port *p = &o->cfg->ports[i];

		if (p->kernel_if[0] == '\0')
			continue;
		for (j = 0; j < p->n_addrs; j++) {
			struct hc_src *s = &x->src[x->n_src++];

			snprintf(s->ifname, sizeof(s->ifname), "%s",
				p->kernel_if);
			s->pfx = p->addrs[j];
		}
	}
	ho.on_probe = on_probe;
	ho.arg = x;
	x->h = pa_health_create(&ho, err, err_len);
	if (x->h == NULL) {
		pa_health_lb_destroy(x);
		return NULL;
	}
	x->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (x->wake_fd < 0) {
		pa_seterr(err, err_len, "health checks: eventfd: %s",
			strerror(errno));
		pa_health_lb_destroy(x);
		return NULL;
	}
	return x;
nomem:
	pa_health_lb_destroy(x);
	pa_seterr(err, err_len, "out of memory for the health checks");
	return NULL;
}

void
pa_health_lb_stop(struct pa_health_lb *x)
{
	uint64_t one = 1;

	if (x == NULL || !x->started)
		return;
	__atomic_store_n(&x->stop, true, __ATOMIC_RELEASE);
	if (write(x->wake_fd, &one, sizeof(one)) != sizeof(one))
		HC_LOG(WARNING, "cannot wake the checks' thread: %s (it sees the stop within %u ms)",
			strerror(errno), THREAD_POLL_MS);
	pthread_join(x->tid, NULL);
	x->started = false;
}

void
pa_health_lb_destroy(struct pa_health_lb *x)
{
	if (x == NULL)
		return;
	pa_health_lb_stop(x);
	pa_health_destroy(x->h);
	if (x->wake_fd >= 0)
		close(x->wake_fd);
	pthread_mutex_destroy(&x->snap_lock);
	free(x->uid);
	free(x->seen);
	free(x);
}

int
pa_health_lb_fd(const struct pa_health_lb *x)
{
	return x != NULL ? pa_health_fd(x->h) : -1;
}

int
pa_health_lb_timeout_ms(const struct pa_health_lb *x)
{
	uint64_t now;
	int t;

	if (x == NULL)
		return -1;
	if (pa_lb_config_version(x->lb) != x->version || !x->synced)
		return 0;
	now = (uint64_t)pa_clock_ms();
	t = pa_health_timeout_ms(x->h, now);
	if (x->publish_at >= 0) {
		int p = x->publish_at > (int64_t)now ?
			(int)(x->publish_at - (int64_t)now) : 0;

		if (t < 0 || p < t)
			t = p;
	}
	return t;
}

struct sync_ctx {
	struct pa_health_lb *x;
	uint64_t now;
	unsigned int added, no_source;
};

static void set_one(struct sync_ctx *c, unsigned int slot, uint32_t uid,
		const struct pa_config_health *hc, enum pa_health_type type,
		const struct hc_src *src, uint16_t port,
		const struct pa_ip_addr *addr);

static void
sync_one(void *arg, const struct pa_lb_health_target *t)
{
	struct sync_ctx *c = arg;
	struct pa_health_lb *x = c->x;
	const struct pa_config_health *hc = t->health;
	const struct hc_src *src;

	if (t->cslot >= PA_LB_MAX_BACKENDS)
		return;
	src = source_for(x, &t->addr);
	if (src == NULL) {
		c->no_source++;
		return;
	}
	if (hc->type != PA_HEALTH_NONE)
		set_one(c, t->cslot, t->uid, hc, hc->type, src,
			hc->type == PA_HEALTH_ICMP ? 0 :
			hc->port != 0 ? hc->port : t->port, &t->addr);
	if (hc->agent_port != 0)
		set_one(c, AGENT_SLOT + t->cslot, t->uid, hc, PA_HEALTH_AGENT,
			src, hc->agent_port, &t->addr);
}

/* Prober slot @p slot probes @p addr as @p type says, for backend
 * @p uid. */
static void
set_one(struct sync_ctx *c, unsigned int slot, uint32_t uid,
		const struct pa_config_health *hc, enum pa_health_type type,
		const struct hc_src *src, uint16_t port,
		const struct pa_ip_addr *addr)
{
	struct pa_health_lb *x = c->x;
	struct pa_health_spec s;

	memset(&s, 0, sizeof(s));
	s.type = type;
	s.addr = *addr;
	s.port = port;
	s.src = src->pfx.addr;
	snprintf(s.ifname, sizeof(s.ifname), "%s", src->ifname);
	snprintf(s.path, sizeof(s.path), "%s", hc->path);
	s.expect_status = hc->expect_status;
	snprintf(s.expect, sizeof(s.expect), "%s", hc->expect);
	s.interval_ms = hc->interval_ms;
	s.timeout_ms = hc->timeout_ms;
	s.rise = hc->rise;
	s.fall = hc->fall;
	/* another backend in this slot: start afresh */
	if (x->uid[slot] != uid)
		pa_health_clear(x->h, slot);
	if (!pa_health_is_set(x->h, slot))
		c->added++;
	if (pa_health_set(x->h, slot, &s, c->now) != 0)
		return;
	x->uid[slot] = uid;
	x->seen[slot] = x->sync_no;
}

/* Targets = the LB's checked backends. */
static void
sync_targets(struct pa_health_lb *x, uint64_t now)
{
	struct sync_ctx c = { .x = x, .now = now };
	unsigned int i, n, removed = 0;

	x->version = pa_lb_config_version(x->lb);
	x->synced = true;
	x->syncs++;
	if (++x->sync_no == 0)
		x->sync_no = 1;
	n = pa_lb_health_targets(x->lb, sync_one, &c);
	for (i = 0; i < N_SLOTS; i++) {
		if (x->uid[i] == 0 || x->seen[i] == x->sync_no)
			continue;
		pa_health_clear(x->h, i);
		x->uid[i] = 0;
		removed++;
	}
	x->no_source = c.no_source;
	if (c.added > 0 || removed > 0 || c.no_source > 0)
		HC_LOG(INFO, "%u backends checked (%u checks new, %u no longer)%s",
			n - c.no_source, c.added, removed,
			c.no_source > 0 ? "; some have no kernel_if address of their family to be probed from" : "");
}

void
pa_health_lb_run(struct pa_health_lb *x)
{
	uint64_t now;
	int next;

	if (x == NULL)
		return;
	now = (uint64_t)pa_clock_ms();
	if (!x->synced || pa_lb_config_version(x->lb) != x->version)
		sync_targets(x, now);
	pa_health_run(x->h, now);
	/* the verdicts of this round, one table per service (at most one
	 * every PA_LB_HEALTH_PUBLISH_GAP_MS) */
	next = pa_lb_health_publish(x->lb, now);
	x->publish_at = next < 0 ? -1 : (int64_t)(now + (uint64_t)next);
	snap_update(x);
}

/* The checks' thread: the probes' sockets and timers, the LB's changes
 * followed within THREAD_POLL_MS, until pa_health_lb_stop(). */
static void *
checks_main(void *arg)
{
	struct pa_health_lb *x = arg;
	struct pollfd pfd[2] = {
		{ .fd = pa_health_fd(x->h), .events = POLLIN },
		{ .fd = x->wake_fd, .events = POLLIN },
	};
	uint64_t v;
	int t;

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		t = pa_health_lb_timeout_ms(x);
		if (t < 0 || t > THREAD_POLL_MS)
			t = THREAD_POLL_MS;
		(void)poll(pfd, RTE_DIM(pfd), t);	/* EINTR: go round */
		if (pfd[1].revents != 0 &&
		    read(x->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			HC_LOG(WARNING, "checks' thread: eventfd: %s",
				strerror(errno));
		pa_health_lb_run(x);
	}
	return NULL;
}

int
pa_health_lb_start(struct pa_health_lb *x, char *err, size_t err_len)
{
	int ret;

	if (x == NULL || x->started)
		return 0;
	__atomic_store_n(&x->stop, false, __ATOMIC_RELEASE);
	ret = rte_ctrl_thread_create(&x->tid, "pa-health", NULL, checks_main,
		x);
	if (ret != 0) {
		pa_seterr(err, err_len, "cannot start the health checks' thread: %s",
			strerror(ret < 0 ? -ret : ret));
		return ret < 0 ? ret : -ret;
	}
	x->started = true;
	return 0;
}

/* The counters as of now, for pa_health_lb_snapshot() (the thread that
 * runs the checks). */
static void
snap_update(struct pa_health_lb *x)
{
	struct pa_health_lb_snapshot s;

	pa_health_stats(x->h, &s.probe);
	s.no_source = x->no_source;
	s.syncs = x->syncs;
	pthread_mutex_lock(&x->snap_lock);
	x->snap = s;
	pthread_mutex_unlock(&x->snap_lock);
}

void
pa_health_lb_snapshot(const struct pa_health_lb *x,
		struct pa_health_lb_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	if (x == NULL)
		return;
	pthread_mutex_lock((pthread_mutex_t *)&x->snap_lock);
	*s = x->snap;
	pthread_mutex_unlock((pthread_mutex_t *)&x->snap_lock);
}

json_t *
pa_health_lb_snapshot_json(const struct pa_health_lb_snapshot *s)
{
	json_t *o, *r;
	unsigned int i;

	r = json_object();
	if (r == NULL)
		return NULL;
	for (i = 1; i < PA_HEALTH_R_MAX; i++)
		json_object_set_new(r, pa_health_result_name(i),
			json_integer((json_int_t)s->probe.results[i]));
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:I}",
		"targets", (json_int_t)s->probe.targets,
		"up", (json_int_t)s->probe.up,
		"down", (json_int_t)s->probe.down,
		"unknown", (json_int_t)s->probe.unknown,
		"inflight", (json_int_t)s->probe.inflight,
		"max_inflight", (json_int_t)s->probe.max_inflight,
		"waiting", (json_int_t)s->probe.waiting,
		"probes", (json_int_t)s->probe.probes,
		"results", r,
		"deferred", (json_int_t)s->probe.deferred,
		"transitions", (json_int_t)s->probe.transitions,
		"no_source", (json_int_t)s->no_source);
	return o;
}
