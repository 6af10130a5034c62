/* SPDX-License-Identifier: BSD-3-Clause */
/* Capture of dropped packets: the ring's consumer and the pcap sinks. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>

#include "pa_capture.h"
#include "pa_clock.h"
#include "pa_err.h"
#include "pa_pkt.h"

RTE_LOG_REGISTER(pa_capture_logtype, pa.capture, INFO);
#define CAP_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_capture_logtype, "pa.capture: " fmt "\n", \
		##__VA_ARGS__)

#define DEQ_BURST	64
#define READ_BUF	65536u

/* A pcap file that dropped packets go to. */
struct sink {
	bool open;
	uint32_t reasons;		/* what it wants */
	uint32_t in_mask;		/* what it holds in the tap's mask now */
	pcap_t *pcap;
	pcap_dumper_t *dumper;
	uint64_t max_packets;		/* 0: no bound */
	uint64_t max_bytes;		/* 0: no bound */
	uint32_t snaplen;
	uint64_t packets;
	uint64_t bytes;
	bool dirty;			/* written since the last flush */
	uint64_t lost_base[PA_DROP_MAX];
	uint64_t lost;			/* once ended */
	enum pa_capture_end ended_by;
	double t_start, t_end;
	char path[PATH_MAX];
	char error[128];
};

struct pa_capture {
	struct pa_capture_tap *tap;
	uint64_t tsc0;			/* TSC at ... */
	struct timespec real0;		/* ... this wall-clock time */
	double tsc_hz;
	pthread_mutex_t lock;
	struct rte_rcu_qsbr *rcu;
	char dir[PATH_MAX];
	bool set_group;
	gid_t gid;
	struct sink drops;		/* --replay-drops */
	struct sink rpc;		/* capture_start */
	enum pa_capture_state rpc_state;
	uint64_t rpc_id;
	uint8_t buf[READ_BUF];
};

static const char *const end_names[] = {
	[PA_CAPTURE_END_NONE] = NULL,
	[PA_CAPTURE_END_RPC] = "rpc",
	[PA_CAPTURE_END_MAX_PACKETS] = "max_packets",
	[PA_CAPTURE_END_MAX_BYTES] = "max_bytes",
	[PA_CAPTURE_END_ERROR] = "error",
	[PA_CAPTURE_END_SHUTDOWN] = "shutdown",
};

const char *
pa_capture_end_name(enum pa_capture_end e)
{
	return (unsigned int)e < RTE_DIM(end_names) ? end_names[e] : NULL;
}

/* Pair a TSC reading with the wall clock: packet times come from the TSC
 * value the data path stamped. */
static void
clock_base(struct pa_capture *c)
{
	c->tsc_hz = (double)rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &c->real0);
	c->tsc0 = rte_rdtsc();
}

static void
tsc_to_timeval(const struct pa_capture *c, uint64_t tsc, struct timeval *tv)
{
	int64_t d = (int64_t)(tsc - c->tsc0);
	int64_t us = (int64_t)((double)d * 1e6 / c->tsc_hz);
	int64_t t = (int64_t)c->real0.tv_sec * 1000000 +
		c->real0.tv_nsec / 1000 + us;

	tv->tv_sec = (time_t)(t / 1000000);
	tv->tv_usec = (suseconds_t)(t % 1000000);
}

struct pa_capture *
pa_capture_create(const struct pa_capture_opts *o, char *err, size_t err_len)
{
	struct pa_capture *c;
	const char *dir = o->dir != NULL ? o->dir : PA_CAPTURE_DEFAULT_DIR;
	char name[RTE_RING_NAMESIZE];

	RTE_BUILD_BUG_ON(sizeof(struct pa_capture_mark) >
		sizeof(struct pa_pkt_meta));
	RTE_BUILD_BUG_ON(__alignof__(struct pa_capture_mark) >
		__alignof__(struct pa_pkt_meta));
	if (dir[0] == '\0' || strlen(dir) >= sizeof(c->dir) - PA_CAPTURE_NAME_MAX - 2) {
		pa_seterr(err, err_len, "capture directory: empty or too long");
		return NULL;
	}
	if (pa_pkt_meta_offset < 0) {
		pa_seterr(err, err_len, "capture: packet metadata not registered (pa_pkt_init)");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		pa_seterr(err, err_len, "capture: out of memory");
		return NULL;
	}
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	c->set_group = o->set_group;
	c->gid = (gid_t)o->gid;
	pthread_mutex_init(&c->lock, NULL);
	c->tap = rte_zmalloc_socket("pa_capture_tap", sizeof(*c->tap),
		RTE_CACHE_LINE_SIZE, o->socket);
	if (c->tap == NULL) {
		pa_seterr(err, err_len, "capture: no memory for the tap");
		goto fail;
	}
	c->tap->mark_offset = pa_pkt_meta_offset;
	clock_base(c);
	c->tap->wait = o->wait ? 1 : 0;
	/* One per process: several pipelines never share a daemon. */
	snprintf(name, sizeof(name), "pa_capture_%p", (void *)c);
	c->tap->ring = rte_ring_create(name,
		o->ring_size != 0 ? o->ring_size : 1024, o->socket,
		RING_F_SC_DEQ);
	if (c->tap->ring == NULL) {
		pa_seterr(err, err_len, "cannot create the capture ring: %s",
			rte_strerror(rte_errno));
		goto fail;
	}
	return c;
fail:
	rte_free(c->tap);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

struct pa_capture_tap *
pa_capture_tap(struct pa_capture *c)
{
	return c != NULL ? c->tap : NULL;
}

void
pa_capture_set_rcu(struct pa_capture *c, struct rte_rcu_qsbr *rcu)
{
	pthread_mutex_lock(&c->lock);
	c->rcu = rcu;
	pthread_mutex_unlock(&c->lock);
}

const char *
pa_capture_dir(const struct pa_capture *c)
{
	return c->dir;
}

/* Publish the union of what the open sinks want (caller holds the lock). */
static void
mask_update(struct pa_capture *c)
{
	uint32_t m = c->drops.in_mask | c->rpc.in_mask;

	__atomic_store_n(&c->tap->mask, m, __ATOMIC_RELEASE);
}

bool
pa_capture_active(const struct pa_capture *c)
{
	return c != NULL &&
		__atomic_load_n(&c->tap->mask, __ATOMIC_ACQUIRE) != 0;
}

/* Packets of @p reasons lost to a full ring so far, all lcores. */
static void
lost_now(const struct pa_capture *c, uint64_t *lost)
{
	unsigned int i, r;

	memset(lost, 0, sizeof(uint64_t) * PA_DROP_MAX);
	for (i = 0; i <= PA_CAPTURE_CTRL_SLOT; i++)
		for (r = 0; r < PA_DROP_MAX; r++)
			lost[r] += __atomic_load_n(&c->tap->lcore[i].lost[r],
				__ATOMIC_RELAXED);
}

static uint64_t
sink_lost(const struct pa_capture *c, const struct sink *s)
{
	uint64_t now[PA_DROP_MAX], n = 0;
	unsigned int r;

	if (!s->open)
		return s->lost;
	lost_now(c, now);
	for (r = 0; r < PA_DROP_MAX; r++)
		if ((s->reasons >> r) & 1u)
			n += now[r] - s->lost_base[r];
	return n;
}

/* Flush what was written; a failure ends the sink (caller holds the lock). */
static int
sink_flush(struct sink *s)
{
	if (!s->dirty)
		return 0;
	s->dirty = false;
	if (pcap_dump_flush(s->dumper) != 0) {
		snprintf(s->error, sizeof(s->error), "write failed: %s",
			strerror(errno != 0 ? errno : EIO));
		return -EIO;
	}
	return 0;
}

/* Close a sink for good (caller holds the lock). Its reasons leave the
 * mask; packets of them still on the ring find no sink and are freed. */
static void
sink_end(struct pa_capture *c, struct sink *s, enum pa_capture_end why)
{
	if (!s->open)
		return;
	s->in_mask = 0;
	mask_update(c);
	if (why != PA_CAPTURE_END_ERROR && sink_flush(s) != 0)
		why = PA_CAPTURE_END_ERROR;
	s->lost = sink_lost(c, s);
	s->open = false;
	s->ended_by = why;
	s->t_end = pa_clock_s();
	pcap_dump_close(s->dumper);
	pcap_close(s->pcap);
	s->dumper = NULL;
	s->pcap = NULL;
	if (why == PA_CAPTURE_END_ERROR)
		CAP_LOG(ERR, "%s: capture ended: %s", s->path, s->error);
	else if (s != &c->drops)	/* the replay's file: no news */
		CAP_LOG(INFO, "%s: capture ended (%s): %" PRIu64 " packets, %"
			PRIu64 " bytes, %" PRIu64 " lost", s->path,
			pa_capture_end_name(why), s->packets, s->bytes, s->lost);
}

/* Make @p s a sink writing to @p f (owned from here on). */
static int
sink_open(struct pa_capture *c, struct sink *s, FILE *f, const char *path,
		uint32_t reasons, uint64_t max_packets, uint64_t max_bytes,
		uint32_t snaplen, char *err, size_t err_len)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
		PCAP_TSTAMP_PRECISION_MICRO);
	if (s->pcap == NULL) {
		fclose(f);
		pa_seterr(err, err_len, "%s: cannot make a pcap handle", path);
		return -ENOMEM;
	}
	s->dumper = pcap_dump_fopen(s->pcap, f);
	if (s->dumper == NULL) {
		pa_seterr(err, err_len, "%s: %s", path, pcap_geterr(s->pcap));
		fclose(f);
		pcap_close(s->pcap);
		s->pcap = NULL;
		return -EIO;
	}
	s->bytes = PA_CAPTURE_FILE_HDR;
	s->dirty = true;
	if (sink_flush(s) != 0) {
		pa_seterr(err, err_len, "%s", s->error);
		pcap_dump_close(s->dumper);
		pcap_close(s->pcap);
		return -EIO;
	}
	s->reasons = reasons;
	s->max_packets = max_packets;
	s->max_bytes = max_bytes;
	s->snaplen = snaplen;
	s->t_start = pa_clock_s();
	lost_now(c, s->lost_base);
	s->open = true;
	return 0;
}

/* Put an opened sink's reasons in the mask (caller holds the lock). */
static void
sink_arm(struct pa_capture *c, struct sink *s)
{
	s->in_mask = s->reasons;
	mask_update(c);
}

int
pa_capture_open_drops(struct pa_capture *c, const char *path, char *err,
		size_t err_len)
{
	FILE *f;
	int ret;

	f = fopen(path, "wbe");
	if (f == NULL) {
		pa_seterr(err, err_len, "--replay-drops %s: %s", path,
			strerror(errno));
		return -errno;
	}
	pthread_mutex_lock(&c->lock);
	if (c->drops.open) {
		pthread_mutex_unlock(&c->lock);
		fclose(f);
		pa_seterr(err, err_len, "--replay-drops: already open");
		return -EBUSY;
	}
	ret = sink_open(c, &c->drops, f, path, PA_CAPTURE_ALL_REASONS, 0, 0,
		PA_CAPTURE_MAX_SNAPLEN, err, err_len);
	if (ret == 0)
		sink_arm(c, &c->drops);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int
pa_capture_check_name(const char *name, char *why, size_t why_len)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > PA_CAPTURE_NAME_MAX) {
		pa_seterr(why, why_len, "a file name of 1 to %u characters",
			PA_CAPTURE_NAME_MAX);
		return -EINVAL;
	}
	if (name[0] == '.') {
		pa_seterr(why, why_len, "a file name may not start with '.'");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
		      ch == '-')) {
			pa_seterr(why, why_len,
				"a file name in the capture directory, not a path: only letters, digits, '.', '_' and '-' (character %zu is %s)",
				i + 1, ch == '/' ? "'/'" : "not allowed");
			return -EINVAL;
		}
	}
	return 0;
}

int
pa_capture_parse_reason(const char *name, uint32_t *mask)
{
	unsigned int r;

	if (strcmp(name, "any") == 0) {
		*mask = PA_CAPTURE_ALL_REASONS;
		return 0;
	}
	for (r = 0; r < PA_DROP_MAX; r++) {
		if (strcmp(name, pa_stats_drop_name((enum pa_drop_reason)r)) == 0) {
			*mask = 1u << r;
			return 0;
		}
	}
	return -EINVAL;
}

/* mkdir -p with mode 0750 for what is made; the leaf given to the group. */
static int
make_dir(const struct pa_capture *c, char *err, size_t err_len)
{
	char path[PATH_MAX];
	size_t i, n;
	bool made = false;

	snprintf(path, sizeof(path), "%s", c->dir);
	n = strlen(path);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0750) == 0)
			made = true;
		else if (errno != EEXIST) {
			pa_seterr(err, err_len, "capture directory %s: mkdir %s: %s",
				c->dir, path, strerror(errno));
			return -errno;
		}
		if (i < n)
			path[i] = '/';
	}
	if (made && c->set_group && chown(c->dir, (uid_t)-1, c->gid) != 0)
		CAP_LOG(WARNING, "capture directory %s: chown to group %u: %s",
			c->dir, (unsigned int)c->gid, strerror(errno));
	return 0;
}

static bool
params_valid(const struct pa_capture_params *p, char *err, size_t err_len)
{
	if (p->reasons == 0 || (p->reasons & ~PA_CAPTURE_ALL_REASONS) != 0) {
		pa_seterr(err, err_len, "reason: no such drop reason");
		return false;
	}
	if (p->max_packets < 1 || p->max_packets > PA_CAPTURE_LIMIT_MAX_PACKETS) {
		pa_seterr(err, err_len, "max_packets: out of range 1..%llu",
			PA_CAPTURE_LIMIT_MAX_PACKETS);
		return false;
	}
	if (p->max_bytes < PA_CAPTURE_MIN_MAX_BYTES ||
	    p->max_bytes > PA_CAPTURE_LIMIT_MAX_BYTES) {
		pa_seterr(err, err_len, "max_bytes: out of range %llu..%llu",
			PA_CAPTURE_MIN_MAX_BYTES, PA_CAPTURE_LIMIT_MAX_BYTES);
		return false;
	}
	if (p->snaplen < PA_CAPTURE_MIN_SNAPLEN ||
	    p->snaplen > PA_CAPTURE_MAX_SNAPLEN) {
		pa_seterr(err, err_len, "snaplen: out of range %u..%u",
			PA_CAPTURE_MIN_SNAPLEN, PA_CAPTURE_MAX_SNAPLEN);
		return false;
	}
	return true;
}

int
pa_capture_start(struct pa_capture *c, const struct pa_capture_params *p,
		uint64_t *id, char *err, size_t err_len)
{
	char why[PA_CAPTURE_NAME_MAX + 160];
	char path[PATH_MAX];
	struct statvfs vfs;
	struct sink fresh;
	int dfd = -1, fd = -1, ret;
	FILE *f;

	if (pa_capture_check_name(p->name, why, sizeof(why)) != 0) {
		pa_seterr(err, err_len, "path: %s", why);
		return -EINVAL;
	}
	if (!params_valid(p, err, err_len))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	if (c->rpc.open) {
		pa_seterr(err, err_len, "capture %" PRIu64 " is running (%s); capture_stop it first",
			c->rpc_id, c->rpc.path);
		ret = -EBUSY;
		goto out;
	}
	ret = make_dir(c, err, err_len);
	if (ret != 0)
		goto out;
	dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		pa_seterr(err, err_len, "capture directory %s: %s", c->dir,
			strerror(errno));
		goto out;
	}
	if (fstatvfs(dfd, &vfs) == 0 &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < p->max_bytes) {
		pa_seterr(err, err_len,
			"max_bytes: %" PRIu64 " is more than the %llu bytes free in the capture directory %s",
			p->max_bytes,
			(unsigned long long)vfs.f_bavail * vfs.f_frsize, c->dir);
		ret = -ENOSPC;
		goto out;
	}
	/* A new file, never an existing one (O_EXCL does not follow a
	 * symbolic link either): the RPC cannot overwrite anything. */
	fd = openat(dfd, p->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		O_CLOEXEC, 0640);
	/* fits: the directory's length was checked at create */
	if (snprintf(path, sizeof(path), "%s%s%s", c->dir,
			c->dir[strlen(c->dir) - 1] == '/' ? "" : "/",
			p->name) >= (int)sizeof(path))
		path[sizeof(path) - 1] = '\0';
	if (fd < 0) {
		ret = -errno;
		if (errno == EEXIST)
			pa_seterr(err, err_len, "%s exists (a capture never overwrites a file)",
				path);
		else
			pa_seterr(err, err_len, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (c->set_group && fchown(fd, (uid_t)-1, c->gid) != 0)
		CAP_LOG(WARNING, "%s: chown to group %u: %s", path,
			(unsigned int)c->gid, strerror(errno));
	f = fdopen(fd, "wb");
	if (f == NULL) {
		ret = -errno;
		pa_seterr(err, err_len, "%s: %s", path, strerror(errno));
		close(fd);
		unlinkat(dfd, p->name, 0);
		goto out;
	}
	/* The last capture's status stays until this one is open. */
	ret = sink_open(c, &fresh, f, path, p->reasons, p->max_packets,
		p->max_bytes, p->snaplen, err, err_len);
	if (ret != 0) {
		unlinkat(dfd, p->name, 0);
		goto out;
	}
	c->rpc = fresh;
	sink_arm(c, &c->rpc);
	c->rpc_id++;
	c->rpc_state = PA_CAPTURE_RUNNING;
	*id = c->rpc_id;
	CAP_LOG(INFO, "capture %" PRIu64 " started: %s, reasons 0x%x, max %" PRIu64
		" packets, %" PRIu64 " bytes, snaplen %u", c->rpc_id, path,
		p->reasons, p->max_packets, p->max_bytes, p->snaplen);
out:
	if (dfd >= 0)
		close(dfd);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* Write one packet to a sink; end it at a bound (caller holds the lock). */
static void
sink_write(struct pa_capture *c, struct sink *s, struct rte_mbuf *m,
		const struct timeval *tv)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint32_t caplen = RTE_MIN(len, s->snaplen);
	struct pcap_pkthdr h;
	const void *data;

	if (s->max_bytes != 0 &&
	    s->bytes + PA_CAPTURE_REC_HDR + caplen > s->max_bytes) {
		sink_end(c, s, PA_CAPTURE_END_MAX_BYTES);
		return;
	}
	data = rte_pktmbuf_read(m, 0, caplen, c->buf);
	if (data == NULL)
		return;
	memset(&h, 0, sizeof(h));
	h.ts = *tv;
	h.caplen = caplen;
	h.len = len;
	pcap_dump((u_char *)s->dumper, &h, data);
	s->packets++;
	s->bytes += PA_CAPTURE_REC_HDR + caplen;
	s->dirty = true;
	if (s->max_packets != 0 && s->packets >= s->max_packets)
		sink_end(c, s, PA_CAPTURE_END_MAX_PACKETS);
}

/* Take up to @p budget packets off the ring (caller holds the lock). */
static unsigned int
drain(struct pa_capture *c, unsigned int budget)
{
	struct rte_mbuf *pkts[DEQ_BURST];
	struct sink *sinks[2] = { &c->drops, &c->rpc };
	struct timeval tv;
	unsigned int n, i, k, total = 0;

	while (total < budget) {
		n = rte_ring_sc_dequeue_burst(c->tap->ring, (void **)pkts,
			RTE_MIN(budget - total, (unsigned int)DEQ_BURST), NULL);
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			const struct pa_capture_mark *mk =
				pa_capture_mark(c->tap, pkts[i]);
			uint8_t r = mk->reason;

			tsc_to_timeval(c, (uint64_t)mk->tsc_hi << 32 |
				mk->tsc_lo, &tv);
			for (k = 0; k < RTE_DIM(sinks); k++)
				if (sinks[k]->open && r < PA_DROP_MAX &&
				    ((sinks[k]->reasons >> r) & 1u) != 0)
					sink_write(c, sinks[k], pkts[i], &tv);
		}
		rte_pktmbuf_free_bulk(pkts, n);
		total += n;
	}
	for (k = 0; k < RTE_DIM(sinks); k++)
		if (sinks[k]->open && sink_flush(sinks[k]) != 0)
			sink_end(c, sinks[k], PA_CAPTURE_END_ERROR);
	return total;
}

unsigned int
pa_capture_poll(struct pa_capture *c)
{
	unsigned int n;

	if (c == NULL || rte_ring_empty(c->tap->ring))
		return 0;
	pthread_mutex_lock(&c->lock);
	n = drain(c, rte_ring_get_capacity(c->tap->ring));
	pthread_mutex_unlock(&c->lock);
	return n;
}

static void
status_of(const struct pa_capture *c, struct pa_capture_status *st)
{
	const struct sink *s = &c->rpc;

	memset(st, 0, sizeof(*st));
	st->state = c->rpc_state;
	/* Ended by itself (a bound, a write error): stopped. */
	if (st->state == PA_CAPTURE_RUNNING && !s->open)
		st->state = PA_CAPTURE_STOPPED;
	if (st->state == PA_CAPTURE_IDLE)
		return;
	st->ended_by = s->open ? PA_CAPTURE_END_NONE : s->ended_by;
	st->id = c->rpc_id;
	st->reasons = s->reasons;
	snprintf(st->path, sizeof(st->path), "%s", s->path);
	st->max_packets = s->max_packets;
	st->max_bytes = s->max_bytes;
	st->snaplen = s->snaplen;
	st->packets = s->packets;
	st->bytes = s->bytes;
	st->lost = sink_lost(c, s);
	st->duration_s = (s->open ? pa_clock_s() : s->t_end) - s->t_start;
	if (st->ended_by == PA_CAPTURE_END_ERROR)
		snprintf(st->error, sizeof(st->error), "%s", s->error);
}

int
pa_capture_stop(struct pa_capture *c, struct pa_capture_status *st)
{
	struct rte_rcu_qsbr *rcu;

	pthread_mutex_lock(&c->lock);
	if (!c->rpc.open) {
		pthread_mutex_unlock(&c->lock);
		return -ENOENT;
	}
	/* Out of the mask first; then, without the lock (a replay lcore may
	 * be waiting for the main thread to make room in the ring), wait
	 * until no lcore can still be offering a packet of the old mask. */
	c->rpc.in_mask = 0;
	mask_update(c);
	rcu = c->rcu;
	pthread_mutex_unlock(&c->lock);
	if (rcu != NULL)
		rte_rcu_qsbr_synchronize(rcu, RTE_QSBR_THRID_INVALID);
	pthread_mutex_lock(&c->lock);
	/* Every packet offered for it is on the ring now: at most a ring's
	 * worth before anything offered later (FIFO). It may also have ended
	 * by itself meanwhile (a bound reached). */
	drain(c, rte_ring_get_capacity(c->tap->ring));
	sink_end(c, &c->rpc, PA_CAPTURE_END_RPC);
	c->rpc_state = PA_CAPTURE_STOPPED;
	if (st != NULL)
		status_of(c, st);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void
pa_capture_get(struct pa_capture *c, struct pa_capture_status *st)
{
	pthread_mutex_lock(&c->lock);
	status_of(c, st);
	pthread_mutex_unlock(&c->lock);
}

void
pa_capture_quiesce(struct pa_capture *c)
{
	if (c != NULL)
		__atomic_store_n(&c->tap->wait, 0, __ATOMIC_RELAXED);
}

void
pa_capture_destroy(struct pa_capture *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	drain(c, UINT_MAX);
	sink_end(c, &c->drops, PA_CAPTURE_END_SHUTDOWN);
	sink_end(c, &c->rpc, PA_CAPTURE_END_SHUTDOWN);
	/* Nothing wants them now: free what is left. */
	drain(c, UINT_MAX);
	pthread_mutex_unlock(&c->lock);
	rte_ring_free(c->tap->ring);
	rte_free(c->tap);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

json_t *
pa_capture_status_json(const struct pa_capture_status *st)
{
	static const char *const states[] = {
		[PA_CAPTURE_IDLE] = "idle",
		[PA_CAPTURE_RUNNING] = "running",
		[PA_CAPTURE_STOPPED] = "stopped",
	};
	const char *reason = "any";
	json_t *o;
	unsigned int r;

	if (st->state == PA_CAPTURE_IDLE)
		return json_pack("{s:s}", "state", states[PA_CAPTURE_IDLE]);
	if (st->reasons != PA_CAPTURE_ALL_REASONS)
		for (r = 0; r < PA_DROP_MAX; r++)
			if (st->reasons == 1u << r)
				reason = pa_stats_drop_name((enum pa_drop_reason)r);
	o = json_pack("{s:s, s:I, s:s, s:s, s:I, s:I, s:i, s:I, s:I, s:I, s:f, s:s?}",
		"state", states[st->state],
		"id", (json_int_t)st->id,
		"reason", reason,
		"path", st->path,
		"max_packets", (json_int_t)st->max_packets,
		"max_bytes", (json_int_t)st->max_bytes,
		"snaplen", (int)st->snaplen,
		"packets", (json_int_t)st->packets,
		"bytes", (json_int_t)st->bytes,
		"lost", (json_int_t)st->lost,
		"duration_s", st->duration_s,
		"stopped_by", pa_capture_end_name(st->ended_by));
	if (o != NULL && st->ended_by == PA_CAPTURE_END_ERROR)
		json_object_set_new(o, "error", json_string(st->error));
	return o;
}
