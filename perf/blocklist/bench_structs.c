/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The blocklist's structure against DPDK's rte_lpm (IPv4) and rte_lpm6
 * (IPv6) on the same prefixes: build time, memory, lookup cycles.
 *
 *   build/perf/blocklist/bench_blocklist_structs --no-huge --no-pci \
 *       --no-shconf -m 4096 -l 0 -- [N24 N32 N6]
 *
 * Prefixes (defaults 450000 random /24, 450000 random /32, 100000 IPv6
 * of /48, /64, /128, a fifth in 2001:db8::/32); lookups of 1M addresses,
 * "hot" (10k distinct addresses, half of them in the set, cycled: the
 * working set of a 10k-flow benchmark) and "cold" (1M random
 * addresses, a miss in memory nearly each time). One JSON object on
 * stdout. perf/bench_blocklist.py measures the data path end to end.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>

#include <rte_mbuf.h>

#include "pa_blocklist.h"
#include "pa_pkt.h"
#include "pa_pkt_inline.h"

#define Q	1000000u
#define HOT	10000u

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t
heap(void)
{
	struct rte_malloc_socket_stats st;

	rte_malloc_get_socket_stats((int)rte_socket_id(), &st);
	return st.heap_allocsz_bytes;
}

static double
ms(uint64_t c)
{
	return (double)c * 1000.0 / (double)rte_get_tsc_hz();
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct p6 {
	uint8_t a[16];
	uint8_t len;
};

/*
 * The data path's own cost: pa_blocklist_filter() over bursts of 32
 * parsed mbufs of 10k flows whose sources are not in the set (every
 * packet looked up, none dropped: what a 10k-flow benchmark adds), half
 * IPv6 with @p v6 (their sources in 2001:db8::/32, where a fifth of the
 * IPv6 prefixes are: they pass the filter and probe each length).
 * Cycles per packet, the median of rounds.
 */
static double
filter_cost(struct pa_blocklist *bl, const struct pa_bl_table *t, bool v6,
		struct rte_mempool *mp)
{
	enum { NF = 10000, BURST = 32, ROUNDS = 200 };
	static struct rte_mbuf *m[NF];
	static double per[ROUNDS];
	uint8_t hit[BURST];
	unsigned int i, r;
	uint64_t t0, sum = 0;

	for (i = 0; i < NF; i++) {
		uint8_t *d;
		bool six = v6 && i % 2;
		uint16_t len = six ? 14 + 40 + 8 : 14 + 20 + 8;

		m[i] = rte_pktmbuf_alloc(mp);
		if (m[i] == NULL)
			return -1;
		d = (uint8_t *)rte_pktmbuf_append(m[i], len);
		memset(d, 0, len);
		d[0] = 2;
		d[6] = 2;
		if (!six) {
			uint32_t a;

			do
				a = (uint32_t)rnd();
			while (pa_bl_table_lookup4(t, a));
			d[12] = 0x08;
			d[14] = 0x45;
			d[16] = 0;
			d[17] = 28;
			d[22] = 64;
			d[23] = 17;
			a = htonl(a);
			memcpy(d + 26, &a, 4);
			d[30] = 203;
			d[33] = 1;
			d[34] = 0x10;
			d[36] = 0;
			d[37] = 80;
			d[39] = 8;
		} else {
			uint8_t *s = d + 22;

			do {
				uint64_t h = __builtin_bswap64(
					0x20010db800000000ull |
					(rnd() & 0xffffffffull)), l = rnd();

				memcpy(s, &h, 8);
				memcpy(s + 8, &l, 8);
			} while (pa_bl_table_lookup6(t, s));
			d[12] = 0x86;
			d[13] = 0xdd;
			d[14] = 0x60;
			d[19] = 8;
			d[20] = 17;
			d[21] = 64;
			d[38] = 0x20;
			d[53] = 1;
			d[54] = 0x10;
			d[57] = 80;
			d[59] = 8;
		}
		if (pa_pkt_parse_mbuf(m[i]) != 0)
			return -1;
	}
	/* Only the filter is timed: before each burst its headers and
	 * mbufs are touched, as the rx stage's parse has just done in the
	 * pipeline; the rdtsc pair's own cost (measured) is taken off. */
	{
		uint64_t c0 = rte_rdtsc(), ov;

		for (i = 0; i < 1000; i++)
			t0 = rte_rdtsc();
		ov = (rte_rdtsc() - c0) / 1001;
		for (r = 0; r < ROUNDS; r++) {
			uint64_t cyc = 0, c1;

			for (i = 0; i + BURST <= NF; i += BURST) {
				unsigned int j;

				for (j = 0; j < BURST; j++)
					sum += *(volatile uint8_t *)
						rte_pktmbuf_mtod_offset(m[i + j],
						uint8_t *, 26) &
						(uint8_t)(pa_pkt_meta(m[i + j])->
						flags == 0xffff);
				t0 = rte_rdtsc();
				if (!pa_blocklist_empty(bl))
					sum += pa_blocklist_filter(bl, 0,
						m + i, BURST, hit);
				c1 = rte_rdtsc() - t0;
				cyc += c1 > ov ? c1 - ov : 0;
			}
			per[r] = (double)cyc / (NF / BURST * BURST);
		}
	}
	qsort(per, ROUNDS, sizeof(per[0]), dcmp);
	for (i = 0; i < NF; i++)
		rte_pktmbuf_free(m[i]);
	if (sum != 0)
		fprintf(stderr, "unexpected hits: %" PRIu64 "\n", sum);
	return per[ROUNDS / 2];
}

int
main(int argc, char **argv)
{
	uint32_t n24 = 450000, n32 = 450000, n6 = 100000, i, n4;
	uint32_t *v4, *q4hot, *q4cold;
	uint8_t *v4len;
	struct p6 *v6;
	uint8_t (*q6hot)[16], (*q6cold)[16];
	struct pa_bl_set set = { 0 };
	struct pa_bl_table *t;
	struct rte_lpm *lpm;
	struct rte_lpm6 *lpm6;
	uint64_t t0, t1, mem0, sum = 0, tbl8_6 = 0;
	double our_build, lpm_build, lpm6_build;
	uint64_t lpm_mem, lpm6_mem;
	double c_our4h, c_our4c, c_lpm4h, c_lpm4c, c_our6h, c_our6c,
		c_lpm6h, c_lpm6c;
	int ret, lpm6_fail = 0;
	bool with_lpm = true;
	double dp_empty4, dp_full4, dp_empty_mixed, dp_full_mixed;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	if (argc >= 4) {
		n24 = (uint32_t)strtoul(argv[1], NULL, 10);
		n32 = (uint32_t)strtoul(argv[2], NULL, 10);
		n6 = (uint32_t)strtoul(argv[3], NULL, 10);
	}
	/* rte_lpm's build is quadratic in tbl8 groups (a linear search for
	 * a free one per /24 that takes a /32): 450k take most of an hour */
	if (argc >= 5 && strcmp(argv[4], "ours") == 0)
		with_lpm = false;
	n4 = n24 + n32;
	v4 = calloc(n4 + 1, sizeof(*v4));
	v4len = calloc(n4 + 1, 1);
	v6 = calloc(n6 + 1, sizeof(*v6));
	q4hot = calloc(Q, sizeof(*q4hot));
	q4cold = calloc(Q, sizeof(*q4cold));
	q6hot = calloc(Q, 16);
	q6cold = calloc(Q, 16);
	if (v4 == NULL || v6 == NULL || q4hot == NULL || q6cold == NULL)
		return 1;
	for (i = 0; i < n4; i++) {
		v4len[i] = i < n24 ? 24 : 32;
		v4[i] = (uint32_t)rnd() & (i < n24 ? 0xffffff00u : ~0u);
	}
	for (i = 0; i < n6; i++) {
		static const uint8_t lens[] = { 48, 64, 128 };
		uint64_t hi = i % 5 == 0 ? 0x20010db800000000ull |
			(rnd() & 0xffffffffull) : 0x2000000000000000ull |
			(rnd() >> 3), lo = rnd();
		unsigned int len = lens[rnd() % 3];
		uint64_t h, l;

		if (len <= 64) {
			lo = 0;
			hi &= len == 64 ? ~0ull : ~(~0ull >> len);
		}
		h = __builtin_bswap64(hi);
		l = __builtin_bswap64(lo);
		memcpy(v6[i].a, &h, 8);
		memcpy(v6[i].a + 8, &l, 8);
		v6[i].len = (uint8_t)len;
		tbl8_6 += (len - 24 + 7) / 8;
	}
	/* queries: hot = 10k addresses cycled, half in the set */
	for (i = 0; i < Q; i++) {
		uint32_t k = i % HOT;

		if (i < HOT) {
			uint32_t j = (uint32_t)(rnd() % n4);
			uint32_t j6 = (uint32_t)(rnd() % n6);

			q4hot[i] = k % 2 ? v4[j] | (v4len[j] == 24 ?
				(uint32_t)(rnd() & 0xff) : 0) : (uint32_t)rnd();
			memcpy(q6hot[i], v6[j6].a, 16);
			if (v6[j6].len < 128)	/* a host inside the prefix */
				q6hot[i][15] ^= (uint8_t)(rnd() | 1);
			if (k % 2 == 0)		/* a miss next to it */
				q6hot[i][4] ^= 0x80;
		} else {
			q4hot[i] = q4hot[k];
			memcpy(q6hot[i], q6hot[k], 16);
		}
		q4cold[i] = (uint32_t)rnd();
		{
			uint64_t h = __builtin_bswap64(i % 5 == 0 ?
				0x20010db800000000ull | (rnd() & 0xffffffffull) :
				rnd()), l = rnd();

			memcpy(q6cold[i], &h, 8);
			memcpy(q6cold[i] + 8, &l, 8);
		}
	}

	/* ours */
	t0 = rte_rdtsc();
	for (i = 0; i < n4; i++) {
		struct pa_ip_prefix p = { .addr.family = AF_INET,
			.len = v4len[i] };

		p.addr.v4.s_addr = htonl(v4[i]);
		pa_bl_set_push(&set, &p);
	}
	for (i = 0; i < n6; i++) {
		struct pa_ip_prefix p = { .addr.family = AF_INET6,
			.len = v6[i].len };

		memcpy(p.addr.v6.s6_addr, v6[i].a, 16);
		pa_bl_set_push(&set, &p);
	}
	pa_bl_set_normalise(&set);
	t = pa_bl_table_build(&set);
	t1 = rte_rdtsc();
	if (t == NULL)
		return 1;
	our_build = ms(t1 - t0);

	/* the data path: an empty blocklist (the stage skips the lookup)
	 * and the 1M one */
	{
		struct pa_blocklist_opts bo = { .n_lcores = 1 };
		struct pa_blocklist *full = pa_blocklist_create(&bo),
			*empty = pa_blocklist_create(&bo);
		struct pa_bl_set copy, none = { 0 };
		struct rte_mempool *mp;
		char why[256];

		if (pa_pkt_init() != 0 || full == NULL || empty == NULL)
			return 1;
		mp = rte_pktmbuf_pool_create("i17b_bench", 16383, 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
		if (mp == NULL || pa_bl_set_union(&set, &none, &copy) != 0 ||
		    pa_blocklist_replace(full, &copy, why, sizeof(why)) != 0)
			return 1;
		/* BL_DP_ONLY=ipv4 or mixed: that data path only (for
		 * instruction counts under callgrind, which then counts
		 * pa_blocklist_filter() of one kind of traffic) */
		const char *only = getenv("BL_DP_ONLY");
		bool do4 = only == NULL || strcmp(only, "ipv4") == 0;
		bool dom = only == NULL || strcmp(only, "mixed") == 0;

		dp_empty4 = dp_full4 = dp_empty_mixed = dp_full_mixed = 0;
		if (do4) {
			dp_empty4 = filter_cost(empty, t, false, mp);
			dp_full4 = filter_cost(full, t, false, mp);
		}
		if (dom) {
			dp_empty_mixed = filter_cost(empty, t, true, mp);
			dp_full_mixed = filter_cost(full, t, true, mp);
		}
		pa_blocklist_destroy(full);
		pa_blocklist_destroy(empty);
		rte_mempool_free(mp);
	}

	lpm = NULL;
	lpm6 = NULL;
	lpm_build = lpm6_build = 0;
	lpm_mem = lpm6_mem = 0;
	if (with_lpm) {
		/* rte_lpm: a tbl8 group per /24 holding a /32 */
		mem0 = heap();
		t0 = rte_rdtsc();
		{
			struct rte_lpm_config c = { .max_rules = n4 + 16,
				.number_tbl8s = n32 + 1024, .flags = 0 };

			lpm = rte_lpm_create("i17b_lpm", (int)rte_socket_id(), &c);
			if (lpm == NULL) {
				fprintf(stderr, "rte_lpm_create: %s\n",
					rte_strerror(rte_errno));
				return 1;
			}
			for (i = 0; i < n4; i++)
				if (rte_lpm_add(lpm, v4[i], v4len[i], 1) != 0) {
					fprintf(stderr, "rte_lpm_add %u failed\n", i);
					return 1;
				}
		}
		t1 = rte_rdtsc();
		lpm_build = ms(t1 - t0);
		lpm_mem = heap() - mem0;

		mem0 = heap();
		t0 = rte_rdtsc();
		{
			struct rte_lpm6_config c = { .max_rules = n6 + 16,
				.number_tbl8s = (uint32_t)tbl8_6 + 1024, .flags = 0 };

			lpm6 = rte_lpm6_create("i17b_lpm6", (int)rte_socket_id(), &c);
			if (lpm6 == NULL) {
				fprintf(stderr, "rte_lpm6_create: %s\n",
					rte_strerror(rte_errno));
				return 1;
			}
			for (i = 0; i < n6; i++)
				if (rte_lpm6_add(lpm6, v6[i].a, v6[i].len, 1) != 0)
					lpm6_fail++;
		}
		t1 = rte_rdtsc();
		lpm6_build = ms(t1 - t0);
		lpm6_mem = heap() - mem0;

	}

/* cycles per lookup: the median of 100 chunks of Q/100 lookups, so that
 * the chunks a shared machine's scheduler cut into do not count */
#define CHUNKS	100u
#define TIME(var, body)							\
	do {								\
		double per[CHUNKS];					\
		unsigned int ch;					\
									\
		for (ch = 0; ch < CHUNKS; ch++) {			\
			uint32_t lo = ch * (Q / CHUNKS), hi = lo + Q / CHUNKS; \
									\
			t0 = rte_rdtsc_precise();			\
			for (i = lo; i < hi; i++) {			\
				body;					\
			}						\
			per[ch] = (double)(rte_rdtsc_precise() - t0) /	\
				(Q / CHUNKS);				\
		}							\
		qsort(per, CHUNKS, sizeof(per[0]), dcmp);		\
		var = per[CHUNKS / 2];					\
	} while (0)

	TIME(c_our4h, sum += pa_bl_table_lookup4(t, q4hot[i]));
	TIME(c_our4c, sum += pa_bl_table_lookup4(t, q4cold[i]));
	TIME(c_our6h, sum += pa_bl_table_lookup6(t, q6hot[i]));
	TIME(c_our6c, sum += pa_bl_table_lookup6(t, q6cold[i]));
	c_lpm4h = c_lpm4c = c_lpm6h = c_lpm6c = 0;
	if (with_lpm) {
	TIME(c_lpm4h, { uint32_t nh; sum += rte_lpm_lookup(lpm, q4hot[i],
		&nh) == 0; });
	TIME(c_lpm4c, { uint32_t nh; sum += rte_lpm_lookup(lpm, q4cold[i],
		&nh) == 0; });
	TIME(c_lpm6h, { uint32_t nh; sum += rte_lpm6_lookup(lpm6, q6hot[i],
		&nh) == 0; });
	TIME(c_lpm6c, { uint32_t nh; sum += rte_lpm6_lookup(lpm6, q6cold[i],
		&nh) == 0; });
	}

	/* agreement (the lpm's answers are the reference) */
	{
		uint32_t bad = 0;

		for (i = 0; with_lpm && i < Q; i++) {
			uint32_t nh;

			bad += pa_bl_table_lookup4(t, q4cold[i]) !=
				(rte_lpm_lookup(lpm, q4cold[i], &nh) == 0);
			bad += pa_bl_table_lookup4(t, q4hot[i]) !=
				(rte_lpm_lookup(lpm, q4hot[i], &nh) == 0);
			if (lpm6_fail == 0)
				bad += pa_bl_table_lookup6(t, q6hot[i]) !=
					(rte_lpm6_lookup(lpm6, q6hot[i],
						&nh) == 0);
		}
		printf("{\"prefixes\": {\"v4_24\": %u, \"v4_32\": %u, \"v6\": %u, \"distinct\": %u},\n"
			" \"ours\": {\"build_ms\": %.1f, \"memory_bytes\": %zu, \"v4_hot_cycles\": %.1f, \"v4_cold_cycles\": %.1f, \"v6_hot_cycles\": %.1f, \"v6_cold_cycles\": %.1f},\n"
			" \"rte_lpm\": {\"build_ms\": %.1f, \"memory_bytes\": %" PRIu64 ", \"v4_hot_cycles\": %.1f, \"v4_cold_cycles\": %.1f},\n"
			" \"rte_lpm6\": {\"build_ms\": %.1f, \"memory_bytes\": %" PRIu64 ", \"add_failures\": %d, \"v6_hot_cycles\": %.1f, \"v6_cold_cycles\": %.1f},\n"
			" \"data_path\": {\"ipv4_empty\": %.1f, \"ipv4_1m\": %.1f, \"mixed_empty\": %.1f, \"mixed_1m\": %.1f},\n"
			" \"disagreements\": %u, \"checksum\": %" PRIu64 "}\n",
			n24, n32, n6, pa_bl_set_count(&set),
			our_build, pa_bl_table_memory(t), c_our4h, c_our4c,
			c_our6h, c_our6c,
			lpm_build, lpm_mem, c_lpm4h, c_lpm4c,
			lpm6_build, lpm6_mem, lpm6_fail, c_lpm6h, c_lpm6c,
			dp_empty4, dp_full4, dp_empty_mixed, dp_full_mixed,
			bad, sum);
	}
	rte_lpm_free(lpm);
	rte_lpm6_free(lpm6);
	pa_bl_table_free(t);
	pa_bl_set_free(&set);
	free(v4);
	free(v4len);
	free(v6);
	free(q4hot);
	free(q4cold);
	free(q6hot);
	free(q6cold);
	rte_eal_cleanup();
	return 0;
}
