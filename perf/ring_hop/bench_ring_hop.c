/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ring hop alone (issue 16, pipeline mode): what a packet's crossing
 * from one CPU to another costs, split into the ring operation and the
 * cache lines of the packet that cross with it.
 *
 * Two lcores, as in the CONTRACT layout of pipeline mode: the "edge"
 * lcore (rx+tx, CPU A) and the "stage" lcore (classify+lb, CPU B),
 * joined by two rings made as lib/pipeline makes them (RING_F_SP_ENQ |
 * RING_F_SC_DEQ | RING_F_EXACT_SZ, --ring slots), bursts of --burst mbuf
 * pointers, rte_ring_sp_enqueue_burst() / rte_ring_sc_dequeue_burst()
 * as stages.c calls them. Every packet makes the pipeline's two hops:
 * edge -> stage -> edge.
 *
 *  edge, "rx":  rte_pktmbuf_alloc_bulk() (which resets the mbuf header,
 *               both lines), the frame's 60 bytes copied in (net_pcap
 *               infinite_rx copies), the parser's pa_pkt_meta written
 *               (the mbuf's second line), enqueue on the stage's ring;
 *  stage:       dequeue; the classify and lb stages' reads (metadata,
 *               the IP header) and the lb's ipip writes (the mbuf
 *               header's data_off/data_len/pkt_len, 20 bytes prepended:
 *               the headroom line and the frame's first line); then
 *               --work cycles a packet of other work (the ACL and the
 *               LB's table lookups, which touch no packet line);
 *               enqueue on the edge's ring;
 *  edge, "tx":  dequeue; stage_tx()'s read of each out_port, the PMD's
 *               pkt_len, rte_pktmbuf_free_bulk() (net_pcap with no tx
 *               file frees what it is given).
 *
 * Each lcore times its parts with the TSC, per burst (polls that find
 * nothing, and enqueues that find the ring full, are counted apart, as
 * the daemon's idle polls are). Variants:
 *
 *  ring     the same two lcores, no line touched: the mbuf pointers
 *           cross and nothing else (the ring operation: enqueue +
 *           dequeue, each side's share of the ring's own lines);
 *  lines    the touches above, cross-CPU;
 *  prefetch the same, with the dequeued burst's lines prefetched first
 *           (mbuf header, metadata, then the frame's first line);
 *  ahead    lib/pipeline's poll_seg(): two bursts a dequeue (both
 *           lcores); on the stage lcore all their headers prefetched at
 *           once, the second burst's frames prefetched while the first
 *           is worked on, both enqueued at once;
 *  local    the touches and the rings on one lcore (CPU A), in turn: the
 *           same work with no line crossing, the baseline the cross-CPU
 *           figures are taken against.
 *
 * Per hop (2 a packet): ring = (the 4 ring calls' cycles) / packets / 2;
 * lines = (the touches' cycles cross-CPU - local) / packets / 2; the
 * hop = ring + lines. Figures in TSC cycles per packet.
 *
 * Usage: bench_ring_hop [--seconds S] [--burst N] [--ring N]
 *        [--work CYCLES] [--cpus A,B] [--rounds N]
 *        [--variant all|ring,lines,prefetch,ahead,local] [--json FILE]
 *        [--file-prefix P]
 * (--seconds per variant and round; default 2, the edge lcore on CPU 0
 * and the stage lcore on CPU 1, as perf/run.py's pipeline layout; with
 * --rounds N the variants run in turn N times, each figure the median)
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "pa_pkt.h"

#define MAX_BURST	256
#define FRAME		60
#define OUTER		20	/* ipip: the outer IPv4 header */

enum variant { V_RING, V_LINES, V_PREFETCH, V_AHEAD, V_LOCAL, V_MAX };

static const char *const vname[V_MAX] = {
	[V_RING] = "ring", [V_LINES] = "lines",
	[V_PREFETCH] = "prefetch", [V_AHEAD] = "ahead", [V_LOCAL] = "local",
};

/* A timed part: its bursts' cycles and packets, those of the bursts
 * nobody interrupted (at most CUT_BASE + CUT_PER_PKT x packets cycles: a
 * preemption, on a shared machine, is far longer), and a histogram of
 * cycles per packet (bins of 1/HIST_SCALE cycle) for the median. */
#define CUT_BASE	10000
#define CUT_PER_PKT	1000
#define HIST_SCALE	4
#define HIST_BINS	(1024 * HIST_SCALE)

struct part {
	uint64_t cyc, pk;		/* every burst */
	uint64_t kept_cyc, kept_pk;	/* bursts not interrupted */
	uint64_t cut;			/* bursts interrupted */
	uint32_t hist[HIST_BINS];
};

static __rte_always_inline void
acc(struct part *p, uint64_t cycles, unsigned int n)
{
	uint64_t bin;

	p->cyc += cycles;
	p->pk += n;
	if (unlikely(cycles > CUT_BASE + (uint64_t)CUT_PER_PKT * n)) {
		p->cut++;
		return;
	}
	p->kept_cyc += cycles;
	p->kept_pk += n;
	bin = cycles * HIST_SCALE / n;
	p->hist[bin < HIST_BINS ? bin : HIST_BINS - 1]++;
}

/* Cycles per packet of the bursts nobody interrupted. */
static double
part_mean(const struct part *p)
{
	return p->kept_pk != 0 ? (double)p->kept_cyc / (double)p->kept_pk : 0;
}

/* The median burst's cycles per packet. */
static double
part_median(const struct part *p)
{
	uint64_t total = 0, seen = 0;
	unsigned int i;

	for (i = 0; i < HIST_BINS; i++)
		total += p->hist[i];
	for (i = 0; i < HIST_BINS; i++) {
		seen += p->hist[i];
		if (2 * seen >= total && total != 0)
			return ((double)i + 0.5) / HIST_SCALE;
	}
	return 0;
}

/* Each lcore's own counters, on lines of their own. */
struct side {
	uint64_t packets;
	struct part enq, deq;		/* ring calls that moved some */
	struct part touch_in;		/* edge: rx (alloc, copy, meta);
					 * stage: the stages' reads/writes */
	struct part touch_out;		/* edge: tx (out_port, free) */
	struct part work;
	uint64_t empty_polls, full_polls;
	uint64_t sink;			/* keeps the reads */
} __rte_cache_aligned;

static struct {
	struct rte_ring *to_stage, *to_edge;
	struct rte_mempool *pool;
	enum variant v;
	unsigned int burst;
	uint64_t work;			/* cycles a packet, stage */
	uint64_t end_tsc;		/* the window's end ... */
	uint64_t give_up_tsc;		/* ... or later, until a packet is
					 * back (a starved lcore, loaded
					 * machine) */
	volatile bool stop;
	struct side edge, stage;
	uint8_t frame[FRAME];
} B;

/* Up to @p take mbufs from @p r, the call timed into @p s's deq (a
 * poll that finds the ring empty counted apart); @p *t1: the TSC after
 * the call. @return how many. */
static __rte_always_inline unsigned int
deq_timed(struct rte_ring *r, struct rte_mbuf **in, unsigned int take,
		struct side *s, uint64_t *t1)
{
	uint64_t t0 = rte_rdtsc();
	unsigned int n = rte_ring_sc_dequeue_burst(r, (void **)in, take,
		NULL);

	*t1 = rte_rdtsc();
	if (n == 0)
		s->empty_polls++;
	else
		acc(&s->deq, *t1 - t0, n);
	return n;
}

/* rx: new mbufs (the header reset: both lines written), the frame
 * copied in, the metadata written from what the parser reads. */
static __rte_always_inline void
rx_touch(struct rte_mbuf **m, unsigned int n, uint32_t seq)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct pa_pkt_meta *meta = pa_pkt_meta(m[i]);
		uint8_t *d = rte_pktmbuf_mtod(m[i], uint8_t *);
		uint32_t src;

		memcpy(d, B.frame, FRAME);
		src = (seq + i) * 2654435761u;
		memcpy(d + 26, &src, 4);
		m[i]->data_len = FRAME;
		m[i]->pkt_len = FRAME;
		meta->hash = src ^ (uint32_t)d[23] << 8;
		meta->flags = 1;
		meta->l3_off = 14;
		meta->l4_off = 34;
		meta->out_port = 0;
		meta->sport = (uint16_t)src;
		meta->dport = 80;
		meta->l4_proto = d[23];
		meta->vlan_count = 0;
	}
}

/* classify + lb: read the metadata and the IP header (the ACL's and the
 * LB's keys), then the ipip encapsulation's writes: the header's
 * lengths and offset (rte_pktmbuf_prepend), the Ethernet header moved in
 * front of an outer IPv4 header. */
static __rte_always_inline uint64_t
stage_touch(struct rte_mbuf **m, unsigned int n)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct pa_pkt_meta *meta = pa_pkt_meta(m[i]);
		uint8_t *d = rte_pktmbuf_mtod(m[i], uint8_t *);
		const uint8_t *ip = d + meta->l3_off;
		uint32_t a, b;
		uint8_t *o;

		memcpy(&a, ip + 12, 4);
		memcpy(&b, ip + 16, 4);
		sum += a ^ b ^ meta->hash ^ meta->sport ^ meta->dport ^
			meta->l4_proto;
		o = (uint8_t *)rte_pktmbuf_prepend(m[i], OUTER);
		if (unlikely(o == NULL))
			continue;
		memmove(o, o + OUTER, 14);
		memset(o + 14, 0x45, OUTER);
	}
	return sum;
}

/* tx: stage_tx()'s out_port per packet, the PMD's lengths, the free. */
static __rte_always_inline uint64_t
tx_touch(struct rte_mbuf **m, unsigned int n)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += pa_pkt_meta(m[i])->out_port + m[i]->pkt_len;
	rte_pktmbuf_free_bulk(m, n);
	return sum;
}

/* The dequeued burst's lines, before the stages read them: every
 * header and metadata line first, then the frames (whose address the
 * header gives): lib/pkt's, as lib/pipeline's poll_seg() makes them. */
static __rte_always_inline void
prefetch_burst(struct rte_mbuf **m, unsigned int n)
{
	pa_pkt_prefetch_hdrs(m, n);
	pa_pkt_prefetch_data(m, n);
}

static __rte_always_inline void
spin_work(uint64_t from, uint64_t cycles)
{
	while (rte_rdtsc() - from < cycles)
		rte_pause();
}

/* ring variant: the mbufs the edge sends round and round (no pool, no
 * line of theirs touched) */
static struct rte_mbuf **ring_mbufs;
static unsigned int ring_n_mbufs;

/* The edge: "rx" (a burst in, onto the stage's ring) and "tx" (a burst
 * back, freed); @p local: the stage's part too, on this lcore. */
static void
edge_loop(bool local)
{
	struct side *s = &B.edge, *st = &B.stage;
	const bool touch = B.v != V_RING, pf = B.v == V_PREFETCH,
		ahead = B.v == V_AHEAD;
	const unsigned int take = ahead ? 2 * B.burst : B.burst;
	struct rte_mbuf *out[MAX_BURST], *in[2 * MAX_BURST];
	unsigned int n_out = 0, sent = 0, n, k, next = 0;
	uint64_t t0, t1, seq = 0;

	while (!B.stop) {
		/* rx: a new burst once the last one is all on the ring */
		if (n_out == sent) {
			t0 = rte_rdtsc();
			if (t0 >= B.end_tsc && (s->packets != 0 ||
					t0 >= B.give_up_tsc))
				break;
			if (touch) {
				if (rte_pktmbuf_alloc_bulk(B.pool, out,
						B.burst) != 0) {
					s->full_polls++;
					goto tx;
				}
				rx_touch(out, B.burst, (uint32_t)seq);
				seq += B.burst;
			} else {
				/* the pointers only */
				for (k = 0; k < B.burst; k++) {
					out[k] = ring_mbufs[next++];
					if (next == ring_n_mbufs)
						next = 0;
				}
			}
			n_out = B.burst;
			sent = 0;
			t1 = rte_rdtsc();
			acc(&s->touch_in, t1 - t0, B.burst);
		}
		t0 = rte_rdtsc();
		k = rte_ring_sp_enqueue_burst(B.to_stage, (void **)out + sent,
			n_out - sent, NULL);
		t1 = rte_rdtsc();
		if (k != 0) {
			acc(&s->enq, t1 - t0, k);
			sent += k;
		} else {
			s->full_polls++;
		}
		if (local) {
			/* the stage's part, in turn */
			t0 = rte_rdtsc();
			n = rte_ring_sc_dequeue_burst(B.to_stage, (void **)in,
				B.burst, NULL);
			t1 = rte_rdtsc();
			if (n != 0) {
				acc(&st->deq, t1 - t0, n);
				t0 = t1;
				if (touch)
					st->sink += stage_touch(in, n);
				t1 = rte_rdtsc();
				acc(&st->touch_in, t1 - t0, n);
				if (B.work != 0) {
					spin_work(t1, B.work * n);
					acc(&st->work, rte_rdtsc() - t1, n);
				}
				t0 = rte_rdtsc();
				k = rte_ring_sp_enqueue_burst(B.to_edge,
					(void **)in, n, NULL);
				acc(&st->enq, rte_rdtsc() - t0, n);
				st->packets += n;
				if (unlikely(k != n)) {
					fprintf(stderr, "local: ring full\n");
					abort();
				}
			}
		}
tx:
		n = deq_timed(B.to_edge, in, take, s, &t1);
		if (n == 0)
			continue;
		if (touch) {
			t0 = t1;
			if (pf)
				prefetch_burst(in, n);
			s->sink += tx_touch(in, n);
			acc(&s->touch_out, rte_rdtsc() - t0, n);
		}
		s->packets += n;
	}
	B.stop = true;
}

/* The stage lcore: dequeue, the stages' touches, --work, enqueue back.
 * "ahead": two bursts a dequeue, every header prefetched at once, the
 * second burst's frames prefetched while the first one is worked on
 * (lib/pipeline's poll_seg()). */
static int
stage_main(void *arg)
{
	struct side *s = &B.stage;
	const bool touch = B.v != V_RING, pf = B.v == V_PREFETCH,
		ahead = B.v == V_AHEAD;
	const unsigned int take = ahead ? 2 * B.burst : B.burst;
	struct rte_mbuf *in[2 * MAX_BURST], **c;
	unsigned int n, k, done, e;
	uint64_t t0, t1;

	RTE_SET_USED(arg);
	while (!B.stop) {
		n = deq_timed(B.to_stage, in, take, s, &t1);
		if (n == 0)
			continue;
		if (ahead) {
			t0 = rte_rdtsc();
			pa_pkt_prefetch_hdrs(in, n);
			acc(&s->touch_in, rte_rdtsc() - t0, n);
		}
		for (done = 0; done < n; done += k) {
			k = RTE_MIN(n - done, B.burst);
			c = in + done;
			t0 = rte_rdtsc();
			if (ahead && done + k < n)
				pa_pkt_prefetch_data(c + k, RTE_MIN(n - done - k,
					B.burst));
			if (touch) {
				if (pf)
					prefetch_burst(c, k);
				s->sink += stage_touch(c, k);
			}
			t1 = rte_rdtsc();
			acc(&s->touch_in, t1 - t0, k);
			if (B.work != 0) {
				spin_work(t1, B.work * k);
				acc(&s->work, rte_rdtsc() - t1, k);
			}
		}
		/* out in one enqueue ("ahead": both bursts) */
		for (e = 0; e < n;) {
			unsigned int q;

			t0 = rte_rdtsc();
			q = rte_ring_sp_enqueue_burst(B.to_edge, (void **)in + e,
				n - e, NULL);
			t1 = rte_rdtsc();
			if (q == 0) {
				s->full_polls++;
				if (B.stop)
					break;
				continue;
			}
			acc(&s->enq, t1 - t0, q);
			e += q;
		}
		s->packets += n;
	}
	return 0;
}

struct result {
	enum variant v;
	double seconds, mpps;
	double edge_enq, edge_deq, stage_enq, stage_deq;	/* per packet */
	double rx_touch, stage_touch, tx_touch, work;
	double ring, touch;		/* per hop: the 4 ring calls / 2, the
					 * 3 touches / 2 */
	double ring_med, touch_med;	/* the same of the median bursts */
	uint64_t cut, bursts;		/* bursts left out (interrupted) */
	uint64_t edge_full, stage_empty;
};

static bool
num(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-')
		return false;
	*out = v;
	return true;
}

#define MAX_ROUNDS	64

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Into @p out: each figure's median over @p n rounds (the counts: their
 * sums). */
static void
median_result(const struct result *rs, unsigned int n, struct result *out)
{
	static const size_t field[] = {
		offsetof(struct result, seconds), offsetof(struct result, mpps),
		offsetof(struct result, edge_enq),
		offsetof(struct result, edge_deq),
		offsetof(struct result, stage_enq),
		offsetof(struct result, stage_deq),
		offsetof(struct result, rx_touch),
		offsetof(struct result, stage_touch),
		offsetof(struct result, tx_touch),
		offsetof(struct result, work), offsetof(struct result, ring),
		offsetof(struct result, touch),
		offsetof(struct result, ring_med),
		offsetof(struct result, touch_med),
	};
	double v[MAX_ROUNDS];
	unsigned int i, j;

	*out = rs[0];
	for (j = 0; j < RTE_DIM(field); j++) {
		for (i = 0; i < n; i++)
			v[i] = *(const double *)((const char *)&rs[i] +
				field[j]);
		qsort(v, n, sizeof(v[0]), cmp_double);
		*(double *)((char *)out + field[j]) = n % 2 ? v[n / 2] :
			(v[n / 2 - 1] + v[n / 2]) / 2;
	}
	for (i = 1; i < n; i++) {
		out->cut += rs[i].cut;
		out->bursts += rs[i].bursts;
		out->edge_full += rs[i].edge_full;
		out->stage_empty += rs[i].stage_empty;
	}
}

static int
run_variant(enum variant v, double seconds, unsigned int stage_lcore,
		struct result *r)
{
	struct rte_mbuf *m = NULL;
	const struct part *const parts[] = { &B.edge.enq, &B.edge.deq,
		&B.stage.enq, &B.stage.deq, &B.edge.touch_in,
		&B.stage.touch_in, &B.edge.touch_out, &B.stage.work };
	uint64_t hz = rte_get_tsc_hz(), t0, pk;
	unsigned int i;
	double p;

	memset(&B.edge, 0, sizeof(B.edge));
	memset(&B.stage, 0, sizeof(B.stage));
	rte_ring_reset(B.to_stage);
	rte_ring_reset(B.to_edge);
	B.v = v;
	B.stop = false;
	t0 = rte_rdtsc();
	B.end_tsc = t0 + (uint64_t)(seconds * (double)hz);
	B.give_up_tsc = B.end_tsc + 30 * hz;
	if (v == V_LOCAL) {
		edge_loop(true);
	} else {
		if (rte_eal_remote_launch(stage_main, NULL, stage_lcore) != 0)
			return -1;
		edge_loop(false);
		rte_eal_wait_lcore(stage_lcore);
	}
	t0 = rte_rdtsc() - t0;
	/* what is still on the rings, back to the pool */
	if (v != V_RING) {
		while (rte_ring_sc_dequeue(B.to_stage, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		while (rte_ring_sc_dequeue(B.to_edge, (void **)&m) == 0)
			rte_pktmbuf_free(m);
	}
	pk = B.edge.packets;
	if (pk == 0)
		return -1;
	p = (double)pk;
	memset(r, 0, sizeof(*r));
	r->v = v;
	r->seconds = (double)t0 / (double)hz;
	r->mpps = p / r->seconds / 1e6;
	r->edge_enq = part_mean(&B.edge.enq);
	r->edge_deq = part_mean(&B.edge.deq);
	r->stage_enq = part_mean(&B.stage.enq);
	r->stage_deq = part_mean(&B.stage.deq);
	r->rx_touch = part_mean(&B.edge.touch_in);
	r->stage_touch = part_mean(&B.stage.touch_in);
	r->tx_touch = part_mean(&B.edge.touch_out);
	r->work = part_mean(&B.stage.work);
	r->ring = (r->edge_enq + r->edge_deq + r->stage_enq + r->stage_deq) /
		2;
	r->touch = (r->rx_touch + r->stage_touch + r->tx_touch) / 2;
	r->ring_med = (part_median(&B.edge.enq) + part_median(&B.edge.deq) +
		part_median(&B.stage.enq) + part_median(&B.stage.deq)) / 2;
	r->touch_med = (part_median(&B.edge.touch_in) +
		part_median(&B.stage.touch_in) +
		part_median(&B.edge.touch_out)) / 2;
	for (i = 0; i < RTE_DIM(parts); i++) {
		r->cut += parts[i]->cut;
		r->bursts += parts[i]->cut + parts[i]->kept_pk / B.burst;
	}
	r->edge_full = B.edge.full_polls;
	r->stage_empty = B.stage.empty_polls;
	return 0;
}

int
main(int argc, char **argv)
{
	static const uint8_t hdr[34] = {
		2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0xaa, 0x08, 0x00,
		0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0,
		10, 0, 0, 1, 192, 0, 2, 10,
	};
	uint64_t burst = 32, ring = 1024, work = 150, a = 0, b = 1;
	const char *json = NULL, *variant = "all", *prefix = "pi-ring-hop";
	double seconds = 2;
	char lcores[64], fp[128];
	char *eal[] = { "bench_ring_hop", "--no-huge", "--no-pci", "-m", "512",
		"--no-telemetry", "--log-level=lib.eal:error", "--lcores",
		lcores, fp, NULL };
	static struct result per[V_MAX][MAX_ROUNDS];
	struct result res[V_MAX];
	bool want[V_MAX], ok = true;
	uint64_t rounds = 1;
	unsigned int stage_lcore, i, rd;
	FILE *f;
	int k;

	for (k = 1; k + 1 < argc; k += 2) {
		if (strcmp(argv[k], "--seconds") == 0) {
			char *end;

			seconds = strtod(argv[k + 1], &end);
			ok &= *end == '\0' && seconds > 0 && seconds <= 3600;
		} else if (strcmp(argv[k], "--burst") == 0) {
			ok &= num(argv[k + 1], &burst);
		} else if (strcmp(argv[k], "--ring") == 0) {
			ok &= num(argv[k + 1], &ring);
		} else if (strcmp(argv[k], "--work") == 0) {
			ok &= num(argv[k + 1], &work);
		} else if (strcmp(argv[k], "--cpus") == 0) {
			char *end;

			a = strtoull(argv[k + 1], &end, 10);
			ok &= *end == ',';
			if (*end == ',')
				ok &= num(end + 1, &b);
		} else if (strcmp(argv[k], "--rounds") == 0) {
			ok &= num(argv[k + 1], &rounds);
		} else if (strcmp(argv[k], "--variant") == 0) {
			variant = argv[k + 1];
		} else if (strcmp(argv[k], "--json") == 0) {
			json = argv[k + 1];
		} else if (strcmp(argv[k], "--file-prefix") == 0) {
			prefix = argv[k + 1];
		} else {
			break;
		}
	}
	/* "all", or names separated by commas */
	for (i = 0; i < V_MAX; i++) {
		const char *p = strstr(variant, vname[i]);
		size_t l = strlen(vname[i]);

		want[i] = strcmp(variant, "all") == 0 || (p != NULL &&
			(p == variant || p[-1] == ',') &&
			(p[l] == '\0' || p[l] == ','));
	}
	if (!ok || k != argc || burst == 0 || burst > MAX_BURST ||
	    ring < 2 * burst || ring > 65536 || work > 100000 ||
	    rounds == 0 || rounds > MAX_ROUNDS ||
	    a > 1023 || b > 1023 || a == b ||
	    !(want[V_RING] || want[V_LINES] || want[V_PREFETCH] ||
	      want[V_LOCAL])) {
		fprintf(stderr, "usage: %s [--seconds S] [--burst N<=%d]"
			" [--ring N] [--work CYCLES] [--cpus A,B]"
			" [--rounds N<=%d]"
			" [--variant all|ring,lines,prefetch,ahead,local]"
			" [--json FILE] [--file-prefix P]\n", argv[0],
			MAX_BURST, MAX_ROUNDS);
		return 2;
	}
	snprintf(lcores, sizeof(lcores), "0@%" PRIu64 ",1@%" PRIu64, a, b);
	snprintf(fp, sizeof(fp), "--file-prefix=%s", prefix);
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "no EAL\n");
		return 1;
	}
	if (pa_pkt_init() != 0)
		return 1;
	stage_lcore = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
	if (stage_lcore >= RTE_MAX_LCORE) {
		fprintf(stderr, "no second lcore\n");
		return 1;
	}
	B.burst = (unsigned int)burst;
	B.work = work;
	memcpy(B.frame, hdr, sizeof(hdr));
	/* the ring variant's mbufs (held), both rings full and a burst on
	 * each side, and the mempool's per-lcore caches */
	B.pool = rte_pktmbuf_pool_create("pi_ring_hop", 4 * ring + 8 * burst +
		2048, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	B.to_stage = rte_ring_create("pi_to_stage", (unsigned int)ring,
		SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	B.to_edge = rte_ring_create("pi_to_edge", (unsigned int)ring,
		SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (B.pool == NULL || B.to_stage == NULL || B.to_edge == NULL) {
		fprintf(stderr, "no pool or rings\n");
		return 1;
	}
	ring_n_mbufs = 2 * (unsigned int)ring + 2 * (unsigned int)burst;
	ring_mbufs = calloc(ring_n_mbufs, sizeof(*ring_mbufs));
	if (ring_mbufs == NULL || rte_pktmbuf_alloc_bulk(B.pool, ring_mbufs,
			ring_n_mbufs) != 0) {
		fprintf(stderr, "no mbufs\n");
		return 1;
	}
	/* the ring variant's mbufs stay out of the pool: every pointer the
	 * edge sends is a distinct one, as in the pipeline */

	printf("# bench_ring_hop: burst %" PRIu64 ", ring %" PRIu64
		", work %" PRIu64 " cycles/packet, CPUs %" PRIu64 ",%" PRIu64
		", %.2f s a variant, %" PRIu64 " round(s) (medians), TSC %.2f"
		" GHz\n", burst, ring, work, a, b, seconds, rounds,
		(double)rte_get_tsc_hz() / 1e9);
	/* the variants in turn, round after round: on a shared machine each
	 * sees the same load */
	for (rd = 0; rd < rounds; rd++)
		for (i = 0; i < V_MAX; i++) {
			if (!want[i])
				continue;
			if (run_variant((enum variant)i, seconds, stage_lcore,
					&per[i][rd]) != 0) {
				fprintf(stderr, "%s: no packets\n", vname[i]);
				return 1;
			}
		}
	printf("%-9s %6s | %6s %6s %6s %6s | %6s %6s %6s %6s | %6s %7s |"
		" %6s %7s | %6s | %s\n", "variant", "Mpps", "e.enq", "e.deq",
		"s.deq", "s.enq", "rx", "stage", "tx", "work", "ring/h",
		"touch/h", "median", "median", "stage", "bursts cut");
	for (i = 0; i < V_MAX; i++) {
		struct result *r = &res[i];

		if (!want[i])
			continue;
		median_result(per[i], (unsigned int)rounds, r);
		printf("%-9s %6.2f | %6.1f %6.1f %6.1f %6.1f | %6.1f %6.1f %6.1f"
			" %6.1f | %6.1f %7.1f | %6.1f %7.1f | %6.1f | %.4f%%\n",
			vname[i], r->mpps, r->edge_enq, r->edge_deq,
			r->stage_deq, r->stage_enq, r->rx_touch, r->stage_touch,
			r->tx_touch, r->work, r->ring, r->touch, r->ring_med,
			r->touch_med, r->stage_deq + r->stage_touch +
			r->stage_enq, r->bursts ? 100.0 * (double)r->cut /
			(double)r->bursts : 0);
	}
	if (want[V_LINES] && want[V_LOCAL] && want[V_RING]) {
		const struct result *l = &res[V_LOCAL];

		printf("per hop, cycles/packet: ring operation %.1f (local %.1f);"
			" line transfers %.1f; the hop %.1f\n", res[V_RING].ring,
			l->ring, res[V_LINES].touch - l->touch,
			res[V_RING].ring + res[V_LINES].touch - l->touch);
	}
	for (i = V_PREFETCH; i <= V_AHEAD; i++)
		if (want[V_LINES] && want[i])
			printf("%s: the stage lcore's ring calls and touches"
				" %.1f cycles/packet, against %.1f (lines)\n",
				vname[i], res[i].stage_deq + res[i].stage_touch +
				res[i].stage_enq, res[V_LINES].stage_deq +
				res[V_LINES].stage_touch +
				res[V_LINES].stage_enq);
	if (json != NULL) {
		f = fopen(json, "w");
		if (f == NULL) {
			perror(json);
			return 1;
		}
		fprintf(f, "{\"burst\": %" PRIu64 ", \"ring\": %" PRIu64
			", \"work\": %" PRIu64 ", \"cpus\": [%" PRIu64 ", %" PRIu64
			"], \"tsc_hz\": %" PRIu64 ", \"variants\": {", burst, ring,
			work, a, b, rte_get_tsc_hz());
		for (i = 0, k = 0; i < V_MAX; i++) {
			const struct result *r = &res[i];

			if (!want[i])
				continue;
			fprintf(f, "%s\"%s\": {\"mpps\": %.3f, \"edge_enq\": %.2f,"
				" \"edge_deq\": %.2f, \"stage_deq\": %.2f,"
				" \"stage_enq\": %.2f, \"rx_touch\": %.2f,"
				" \"stage_touch\": %.2f, \"tx_touch\": %.2f,"
				" \"work\": %.2f, \"ring_per_hop\": %.2f,"
				" \"touch_per_hop\": %.2f,"
				" \"ring_per_hop_median\": %.2f,"
				" \"touch_per_hop_median\": %.2f,"
				" \"bursts_cut\": %" PRIu64 ", \"bursts\": %" PRIu64
				", \"edge_full_polls\": %" PRIu64
				", \"stage_empty_polls\": %" PRIu64 "}",
				k++ ? ", " : "", vname[i], r->mpps, r->edge_enq,
				r->edge_deq, r->stage_deq, r->stage_enq,
				r->rx_touch, r->stage_touch, r->tx_touch,
				r->work, r->ring, r->touch, r->ring_med,
				r->touch_med, r->cut, r->bursts, r->edge_full,
				r->stage_empty);
		}
		fprintf(f, "}}\n");
		fclose(f);
	}
	rte_eal_cleanup();
	return 0;
}
