/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The health prober (pa_health.h): targets in slots, one timer each in a
 * binary heap (the next probe, or the deadline of the one in flight),
 * one non-blocking socket per probe in flight, all in one epoll set.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pa_clock.h"
#include "pa_err.h"
#include "pa_health.h"
#include "pa_net.h"

#ifndef ICMP_FILTER
#define ICMP_FILTER	1	/* linux/icmp.h: raw ICMP socket type filter */
#endif
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT	24
#endif

#define RTE_DIM_(a)	(sizeof(a) / sizeof((a)[0]))
#define EVENTS_MAX	256
#define NO_IDX		UINT32_MAX	/* the wait list's end */
#define HTTP_BUF	256	/* enough for any status line we accept */
#define UDP_PAYLOAD	"pktaccel health check\n"
#define ICMP_PAYLOAD	"pktaccel"
/* The automatic in-flight limit (max_inflight 0): the probes that may be
 * in flight at once if each lasted its whole timeout, an eighth more and
 * INFLIGHT_SLACK, at least INFLIGHT_MIN, at most PA_HEALTH_AUTO_MAX_INFLIGHT
 * and the file descriptors the process may open less FD_RESERVE (its
 * other sockets, files, devices). */
#define INFLIGHT_MIN	64
#define INFLIGHT_SLACK	16
#define FD_RESERVE	256

struct target {
	bool set;
	bool inflight;
	bool waiting;			/* due, on the wait list (not in the
					 * heap) until a socket is free */
	uint32_t wprev, wnext;		/* the wait list */
	struct pa_health_spec spec;
	struct pa_health_info info;
	uint64_t when;			/* next probe, or this one's deadline */
	uint64_t due;			/* ms: this probe's (or the next one's)
					 * place on the target's grid: its
					 * first probe's time + k intervals */
	uint64_t started;		/* ms, this probe (due, or later) */
	uint64_t started_us;		/* for the latency (monotonic) */
	uint32_t gen;			/* probe number: stale events */
	uint32_t heap_pos;		/* index in heap[] */
	int fd;
	uint16_t seq;			/* icmp */
	uint16_t echo_id;		/* icmp, raw sockets */
	bool raw;			/* icmp over a raw socket */
	bool connected;			/* tcp/http: connect done */
	uint16_t got;			/* http, agent: bytes of the answer */
	int16_t agent_pct_now;		/* agent: this probe's report */
	uint8_t agent_state_now;
	char buf[HTTP_BUF];
};

struct pa_health {
	struct pa_health_opts o;
	int epfd;
	struct target *t;
	uint32_t *heap;			/* target slots, by when */
	unsigned int n_heap;
	unsigned int inflight;
	unsigned int fd_cap;		/* the automatic limit's ceiling */
	uint64_t need_milli;		/* sum of the targets' timeout /
					 * interval, in thousandths */
	/* due probes waiting for a socket (max_inflight), oldest first: they
	 * start as probes end, not by polling a timer */
	uint32_t whead, wtail;
	unsigned int waiting;
	uint16_t echo_id;
	struct pa_health_stats st;
};

static const char *const status_names[] = { "unknown", "up", "down" };
static const char *const result_names[] = {
	"none", "ok", "refused", "timeout", "unreachable", "bad_status",
	"bad_reply", "error",
};

static const char *const agent_state_names[] = {
	"none", "up", "drain", "down",
};

const char *
pa_health_agent_state_name(enum pa_health_agent_state s)
{
	return (unsigned int)s < 4 ? agent_state_names[s] : "?";
}

int
pa_health_agent_quantize(int pct)
{
	int q;

	if (pct <= 0)
		return 0;
	if (pct >= 100)
		return 100;
	q = (pct + 5) / 10 * 10;
	return q < 10 ? 10 : q;
}

int
pa_health_agent_parse(const char *line, int *pct,
		enum pa_health_agent_state *st)
{
	static const struct { const char *w; enum pa_health_agent_state s; }
	words[] = {
		{ "up", PA_HEALTH_AGENT_UP }, { "ready", PA_HEALTH_AGENT_UP },
		{ "drain", PA_HEALTH_AGENT_DRAIN },
		{ "down", PA_HEALTH_AGENT_DOWN },
		{ "fail", PA_HEALTH_AGENT_DOWN },
		{ "failed", PA_HEALTH_AGENT_DOWN },
		{ "stopped", PA_HEALTH_AGENT_DOWN },
		{ "maint", PA_HEALTH_AGENT_DOWN },
	};
	const char *p = line, *e;
	size_t n, i;
	bool any = false;

	*pct = -1;
	*st = PA_HEALTH_AGENT_NONE;
	for (;;) {
		p += strspn(p, " ,\t\r\n");
		if (*p == '\0')
			break;
		n = strcspn(p, " ,\t\r\n");
		e = p + n;
		if (n >= 2 && n <= 4 && p[n - 1] == '%') {
			int v = 0;

			for (i = 0; i < n - 1 && p[i] >= '0' && p[i] <= '9'; i++)
				v = v * 10 + (p[i] - '0');
			if (i == n - 1) {
				*pct = v > 100 ? 100 : v;
				any = true;
			}
		} else {
			for (i = 0; i < RTE_DIM_(words); i++)
				if (strlen(words[i].w) == n &&
				    strncasecmp(p, words[i].w, n) == 0) {
					*st = words[i].s;
					any = true;
				}
		}
		p = e;
	}
	return any ? 0 : -EINVAL;
}

const char *
pa_health_status_name(enum pa_health_status s)
{
	return (unsigned int)s < 3 ? status_names[s] : "?";
}

const char *
pa_health_result_name(enum pa_health_result r)
{
	return (unsigned int)r < PA_HEALTH_R_MAX ? result_names[r] : "?";
}

/* ------------------------------------------------------------------ */
/* The timer heap                                                      */
/* ------------------------------------------------------------------ */

static void
heap_swap(struct pa_health *h, unsigned int a, unsigned int b)
{
	uint32_t x = h->heap[a];

	h->heap[a] = h->heap[b];
	h->heap[b] = x;
	h->t[h->heap[a]].heap_pos = a;
	h->t[h->heap[b]].heap_pos = b;
}

static uint64_t
heap_key(const struct pa_health *h, unsigned int i)
{
	return h->t[h->heap[i]].when;
}

static void
heap_up(struct pa_health *h, unsigned int i)
{
	while (i > 0 && heap_key(h, (i - 1) / 2) > heap_key(h, i)) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void
heap_down(struct pa_health *h, unsigned int i)
{
	unsigned int l, m;

	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < h->n_heap && heap_key(h, l) < heap_key(h, m))
			m = l;
		if (l + 1 < h->n_heap && heap_key(h, l + 1) < heap_key(h, m))
			m = l + 1;
		if (m == i)
			return;
		heap_swap(h, i, m);
		i = m;
	}
}

static void
heap_push(struct pa_health *h, unsigned int idx)
{
	h->heap[h->n_heap] = idx;
	h->t[idx].heap_pos = h->n_heap;
	h->n_heap++;
	heap_up(h, h->n_heap - 1);
}

static void
heap_remove(struct pa_health *h, unsigned int idx)
{
	unsigned int i = h->t[idx].heap_pos;

	h->n_heap--;
	if (i != h->n_heap) {
		heap_swap(h, i, h->n_heap);
		heap_down(h, i);
		heap_up(h, i);
	}
}

/* Move target @p idx's timer to @p when. */
static void
rearm(struct pa_health *h, unsigned int idx, uint64_t when)
{
	h->t[idx].when = when;
	heap_down(h, h->t[idx].heap_pos);
	heap_up(h, h->t[idx].heap_pos);
}

/* Target @p idx is due and no socket is free: off the heap, to the end
 * of the wait list. */
static void
wait_push(struct pa_health *h, unsigned int idx)
{
	struct target *t = &h->t[idx];

	heap_remove(h, idx);
	t->waiting = true;
	t->wnext = NO_IDX;
	t->wprev = h->wtail;
	if (h->wtail != NO_IDX)
		h->t[h->wtail].wnext = idx;
	else
		h->whead = idx;
	h->wtail = idx;
	h->waiting++;
	h->st.deferred++;
}

/* Take target @p idx off the wait list (not back on the heap). */
static void
wait_unlink(struct pa_health *h, unsigned int idx)
{
	struct target *t = &h->t[idx];

	if (t->wprev != NO_IDX)
		h->t[t->wprev].wnext = t->wnext;
	else
		h->whead = t->wnext;
	if (t->wnext != NO_IDX)
		h->t[t->wnext].wprev = t->wprev;
	else
		h->wtail = t->wprev;
	t->waiting = false;
	h->waiting--;
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                          */
/* ------------------------------------------------------------------ */

/* The automatic limit's ceiling: what RLIMIT_NOFILE leaves. */
static unsigned int
fd_cap(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return PA_HEALTH_DEF_MAX_INFLIGHT;
	n = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > UINT32_MAX / 2 ?
		UINT32_MAX / 2 : rl.rlim_cur;
	n = n > 2 * FD_RESERVE ? n - FD_RESERVE : n / 2;
	return n < 1 ? 1 : (unsigned int)n;
}

/* Probes that may be in flight at once (pa_health.h, max_inflight). */
static unsigned int
limit(const struct pa_health *h)
{
	uint64_t need;

	if (h->o.max_inflight != 0)
		return h->o.max_inflight;
	need = (h->need_milli + 999) / 1000;
	need += need / 8 + INFLIGHT_SLACK;
	if (need < INFLIGHT_MIN)
		need = INFLIGHT_MIN;
	if (need > PA_HEALTH_AUTO_MAX_INFLIGHT)
		need = PA_HEALTH_AUTO_MAX_INFLIGHT;
	return need < h->fd_cap ? (unsigned int)need : h->fd_cap;
}

/* A target's share of the automatic limit: timeout / interval. */
static uint64_t
need_of(const struct pa_health_spec *s)
{
	return (uint64_t)s->timeout_ms * 1000 / s->interval_ms + 1;
}

struct pa_health *
pa_health_create(const struct pa_health_opts *o, char *err, size_t err_len)
{
	struct pa_health *h;
	unsigned int i;

	if (o->max_targets == 0) {
		pa_seterr(err, err_len, "no target slots");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		goto nomem;
	h->o = *o;
	h->fd_cap = fd_cap();
	h->t = calloc(o->max_targets, sizeof(*h->t));
	h->heap = calloc(o->max_targets, sizeof(*h->heap));
	if (h->t == NULL || h->heap == NULL)
		goto nomem;
	for (i = 0; i < o->max_targets; i++)
		h->t[i].fd = -1;
	h->whead = h->wtail = NO_IDX;
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (h->epfd < 0) {
		pa_seterr(err, err_len, "epoll_create1: %s", strerror(errno));
		pa_health_destroy(h);
		return NULL;
	}
	h->echo_id = (uint16_t)(getpid() ^ 0x5aa5);
	return h;
nomem:
	pa_health_destroy(h);
	pa_seterr(err, err_len, "out of memory for %u health targets",
		o->max_targets);
	return NULL;
}

static void
probe_close(struct pa_health *h, struct target *t)
{
	if (t->fd >= 0) {
		close(t->fd);	/* leaves the epoll set with it */
		t->fd = -1;
	}
	if (t->inflight) {
		t->inflight = false;
		h->inflight--;
	}
}

void
pa_health_destroy(struct pa_health *h)
{
	unsigned int i;

	if (h == NULL)
		return;
	if (h->t != NULL)
		for (i = 0; i < h->o.max_targets; i++)
			probe_close(h, &h->t[i]);
	if (h->epfd > 0)
		close(h->epfd);
	free(h->t);
	free(h->heap);
	free(h);
}

static bool
spec_ok(const struct pa_health_spec *s)
{
	if (s->type == PA_HEALTH_NONE || s->type > PA_HEALTH_AGENT)
		return false;
	if (s->addr.family != AF_INET && s->addr.family != AF_INET6)
		return false;
	if (s->src.family != 0 && s->src.family != s->addr.family)
		return false;
	if (s->type != PA_HEALTH_ICMP && s->port == 0)
		return false;
	return s->interval_ms > 0 && s->timeout_ms > 0 &&
		s->timeout_ms < s->interval_ms && s->rise > 0 && s->fall > 0;
}

static bool
spec_equal(const struct pa_health_spec *a, const struct pa_health_spec *b)
{
	return a->type == b->type && pa_ip_equal(&a->addr, &b->addr) &&
		a->port == b->port &&
		(a->src.family == 0 ? b->src.family == 0 :
		 pa_ip_equal(&a->src, &b->src)) &&
		strcmp(a->ifname, b->ifname) == 0 &&
		strcmp(a->path, b->path) == 0 &&
		a->expect_status == b->expect_status &&
		strcmp(a->expect, b->expect) == 0 &&
		a->interval_ms == b->interval_ms &&
		a->timeout_ms == b->timeout_ms && a->rise == b->rise &&
		a->fall == b->fall;
}

/* The first probe's phase in the interval: a multiplicative hash of the
 * slot, so that targets set together spread evenly. */
static uint64_t
phase(unsigned int idx, uint32_t interval_ms)
{
	return ((uint64_t)(idx * 2654435761u) * interval_ms) >> 32;
}

int
pa_health_set(struct pa_health *h, unsigned int idx,
		const struct pa_health_spec *spec, uint64_t now_ms)
{
	struct target *t;

	if (idx >= h->o.max_targets || !spec_ok(spec))
		return -EINVAL;
	t = &h->t[idx];
	if (t->set && spec_equal(&t->spec, spec))
		return 0;
	if (t->set)
		pa_health_clear(h, idx);
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->set = true;
	t->spec = *spec;
	t->spec.ifname[sizeof(t->spec.ifname) - 1] = '\0';
	t->spec.path[sizeof(t->spec.path) - 1] = '\0';
	t->spec.expect[sizeof(t->spec.expect) - 1] = '\0';
	t->info.changed_ms = now_ms;
	t->info.agent_pct = -1;
	t->info.agent_reported = -1;
	t->due = now_ms + phase(idx, spec->interval_ms);
	t->when = t->due;
	heap_push(h, idx);
	h->need_milli += need_of(&t->spec);
	h->st.targets++;
	h->st.unknown++;
	return 0;
}

static uint64_t *
status_count(struct pa_health *h, enum pa_health_status s)
{
	return s == PA_HEALTH_STATUS_UP ? &h->st.up :
		s == PA_HEALTH_STATUS_DOWN ? &h->st.down : &h->st.unknown;
}

void
pa_health_clear(struct pa_health *h, unsigned int idx)
{
	struct target *t;

	if (idx >= h->o.max_targets || !h->t[idx].set)
		return;
	t = &h->t[idx];
	probe_close(h, t);
	if (t->waiting)
		wait_unlink(h, idx);
	else
		heap_remove(h, idx);
	(*status_count(h, t->info.status))--;
	h->need_milli -= need_of(&t->spec);
	h->st.targets--;
	t->set = false;
}

bool
pa_health_is_set(const struct pa_health *h, unsigned int idx)
{
	return idx < h->o.max_targets && h->t[idx].set;
}

int
pa_health_fd(const struct pa_health *h)
{
	return h->epfd;
}

int
pa_health_timeout_ms(const struct pa_health *h, uint64_t now_ms)
{
	uint64_t when;

	if (h->n_heap == 0)
		return -1;
	when = h->t[h->heap[0]].when;
	if (when <= now_ms)
		return 0;
	return when - now_ms > 60000 ? 60000 : (int)(when - now_ms);
}

int
pa_health_get(const struct pa_health *h, unsigned int idx,
		struct pa_health_info *out)
{
	if (idx >= h->o.max_targets || !h->t[idx].set)
		return -ENOENT;
	*out = h->t[idx].info;
	return 0;
}

void
pa_health_stats(const struct pa_health *h, struct pa_health_stats *s)
{
	*s = h->st;
	s->max_inflight = limit(h);
	s->inflight = h->inflight;
	s->waiting = h->waiting;
}

/* ------------------------------------------------------------------ */
/* Probes                                                              */
/* ------------------------------------------------------------------ */

static socklen_t
sockaddr_of(const struct pa_ip_addr *a, uint16_t port,
		struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		s->sin_addr = a->v4;
		return sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		s->sin6_addr = a->v6;
		return sizeof(*s);
	}
}

static enum pa_health_result
errno_result(int e)
{
	switch (e) {
	case ECONNREFUSED:
	case ECONNRESET:
		return PA_HEALTH_R_REFUSED;
	case ETIMEDOUT:
		return PA_HEALTH_R_TIMEOUT;
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EHOSTDOWN:
	case ENETDOWN:
	case EADDRNOTAVAIL:
		return PA_HEALTH_R_UNREACHABLE;
	default:
		return PA_HEALTH_R_ERROR;
	}
}

/* A socket for the probe, bound to the interface and source address. */
static int
probe_socket(struct target *t, int type, int proto)
{
	const struct pa_health_spec *s = &t->spec;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	fd = socket(s->addr.family, type | SOCK_NONBLOCK | SOCK_CLOEXEC,
		proto);
	if (fd < 0)
		return -errno;
	if (s->ifname[0] != '\0' &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, s->ifname,
		    (socklen_t)strlen(s->ifname)) != 0)
		goto fail;
	if (s->src.family != 0) {
		if (type == SOCK_STREAM || type == SOCK_DGRAM)
			(void)setsockopt(fd, IPPROTO_IP,
				IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		len = sockaddr_of(&s->src, 0, &ss);
		if (bind(fd, (struct sockaddr *)&ss, len) != 0)
			goto fail;
	}
	return fd;
fail:
	one = errno;
	close(fd);
	return -one;
}

/* Send the echo request of an icmp probe. */
static int
icmp_send(struct pa_health *h, struct target *t)
{
	uint8_t pkt[8 + sizeof(ICMP_PAYLOAD) - 1];
	uint16_t v;

	memset(pkt, 0, sizeof(pkt));
	pkt[0] = t->spec.addr.family == AF_INET ? ICMP_ECHO :
		ICMP6_ECHO_REQUEST;
	t->echo_id = h->echo_id;
	v = htons(t->echo_id);
	memcpy(pkt + 4, &v, 2);
	v = htons(t->seq);
	memcpy(pkt + 6, &v, 2);
	memcpy(pkt + 8, ICMP_PAYLOAD, sizeof(ICMP_PAYLOAD) - 1);
	/* ping sockets and raw ICMPv6 sockets fill the checksum in */
	if (t->raw && t->spec.addr.family == AF_INET) {
		v = htons(pa_ip_csum_fold(pa_ip_csum_add(0, pkt, sizeof(pkt))));
		memcpy(pkt + 2, &v, 2);
	}
	if (send(t->fd, pkt, sizeof(pkt), 0) < 0)
		return -errno;
	return 0;
}

/* Open the socket of an icmp probe: a ping socket when the kernel lets
 * us (net.ipv4.ping_group_range), else a raw one. */
static int
icmp_open(struct target *t)
{
	int proto = t->spec.addr.family == AF_INET ? IPPROTO_ICMP :
		IPPROTO_ICMPV6;
	int fd;

	t->raw = false;
	fd = probe_socket(t, SOCK_DGRAM, proto);
	if (fd == -EACCES || fd == -EPERM || fd == -EPROTONOSUPPORT) {
		t->raw = true;
		fd = probe_socket(t, SOCK_RAW, proto);
	}
	if (fd >= 0 && t->raw && t->spec.addr.family == AF_INET6) {
		struct icmp6_filter f;

		ICMP6_FILTER_SETBLOCKALL(&f);
		ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
		(void)setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f,
			sizeof(f));
	} else if (fd >= 0 && t->raw) {
		uint32_t mask = ~(1u << ICMP_ECHOREPLY);

		(void)setsockopt(fd, SOL_RAW, ICMP_FILTER, &mask, sizeof(mask));
	}
	return fd;
}

static void finish(struct pa_health *h, unsigned int idx,
		enum pa_health_result r, uint64_t now_ms);

/* Start target @p idx's probe. */
static void
start(struct pa_health *h, unsigned int idx, uint64_t now_ms)
{
	struct target *t = &h->t[idx];
	struct sockaddr_storage ss;
	struct epoll_event ev = { 0 };
	struct linger lg = { 1, 0 };
	socklen_t len;
	int fd, rc;

	t->inflight = true;
	h->inflight++;
	t->gen++;
	t->started = now_ms;
	t->started_us = pa_clock_us();
	t->connected = false;
	t->got = 0;
	t->when = now_ms + t->spec.timeout_ms;
	len = sockaddr_of(&t->spec.addr, t->spec.port, &ss);
	ev.data.u64 = (uint64_t)t->gen << 32 | idx;

	switch (t->spec.type) {
	case PA_HEALTH_TCP:
	case PA_HEALTH_HTTP:
	case PA_HEALTH_AGENT:
		fd = probe_socket(t, SOCK_STREAM, 0);
		if (fd < 0)
			goto fail;
		t->fd = fd;
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (connect(fd, (struct sockaddr *)&ss, len) != 0 &&
		    errno != EINPROGRESS) {
			fd = -errno;
			goto fail;
		}
		ev.events = EPOLLOUT;
		break;
	case PA_HEALTH_UDP:
		fd = probe_socket(t, SOCK_DGRAM, 0);
		if (fd < 0)
			goto fail;
		t->fd = fd;
		if (connect(fd, (struct sockaddr *)&ss, len) != 0 ||
		    send(fd, UDP_PAYLOAD, sizeof(UDP_PAYLOAD) - 1, 0) < 0) {
			fd = -errno;
			goto fail;
		}
		ev.events = EPOLLIN;
		break;
	case PA_HEALTH_ICMP:
		fd = icmp_open(t);
		if (fd < 0)
			goto fail;
		t->fd = fd;
		t->seq++;
		sockaddr_of(&t->spec.addr, 0, &ss);
		if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
			fd = -errno;
			goto fail;
		}
		rc = icmp_send(h, t);
		if (rc < 0) {
			fd = rc;
			goto fail;
		}
		ev.events = EPOLLIN;
		break;
	default:
		fd = -EINVAL;
		goto fail;
	}
	if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, t->fd, &ev) != 0) {
		fd = -errno;
		goto fail;
	}
	rearm(h, idx, t->when);
	return;
fail:
	finish(h, idx, errno_result(-fd), now_ms);
}

/* A probe ended: its verdict, the status, the next probe. */
static void
finish(struct pa_health *h, unsigned int idx, enum pa_health_result r,
		uint64_t now_ms)
{
	struct target *t = &h->t[idx];
	struct pa_health_info *in = &t->info;
	enum pa_health_status old = in->status, st = old;
	uint64_t lat = pa_clock_us() - t->started_us;

	probe_close(h, t);
	in->last = r;
	in->last_latency_us = lat > UINT32_MAX ? UINT32_MAX : (uint32_t)lat;
	in->probes++;
	h->st.probes++;
	h->st.results[r]++;
	if (r == PA_HEALTH_R_OK && t->spec.type == PA_HEALTH_AGENT) {
		if (t->agent_state_now != PA_HEALTH_AGENT_NONE)
			in->agent_state = t->agent_state_now;
		if (t->agent_pct_now >= 0) {
			int16_t q = (int16_t)pa_health_agent_quantize(
				t->agent_pct_now);

			if (q == in->agent_reported) {
				if (in->agent_same < UINT16_MAX)
					in->agent_same++;
			} else {
				in->agent_reported = q;
				in->agent_same = 1;
			}
			if (in->agent_same >= t->spec.rise)
				in->agent_pct = q;
		}
	}
	if (r == PA_HEALTH_R_OK) {
		in->ok_run++;
		in->fail_run = 0;
		if (in->ok_run >= t->spec.rise)
			st = PA_HEALTH_STATUS_UP;
	} else {
		in->failures++;
		in->fail_run++;
		in->ok_run = 0;
		if (in->fail_run >= t->spec.fall)
			st = PA_HEALTH_STATUS_DOWN;
	}
	/* the next probe: the next place on the target's grid after this
	 * one's start, however late it started (it waited for a socket, the
	 * caller ran late) or long it took: no drift. A probe that started
	 * a whole interval (or more) late skips the places it missed rather
	 * than following at once. Late (the place has passed: this probe
	 * ended after it): due now. */
	t->due += t->spec.interval_ms;
	if (t->due <= t->started)
		t->due += ((t->started - t->due) / t->spec.interval_ms + 1) *
			t->spec.interval_ms;
	rearm(h, idx, t->due);
	if (st != old) {
		(*status_count(h, old))--;
		(*status_count(h, st))++;
		in->status = st;
		in->changed_ms = now_ms;
		h->st.transitions++;
	}
	if (h->o.on_probe != NULL)
		h->o.on_probe(h->o.arg, idx, in);
	if (st != old && h->o.on_change != NULL)
		h->o.on_change(h->o.arg, idx, in);
}

/* http: the status line, once the answer holds it. */
static enum pa_health_result
http_verdict(struct target *t, bool eof)
{
	char *eol;
	unsigned long code = 0;
	unsigned int i;

	t->buf[t->got] = '\0';
	eol = strstr(t->buf, "\r\n");
	if (eol == NULL && !eof && t->got < sizeof(t->buf) - 1)
		return PA_HEALTH_R_NONE;		/* more to come */
	/* "HTTP/1.x NNN" */
	if (t->got < 12 || strncmp(t->buf, "HTTP/", 5) != 0 ||
	    t->buf[8] != ' ')
		return PA_HEALTH_R_BAD_REPLY;
	for (i = 9; i < 12; i++) {
		if (t->buf[i] < '0' || t->buf[i] > '9')
			return PA_HEALTH_R_BAD_REPLY;
		code = code * 10 + (unsigned long)(t->buf[i] - '0');
	}
	t->info.last_status_code = (uint16_t)code;
	return code == t->spec.expect_status ? PA_HEALTH_R_OK :
		PA_HEALTH_R_BAD_STATUS;
}

/* agent: its line, once it is whole (a newline, the end, or full). */
static enum pa_health_result
agent_verdict(struct target *t, bool eof)
{
	enum pa_health_agent_state st;
	int pct;

	t->buf[t->got] = '\0';
	if (strchr(t->buf, '\n') == NULL && !eof &&
	    t->got < sizeof(t->buf) - 1)
		return PA_HEALTH_R_NONE;
	*strchrnul(t->buf, '\n') = '\0';
	if (pa_health_agent_parse(t->buf, &pct, &st) != 0)
		return PA_HEALTH_R_BAD_REPLY;
	t->agent_pct_now = (int16_t)pct;
	t->agent_state_now = (uint8_t)st;
	return PA_HEALTH_R_OK;
}

/* An icmp probe's socket is readable: its echo reply? */
static enum pa_health_result
icmp_verdict(struct target *t)
{
	uint8_t b[512];
	const uint8_t *p = b;
	ssize_t n;
	uint16_t id, seq;
	uint8_t want = t->spec.addr.family == AF_INET ? ICMP_ECHOREPLY :
		ICMP6_ECHO_REPLY;

	for (;;) {
		n = recv(t->fd, b, sizeof(b), 0);
		if (n < 0)
			return errno == EAGAIN ? PA_HEALTH_R_NONE :
				errno_result(errno);
		p = b;
		if (t->raw && t->spec.addr.family == AF_INET) {
			size_t ihl = (size_t)(b[0] & 0xf) * 4;

			if ((size_t)n < ihl + 8)
				continue;
			p = b + ihl;
			n -= (ssize_t)ihl;
		}
		if (n < 8 || p[0] != want)
			continue;
		memcpy(&id, p + 4, 2);
		memcpy(&seq, p + 6, 2);
		/* ping sockets choose and check the id themselves */
		if ((t->raw && ntohs(id) != t->echo_id) || ntohs(seq) != t->seq)
			continue;
		return PA_HEALTH_R_OK;
	}
}

static enum pa_health_result
udp_verdict(struct target *t)
{
	char b[512];
	ssize_t n;

	n = recv(t->fd, b, sizeof(b) - 1, 0);
	if (n < 0)
		return errno == EAGAIN ? PA_HEALTH_R_NONE : errno_result(errno);
	b[n] = '\0';
	if (t->spec.expect[0] == '\0')
		return PA_HEALTH_R_OK;
	return memmem(b, (size_t)n, t->spec.expect, strlen(t->spec.expect)) ?
		PA_HEALTH_R_OK : PA_HEALTH_R_BAD_REPLY;
}

/* An event of target @p idx's socket. */
static void
event(struct pa_health *h, unsigned int idx, uint32_t events,
		uint64_t now_ms)
{
	struct target *t = &h->t[idx];
	enum pa_health_result r = PA_HEALTH_R_NONE;
	char req[PA_CONFIG_HEALTH_PATH_MAX + 160];
	char host[INET6_ADDRSTRLEN];
	struct epoll_event ev = { 0 };
	socklen_t sl = sizeof(int);
	ssize_t n;
	int e = 0, len;

	switch (t->spec.type) {
	case PA_HEALTH_TCP:
	case PA_HEALTH_HTTP:
	case PA_HEALTH_AGENT:
		if (!t->connected) {
			/* writable without an error: connected (the system
			 * call that asks is spared: a tenth of a probe's) */
			if ((events & (EPOLLERR | EPOLLHUP)) != 0 &&
			    getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &e, &sl) != 0)
				e = errno;
			else if ((events & (EPOLLERR | EPOLLHUP)) != 0 && e == 0)
				e = ECONNRESET;	/* hung up, no error said */
			if (e != 0) {
				r = errno_result(e);
				break;
			}
			if (t->spec.type == PA_HEALTH_TCP) {
				r = PA_HEALTH_R_OK;
				break;
			}
			t->connected = true;
			if (t->spec.type == PA_HEALTH_AGENT) {
				/* the agent speaks first */
				ev.events = EPOLLIN | EPOLLRDHUP;
				ev.data.u64 = (uint64_t)t->gen << 32 | idx;
				if (epoll_ctl(h->epfd, EPOLL_CTL_MOD, t->fd,
						&ev) != 0)
					r = PA_HEALTH_R_ERROR;
				break;
			}
			len = snprintf(req, sizeof(req),
				"GET %s HTTP/1.0\r\nHost: %s%s%s\r\nUser-Agent: pktaccel-health\r\nConnection: close\r\n\r\n",
				t->spec.path,
				t->spec.addr.family == AF_INET6 ? "[" : "",
				pa_net_format_ip(&t->spec.addr, host,
					sizeof(host)),
				t->spec.addr.family == AF_INET6 ? "]" : "");
			if (send(t->fd, req, (size_t)len, MSG_NOSIGNAL) != len) {
				r = errno_result(errno);
				break;
			}
			ev.events = EPOLLIN | EPOLLRDHUP;
			ev.data.u64 = (uint64_t)t->gen << 32 | idx;
			if (epoll_ctl(h->epfd, EPOLL_CTL_MOD, t->fd, &ev) != 0)
				r = PA_HEALTH_R_ERROR;
			break;
		}
		for (;;) {
			n = recv(t->fd, t->buf + t->got,
				sizeof(t->buf) - 1 - t->got, 0);
			if (n < 0) {
				if (errno != EAGAIN)
					r = t->got == 0 ? errno_result(errno) :
						t->spec.type == PA_HEALTH_AGENT ?
						agent_verdict(t, true) :
						http_verdict(t, true);
				break;
			}
			t->got += (uint16_t)n;
			r = t->spec.type == PA_HEALTH_AGENT ?
				agent_verdict(t, n == 0) :
				http_verdict(t, n == 0);
			if (r != PA_HEALTH_R_NONE || n == 0)
				break;
		}
		break;
	case PA_HEALTH_UDP:
		r = udp_verdict(t);
		break;
	case PA_HEALTH_ICMP:
		r = icmp_verdict(t);
		break;
	default:
		r = PA_HEALTH_R_ERROR;
	}
	if (r != PA_HEALTH_R_NONE)
		finish(h, idx, r, now_ms);
}

/* Start the waiting probes, oldest first, while sockets are free. */
static void
start_waiting(struct pa_health *h, uint64_t now_ms)
{
	unsigned int idx, max = limit(h);

	while (h->whead != NO_IDX && h->inflight < max) {
		idx = h->whead;
		wait_unlink(h, idx);
		h->t[idx].when = now_ms;
		heap_push(h, idx);
		start(h, idx, now_ms);
	}
}

unsigned int
pa_health_run(struct pa_health *h, uint64_t now_ms)
{
	struct epoll_event ev[EVENTS_MAX];
	uint64_t before = h->st.probes;
	struct target *t;
	unsigned int idx, max = limit(h);
	int i, n;

	do {
		n = epoll_wait(h->epfd, ev, EVENTS_MAX, 0);
		for (i = 0; i < n; i++) {
			idx = (uint32_t)ev[i].data.u64;
			if (idx >= h->o.max_targets)
				continue;
			t = &h->t[idx];
			/* a probe that ended or was abandoned meanwhile */
			if (!t->set || !t->inflight ||
			    t->gen != (uint32_t)(ev[i].data.u64 >> 32))
				continue;
			event(h, idx, ev[i].events, now_ms);
		}
	} while (n == EVENTS_MAX);

	start_waiting(h, now_ms);
	while (h->n_heap > 0) {
		idx = h->heap[0];
		t = &h->t[idx];
		if (t->when > now_ms)
			break;
		if (t->inflight) {
			/* udp without "expect": no ICMP error in time is
			 * the pass; everything else failed */
			finish(h, idx, t->spec.type == PA_HEALTH_UDP &&
				t->spec.expect[0] == '\0' ? PA_HEALTH_R_OK :
				PA_HEALTH_R_TIMEOUT, now_ms);
			continue;
		}
		/* no free socket, or older probes waiting for one: in turn */
		if (h->inflight >= max || h->whead != NO_IDX) {
			wait_push(h, idx);
			continue;
		}
		start(h, idx, now_ms);
	}
	start_waiting(h, now_ms);
	return (unsigned int)(h->st.probes - before);
}
