/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/capture: file names and reasons, where and how files
 * are made (new files only), what reaches which sink, the bounds, the
 * loss counters, stop and destroy, the times written, and the RPC
 * adapters' strict decoding.
 *
 * The data path is played by this test: it offers mbufs with
 * pa_capture_offer() (what lib/pipeline's stages do) and pa_capture_poll()
 * is the daemon's main loop. Files are read back with libpcap.
 *
 * One EAL (--no-huge) for the whole run, tests without fork (CK_NOFORK);
 * each test gets a fresh capture over a fresh directory, freed by the
 * checked fixture.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>
#include <pcap/pcap.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pa_capture.h"
#include "pa_pkt.h"
#include "pa_rpc.h"
#include "pa_test_main.h"

#define POOL_SIZE	1023
#define RING_SIZE	64

static struct rte_mempool *pool;
static struct pa_capture *cap;
static char base[] = "/tmp/pa-test-capture-XXXXXX";
static char dir[PATH_MAX];
static unsigned int dir_seq;

/* ------------------------------------------------------------------ */
/* Fixture and helpers                                                 */
/* ------------------------------------------------------------------ */

static void
new_capture(bool wait)
{
	struct pa_capture_opts o = {
		.dir = dir,
		.ring_size = RING_SIZE,
		.socket = SOCKET_ID_ANY,
		.wait = wait,
	};
	char err[256];

	cap = pa_capture_create(&o, err, sizeof(err));
	ck_assert_msg(cap != NULL, "pa_capture_create: %s", err);
	pa_rpc_bind("capture", cap);
}

static void
setup(void)
{
	/* the directory does not exist yet: the first start makes it */
	snprintf(dir, sizeof(dir), "%s/d%u/caps", base, ++dir_seq);
	new_capture(false);
}

static void
teardown(void)
{
	pa_rpc_bind("capture", NULL);
	pa_capture_destroy(cap);
	cap = NULL;
	ck_assert_uint_eq(rte_mempool_avail_count(pool), POOL_SIZE);
}

/* A frame of @p len bytes whose bytes say @p tag. */
static struct rte_mbuf *
frame(unsigned int tag, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;
	uint16_t i;

	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	ck_assert_ptr_nonnull(p);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(tag * 7 + i);
	return m;
}

/* What the data path does with a dropped packet in live mode. */
static bool
drop(enum pa_drop_reason r, struct rte_mbuf *m)
{
	struct pa_capture_tap *t = pa_capture_tap(cap);

	if (!pa_capture_wanted(t, r)) {
		rte_pktmbuf_free(m);
		return false;
	}
	if (!pa_capture_offer(t, m, r)) {
		pa_capture_count_lost(t, 0, r);
		rte_pktmbuf_free(m);
		return false;
	}
	return true;
}

static void
start(const char *name, uint32_t reasons, uint64_t max_packets,
		uint64_t max_bytes, uint32_t snaplen)
{
	struct pa_capture_params p = {
		.reasons = reasons,
		.max_packets = max_packets,
		.max_bytes = max_bytes,
		.snaplen = snaplen,
	};
	char err[512];
	uint64_t id;
	int ret;

	snprintf(p.name, sizeof(p.name), "%s", name);
	ret = pa_capture_start(cap, &p, &id, err, sizeof(err));
	ck_assert_msg(ret == 0, "pa_capture_start(%s): %d %s", name, ret, err);
}

static void
start_default(const char *name, uint32_t reasons)
{
	start(name, reasons, PA_CAPTURE_DEFAULT_MAX_PACKETS,
		PA_CAPTURE_DEFAULT_MAX_BYTES, PA_CAPTURE_DEFAULT_SNAPLEN);
}

struct rec {
	struct timeval ts;
	uint32_t caplen, len;
	uint8_t data[2048];
};

/* Read a pcap file: up to @p max records; returns how many. */
static int
read_file(const char *path, struct rec *recs, int max, int *snaplen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *p;
	int n = 0;

	p = pcap_open_offline(path, ebuf);
	ck_assert_msg(p != NULL, "%s: %s", path, ebuf);
	ck_assert_int_eq(pcap_datalink(p), DLT_EN10MB);
	if (snaplen != NULL)
		*snaplen = pcap_snapshot(p);
	while (pcap_next_ex(p, &h, &d) == 1) {
		ck_assert_int_lt(n, max);
		ck_assert_uint_le(h->caplen, sizeof(recs[n].data));
		recs[n].ts = h->ts;
		recs[n].caplen = h->caplen;
		recs[n].len = h->len;
		memcpy(recs[n].data, d, h->caplen);
		n++;
	}
	pcap_close(p);
	return n;
}

static void
in_dir(const char *name, char *path, size_t len)
{
	if (snprintf(path, len, "%s/%s", dir, name) >= (int)len)
		ck_abort_msg("path too long");
}

static off_t
file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

/* Check that record @p r is frame(tag, len). */
static void
check_rec(const struct rec *r, unsigned int tag, uint16_t len)
{
	uint16_t i;

	ck_assert_uint_eq(r->len, len);
	ck_assert_uint_eq(r->caplen, len);
	for (i = 0; i < len; i++)
		ck_assert_uint_eq(r->data[i], (uint8_t)(tag * 7 + i));
}

/* ------------------------------------------------------------------ */
/* Names, reasons                                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_only_plain_file_names_are_accepted)
{
	static const char *const good[] = {
		"a", "x.pcap", "acl-2024_11_30.pcap", "A.B.C", "0", "a..b",
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	};
	static const char *const bad[] = {
		"", ".", "..", ".hidden", "../x", "a/b", "/etc/passwd", "x/",
		"a b", "a\tb", "a\\b", "caf\xc3\xa9", "x\n", "*", "a:b",
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	};
	char why[256];
	size_t i;

	ck_assert_uint_eq(strlen(good[RTE_DIM(good) - 1]), PA_CAPTURE_NAME_MAX);
	ck_assert_uint_eq(strlen(bad[RTE_DIM(bad) - 1]), PA_CAPTURE_NAME_MAX + 1);
	for (i = 0; i < RTE_DIM(good); i++)
		ck_assert_msg(pa_capture_check_name(good[i], why, sizeof(why)) == 0,
			"'%s' refused: %s", good[i], why);
	for (i = 0; i < RTE_DIM(bad); i++) {
		why[0] = '\0';
		ck_assert_msg(pa_capture_check_name(bad[i], why, sizeof(why)) ==
			-EINVAL, "'%s' accepted", bad[i]);
		ck_assert_msg(why[0] != '\0', "no reason for '%s'", bad[i]);
	}
}
END_TEST

START_TEST(test_reason_names_map_to_their_bit_and_any_to_all)
{
	uint32_t m;
	unsigned int r;

	for (r = 0; r < PA_DROP_MAX; r++) {
		ck_assert_int_eq(pa_capture_parse_reason(
			pa_stats_drop_name((enum pa_drop_reason)r), &m), 0);
		ck_assert_uint_eq(m, 1u << r);
	}
	ck_assert_int_eq(pa_capture_parse_reason("any", &m), 0);
	ck_assert_uint_eq(m, PA_CAPTURE_ALL_REASONS);
	ck_assert_int_eq(pa_capture_parse_reason("ACL", &m), -EINVAL);
	ck_assert_int_eq(pa_capture_parse_reason("", &m), -EINVAL);
	ck_assert_int_eq(pa_capture_parse_reason("unknown", &m), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_start_makes_the_directory_and_a_new_file_with_a_header)
{
	struct pa_capture_status st;
	char path[PATH_MAX];
	struct stat sb;
	struct rec r[1];
	int snaplen;

	ck_assert_int_ne(stat(dir, &sb), 0);	/* not made before */
	start("first.pcap", 1u << PA_DROP_ACL, 10, 4096, 128);
	ck_assert_int_eq(stat(dir, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0750);
	in_dir("first.pcap", path, sizeof(path));
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0640);
	ck_assert_int_eq(sb.st_size, PA_CAPTURE_FILE_HDR);
	ck_assert_int_eq(read_file(path, r, 1, &snaplen), 0);
	ck_assert_int_eq(snaplen, 128);
	pa_capture_get(cap, &st);
	ck_assert_int_eq(st.state, PA_CAPTURE_RUNNING);
	ck_assert_uint_eq(st.id, 1);
	ck_assert_str_eq(st.path, path);
	ck_assert_uint_eq(st.bytes, PA_CAPTURE_FILE_HDR);
}
END_TEST

START_TEST(test_existing_files_and_links_are_never_opened)
{
	struct pa_capture_params p = {
		.reasons = 1u << PA_DROP_ACL, .max_packets = 10,
		.max_bytes = 4096, .snaplen = 100,
	};
	char path[PATH_MAX], target[PATH_MAX], err[512], buf[16];
	uint64_t id;
	int fd;

	start_default("exists.pcap", 1u << PA_DROP_ACL);
	ck_assert_int_eq(pa_capture_stop(cap, NULL), 0);

	/* the same name again */
	snprintf(p.name, sizeof(p.name), "exists.pcap");
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EEXIST);
	ck_assert_msg(strstr(err, "exists") != NULL, "%s", err);

	/* a link to a file of value, and a dangling one */
	snprintf(target, sizeof(target), "%s/precious", base);
	fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "keep", 4), 4);
	close(fd);
	in_dir("link.pcap", path, sizeof(path));
	ck_assert_int_eq(symlink(target, path), 0);
	snprintf(p.name, sizeof(p.name), "link.pcap");
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EEXIST);
	in_dir("dangling.pcap", path, sizeof(path));
	ck_assert_int_eq(symlink("/tmp/pa-test-capture-never-made", path), 0);
	snprintf(p.name, sizeof(p.name), "dangling.pcap");
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EEXIST);
	ck_assert_int_ne(access("/tmp/pa-test-capture-never-made", F_OK), 0);
	fd = open(target, O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 4);
	close(fd);
	ck_assert_int_eq(memcmp(buf, "keep", 4), 0);
	unlink(target);

	/* a path is no name */
	snprintf(p.name, sizeof(p.name), "../escape.pcap");
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EINVAL);
	ck_assert_msg(strncmp(err, "path: ", 6) == 0, "%s", err);
}
END_TEST

START_TEST(test_one_capture_at_a_time_and_bad_bounds_are_refused)
{
	struct pa_capture_params p = {
		.reasons = 1u << PA_DROP_ACL, .max_packets = 10,
		.max_bytes = 4096, .snaplen = 100,
	};
	struct pa_capture_status st;
	char err[512];
	uint64_t id;

	start_default("one.pcap", 1u << PA_DROP_ACL);
	snprintf(p.name, sizeof(p.name), "two.pcap");
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EBUSY);
	ck_assert_msg(strstr(err, "running") != NULL, "%s", err);
	ck_assert_int_eq(pa_capture_stop(cap, &st), 0);
	ck_assert_int_eq(pa_capture_stop(cap, &st), -ENOENT);

	p.max_packets = 0;
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EINVAL);
	p.max_packets = 1;
	p.max_bytes = PA_CAPTURE_MIN_MAX_BYTES - 1;
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EINVAL);
	p.max_bytes = PA_CAPTURE_LIMIT_MAX_BYTES + 1;
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EINVAL);
	p.max_bytes = 4096;
	p.snaplen = PA_CAPTURE_MAX_SNAPLEN + 1;
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EINVAL);
	p.snaplen = 100;
	p.reasons = 0;
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EINVAL);
	p.reasons = 1u << PA_DROP_MAX;
	ck_assert_int_eq(pa_capture_start(cap, &p, &id, err, sizeof(err)),
		-EINVAL);
	ck_assert_int_ne(access("two.pcap", F_OK), 0);
	/* refused starts leave the last status */
	pa_capture_get(cap, &st);
	ck_assert_int_eq(st.state, PA_CAPTURE_STOPPED);
	ck_assert_uint_eq(st.id, 1);
	ck_assert_int_eq(st.ended_by, PA_CAPTURE_END_RPC);
}
END_TEST

/* ------------------------------------------------------------------ */
/* What is written                                                     */
/* ------------------------------------------------------------------ */

START_TEST(test_only_packets_of_the_reason_are_written_in_order)
{
	struct pa_capture_status st;
	struct rec r[16];
	char path[PATH_MAX];
	unsigned int i, k;

	ck_assert(!pa_capture_wanted(pa_capture_tap(cap), PA_DROP_ACL));
	start_default("acl.pcap", 1u << PA_DROP_ACL);
	ck_assert(pa_capture_wanted(pa_capture_tap(cap), PA_DROP_ACL));
	ck_assert(!pa_capture_wanted(pa_capture_tap(cap), PA_DROP_MALFORMED));
	for (i = 0; i < 12; i++)
		drop(i % 3 == 0 ? PA_DROP_MALFORMED : PA_DROP_ACL,
			frame(i, (uint16_t)(60 + i)));
	ck_assert_uint_eq(pa_capture_poll(cap), 8);
	ck_assert_int_eq(pa_capture_stop(cap, &st), 0);
	ck_assert(!pa_capture_wanted(pa_capture_tap(cap), PA_DROP_ACL));
	ck_assert_uint_eq(st.packets, 8);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_int_eq(st.ended_by, PA_CAPTURE_END_RPC);
	in_dir("acl.pcap", path, sizeof(path));
	ck_assert_int_eq(read_file(path, r, 16, NULL), 8);
	for (i = 0, k = 0; i < 12; i++)
		if (i % 3 != 0)
			check_rec(&r[k++], i, (uint16_t)(60 + i));
	ck_assert_uint_eq(st.bytes, (uint64_t)file_size(path));
}
END_TEST

START_TEST(test_stop_writes_what_was_queued_before_it)
{
	struct pa_capture_status st;
	struct rec r[8];
	char path[PATH_MAX];

	start_default("late.pcap", PA_CAPTURE_ALL_REASONS);
	ck_assert(drop(PA_DROP_TX_FULL, frame(1, 64)));
	ck_assert(drop(PA_DROP_NO_BACKEND, frame(2, 70)));
	/* no poll: stop itself drains */
	ck_assert_int_eq(pa_capture_stop(cap, &st), 0);
	ck_assert_uint_eq(st.packets, 2);
	in_dir("late.pcap", path, sizeof(path));
	ck_assert_int_eq(read_file(path, r, 8, NULL), 2);
	check_rec(&r[0], 1, 64);
	check_rec(&r[1], 2, 70);
	/* after the stop nothing is wanted any more */
	ck_assert(!drop(PA_DROP_TX_FULL, frame(3, 64)));
}
END_TEST

START_TEST(test_replay_drops_get_everything_the_capture_its_reason)
{
	struct pa_capture_status st;
	char drops[PATH_MAX], path[PATH_MAX], err[256];
	struct rec r[16];
	unsigned int i;

	pa_capture_destroy(cap);
	new_capture(true);
	snprintf(drops, sizeof(drops), "%s/drops%u.pcap", base, dir_seq);
	ck_assert_int_eq(pa_capture_open_drops(cap, drops, err, sizeof(err)), 0);
	for (i = 0; i < PA_DROP_MAX; i++)
		ck_assert(pa_capture_wanted(pa_capture_tap(cap),
			(enum pa_drop_reason)i));
	ck_assert(pa_capture_should_wait(pa_capture_tap(cap)));
	start_default("police.pcap", 1u << PA_DROP_POLICE);
	for (i = 0; i < 10; i++)
		ck_assert(drop(i & 1 ? PA_DROP_POLICE : PA_DROP_MTU,
			frame(i, 100)));
	pa_capture_poll(cap);
	ck_assert_int_eq(pa_capture_stop(cap, &st), 0);
	ck_assert_uint_eq(st.packets, 5);
	/* the drops file still wants every reason */
	ck_assert(pa_capture_wanted(pa_capture_tap(cap), PA_DROP_POLICE));
	in_dir("police.pcap", path, sizeof(path));
	ck_assert_int_eq(read_file(path, r, 16, NULL), 5);
	for (i = 0; i < 5; i++)
		check_rec(&r[i], 2 * i + 1, 100);
	pa_capture_quiesce(cap);
	ck_assert(!pa_capture_should_wait(pa_capture_tap(cap)));
	pa_capture_destroy(cap);	/* closes the drops file */
	cap = NULL;
	ck_assert_int_eq(read_file(drops, r, 16, NULL), 10);
	for (i = 0; i < 10; i++)
		check_rec(&r[i], i, 100);
	unlink(drops);
	new_capture(false);
}
END_TEST

START_TEST(test_max_packets_ends_the_capture_by_itself)
{
	struct pa_capture_status st;
	struct rec r[8];
	char path[PATH_MAX];
	unsigned int i;
	json_t *j;

	start("five.pcap", 1u << PA_DROP_ACL, 5, PA_CAPTURE_DEFAULT_MAX_BYTES,
		PA_CAPTURE_DEFAULT_SNAPLEN);
	for (i = 0; i < 8; i++)
		ck_assert(drop(PA_DROP_ACL, frame(i, 80)));
	pa_capture_poll(cap);
	pa_capture_get(cap, &st);
	ck_assert_int_eq(st.state, PA_CAPTURE_STOPPED);
	ck_assert_int_eq(st.ended_by, PA_CAPTURE_END_MAX_PACKETS);
	ck_assert_uint_eq(st.packets, 5);
	ck_assert(!pa_capture_wanted(pa_capture_tap(cap), PA_DROP_ACL));
	ck_assert_int_eq(pa_capture_stop(cap, NULL), -ENOENT);
	in_dir("five.pcap", path, sizeof(path));
	ck_assert_int_eq(read_file(path, r, 8, NULL), 5);
	for (i = 0; i < 5; i++)
		check_rec(&r[i], i, 80);
	j = pa_capture_status_json(&st);
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")),
		"stopped");
	ck_assert_str_eq(json_string_value(json_object_get(j, "stopped_by")),
		"max_packets");
	ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "acl");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "packets")), 5);
	json_decref(j);
}
END_TEST

START_TEST(test_max_bytes_keeps_the_file_within_its_bound)
{
	struct pa_capture_status st;
	struct rec r[32];
	char path[PATH_MAX];
	unsigned int i, fit;

	start("kb.pcap", 1u << PA_DROP_ACL, 1000, 1024,
		PA_CAPTURE_DEFAULT_SNAPLEN);
	/* 24 + n * (16 + 100) <= 1024: 8 records */
	fit = (1024 - PA_CAPTURE_FILE_HDR) / (PA_CAPTURE_REC_HDR + 100);
	for (i = 0; i < fit + 3; i++)
		ck_assert(drop(PA_DROP_ACL, frame(i, 100)));
	pa_capture_poll(cap);
	pa_capture_get(cap, &st);
	ck_assert_int_eq(st.ended_by, PA_CAPTURE_END_MAX_BYTES);
	ck_assert_uint_eq(st.packets, fit);
	ck_assert_uint_eq(st.bytes, PA_CAPTURE_FILE_HDR +
		fit * (PA_CAPTURE_REC_HDR + 100));
	in_dir("kb.pcap", path, sizeof(path));
	ck_assert_int_le(file_size(path), 1024);
	ck_assert_uint_eq((uint64_t)file_size(path), st.bytes);
	ck_assert_int_eq(read_file(path, r, 32, NULL), (int)fit);
}
END_TEST

START_TEST(test_snaplen_cuts_records_and_keeps_lengths)
{
	struct pa_capture_status st;
	struct rec r[4];
	char path[PATH_MAX];
	int snaplen;
	uint16_t i;

	start("snap.pcap", 1u << PA_DROP_ACL, 10, 4096, 64);
	ck_assert(drop(PA_DROP_ACL, frame(9, 200)));
	ck_assert(drop(PA_DROP_ACL, frame(8, 60)));
	ck_assert_int_eq(pa_capture_stop(cap, &st), 0);
	ck_assert_uint_eq(st.bytes, PA_CAPTURE_FILE_HDR + 16 + 64 + 16 + 60);
	in_dir("snap.pcap", path, sizeof(path));
	ck_assert_int_eq(read_file(path, r, 4, &snaplen), 2);
	ck_assert_int_eq(snaplen, 64);
	ck_assert_uint_eq(r[0].caplen, 64);
	ck_assert_uint_eq(r[0].len, 200);
	for (i = 0; i < 64; i++)
		ck_assert_uint_eq(r[0].data[i], (uint8_t)(9 * 7 + i));
	check_rec(&r[1], 8, 60);
}
END_TEST

START_TEST(test_chained_mbufs_are_written_whole)
{
	struct rte_mbuf *m = frame(3, 1000), *tail = frame(4, 500);
	struct rec r[2];
	char path[PATH_MAX];
	uint16_t i;

	ck_assert_int_eq(rte_pktmbuf_chain(m, tail), 0);
	start_default("chain.pcap", 1u << PA_DROP_MTU);
	ck_assert(drop(PA_DROP_MTU, m));
	ck_assert_int_eq(pa_capture_stop(cap, NULL), 0);
	in_dir("chain.pcap", path, sizeof(path));
	ck_assert_int_eq(read_file(path, r, 2, NULL), 1);
	ck_assert_uint_eq(r[0].len, 1500);
	ck_assert_uint_eq(r[0].caplen, 1500);
	for (i = 0; i < 1000; i++)
		ck_assert_uint_eq(r[0].data[i], (uint8_t)(3 * 7 + i));
	for (i = 0; i < 500; i++)
		ck_assert_uint_eq(r[0].data[1000 + i], (uint8_t)(4 * 7 + i));
}
END_TEST

START_TEST(test_lost_counts_the_captures_reasons_since_its_start)
{
	struct pa_capture_tap *t = pa_capture_tap(cap);
	struct pa_capture_status st;
	unsigned int i, taken = 0, lost = 0;

	/* losses before the start, and of other reasons, are not its own */
	pa_capture_count_lost(t, 3, PA_DROP_ACL);
	start_default("full.pcap", 1u << PA_DROP_ACL);
	pa_capture_count_lost(t, 5, PA_DROP_MALFORMED);
	for (i = 0; i < RING_SIZE + 10; i++) {
		if (drop(PA_DROP_ACL, frame(i, 60)))
			taken++;
		else
			lost++;
	}
	ck_assert_uint_eq(taken, RING_SIZE - 1);	/* a ring holds size - 1 */
	ck_assert_uint_eq(lost, 11);
	pa_capture_get(cap, &st);
	ck_assert_uint_eq(st.lost, 11);
	ck_assert_int_eq(pa_capture_stop(cap, &st), 0);
	ck_assert_uint_eq(st.lost, 11);
	ck_assert_uint_eq(st.packets, RING_SIZE - 1);
}
END_TEST

START_TEST(test_times_are_those_of_the_drops)
{
	struct timeval before, after;
	struct rec r[2];
	char path[PATH_MAX];
	double t, t0, t1;

	start_default("time.pcap", 1u << PA_DROP_ACL);
	gettimeofday(&before, NULL);
	ck_assert(drop(PA_DROP_ACL, frame(1, 60)));
	gettimeofday(&after, NULL);
	usleep(300 * 1000);		/* written well after */
	ck_assert_int_eq(pa_capture_stop(cap, NULL), 0);
	in_dir("time.pcap", path, sizeof(path));
	ck_assert_int_eq(read_file(path, r, 2, NULL), 1);
	t = r[0].ts.tv_sec + r[0].ts.tv_usec / 1e6;
	t0 = before.tv_sec + before.tv_usec / 1e6;
	t1 = after.tv_sec + after.tv_usec / 1e6;
	ck_assert_msg(t >= t0 - 0.01 && t <= t1 + 0.01,
		"record time %.6f, dropped between %.6f and %.6f", t, t0, t1);
}
END_TEST

START_TEST(test_destroy_returns_queued_mbufs_and_closes_the_file)
{
	struct rec r[8];
	char path[PATH_MAX];
	unsigned int i;

	start_default("end.pcap", PA_CAPTURE_ALL_REASONS);
	for (i = 0; i < 5; i++)
		ck_assert(drop(PA_DROP_SHUTDOWN, frame(i, 64)));
	pa_capture_destroy(cap);	/* no poll, no stop */
	cap = NULL;
	ck_assert_uint_eq(rte_mempool_avail_count(pool), POOL_SIZE);
	in_dir("end.pcap", path, sizeof(path));
	ck_assert_int_eq(read_file(path, r, 8, NULL), 5);
	new_capture(false);
}
END_TEST

/* ------------------------------------------------------------------ */
/* RPC adapters                                                        */
/* ------------------------------------------------------------------ */

/* Call @p method with @p params (consumed); the response (new ref). */
static json_t *
call(const char *method, json_t *params)
{
	json_t *req = json_pack("{s:s, s:s, s:i}", "jsonrpc", "2.0",
		"method", method, "id", 1);
	json_t *resp;

	if (params != NULL)
		json_object_set_new(req, "params", params);
	resp = pa_rpc_handle(req);
	json_decref(req);
	ck_assert_ptr_nonnull(resp);
	return resp;
}

/* The call must fail with @p code and a message containing @p needle. */
static void
expect_error(const char *method, json_t *params, int code,
		const char *needle)
{
	json_t *resp = call(method, params);
	json_t *e = json_object_get(resp, "error");
	const char *msg;

	ck_assert_msg(e != NULL, "%s: no error", method);
	msg = json_string_value(json_object_get(e, "message"));
	ck_assert_int_eq(json_integer_value(json_object_get(e, "code")), code);
	ck_assert_msg(msg != NULL && strstr(msg, needle) != NULL,
		"%s: message '%s' lacks '%s'", method, msg, needle);
	json_decref(resp);
}

START_TEST(test_rpc_decodes_strictly_and_names_the_parameter)
{
	expect_error("capture_start", NULL, PA_RPC_INVALID_PARAMS, "params:");
	expect_error("capture_start", json_pack("[s, s]", "acl", "x"),
		PA_RPC_INVALID_PARAMS, "params:");
	expect_error("capture_start", json_pack("{s:s}", "path", "x"),
		PA_RPC_INVALID_PARAMS, "params.reason");
	/* a NUL inside a string is no way around the checks */
	expect_error("capture_start", json_pack("{s:o, s:s}",
		"reason", json_stringn("acl\0x", 5), "path", "x"),
		PA_RPC_INVALID_PARAMS, "params.reason");
	expect_error("capture_start", json_pack("{s:s, s:o}", "reason", "acl",
		"path", json_stringn("x\0/../../etc/passwd", 19)),
		PA_RPC_INVALID_PARAMS, "params.path");
	expect_error("capture_start", json_pack("{s:s, s:s}", "reason", "acl",
		"path", "../x"), PA_RPC_INVALID_PARAMS, "params.path");
	expect_error("capture_start", json_pack("{s:s, s:s, s:I}", "reason",
		"acl", "path", "x", "max_packets", (json_int_t)-5),
		PA_RPC_INVALID_PARAMS, "params.max_packets");
	expect_error("capture_start", json_pack("{s:s, s:s, s:f}", "reason",
		"acl", "path", "x", "max_bytes", 4096.0),
		PA_RPC_INVALID_PARAMS, "params.max_bytes");
	expect_error("capture_start", json_pack("{s:s, s:s, s:i}", "reason",
		"acl", "path", "x", "snaplen", 10),
		PA_RPC_INVALID_PARAMS, "params.snaplen");
	expect_error("capture_start", json_pack("{s:s, s:s, s:b}", "reason",
		"acl", "path", "x", "append", 1),
		PA_RPC_INVALID_PARAMS, "append");
	expect_error("capture_stop", json_pack("{s:i}", "id", 1),
		PA_RPC_INVALID_PARAMS, "params");
	expect_error("capture_get", json_pack("[i]", 1),
		PA_RPC_INVALID_PARAMS, "params");
	expect_error("capture_stop", NULL, PA_RPC_ERR_NOT_FOUND,
		"no capture running");
	/* nothing reached the file system */
	ck_assert_int_ne(access(dir, F_OK), 0);
}
END_TEST

START_TEST(test_rpc_start_get_stop)
{
	json_t *resp, *r;
	char path[PATH_MAX];

	resp = call("capture_get", NULL);
	r = json_object_get(resp, "result");
	ck_assert_str_eq(json_string_value(json_object_get(r, "state")), "idle");
	ck_assert_str_eq(json_string_value(json_object_get(r, "directory")), dir);
	json_decref(resp);

	resp = call("capture_start", json_pack("{s:s, s:s, s:i}", "reason",
		"no_backend", "path", "rpc.pcap", "max_packets", 3));
	r = json_object_get(resp, "result");
	ck_assert_ptr_nonnull(r);
	in_dir("rpc.pcap", path, sizeof(path));
	ck_assert_str_eq(json_string_value(json_object_get(r, "path")), path);
	ck_assert_str_eq(json_string_value(json_object_get(r, "reason")),
		"no_backend");
	ck_assert_str_eq(json_string_value(json_object_get(r, "state")),
		"running");
	ck_assert(json_is_null(json_object_get(r, "stopped_by")));
	ck_assert_int_eq(json_integer_value(json_object_get(r, "max_packets")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "max_bytes")),
		(json_int_t)PA_CAPTURE_DEFAULT_MAX_BYTES);
	json_decref(resp);

	expect_error("capture_start", json_pack("{s:s, s:s}", "reason", "any",
		"path", "other.pcap"), PA_RPC_ERR_EXISTS, "running");
	ck_assert(drop(PA_DROP_NO_BACKEND, frame(1, 64)));

	resp = call("capture_stop", NULL);
	r = json_object_get(resp, "result");
	ck_assert_str_eq(json_string_value(json_object_get(r, "stopped_by")),
		"rpc");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "packets")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "bytes")),
		PA_CAPTURE_FILE_HDR + 16 + 64);
	json_decref(resp);
	expect_error("capture_stop", NULL, PA_RPC_ERR_NOT_FOUND,
		"capture 1 ended: rpc");
	expect_error("capture_start", json_pack("{s:s, s:s}", "reason", "acl",
		"path", "rpc.pcap"), PA_RPC_ERR_EXISTS, "exists");

	pa_rpc_bind("capture", NULL);
	expect_error("capture_get", NULL, PA_RPC_INTERNAL_ERROR, "not running");
	pa_rpc_bind("capture", cap);
}
END_TEST

static Suite *
capture_suite(void)
{
	Suite *s = suite_create("capture");
	TCase *tc;

	tc = tcase_create("names");
	tcase_add_test(tc, test_only_plain_file_names_are_accepted);
	tcase_add_test(tc, test_reason_names_map_to_their_bit_and_any_to_all);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_start_makes_the_directory_and_a_new_file_with_a_header);
	tcase_add_test(tc, test_existing_files_and_links_are_never_opened);
	tcase_add_test(tc, test_one_capture_at_a_time_and_bad_bounds_are_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("written");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_only_packets_of_the_reason_are_written_in_order);
	tcase_add_test(tc, test_stop_writes_what_was_queued_before_it);
	tcase_add_test(tc, test_replay_drops_get_everything_the_capture_its_reason);
	tcase_add_test(tc, test_max_packets_ends_the_capture_by_itself);
	tcase_add_test(tc, test_max_bytes_keeps_the_file_within_its_bound);
	tcase_add_test(tc, test_snaplen_cuts_records_and_keeps_lengths);
	tcase_add_test(tc, test_chained_mbufs_are_written_whole);
	tcase_add_test(tc, test_lost_counts_the_captures_reasons_since_its_start);
	tcase_add_test(tc, test_times_are_those_of_the_drops);
	tcase_add_test(tc, test_destroy_returns_queued_mbufs_and_closes_the_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("rpc");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rpc_decodes_strictly_and_names_the_parameter);
	tcase_add_test(tc, test_rpc_start_get_stop);
	suite_add_tcase(s, tc);
	return s;
}

static int
run_setup(void)
{
	if (mkdtemp(base) == NULL) {
		fprintf(stderr, "test_capture: no temp dir\n");
		return -1;
	}
	return 0;
}

/* After the run: the temp directory and everything in it. */
static void
run_teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "test_capture: could not remove %s\n", base);
}

int
main(void)
{
	static const char *const eal_args[] = { "-m", "128",
		"--log-level=pa.capture:warning", "-l", "0", NULL };
	static Suite *(*const suites[])(void) = { capture_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_capture",
		.suites = suites,
		.eal_args = eal_args,
		.mbufs = POOL_SIZE,
		.pool = &pool,
		.pkt_init = true,
		.setup = run_setup,
		.teardown = run_teardown,
	};

	return pa_test_main_eal(&t);
}
