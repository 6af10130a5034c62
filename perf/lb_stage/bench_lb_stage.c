/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lb stage alone (issue 16): pa_lb_process() over bursts of parsed
 * 60-byte UDP frames (62-byte IPv6) from --flows distinct clients to one
 * Maglev service of 10 backends, the flow table warm (every flow seen
 * twice first). No ports, no ACL, no rx/tx: what the stage itself costs
 * per packet, in TSC cycles (of --rounds rounds: the median, and the min
 * and 10th percentile, the rounds nobody interrupted on a shared machine;
 * take many short ones there) and, under
 * `valgrind --tool=callgrind --toggle-collect=measured_burst`, in
 * instructions (deterministic: the figure to compare two builds on a
 * shared machine).
 *
 * Usage: bench_lb_stage [--flows N] [--packets N] [--rounds N]
 *        [--mode ipip|nat|dsr|ipip6|fnat] [--burst N] [--order random|seq]
 * (fnat: full NAT, a pool of 8 addresses x 64512 ports; random: each packet from a random flow; seq: the flows in turn, as
 * perf/bench_lb.py's pcap replays them)
 * Each burst's frames are copied back and parsed before the stage runs
 * (outside the measured call).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "pa_config.h"
#include "pa_lb.h"
#include "pa_pkt.h"

#define MAX_BURST	64
#define FRAME		62

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Frame of flow @p i: 10.x.y.z:port -> 192.0.2.10:80 (or the IPv6
 * equivalents), UDP. */
static unsigned int
frame_of(uint8_t *f, uint32_t i, bool v6)
{
	static const uint8_t dmac[6] = { 2, 0, 0, 0, 0, 1 };
	static const uint8_t smac[6] = { 2, 0, 0, 0, 0, 0xaa };
	uint32_t src = 0x0a000000u | ((i * 2654435761u) & 0xffffff);
	uint16_t sport = (uint16_t)(1024 + (i * 40503u) % 60000);
	uint8_t *ip = f + 14, *udp;

	memset(f, 0, FRAME);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	if (!v6) {
		put16(f + 12, RTE_ETHER_TYPE_IPV4);
		ip[0] = 0x45;
		put16(ip + 2, 46);
		put16(ip + 6, 0x4000);
		ip[8] = 64;
		ip[9] = IPPROTO_UDP;
		src = htonl(src);
		memcpy(ip + 12, &src, 4);
		ip[16] = 192; ip[17] = 0; ip[18] = 2; ip[19] = 10;
		put16(ip + 10, (uint16_t)~rte_raw_cksum(ip, 20));
		udp = ip + 20;
		put16(udp, sport);
		put16(udp + 2, 80);
		put16(udp + 4, 26);
		return 60;
	}
	put16(f + 12, RTE_ETHER_TYPE_IPV6);
	ip[0] = 0x60;
	put16(ip + 4, 8);
	ip[6] = IPPROTO_UDP;
	ip[7] = 64;
	ip[8] = 0xfd; ip[9] = 0x10;
	src = htonl(src);
	memcpy(ip + 20, &src, 4);
	ip[24] = 0x20; ip[25] = 0x01; ip[26] = 0x0d; ip[27] = 0xb8;
	ip[39] = 0x10;
	udp = ip + 40;
	put16(udp, sport);
	put16(udp + 2, 80);
	put16(udp + 4, 8);
	return 62;
}

/* The measured call (callgrind: --toggle-collect=measured_burst). */
static __attribute__((noinline)) void
measured_burst(struct pa_lb *lb, struct rte_mbuf **m, uint16_t n,
		uint64_t now, uint8_t *v)
{
	pa_lb_process(lb, 0, m, n, now, v);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A whole decimal number up to UINT32_MAX in @p s. */
static bool
num(const char *s, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
	    v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

int
main(int argc, char **argv)
{
	char *eal[] = { "bench_lb_stage", "--no-huge", "--no-shconf",
		"--no-pci", "-m", "4096", "--no-telemetry",
		"--log-level=lib.eal:error", NULL };
	uint32_t flows = 10000, packets = 2000000, rounds = 9, burst = 32;
	const char *mode = "ipip";
	bool seq_order = false;		/* flows in turn, as a pcap replays */
	char doc[2048], err[PA_CONFIG_ERR_MAX], backends[1024];
	struct rte_mempool *pool;
	struct rte_mbuf *m[MAX_BURST];
	struct pa_config *cfg;
	struct pa_lb_opts o;
	struct pa_lb *lb;
	uint8_t *frames, v[MAX_BURST];
	uint16_t *flen;
	uint32_t *seq, n_seq, i, j, r, pos = 0;
	uint64_t *per, now, fwd = 0;
	bool v6, ok = true;
	int k;

	for (k = 1; k + 1 < argc; k += 2) {
		if (strcmp(argv[k], "--flows") == 0)
			ok &= num(argv[k + 1], &flows);
		else if (strcmp(argv[k], "--packets") == 0)
			ok &= num(argv[k + 1], &packets);
		else if (strcmp(argv[k], "--rounds") == 0)
			ok &= num(argv[k + 1], &rounds);
		else if (strcmp(argv[k], "--burst") == 0)
			ok &= num(argv[k + 1], &burst);
		else if (strcmp(argv[k], "--mode") == 0)
			mode = argv[k + 1];
		else if (strcmp(argv[k], "--order") == 0)
			seq_order = strcmp(argv[k + 1], "seq") == 0;
		else
			break;
	}
	if (!ok || k != argc || flows == 0 || rounds == 0 || burst == 0 ||
	    burst > MAX_BURST) {
		fprintf(stderr, "usage: %s [--flows N] [--packets N] [--rounds N]"
			" [--mode ipip|nat|dsr|ipip6|fnat] [--burst N<=64]"
			" [--order random|seq]\n", argv[0]);
		return 2;
	}
	v6 = strcmp(mode, "ipip6") == 0;
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "no EAL\n");
		return 1;
	}
	if (pa_pkt_init() != 0)
		return 1;
	pool = rte_pktmbuf_pool_create("bench", 1023, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	backends[0] = '\0';
	for (i = 0; i < 10; i++) {
		size_t l = strlen(backends);

		if (v6)
			snprintf(backends + l, sizeof(backends) - l,
				"%s{\"addr\": \"2001:db8:1::%u\"}", i ? "," : "",
				i + 1);
		else
			snprintf(backends + l, sizeof(backends) - l,
				"%s{\"addr\": \"10.1.0.%u\"%s}", i ? "," : "",
				i + 1, strcmp(mode, "nat") == 0 ?
				", \"port\": 8080" : strcmp(mode, "dsr") == 0 ?
				", \"mac\": \"02:00:00:00:01:01\"" : "");
	}
	snprintf(doc, sizeof(doc), "{\"ports\": [{\"name\": \"wan0\","
		" \"devargs\": \"net_null0\"}], \"lb\": {\"local_addr\":"
		" \"192.0.2.1\", \"local_addr6\": \"2001:db8::1\","
		" \"flow_table\": {\"size\": %u}, %s\"services\": [{\"name\":"
		" \"s\", \"vip\": \"%s\", \"port\": 80, \"proto\": \"udp\","
		" \"forward\": \"%s\", \"backends\": [%s]}]}}",
		flows * 2 > (1u << 20) ? flows * 2 : (1u << 20),
		strcmp(mode, "fnat") == 0 ? "\"fnat\": {\"addrs\": ["
		"\"198.51.100.1\", \"198.51.100.2\", \"198.51.100.3\","
		" \"198.51.100.4\", \"198.51.100.5\", \"198.51.100.6\","
		" \"198.51.100.7\", \"198.51.100.8\"], \"ports\":"
		" \"1024-65535\"}, " : "",
		v6 ? "2001:db8::10" : "192.0.2.10", v6 ? "ipip" : mode,
		backends);
	cfg = pa_config_load_string(doc, NULL, err, sizeof(err));
	if (cfg == NULL) {
		fprintf(stderr, "config: %s\n%s\n", err, doc);
		return 1;
	}
	memset(&o, 0, sizeof(o));
	o.n_lcores = 1;
	o.cfg = cfg;
	lb = pa_lb_create(&o, err, sizeof(err));
	if (lb == NULL) {
		fprintf(stderr, "pa_lb_create: %s\n", err);
		return 1;
	}
	frames = malloc((size_t)flows * 64);
	flen = malloc(flows * sizeof(*flen));
	n_seq = 1u << 20;
	seq = malloc(n_seq * sizeof(*seq));
	per = malloc(rounds * sizeof(*per));
	if (frames == NULL || flen == NULL || seq == NULL || per == NULL)
		return 1;
	for (i = 0; i < flows; i++)
		flen[i] = (uint16_t)frame_of(frames + (size_t)i * 64, i, v6);
	for (i = 0; i < n_seq; i++)
		seq[i] = seq_order ? i % flows : rng() % flows;
	if (rte_pktmbuf_alloc_bulk(pool, m, burst) != 0)
		return 1;

	now = 1000000000ULL;
#define LOAD(idx) do { \
	struct rte_mbuf *mb = m[idx]; \
	uint32_t fi = seq[pos++ & (n_seq - 1)]; \
	rte_pktmbuf_reset(mb); \
	memcpy(rte_pktmbuf_append(mb, flen[fi]), \
		frames + (size_t)fi * 64, 64); \
	pa_pkt_parse_mbuf(mb); \
	pa_pkt_meta(mb)->out_port = 0; \
} while (0)
	/* warm: every flow twice, in order */
	for (r = 0; r < 2; r++)
		for (i = 0; i < flows; i += burst) {
			uint32_t n = RTE_MIN(burst, flows - i);

			for (j = 0; j < n; j++) {
				struct rte_mbuf *mb = m[j];

				rte_pktmbuf_reset(mb);
				memcpy(rte_pktmbuf_append(mb, flen[i + j]),
					frames + (size_t)(i + j) * 64, 64);
				pa_pkt_parse_mbuf(mb);
				pa_pkt_meta(mb)->out_port = 0;
			}
			pa_lb_process(lb, 0, m, (uint16_t)n, now, v);
			/* the lcore's housekeeping, as the daemon's loop: the
			 * flow index grows there */
			pa_lb_poll(lb, 0, now, false);
			now += 1000;
		}
	for (r = 0; r < rounds; r++) {
		uint64_t c = 0;
		uint32_t done;

		for (done = 0; done < packets / rounds; done += burst) {
			uint64_t t0;

			for (j = 0; j < burst; j++)
				LOAD(j);
			t0 = rte_rdtsc_precise();
			measured_burst(lb, m, (uint16_t)burst, now, v);
			c += rte_rdtsc_precise() - t0;
			for (j = 0; j < burst; j++)
				fwd += v[j] == PA_LB_V_FORWARD;
			pa_lb_poll(lb, 0, now, false);
			now += 1000;
		}
		per[r] = c * 100 / done;
	}
	qsort(per, rounds, sizeof(*per), cmp_u64);
	/* on a shared machine: many short rounds, and the low ones (min,
	 * 10th percentile) are those nobody else interrupted */
	printf("mode %s flows %u burst %u: %.2f TSC cycles/packet (median of"
		" %u; min %.2f p10 %.2f max %.2f), forwarded %" PRIu64 "\n",
		mode, flows, burst, per[rounds / 2] / 100.0, rounds,
		per[0] / 100.0, per[rounds / 10] / 100.0,
		per[rounds - 1] / 100.0, fwd);
	pa_lb_destroy(lb);
	pa_config_free(cfg);
	return 0;
}
