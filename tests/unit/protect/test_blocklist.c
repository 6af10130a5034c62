/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/protect's blocklist: the table against a naive model
 * over random prefixes (IPv4, IPv6, edges), the prefix file parser (line
 * numbers, comments, limits), add / delete / replace and their limits,
 * and a million prefixes loaded (the time printed, not asserted). No EAL:
 * the table and the sets are plain C, and a blocklist without RCU
 * publishes at once. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <check.h>

#include "pa_blocklist.h"
#include "pa_offload.h"
#include "pa_test_main.h"

#define RTE_DIM_(a)	(sizeof(a) / sizeof((a)[0]))

/* The million-prefix test: a tenth of it under the sanitizers, which run
 * it several times slower and add nothing at that scale. How long a load
 * takes is a benchmark's figure (perf/bench_blocklist.py), not asserted
 * here: printed only. */
#if defined(__SANITIZE_ADDRESS__)
#define BIG_SCALE	10
#else
#define BIG_SCALE	1
#endif

static char why[512];

static uint64_t rng = 0x1234567887654321ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct pa_ip_prefix
pfx(const char *s)
{
	struct pa_ip_prefix p;

	ck_assert_msg(pa_bl_parse_prefix(s, &p, why, sizeof(why)) == 0,
		"%s: %s", s, why);
	return p;
}

static void
set_of(struct pa_bl_set *s, const char *const *list, unsigned int n)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		struct pa_ip_prefix p = pfx(list[i]);

		ck_assert_int_eq(pa_bl_set_push(s, &p), 0);
	}
	pa_bl_set_normalise(s);
}

static bool
in4(const struct pa_bl_table *t, const char *a)
{
	struct in_addr x;

	ck_assert_int_eq(inet_pton(AF_INET, a, &x), 1);
	return pa_bl_table_lookup4(t, ntohl(x.s_addr));
}

static bool
in6(const struct pa_bl_table *t, const char *a)
{
	struct in6_addr x;

	ck_assert_int_eq(inet_pton(AF_INET6, a, &x), 1);
	return pa_bl_table_lookup6(t, x.s6_addr);
}

/* ---- the model ---- */

struct m4 {
	uint32_t a;
	unsigned int len;
};

static bool
model4(const struct m4 *m, unsigned int n, uint32_t a)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t mask = m[i].len == 0 ? 0 : ~0u << (32 - m[i].len);

		if ((a & mask) == m[i].a)
			return true;
	}
	return false;
}

START_TEST(test_v4_membership_equals_a_naive_model_over_random_prefixes)
{
	enum { N = 2000, Q = 20000 };
	struct m4 *m = calloc(N, sizeof(*m));
	struct pa_bl_set s = { 0 };
	struct pa_bl_table *t;
	unsigned int i, hits = 0;

	ck_assert_ptr_nonnull(m);
	for (i = 0; i < N; i++) {
		/* clustered in 10.0.0.0/12 so that prefixes nest and share
		 * /24s; lengths 8..32, most long */
		static const unsigned int lens[] = { 8, 12, 16, 20, 23, 24, 25,
			26, 28, 30, 31, 32, 32, 32, 32, 32 };
		uint32_t a = 0x0a000000u | (uint32_t)(rnd() & 0x000fffffu);
		unsigned int len = lens[rnd() % RTE_DIM_(lens)];
		struct pa_ip_prefix p = { .len = (uint8_t)len };

		if (len <= 12 && rnd() % 16 != 0)
			len = 32;	/* few wide ones */
		p.len = (uint8_t)len;
		a &= len == 0 ? 0 : ~0u << (32 - len);
		m[i].a = a;
		m[i].len = len;
		p.addr.family = AF_INET;
		p.addr.v4.s_addr = htonl(a);
		ck_assert_int_eq(pa_bl_set_push(&s, &p), 0);
	}
	pa_bl_set_normalise(&s);
	t = pa_bl_table_build(&s);
	ck_assert_ptr_nonnull(t);
	for (i = 0; i < Q; i++) {
		uint32_t a;

		switch (i % 3) {
		case 0:		/* near a prefix */
			a = m[rnd() % N].a + (uint32_t)(rnd() % 512);
			break;
		case 1:
			a = 0x0a000000u | (uint32_t)(rnd() & 0x000fffffu);
			break;
		default:
			a = (uint32_t)rnd();
		}
		ck_assert_msg(pa_bl_table_lookup4(t, a) == model4(m, N, a),
			"address %08x: table %d model %d", a,
			pa_bl_table_lookup4(t, a), model4(m, N, a));
		hits += model4(m, N, a);
	}
	ck_assert_uint_gt(hits, Q / 10);
	pa_bl_table_free(t);
	pa_bl_set_free(&s);
	free(m);
}
END_TEST

struct m6 {
	uint64_t hi, lo;
	unsigned int len;
};

static void
mask6(unsigned int len, uint64_t *mh, uint64_t *ml)
{
	*mh = len == 0 ? 0 : len >= 64 ? UINT64_MAX : ~(UINT64_MAX >> len);
	*ml = len <= 64 ? 0 : len >= 128 ? UINT64_MAX :
		~(UINT64_MAX >> (len - 64));
}

static bool
model6(const struct m6 *m, unsigned int n, uint64_t hi, uint64_t lo)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t mh, ml;

		mask6(m[i].len, &mh, &ml);
		if ((hi & mh) == m[i].hi && (lo & ml) == m[i].lo)
			return true;
	}
	return false;
}

static void
addr6(uint64_t hi, uint64_t lo, uint8_t *b)
{
	uint64_t h = __builtin_bswap64(hi), l = __builtin_bswap64(lo);

	memcpy(b, &h, 8);
	memcpy(b + 8, &l, 8);
}

START_TEST(test_v6_membership_equals_a_naive_model_over_random_prefixes)
{
	enum { N = 1500, Q = 20000 };
	static const unsigned int lens[] = { 16, 20, 24, 32, 40, 48, 56, 64,
		64, 64, 80, 96, 112, 127, 128, 128 };
	struct m6 *m = calloc(N, sizeof(*m));
	struct pa_bl_set s = { 0 };
	struct pa_bl_table *t;
	unsigned int i, hits = 0;

	ck_assert_ptr_nonnull(m);
	for (i = 0; i < N; i++) {
		struct pa_ip_prefix p = { 0 };
		unsigned int len = lens[rnd() % RTE_DIM_(lens)];
		uint64_t hi = 0x20010db800000000ull | (rnd() & 0xffffff),
			lo = rnd() & 0xff000000000000ffull, mh, ml;

		if (len <= 24 && rnd() % 8 != 0)
			len = 64;
		mask6(len, &mh, &ml);
		hi &= mh;
		lo &= ml;
		m[i] = (struct m6){ hi, lo, len };
		p.addr.family = AF_INET6;
		addr6(hi, lo, p.addr.v6.s6_addr);
		p.len = (uint8_t)len;
		ck_assert_int_eq(pa_bl_set_push(&s, &p), 0);
	}
	pa_bl_set_normalise(&s);
	t = pa_bl_table_build(&s);
	ck_assert_ptr_nonnull(t);
	for (i = 0; i < Q; i++) {
		uint64_t hi, lo;
		uint8_t b[16];

		if (i % 2 == 0) {
			const struct m6 *e = &m[rnd() % N];

			hi = e->hi | (rnd() & (i % 4 == 0 ? 0 : 0xff));
			lo = e->lo | (rnd() & 0x00ff0000000000ffull);
		} else {
			hi = 0x20010db800000000ull | (rnd() & 0xffffff);
			lo = rnd();
		}
		addr6(hi, lo, b);
		ck_assert_msg(pa_bl_table_lookup6(t, b) == model6(m, N, hi, lo),
			"address %016llx:%016llx", (unsigned long long)hi,
			(unsigned long long)lo);
		hits += model6(m, N, hi, lo);
	}
	ck_assert_uint_gt(hits, Q / 10);
	pa_bl_table_free(t);
	pa_bl_set_free(&s);
	free(m);
}
END_TEST

START_TEST(test_edges_slash0_slash32_slash128_and_the_all_ones_addresses)
{
	static const char *const l0[] = { "0.0.0.0/0" };
	static const char *const l1[] = { "255.255.255.255/32", "0.0.0.0/32",
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "::/128",
		"192.0.2.128/25" };
	static const char *const l2[] = { "::/0" };
	struct pa_bl_set s;
	struct pa_bl_table *t;

	set_of(&s, l0, 1);
	t = pa_bl_table_build(&s);
	ck_assert(in4(t, "1.2.3.4") && in4(t, "255.255.255.255") &&
		in4(t, "0.0.0.0"));
	ck_assert(!in6(t, "2001:db8::1"));
	pa_bl_table_free(t);
	pa_bl_set_free(&s);

	set_of(&s, l1, RTE_DIM_(l1));
	t = pa_bl_table_build(&s);
	ck_assert(in4(t, "255.255.255.255") && in4(t, "0.0.0.0"));
	ck_assert(!in4(t, "255.255.255.254") && !in4(t, "0.0.0.1"));
	ck_assert(in4(t, "192.0.2.128") && in4(t, "192.0.2.255"));
	ck_assert(!in4(t, "192.0.2.127") && !in4(t, "192.0.3.128"));
	ck_assert(in6(t, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
	ck_assert(!in6(t, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"));
	ck_assert(in6(t, "::") && !in6(t, "::1"));
	pa_bl_table_free(t);
	pa_bl_set_free(&s);

	set_of(&s, l2, 1);
	t = pa_bl_table_build(&s);
	ck_assert(in6(t, "::1") && in6(t, "fe80::1") && in6(t, "ff02::1"));
	ck_assert(!in4(t, "10.0.0.1"));
	pa_bl_table_free(t);
	pa_bl_set_free(&s);

	/* empty */
	memset(&s, 0, sizeof(s));
	t = pa_bl_table_build(&s);
	ck_assert(!in4(t, "10.0.0.1") && !in6(t, "::1"));
	pa_bl_table_free(t);
}
END_TEST

START_TEST(test_prefixes_with_host_bits_or_garbage_are_refused)
{
	struct pa_ip_prefix p;

	ck_assert_int_eq(pa_bl_parse_prefix("10.0.0.1/24", &p, why,
		sizeof(why)), -EINVAL);
	ck_assert_str_eq(why,
		"invalid prefix '10.0.0.1/24': host bits set (did you mean '10.0.0.0/24'?)");
	ck_assert_int_eq(pa_bl_parse_prefix("any", &p, why, sizeof(why)),
		-EINVAL);
	ck_assert_int_eq(pa_bl_parse_prefix("10.0.0.0/33", &p, why,
		sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_bl_parse_prefix("2001:db8::/129", &p, why,
		sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_bl_parse_prefix("10.0.0.9", &p, why, sizeof(why)),
		0);
	ck_assert_uint_eq(p.len, 32);
	ck_assert_int_eq(pa_bl_parse_prefix("2001:db8::9", &p, why,
		sizeof(why)), 0);
	ck_assert_uint_eq(p.len, 128);
}
END_TEST

static char *
write_tmp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/i17b-bl-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

START_TEST(test_file_comments_blanks_crlf_and_duplicates_are_fine)
{
	const char *path = write_tmp("# blocklist\n\n  10.0.0.0/8   # rfc1918\r\n"
		"192.0.2.1\n\t2001:db8::/32\n10.0.0.0/8\n#end");
	struct pa_bl_set s;

	ck_assert_int_eq(pa_bl_read_file(path, 10, &s, why, sizeof(why)), 0);
	ck_assert_uint_eq(s.n4, 2);
	ck_assert_uint_eq(s.n6, 1);
	pa_bl_set_free(&s);
	unlink(path);
}
END_TEST

START_TEST(test_a_bad_line_is_named_by_its_number_and_nothing_returned)
{
	const char *path = write_tmp("10.0.0.0/8\n# c\n\n192.0.2.1/24\n");
	struct pa_bl_set s;
	char want[256];

	ck_assert_int_eq(pa_bl_read_file(path, 10, &s, why, sizeof(why)),
		-EINVAL);
	snprintf(want, sizeof(want),
		"%s: line 4: invalid prefix '192.0.2.1/24': host bits set (did you mean '192.0.2.0/24'?)",
		path);
	ck_assert_str_eq(why, want);
	ck_assert_uint_eq(pa_bl_set_count(&s), 0);
	ck_assert_ptr_null(s.v4);
	unlink(path);
	path = write_tmp("10.0.0.0/8\nbanana\n");
	ck_assert_int_eq(pa_bl_read_file(path, 10, &s, why, sizeof(why)),
		-EINVAL);
	ck_assert_ptr_nonnull(strstr(why, ": line 2: invalid prefix 'banana'"));
	unlink(path);
	ck_assert_int_eq(pa_bl_read_file("/nonexistent/i17b", 10, &s, why,
		sizeof(why)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(why, "cannot read '/nonexistent/i17b'"));
}
END_TEST

START_TEST(test_a_file_over_the_limit_is_refused)
{
	const char *path = write_tmp("10.0.0.1\n10.0.0.2\n10.0.0.3\n10.0.0.2\n");
	struct pa_bl_set s;

	/* 3 distinct: fits 3, not 2 */
	ck_assert_int_eq(pa_bl_read_file(path, 3, &s, why, sizeof(why)), 0);
	ck_assert_uint_eq(pa_bl_set_count(&s), 3);
	pa_bl_set_free(&s);
	ck_assert_int_eq(pa_bl_read_file(path, 2, &s, why, sizeof(why)),
		-E2BIG);
	ck_assert_ptr_nonnull(strstr(why, "more than 2 prefixes"));
	unlink(path);
}
END_TEST

static struct pa_blocklist *
new_bl(uint32_t max)
{
	struct pa_blocklist_opts o = { .n_lcores = 2, .max_prefixes = max };
	struct pa_blocklist *bl = pa_blocklist_create(&o);

	ck_assert_ptr_nonnull(bl);
	return bl;
}

static bool
trace(struct pa_blocklist *bl, const char *a)
{
	struct pa_ip_addr x;

	memset(&x, 0, sizeof(x));
	if (strchr(a, ':') != NULL) {
		x.family = AF_INET6;
		inet_pton(AF_INET6, a, &x.v6);
	} else {
		x.family = AF_INET;
		inet_pton(AF_INET, a, &x.v4);
	}
	return pa_blocklist_trace(bl, &x);
}

static uint32_t
count(struct pa_blocklist *bl)
{
	struct pa_blocklist_info in;

	pa_blocklist_info(bl, &in);
	return in.prefixes;
}

START_TEST(test_add_and_delete_are_idempotent_and_a_wider_prefix_still_covers)
{
	static const char *const a[] = { "10.0.0.0/16", "10.0.1.0/24",
		"2001:db8::/48" };
	static const char *const b[] = { "10.0.1.0/24", "192.0.2.7" };
	static const char *const c[] = { "10.0.0.0/16", "198.51.100.0/24" };
	struct pa_blocklist *bl = new_bl(0);
	struct pa_bl_set s;

	ck_assert(pa_blocklist_empty(bl));
	set_of(&s, a, 3);
	ck_assert_int_eq(pa_blocklist_add(bl, &s, why, sizeof(why)), 0);
	ck_assert_int_eq(pa_blocklist_add(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	ck_assert_uint_eq(count(bl), 3);
	ck_assert(!pa_blocklist_empty(bl));
	ck_assert(trace(bl, "10.0.1.5") && trace(bl, "2001:db8::1"));
	set_of(&s, b, 2);
	ck_assert_int_eq(pa_blocklist_add(bl, &s, why, sizeof(why)), 0);
	ck_assert_uint_eq(count(bl), 4);
	ck_assert_int_eq(pa_blocklist_delete(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	ck_assert_uint_eq(count(bl), 2);
	/* the /24 is gone but its /16 covers it still */
	ck_assert(trace(bl, "10.0.1.5") && !trace(bl, "192.0.2.7"));
	set_of(&s, c, 2);
	ck_assert_int_eq(pa_blocklist_delete(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	ck_assert_uint_eq(count(bl), 1);
	ck_assert(!trace(bl, "10.0.1.5") && trace(bl, "2001:db8:0:1::"));
	ck_assert(!trace(bl, "2001:db8:1::"));
	pa_blocklist_destroy(bl);
}
END_TEST

START_TEST(test_over_the_limit_nothing_changes)
{
	static const char *const a[] = { "10.0.0.1", "10.0.0.2" };
	static const char *const b[] = { "10.0.0.3", "10.0.0.4" };
	static const char *const c[] = { "10.0.0.1", "10.0.0.5", "10.0.0.6",
		"10.0.0.7" };
	struct pa_blocklist *bl = new_bl(3);
	struct pa_bl_set s;

	set_of(&s, a, 2);
	ck_assert_int_eq(pa_blocklist_replace(bl, &s, why, sizeof(why)), 0);
	set_of(&s, b, 2);
	ck_assert_int_eq(pa_blocklist_add(bl, &s, why, sizeof(why)), -ENOSPC);
	ck_assert_str_eq(why,
		"4 prefixes: more than the blocklist's limit of 3");
	pa_bl_set_free(&s);
	set_of(&s, c, 4);
	ck_assert_int_eq(pa_blocklist_replace(bl, &s, why, sizeof(why)),
		-ENOSPC);
	ck_assert_uint_eq(count(bl), 2);
	ck_assert(trace(bl, "10.0.0.2") && !trace(bl, "10.0.0.3"));
	pa_blocklist_destroy(bl);
}
END_TEST

START_TEST(test_a_bad_file_replaces_nothing)
{
	static const char *const a[] = { "10.0.0.1" };
	struct pa_blocklist *bl = new_bl(0);
	struct pa_bl_set s;
	const char *path;

	set_of(&s, a, 1);
	ck_assert_int_eq(pa_blocklist_replace(bl, &s, why, sizeof(why)), 0);
	path = write_tmp("10.0.0.2\n10.0.0.3/33\n");
	ck_assert_int_eq(pa_blocklist_replace_file(bl, path, why,
		sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "line 2"));
	ck_assert_uint_eq(count(bl), 1);
	ck_assert(trace(bl, "10.0.0.1") && !trace(bl, "10.0.0.2"));
	unlink(path);
	pa_blocklist_destroy(bl);
}
END_TEST

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

START_TEST(test_a_million_prefixes_load_and_answer)
{
	enum { N4 = 900000 / BIG_SCALE, N6 = 100000 / BIG_SCALE };
	struct pa_blocklist *bl = new_bl(0);
	struct pa_blocklist_info in;
	struct pa_bl_set s = { 0 };
	uint32_t *probe = calloc(1000, sizeof(*probe));
	double t0, t;
	unsigned int i;

	for (i = 0; i < N4; i++) {
		struct pa_ip_prefix p = { .addr.family = AF_INET };
		uint32_t a = (uint32_t)rnd();

		p.len = i % 2 ? 32 : 24;
		if (p.len == 24)
			a &= 0xffffff00u;
		if (i < 1000)
			probe[i] = a;
		p.addr.v4.s_addr = htonl(a);
		ck_assert_int_eq(pa_bl_set_push(&s, &p), 0);
	}
	for (i = 0; i < N6; i++) {
		struct pa_ip_prefix p = { .addr.family = AF_INET6 };
		uint64_t hi = 0x2000000000000000ull | (rnd() >> 3);

		p.len = 64;
		addr6(hi, 0, p.addr.v6.s6_addr);
		ck_assert_int_eq(pa_bl_set_push(&s, &p), 0);
	}
	t0 = now_s();
	pa_bl_set_normalise(&s);
	ck_assert_int_eq(pa_blocklist_replace(bl, &s, why, sizeof(why)), 0);
	t = now_s() - t0;
	pa_blocklist_info(bl, &in);
	fprintf(stderr, "%u prefixes: sorted and built in %.3f s, table %.1f MiB\n",
		N4 + N6, t, (double)in.memory_bytes / 1048576.0);
	/* random /24s collide: ~6k duplicates at 1M */
	ck_assert_uint_gt(in.prefixes, N4 + N6 - 20000 / BIG_SCALE);
	for (i = 0; i < 1000; i++) {
		struct pa_ip_addr a = { .family = AF_INET };

		a.v4.s_addr = htonl(probe[i]);
		ck_assert(pa_blocklist_trace(bl, &a));
	}
	/* one add to the full set: merged and rebuilt */
	{
		static const char *const one[] = { "192.0.2.1" };
		struct pa_bl_set o;

		set_of(&o, one, 1);
		t0 = now_s();
		ck_assert_int_eq(pa_blocklist_add(bl, &o, why, sizeof(why)), 0);
		t = now_s() - t0;
		pa_bl_set_free(&o);
		fprintf(stderr, "one add to the full set: %.1f ms\n", t * 1e3);
		ck_assert(trace(bl, "192.0.2.1"));
	}
	free(probe);
	pa_blocklist_destroy(bl);
}
END_TEST


/* ---- the delta tier against a model ---- */

/* A universe of overlapping prefixes: IPv4 in 10.0.0.0/14, IPv6 in
 * 2001:db8::/32, lengths chosen so that many cover each other. */
struct mp {
	bool v6;
	uint64_t hi, lo;	/* v4: address in lo */
	unsigned int len;
	bool in;		/* in the model's set */
};

#define MP_N	400

static void
mp_make(struct mp *u)
{
	static const unsigned int l4[] = { 14, 16, 20, 23, 24, 25, 28, 30, 32 };
	static const unsigned int l6[] = { 32, 40, 48, 56, 64, 96, 127, 128 };
	unsigned int i;

	for (i = 0; i < MP_N; i++) {
		memset(&u[i], 0, sizeof(u[i]));
		if (i % 3 != 2) {
			uint32_t a = 0x0a000000u | ((uint32_t)rnd() & 0x0003ff0fu);

			u[i].len = l4[rnd() % RTE_DIM_(l4)];
			u[i].lo = a & (~0u << (32 - u[i].len));
		} else {
			uint64_t mh, ml;

			u[i].v6 = true;
			u[i].len = l6[rnd() % RTE_DIM_(l6)];
			u[i].hi = 0x20010db800000000ull |
				(rnd() & 0x00000000ff0000ffull);
			u[i].lo = rnd() & 0x3ull;
			mask6(u[i].len, &mh, &ml);
			u[i].hi &= mh;
			u[i].lo &= ml;
		}
	}
}

static struct pa_ip_prefix
mp_prefix(const struct mp *m)
{
	struct pa_ip_prefix p;

	memset(&p, 0, sizeof(p));
	p.len = (uint8_t)m->len;
	if (m->v6) {
		p.addr.family = AF_INET6;
		addr6(m->hi, m->lo, p.addr.v6.s6_addr);
	} else {
		p.addr.family = AF_INET;
		p.addr.v4.s_addr = htonl((uint32_t)m->lo);
	}
	return p;
}

static bool
mp_match(const struct mp *u, bool v6, uint64_t hi, uint64_t lo)
{
	unsigned int i;

	for (i = 0; i < MP_N; i++) {
		uint64_t mh, ml;

		if (!u[i].in || u[i].v6 != v6)
			continue;
		if (!v6) {
			uint32_t m = ~0u << (32 - u[i].len);

			if (((uint32_t)lo & m) == u[i].lo)
				return true;
			continue;
		}
		mask6(u[i].len, &mh, &ml);
		if ((hi & mh) == u[i].hi && (lo & ml) == u[i].lo)
			return true;
	}
	return false;
}

static uint32_t
mp_count(const struct mp *u)
{
	uint32_t i, n = 0, j;

	for (i = 0; i < MP_N; i++) {
		if (!u[i].in)
			continue;
		/* the universe may hold a prefix twice */
		for (j = 0; j < i; j++)
			if (u[j].in && u[j].v6 == u[i].v6 &&
			    u[j].len == u[i].len && u[j].hi == u[i].hi &&
			    u[j].lo == u[i].lo)
				break;
		n += j == i;
	}
	return n;
}

/* An address near one of the universe's prefixes (inside it, or just
 * past it). */
static void
mp_probe(const struct mp *u, bool *v6, uint64_t *hi, uint64_t *lo)
{
	const struct mp *m;

	do
		m = &u[rnd() % MP_N];
	while (m->v6 != (rnd() % 3 == 0));
	*v6 = m->v6;
	*hi = m->hi;
	*lo = m->lo;
	if (!m->v6) {
		uint32_t span = m->len == 32 ? 1 : 1u << (32 - m->len);

		*lo = (uint32_t)(*lo + (rnd() % 4 == 0 ? span : rnd() % span));
	} else {
		*lo ^= rnd() & 0x7;
		if (rnd() % 4 == 0)
			*hi ^= rnd() & 0x00000000ff0000ffull;
	}
}

/* The blocklist answers as the model does: trace of probes, count, and
 * the exported set. */
static void
check_model(struct pa_blocklist *bl, const struct mp *u, unsigned int step)
{
	struct pa_bl_set ex;
	unsigned int i;

	ck_assert_msg(count(bl) == mp_count(u), "step %u: %u prefixes, model %u",
		step, count(bl), mp_count(u));
	ck_assert_int_eq(pa_blocklist_export(bl, &ex), 0);
	ck_assert_uint_eq(pa_bl_set_count(&ex), mp_count(u));
	for (i = 0; i < pa_bl_set_count(&ex); i++) {
		struct pa_ip_prefix p;
		unsigned int j;

		pa_bl_set_get(&ex, i, &p);
		for (j = 0; j < MP_N; j++) {
			struct pa_ip_prefix q = mp_prefix(&u[j]);

			if (u[j].in && q.len == p.len &&
			    q.addr.family == p.addr.family &&
			    memcmp(&q.addr, &p.addr, sizeof(q.addr)) == 0)
				break;
		}
		ck_assert_msg(j < MP_N, "step %u: exported prefix %u not in the model",
			step, i);
	}
	pa_bl_set_free(&ex);
	for (i = 0; i < 300; i++) {
		struct pa_ip_addr a;
		uint64_t hi, lo;
		bool v6, want;

		mp_probe(u, &v6, &hi, &lo);
		memset(&a, 0, sizeof(a));
		if (v6) {
			a.family = AF_INET6;
			addr6(hi, lo, a.v6.s6_addr);
		} else {
			a.family = AF_INET;
			a.v4.s_addr = htonl((uint32_t)lo);
		}
		want = mp_match(u, v6, hi, lo);
		ck_assert_msg(pa_blocklist_trace(bl, &a) == want,
			"step %u: %s %016llx:%016llx: blocklist says %d, model %d",
			step, v6 ? "v6" : "v4", (unsigned long long)hi,
			(unsigned long long)lo, !want, want);
	}
}

/* Apply @p n random prefixes of the universe as an add or a delete. */
static void
mp_change(struct pa_blocklist *bl, struct mp *u, bool add, unsigned int n)
{
	struct pa_bl_set s = { 0 };
	unsigned int i, k, pick[16];

	for (i = 0; i < n; i++) {
		struct pa_ip_prefix p;

		k = (unsigned int)(rnd() % MP_N);
		/* deletes mostly of present prefixes */
		if (!add && rnd() % 4 != 0)
			for (unsigned int t = 0; t < MP_N && !u[k].in; t++)
				k = (k + 1) % MP_N;
		pick[i] = k;
		p = mp_prefix(&u[k]);
		ck_assert_int_eq(pa_bl_set_push(&s, &p), 0);
	}
	pa_bl_set_normalise(&s);
	ck_assert_int_eq(add ? pa_blocklist_add(bl, &s, why, sizeof(why)) :
		pa_blocklist_delete(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	for (i = 0; i < n; i++)
		for (k = 0; k < MP_N; k++)	/* duplicates in the universe */
			if (u[k].v6 == u[pick[i]].v6 &&
			    u[k].len == u[pick[i]].len &&
			    u[k].hi == u[pick[i]].hi && u[k].lo == u[pick[i]].lo)
				u[k].in = add;
}

START_TEST(test_delta_add_delete_replace_merge_equal_a_brute_force_model)
{
	struct pa_blocklist_opts o = { .n_lcores = 1, .no_merger = true };
	struct pa_blocklist *bl = pa_blocklist_create(&o);
	struct pa_blocklist_info in;
	static struct mp u[MP_N];
	unsigned int step, merges = 0, deltas = 0;

	ck_assert_ptr_nonnull(bl);
	mp_make(u);
	for (step = 0; step < 400; step++) {
		unsigned int r = (unsigned int)(rnd() % 40);

		if (r == 0) {
			/* replace with a random third of the universe */
			struct pa_bl_set s = { 0 };
			unsigned int i;

			for (i = 0; i < MP_N; i++)
				u[i].in = false;
			for (i = 0; i < MP_N; i++) {
				if (rnd() % 3 == 0) {
					struct pa_ip_prefix p = mp_prefix(&u[i]);

					ck_assert_int_eq(pa_bl_set_push(&s, &p), 0);
				}
			}
			pa_bl_set_normalise(&s);
			for (i = 0; i < pa_bl_set_count(&s); i++) {
				struct pa_ip_prefix p;
				unsigned int j;

				pa_bl_set_get(&s, i, &p);
				for (j = 0; j < MP_N; j++) {
					struct pa_ip_prefix q = mp_prefix(&u[j]);

					if (q.len == p.len && memcmp(&q.addr,
					    &p.addr, sizeof(q.addr)) == 0)
						u[j].in = true;
				}
			}
			ck_assert_int_eq(pa_blocklist_replace(bl, &s, why,
				sizeof(why)), 0);
		} else if (r < 5) {
			ck_assert_int_eq(pa_blocklist_merge(bl), 0);
			pa_blocklist_info(bl, &in);
			ck_assert_uint_eq(in.delta_added + in.delta_deleted, 0);
			ck_assert_uint_eq(in.delta_bytes, 0);
			merges++;
		} else {
			mp_change(bl, u, r < 23,
				1 + (unsigned int)(rnd() % 6));
		}
		pa_blocklist_info(bl, &in);
		deltas += in.delta_added + in.delta_deleted != 0;
		ck_assert_uint_le(in.delta_bytes, in.memory_bytes);
		check_model(bl, u, step);
	}
	/* the delta was exercised, with deletes of base prefixes too */
	ck_assert_uint_gt(deltas, 100);
	ck_assert_uint_gt(merges, 10);
	pa_blocklist_destroy(bl);
}
END_TEST

START_TEST(test_a_delete_of_a_base_prefix_or_of_one_only_in_the_delta)
{
	static const char *const base[] = { "10.0.0.0/16", "10.0.1.0/24",
		"10.0.2.7", "2001:db8::/32", "2001:db8:1::/48",
		"2001:db8:2::7/128" };
	static const char *const add[] = { "10.0.3.0/25", "10.1.0.0/16",
		"2001:db8:3::/64", "2001:db9::/32" };
	static const char *const del1[] = { "10.0.0.0/16", "2001:db8::/32" };
	static const char *const del2[] = { "10.0.3.0/25", "10.1.0.0/16",
		"2001:db9::/32", "10.0.1.0/24" };
	struct pa_blocklist_opts o = { .n_lcores = 1, .no_merger = true };
	struct pa_blocklist *bl = pa_blocklist_create(&o);
	struct pa_blocklist_info in;
	struct pa_bl_set s;

	set_of(&s, base, RTE_DIM_(base));
	ck_assert_int_eq(pa_blocklist_replace(bl, &s, why, sizeof(why)), 0);
	set_of(&s, add, RTE_DIM_(add));
	ck_assert_int_eq(pa_blocklist_add(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	pa_blocklist_info(bl, &in);
	ck_assert_uint_eq(in.delta_added, 4);
	ck_assert_uint_eq(in.prefixes, 10);
	ck_assert(trace(bl, "10.1.200.1") && trace(bl, "2001:db9:5::1"));
	/* deleting base prefixes: what narrower ones cover stays */
	set_of(&s, del1, RTE_DIM_(del1));
	ck_assert_int_eq(pa_blocklist_delete(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	pa_blocklist_info(bl, &in);
	ck_assert_uint_eq(in.delta_deleted, 2);
	ck_assert_uint_eq(in.prefixes, 8);
	ck_assert(!trace(bl, "10.0.5.1"));
	ck_assert(trace(bl, "10.0.1.9") && trace(bl, "10.0.2.7"));
	ck_assert(!trace(bl, "10.0.2.8") && trace(bl, "10.0.3.127"));
	ck_assert(!trace(bl, "10.0.3.128"));
	ck_assert(!trace(bl, "2001:db8:5::1") && trace(bl, "2001:db8:1::9"));
	ck_assert(trace(bl, "2001:db8:2::7") && !trace(bl, "2001:db8:2::8"));
	ck_assert(trace(bl, "2001:db8:3::1"));
	/* deleting prefixes only in the delta, and one more of the base */
	set_of(&s, del2, RTE_DIM_(del2));
	ck_assert_int_eq(pa_blocklist_delete(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	pa_blocklist_info(bl, &in);
	ck_assert_uint_eq(in.prefixes, 4);
	ck_assert_uint_eq(in.delta_added, 1);	/* 2001:db8:3::/64 */
	ck_assert_uint_eq(in.delta_deleted, 3);
	ck_assert(!trace(bl, "10.1.200.1") && !trace(bl, "2001:db9:5::1"));
	ck_assert(!trace(bl, "10.0.3.1") && !trace(bl, "10.0.1.9"));
	ck_assert(trace(bl, "10.0.2.7") && trace(bl, "2001:db8:3::1"));
	/* the merge keeps the set */
	ck_assert_int_eq(pa_blocklist_merge(bl), 0);
	pa_blocklist_info(bl, &in);
	ck_assert_uint_eq(in.prefixes, 4);
	ck_assert_uint_eq(in.merges, 1);
	ck_assert_uint_eq(in.delta_added + in.delta_deleted, 0);
	ck_assert(trace(bl, "10.0.2.7") && trace(bl, "2001:db8:3::1"));
	ck_assert(!trace(bl, "10.0.1.9") && trace(bl, "2001:db8:1::9"));
	pa_blocklist_destroy(bl);
}
END_TEST

static double now_s(void);

START_TEST(test_the_background_merger_empties_the_delta)
{
	struct pa_blocklist_opts o = { .n_lcores = 1, .merge_delay_ms = 20 };
	struct pa_blocklist *bl = pa_blocklist_create(&o);
	struct pa_blocklist_info in;
	static const char *const one[] = { "192.0.2.0/24", "2001:db8::/48" };
	struct pa_bl_set s;
	double deadline;
	unsigned int i;

	ck_assert_ptr_nonnull(bl);
	/* a base of 20k /32s, then changes while the merger runs */
	memset(&s, 0, sizeof(s));
	for (i = 0; i < 20000; i++) {
		struct pa_ip_prefix p = { .addr.family = AF_INET, .len = 32 };

		p.addr.v4.s_addr = htonl(0x0a000000u + i);
		ck_assert_int_eq(pa_bl_set_push(&s, &p), 0);
	}
	pa_bl_set_normalise(&s);
	ck_assert_int_eq(pa_blocklist_replace(bl, &s, why, sizeof(why)), 0);
	for (i = 0; i < 50; i++) {
		set_of(&s, one, RTE_DIM_(one));
		ck_assert_int_eq(i % 2 ? pa_blocklist_delete(bl, &s, why,
			sizeof(why)) : pa_blocklist_add(bl, &s, why,
			sizeof(why)), 0);
		pa_bl_set_free(&s);
		ck_assert(trace(bl, "10.0.0.7"));
		ck_assert(trace(bl, "192.0.2.1") == (i % 2 == 0));
	}
	set_of(&s, one, RTE_DIM_(one));
	ck_assert_int_eq(pa_blocklist_add(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	/* bound by an event, with a generous deadline */
	deadline = now_s() + 60;
	do {
		usleep(10000);
		pa_blocklist_info(bl, &in);
	} while ((in.merges == 0 || in.delta_added + in.delta_deleted != 0) &&
		now_s() < deadline);
	ck_assert_uint_ge(in.merges, 1);
	ck_assert_uint_eq(in.delta_added + in.delta_deleted, 0);
	ck_assert_uint_eq(in.prefixes, 20002);
	ck_assert(trace(bl, "192.0.2.1") && trace(bl, "2001:db8::1"));
	ck_assert(trace(bl, "10.0.78.31") && !trace(bl, "10.0.78.32"));
	pa_blocklist_destroy(bl);
}
END_TEST


START_TEST(test_a_prefix_becomes_an_ingress_drop_rule_on_its_source)
{
	struct pa_flow_rule r;
	struct pa_ip_prefix p = pfx("198.51.100.0/24");
	static const uint8_t m48[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t m127[16];

	ck_assert_int_eq(pa_offload_rule_prefix(&p, true, &r), 0);
	ck_assert(r.attr.ingress && !r.attr.egress && !r.attr.transfer);
	ck_assert_int_eq(r.pattern[0].type, RTE_FLOW_ITEM_TYPE_ETH);
	ck_assert_ptr_null(r.pattern[0].spec);
	ck_assert_int_eq(r.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV4);
	ck_assert_ptr_eq(r.pattern[1].spec, &r.v4);
	ck_assert_ptr_eq(r.pattern[1].mask, &r.v4_mask);
	ck_assert_int_eq(r.pattern[2].type, RTE_FLOW_ITEM_TYPE_END);
	ck_assert_uint_eq(ntohl(r.v4.hdr.src_addr), 0xc6336400u);
	ck_assert_uint_eq(ntohl(r.v4_mask.hdr.src_addr), 0xffffff00u);
	ck_assert_uint_eq(r.v4_mask.hdr.dst_addr, 0);	/* only the source */
	ck_assert_uint_eq(r.v4_mask.hdr.next_proto_id, 0);
	ck_assert_int_eq(r.actions[0].type, RTE_FLOW_ACTION_TYPE_COUNT);
	ck_assert_int_eq(r.actions[1].type, RTE_FLOW_ACTION_TYPE_DROP);
	ck_assert_int_eq(r.actions[2].type, RTE_FLOW_ACTION_TYPE_END);

	p = pfx("192.0.2.77");
	ck_assert_int_eq(pa_offload_rule_prefix(&p, false, &r), 0);
	ck_assert_uint_eq(ntohl(r.v4_mask.hdr.src_addr), 0xffffffffu);
	ck_assert_uint_eq(ntohl(r.v4.hdr.src_addr), 0xc000024du);
	ck_assert_int_eq(r.actions[0].type, RTE_FLOW_ACTION_TYPE_DROP);
	ck_assert_int_eq(r.actions[1].type, RTE_FLOW_ACTION_TYPE_END);

	p = pfx("0.0.0.0/0");
	ck_assert_int_eq(pa_offload_rule_prefix(&p, false, &r), 0);
	ck_assert_uint_eq(r.v4_mask.hdr.src_addr, 0);

	p = pfx("2001:db8:bad::/48");
	ck_assert_int_eq(pa_offload_rule_prefix(&p, true, &r), 0);
	ck_assert_int_eq(r.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV6);
	ck_assert_ptr_eq(r.pattern[1].spec, &r.v6);
	ck_assert_mem_eq(r.v6_mask.hdr.src_addr, m48, 16);
	ck_assert_mem_eq(r.v6.hdr.src_addr, p.addr.v6.s6_addr, 16);
	ck_assert_uint_eq(r.v6_mask.hdr.proto, 0);

	p = pfx("2001:db8::1:0/127");
	ck_assert_int_eq(pa_offload_rule_prefix(&p, true, &r), 0);
	memset(m127, 0xff, 16);
	m127[15] = 0xfe;
	ck_assert_mem_eq(r.v6_mask.hdr.src_addr, m127, 16);

	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(pa_offload_rule_prefix(&p, true, &r), -EINVAL);
}
END_TEST


static struct pa_config_acl_rule
acl_rule(uint32_t id, int32_t prio, const char *src, const char *dst,
		int proto, uint16_t dport, enum pa_acl_action action)
{
	struct pa_config_acl_rule r;

	memset(&r, 0, sizeof(r));
	r.id = id;
	r.priority = prio;
	if (src != NULL)
		r.src = pfx(src);
	if (dst != NULL)
		r.dst = pfx(dst);
	r.proto = proto;
	r.sport = (struct pa_port_range){ 0, 65535 };
	r.dport = dport == 0 ? (struct pa_port_range){ 0, 65535 } :
		(struct pa_port_range){ dport, dport };
	r.action = action;
	r.in_port = -1;
	return r;
}

START_TEST(test_an_acl_drop_rule_becomes_a_nic_rule_with_its_fields)
{
	struct pa_config_acl_rule r = acl_rule(7, 10, "10.0.0.0/8",
		"192.0.2.0/24", IPPROTO_UDP, 53, PA_ACL_DROP);
	struct pa_flow_rule f;

	ck_assert_int_eq(pa_offload_rule_acl(&r, AF_INET, true, &f), 0);
	ck_assert(f.attr.ingress);
	ck_assert_int_eq(f.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV4);
	ck_assert_uint_eq(ntohl(f.v4.hdr.src_addr), 0x0a000000u);
	ck_assert_uint_eq(ntohl(f.v4_mask.hdr.src_addr), 0xff000000u);
	ck_assert_uint_eq(ntohl(f.v4.hdr.dst_addr), 0xc0000200u);
	ck_assert_uint_eq(ntohl(f.v4_mask.hdr.dst_addr), 0xffffff00u);
	ck_assert_uint_eq(f.v4.hdr.next_proto_id, IPPROTO_UDP);
	ck_assert_uint_eq(f.v4_mask.hdr.next_proto_id, 0xff);
	ck_assert_int_eq(f.pattern[2].type, RTE_FLOW_ITEM_TYPE_UDP);
	ck_assert_uint_eq(ntohs(f.udp.hdr.dst_port), 53);
	ck_assert_uint_eq(f.udp_mask.hdr.dst_port, 0xffff);
	ck_assert_uint_eq(f.udp_mask.hdr.src_port, 0);
	ck_assert_int_eq(f.pattern[3].type, RTE_FLOW_ITEM_TYPE_END);
	ck_assert_int_eq(f.actions[1].type, RTE_FLOW_ACTION_TYPE_DROP);
	/* an IPv4 rule has no IPv6 form */
	ck_assert_int_eq(pa_offload_rule_acl(&r, AF_INET6, true, &f),
		-ENOTSUP);
	/* "any" prefixes: both families, no L4 item without ports */
	r = acl_rule(8, 0, NULL, NULL, IPPROTO_TCP, 0, PA_ACL_DROP);
	ck_assert_int_eq(pa_offload_rule_acl(&r, AF_INET6, false, &f), 0);
	ck_assert_int_eq(f.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV6);
	ck_assert_uint_eq(f.v6.hdr.proto, IPPROTO_TCP);
	ck_assert_int_eq(f.pattern[2].type, RTE_FLOW_ITEM_TYPE_END);
	ck_assert_int_eq(pa_offload_rule_acl(&r, AF_INET, false, &f), 0);
	ck_assert_uint_eq(f.v4_mask.hdr.src_addr, 0);
	/* a port range is not one rte_flow rule; nor a permit */
	r = acl_rule(9, 0, "10.0.0.0/8", NULL, IPPROTO_TCP, 0, PA_ACL_DROP);
	r.dport = (struct pa_port_range){ 1000, 1999 };
	ck_assert_int_eq(pa_offload_rule_acl(&r, AF_INET, false, &f),
		-ENOTSUP);
	r = acl_rule(10, 0, "10.0.0.0/8", NULL, PA_PROTO_ANY, 0,
		PA_ACL_PERMIT);
	ck_assert_int_eq(pa_offload_rule_acl(&r, AF_INET, false, &f),
		-ENOTSUP);
	/* ports without TCP or UDP: no */
	r = acl_rule(11, 0, "10.0.0.0/8", NULL, PA_PROTO_ANY, 80,
		PA_ACL_DROP);
	ck_assert_int_eq(pa_offload_rule_acl(&r, AF_INET, false, &f),
		-ENOTSUP);
}
END_TEST

START_TEST(test_only_drops_no_better_permit_overlaps_are_offloaded)
{
	struct pa_config_acl_rule rules[5];

	/* 0: drop 10/8; 1: permit 10.1/16 above it -> 0 unsafe */
	rules[0] = acl_rule(1, 10, "10.0.0.0/8", NULL, PA_PROTO_ANY, 0,
		PA_ACL_DROP);
	rules[1] = acl_rule(2, 20, "10.1.0.0/16", NULL, PA_PROTO_ANY, 0,
		PA_ACL_PERMIT);
	/* 2: drop 192.0.2.0/24, overlapped only by a permit below it */
	rules[2] = acl_rule(3, 30, "192.0.2.0/24", NULL, PA_PROTO_ANY, 0,
		PA_ACL_DROP);
	rules[3] = acl_rule(4, 5, "192.0.0.0/8", NULL, PA_PROTO_ANY, 0,
		PA_ACL_PERMIT);
	/* 4: drop udp 2001:db8::/32; a better IPv4 permit does not touch it,
	 * and an equal-priority permit with a higher id ranks below */
	rules[4] = acl_rule(5, 20, "2001:db8::/32", NULL, IPPROTO_UDP, 0,
		PA_ACL_DROP);
	ck_assert(!pa_offload_acl_safe(rules, 5, 0));
	ck_assert(!pa_offload_acl_safe(rules, 5, 1));	/* not a drop */
	ck_assert(pa_offload_acl_safe(rules, 5, 2));
	ck_assert(pa_offload_acl_safe(rules, 5, 4));
	/* a better tcp-only permit on the same prefix does not overlap udp */
	rules[3] = acl_rule(6, 90, "2001:db8::/32", NULL, IPPROTO_TCP, 0,
		PA_ACL_PERMIT);
	ck_assert(pa_offload_acl_safe(rules, 5, 4));
	/* a better permit of "any" protocol does */
	rules[3].proto = PA_PROTO_ANY;
	ck_assert(!pa_offload_acl_safe(rules, 5, 4));
	/* a mark rule ranked equal with a lower id overlaps: unsafe */
	rules[3] = acl_rule(2, 30, NULL, NULL, PA_PROTO_ANY, 0, PA_ACL_MARK);
	ck_assert(!pa_offload_acl_safe(rules, 5, 2));
	rules[3].id = 40;	/* higher id: ranked below */
	ck_assert(pa_offload_acl_safe(rules, 5, 2));
}
END_TEST

static Suite *
blocklist_suite(void)
{
	Suite *s = suite_create("blocklist");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_v4_membership_equals_a_naive_model_over_random_prefixes);
	tcase_add_test(tc, test_v6_membership_equals_a_naive_model_over_random_prefixes);
	tcase_add_test(tc, test_edges_slash0_slash32_slash128_and_the_all_ones_addresses);
	tcase_add_test(tc, test_prefixes_with_host_bits_or_garbage_are_refused);
	tcase_add_test(tc, test_file_comments_blanks_crlf_and_duplicates_are_fine);
	tcase_add_test(tc, test_a_bad_line_is_named_by_its_number_and_nothing_returned);
	tcase_add_test(tc, test_a_file_over_the_limit_is_refused);
	tcase_add_test(tc, test_add_and_delete_are_idempotent_and_a_wider_prefix_still_covers);
	tcase_add_test(tc, test_over_the_limit_nothing_changes);
	tcase_add_test(tc, test_a_bad_file_replaces_nothing);
	tcase_add_test(tc, test_a_million_prefixes_load_and_answer);
	tcase_add_test(tc, test_delta_add_delete_replace_merge_equal_a_brute_force_model);
	tcase_add_test(tc, test_a_delete_of_a_base_prefix_or_of_one_only_in_the_delta);
	tcase_add_test(tc, test_the_background_merger_empties_the_delta);
	tcase_add_test(tc, test_a_prefix_becomes_an_ingress_drop_rule_on_its_source);
	tcase_add_test(tc, test_an_acl_drop_rule_becomes_a_nic_rule_with_its_fields);
	tcase_add_test(tc, test_only_drops_no_better_permit_overlaps_are_offloaded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { blocklist_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_blocklist",
		.suites = suites,
	};

	return pa_test_main(&t);
}
