/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats_get for people (docs/console.md, "stats_get"): totals, rates
 * since the previous summary, the drop reasons that counted, the ports
 * and the latency, instead of every counter (-v) or the JSON (-j).
 *
 * Rates need the previous reading: it is kept in a small state file per
 * socket path and user, in $XDG_RUNTIME_DIR/pktaccelctl/ or else in
 * /tmp/pktaccelctl-UID/ (a directory of ours, mode 0700, checked), as
 * the counters and the CLOCK_MONOTONIC time of the reading. A reading
 * from another boot or another daemon (the socket was made anew, or a
 * counter went back) gives no rates. The file is written atomically
 * (temporary file, rename); two summaries at once cost a rate, nothing
 * worse. State files untouched for a week are removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pa_clock.h"
#include "pktaccelctl.h"

#define STATE_VERSION	1
#define STATE_MAX_AGE_S	(7 * 86400)	/* older state files are removed */

/* FNV-1a, 64 bits: a file name per socket path. */
static uint64_t
path_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

/* A directory of ours only: made mode 0700, or found so. */
static bool
own_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return false;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0)
		return false;
	return true;
}

/* The state file's path for @p sock; false when there is no safe place. */
static bool
state_path(const char *sock, char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char dir[512], real[4096];
	const char *key = sock;

	if (realpath(sock, real) != NULL)
		key = real;
	if (xdg != NULL && xdg[0] == '/')
		snprintf(dir, sizeof(dir), "%s/pktaccelctl", xdg);
	else
		snprintf(dir, sizeof(dir), "/tmp/pktaccelctl-%u",
			(unsigned int)geteuid());
	if (!own_dir(dir))
		return false;
	return snprintf(buf, len, "%s/stats-%016llx.json", dir,
		(unsigned long long)path_hash(key)) < (int)len;
}

static void
boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Who answers on @p sock: the socket file's identity ("dev:ino:ctime");
 * a restarted daemon makes the socket anew. */
static void
daemon_id(const char *sock, char *buf, size_t len)
{
	struct stat st;

	if (stat(sock, &st) != 0)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%llu:%llu:%lld.%09ld",
			(unsigned long long)st.st_dev,
			(unsigned long long)st.st_ino,
			(long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* What the next summary needs of this one. */
static json_t *
state_new(const char *sock, const json_t *r, double now)
{
	const json_t *ports = json_object_get(r, "ports"), *p;
	char bid[64], did[128];
	json_t *st, *sp;
	const char *name;

	boot_id(bid, sizeof(bid));
	daemon_id(sock, did, sizeof(did));
	sp = json_object();
	json_object_foreach((json_t *)ports, name, p)
		json_object_set_new(sp, name, json_pack("{s:O?, s:O?, s:O?}",
			"rx_packets", json_object_get(p, "rx_packets"),
			"tx_packets", json_object_get(p, "tx_packets"),
			"rx_missed", json_object_get(p, "rx_missed")));
	st = json_pack("{s:i, s:s, s:s, s:s, s:f, s:O?, s:O?, s:O?, s:O?, s:o, s:{s:O?}, s:{s:O?}}",
		"version", STATE_VERSION, "socket", sock, "boot_id", bid,
		"daemon", did, "t", now,
		"rx_packets", json_object_get(r, "rx_packets"),
		"tx_packets", json_object_get(r, "tx_packets"),
		"dropped_packets", json_object_get(r, "dropped_packets"),
		"drops", json_object_get(r, "drops"),
		"ports", sp,
		"lb", "flows_created", json_object_get(json_object_get(r, "lb"),
			"flows_created"),
		"blocklist", "hits", json_object_get(json_object_get(r,
			"blocklist"), "hits"));
	return st;
}

static json_t *
state_load(const char *path)
{
	struct stat st;
	json_t *v;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || st.st_size > (1 << 20)) {
		close(fd);
		return NULL;
	}
	v = json_loadfd(fd, 0, NULL);
	close(fd);
	if (!json_is_object(v) || json_integer_value(json_object_get(v,
			"version")) != STATE_VERSION) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* Forget the state of sockets not summarised for a week (daemons long
 * gone, lab runs), so that the directory does not grow for ever. */
static void
state_prune(const char *path)
{
	char dir[4096], f[4400];
	time_t now = time(NULL);
	struct dirent *e;
	struct stat st;
	char *slash;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return;
	*slash = '\0';
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "stats-", 6) != 0 ||
		    snprintf(f, sizeof(f), "%s/%s", dir, e->d_name) >=
				(int)sizeof(f))
			continue;
		if (lstat(f, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid() &&
		    now - st.st_mtime > STATE_MAX_AGE_S)
			unlink(f);
	}
	closedir(d);
}

static void
state_save(const char *path, const json_t *st)
{
	char tmp[4200];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path,
			(long)getpid()) >= (int)sizeof(tmp))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		0600);
	if (fd < 0)
		return;
	if (json_dumpfd(st, fd, JSON_COMPACT) != 0 || close(fd) != 0 ||
	    rename(tmp, path) != 0)
		unlink(tmp);
}

/* Why the previous reading gives no rates, or NULL when it does. */
static const char *
no_rates_reason(const json_t *prev, const json_t *now_st, const json_t *r,
		double dt)
{
	const char *keys[] = { "rx_packets", "tx_packets", "dropped_packets" };
	size_t i;

	if (prev == NULL)
		return "none yet: the first summary of this socket; run it again";
	if (!json_equal(json_object_get(prev, "boot_id"),
			json_object_get(now_st, "boot_id")) ||
	    !(dt > 0))
		return "none: the last summary is from before a reboot";
	if (!json_equal(json_object_get(prev, "daemon"),
			json_object_get(now_st, "daemon")))
		return "none: the daemon restarted since the last summary";
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (isnan(ctl_rate(ctl_num(r, keys[i]),
				ctl_num(prev, keys[i]), dt)))
			return "none: the counters went back (the daemon restarted?)";
	return NULL;
}

static void
print_drops(const json_t *r, const json_t *prev, double dt)
{
	const json_t *d = json_object_get(r, "drops"), *v;
	const json_t *pd = json_object_get(prev, "drops");
	char num[32];
	const char *name;
	bool any = false;

	printf("drops   ");
	json_object_foreach((json_t *)d, name, v) {
		if (!json_is_number(v) || json_number_value(v) <= 0)
			continue;
		printf("  %s %.0f", name, json_number_value(v));
		if (prev != NULL)
			printf(" (%s/s)", ctl_fmt_si(num, sizeof(num),
				ctl_rate(json_number_value(v), ctl_num(pd,
					name), dt)));
		any = true;
	}
	printf("%s\n", any ? "" : "  none");
}

static void
print_ports(const json_t *r, const json_t *prev, double dt)
{
	const json_t *ports = json_object_get(r, "ports"), *p, *pp;
	json_t *rows, *row;
	char a[32], b[32];
	const char *name;

	if (!json_is_object(ports) || json_object_size(ports) == 0)
		return;
	rows = json_array();
	json_object_foreach((json_t *)ports, name, p) {
		pp = prev != NULL ? json_object_get(json_object_get(prev,
			"ports"), name) : NULL;
		row = json_pack("{s:s, s:O?, s:O?, s:O?, s:O?}",
			"port", name, "link", json_object_get(p, "link"),
			"rx_packets", json_object_get(p, "rx_packets"),
			"tx_packets", json_object_get(p, "tx_packets"),
			"rx_missed", json_object_get(p, "rx_missed"));
		if (row == NULL)
			continue;
		if (prev != NULL) {
			ctl_fmt_pps(a, sizeof(a), ctl_rate(ctl_num(p,
				"rx_packets"), ctl_num(pp, "rx_packets"), dt));
			ctl_fmt_pps(b, sizeof(b), ctl_rate(ctl_num(p,
				"tx_packets"), ctl_num(pp, "tx_packets"), dt));
			json_object_set_new(row, "rx_rate", json_string(a));
			json_object_set_new(row, "tx_rate", json_string(b));
		}
		json_array_append_new(rows, row);
	}
	if (ctl_fmt_is_table(rows))
		ctl_fmt_table(rows, 0);
	json_decref(rows);
}

/* The load balancer's flow table: occupancy, its peak since start (a
 * flood's high-water mark), new flows per second and what refused them. */
static void
print_lb(const json_t *r, const json_t *prev, double dt)
{
	const json_t *lb = json_object_get(r, "lb");
	const json_t *plb = json_object_get(prev, "lb");
	char a[32], b[32];

	if (!(ctl_num(lb, "services") > 0))
		return;
	printf("lb        services %.0f  backends %.0f", ctl_num(lb, "services"),
		ctl_num(lb, "backends"));
	if (ctl_num(lb, "health_down") > 0)
		printf(" (%.0f down by health)", ctl_num(lb, "health_down"));
	if (ctl_num(lb, "panic_services") > 0)
		printf("  panic %.0f", ctl_num(lb, "panic_services"));
	printf("  flows %.0f of %s (peak %.0f)", ctl_num(lb, "flows"),
		ctl_fmt_si(a, sizeof(a), ctl_num(lb, "flow_table_capacity")),
		ctl_num(lb, "flows_peak"));
	if (prev != NULL)
		printf("  new %s/s", ctl_fmt_si(b, sizeof(b), ctl_rate(
			ctl_num(lb, "flows_created"),
			ctl_num(plb, "flows_created"), dt)));
	printf("\n");
}

/* Full NAT, with a pool (lb.fnat): its flows, the replies translated
 * back, each pool address's ports in use (of its ports), and what it
 * dropped since start, by reason, when it dropped anything. */
static void
print_fnat(const json_t *r)
{
	static const struct {
		const char *key, *name;
	} drops[] = {
		{ "no_port", "no_port" },
		{ "table_full", "table_full" },
		{ "fragments", "fragment" },
		{ "reply_unmatched", "unmatched" },
		{ "xlat_failed", "xlat" },
		{ "proxy_failed", "proxy" },
	};
	const json_t *fn = json_object_get(json_object_get(r, "lb"), "fnat");
	const json_t *pool = json_object_get(fn, "pool"), *a;
	bool first = true;
	unsigned int k;
	size_t i;

	if (!json_is_object(fn))
		return;
	printf("fnat      flows %.0f  created %.0f  replies %.0f",
		ctl_num(fn, "flows"), ctl_num(fn, "flows_created"),
		ctl_num(fn, "replies"));
	json_array_foreach(pool, i, a) {
		const json_t *addr = json_object_get(a, "addr");
		double ports = ctl_num(a, "ports");

		printf("%s %s %.0f/%.0f (%.1f%%)", i == 0 ? "  pool" : "",
			json_is_string(addr) ? json_string_value(addr) : "?",
			ctl_num(a, "in_use"), ports,
			ports > 0 ? ctl_num(a, "in_use") / ports * 100 : 0);
	}
	for (k = 0; k < sizeof(drops) / sizeof(drops[0]); k++) {
		if (!(ctl_num(fn, drops[k].key) > 0))
			continue;
		printf("%s %s %.0f", first ? "  dropped" : ",", drops[k].name,
			ctl_num(fn, drops[k].key));
		first = false;
	}
	printf("\n");
}

/* The ACL, when it has rules: their number, the packets no rule matched,
 * and the share of the lookups its flow cache served, since start. */
static void
print_acl(const json_t *r)
{
	const json_t *acl = json_object_get(r, "acl");
	double hits = ctl_num(acl, "flow_cache_hits");
	double looked = hits + ctl_num(acl, "flow_cache_misses");

	if (!(ctl_num(acl, "rules") > 0))
		return;
	printf("acl       rules %.0f  default hits %.0f", ctl_num(acl, "rules"),
		ctl_num(acl, "default_hits"));
	if (json_object_get(acl, "flow_cache_entries") == NULL)
		;	/* a daemon without the cache */
	else if (!(ctl_num(acl, "flow_cache_entries") > 0))
		printf("  flow cache off");
	else if (looked > 0)
		printf("  flow cache %.1f%% of %.0f lookups (pauses %.0f)",
			100.0 * hits / looked, looked,
			ctl_num(acl, "flow_cache_pauses"));
	else
		printf("  flow cache not used yet");
	printf("\n");
}

/* The source blocklist, when it holds anything or dropped anything: its
 * size by family, drops (and their rate), what the delta table holds
 * until the background merge, the lookup tables' memory. */
static void
print_blocklist(const json_t *r, const json_t *prev, double dt)
{
	const json_t *bl = json_object_get(r, "blocklist");
	char a[32], b[32];

	if (!(ctl_num(bl, "prefixes") > 0) && !(ctl_num(bl, "hits") > 0))
		return;
	printf("blocklist prefixes %.0f (IPv4 %.0f, IPv6 %.0f)  hits %.0f",
		ctl_num(bl, "prefixes"), ctl_num(bl, "prefixes4"),
		ctl_num(bl, "prefixes6"), ctl_num(bl, "hits"));
	if (prev != NULL)
		printf(" (%s/s)", ctl_fmt_si(a, sizeof(a), ctl_rate(
			ctl_num(bl, "hits"), ctl_num(json_object_get(prev,
				"blocklist"), "hits"), dt)));
	printf("  delta +%.0f -%.0f (merges %.0f)  memory %sB\n",
		ctl_num(bl, "delta_added"), ctl_num(bl, "delta_deleted"),
		ctl_num(bl, "merges"),
		ctl_fmt_si(b, sizeof(b), ctl_num(bl, "memory_bytes")));
}

static void
print_latency(const json_t *r)
{
	const json_t *l = json_object_get(r, "latency");
	char a[16], b[16], c[16];

	if (!json_is_true(json_object_get(l, "enabled")) ||
	    !(ctl_num(l, "count") > 0))
		return;
	printf("latency   p50 %s  p99 %s  max %s  (since start, %.0f packets)\n",
		ctl_fmt_ns(a, sizeof(a), ctl_num(l, "p50_ns")),
		ctl_fmt_ns(b, sizeof(b), ctl_num(l, "p99_ns")),
		ctl_fmt_ns(c, sizeof(c), ctl_num(l, "max_ns")),
		ctl_num(l, "count"));
}

bool
ctl_summary_print(struct ctl *ctl, const char *method, const json_t *resp)
{
	const json_t *r = json_object_get(resp, "result");
	json_t *prev = NULL, *now_st;
	char path[4096], a[32], b[32], c[32];
	const char *why;
	bool have_path;
	double now = pa_clock_s(), dt = 0;

	if (ctl->json_out || ctl->verbose || strcmp(method, "stats_get") != 0 ||
	    !json_is_object(r) || !json_is_number(json_object_get(r,
			"rx_packets")))
		return false;
	now_st = state_new(ctl->client.path, r, now);
	have_path = state_path(ctl->client.path, path, sizeof(path));
	if (have_path)
		prev = state_load(path);
	if (prev != NULL)
		dt = now - ctl_num(prev, "t");
	why = have_path ? no_rates_reason(prev, now_st, r, dt) :
		"none: no private directory for the state file";
	if (why != NULL) {
		json_decref(prev);
		prev = NULL;
	}

	printf("packets   rx %.0f  tx %.0f  dropped %.0f  (mbufs in use %.0f)\n",
		ctl_num(r, "rx_packets"), ctl_num(r, "tx_packets"),
		ctl_num(r, "dropped_packets"), ctl_num(r, "mbufs_in_use"));
	if (prev != NULL)
		printf("rates     rx %s  tx %s  dropped %s  (over the %.1f s since the last summary)\n",
			ctl_fmt_pps(a, sizeof(a), ctl_rate(ctl_num(r,
				"rx_packets"), ctl_num(prev, "rx_packets"), dt)),
			ctl_fmt_pps(b, sizeof(b), ctl_rate(ctl_num(r,
				"tx_packets"), ctl_num(prev, "tx_packets"), dt)),
			ctl_fmt_pps(c, sizeof(c), ctl_rate(ctl_num(r,
				"dropped_packets"), ctl_num(prev,
				"dropped_packets"), dt)), dt);
	else
		printf("rates     %s\n", why);
	print_drops(r, prev, dt);
	print_acl(r);
	print_lb(r, prev, dt);
	print_fnat(r);
	print_blocklist(r, prev, dt);
	print_latency(r);
	print_ports(r, prev, dt);
	fflush(stdout);

	if (have_path && now_st != NULL) {
		state_save(path, now_st);
		state_prune(path);
	}
	json_decref(now_st);
	json_decref(prev);
	return true;
}
