/* SPDX-License-Identifier: BSD-3-Clause */
/* Data-path counters: drop and stage names, sums, latency histograms and
 * their summaries, and the JSON renderings of those. */
#include <stddef.h>
#include <string.h>

#include "pa_stats.h"

static const char *const drop_names[PA_DROP_MAX] = {
	[PA_DROP_MALFORMED] = "malformed",
	[PA_DROP_ACL] = "acl",
	[PA_DROP_POLICE] = "police",
	[PA_DROP_NON_IP] = "non_ip",
	[PA_DROP_NO_BACKEND] = "no_backend",
	[PA_DROP_MTU] = "mtu",
	[PA_DROP_RING_FULL] = "ring_full",
	[PA_DROP_TX_FULL] = "tx_full",
	[PA_DROP_RX_ERROR] = "rx_error",
	[PA_DROP_SHUTDOWN] = "shutdown",
	[PA_DROP_LOCAL] = "local",
	[PA_DROP_NEIGH_RING_FULL] = "neigh_ring_full",
	[PA_DROP_EXCP_FULL] = "excp_full",
	[PA_DROP_EXCP_RATE] = "excp_rate",
	[PA_DROP_NOT_OURS] = "not_ours",
	[PA_DROP_TO_SELF] = "to_self",
	[PA_DROP_TTL] = "ttl",
	[PA_DROP_NO_ROUTE] = "no_route",
	[PA_DROP_ICMP_BAD_QUOTE] = "icmp_bad_quote",
	[PA_DROP_ICMP_NO_SERVICE] = "icmp_no_service",
	[PA_DROP_NO_SERVICE] = "no_service",
	[PA_DROP_HANDOVER_FULL] = "handover_full",
	[PA_DROP_NAT_AMBIGUOUS] = "nat_ambiguous",
	[PA_DROP_SRC_LIMIT] = "src_limit",
	[PA_DROP_MAX_FLOWS] = "max_flows",
	[PA_DROP_BLOCKLIST] = "blocklist",
	[PA_DROP_FNAT_NO_PORT] = "fnat_no_port",
	[PA_DROP_FNAT_TABLE_FULL] = "fnat_table_full",
	[PA_DROP_FNAT_FRAGMENT] = "fnat_fragment",
	[PA_DROP_FNAT_UNMATCHED] = "fnat_unmatched",
	[PA_DROP_FNAT_XLAT] = "fnat_xlat",
};

static const char *const stage_names[PA_STAGE_MAX] = {
	[PA_STAGE_RX] = "rx",
	[PA_STAGE_CLASSIFY] = "classify",
	[PA_STAGE_LB] = "lb",
	[PA_STAGE_TX] = "tx",
};

const char *
pa_stats_drop_name(enum pa_drop_reason r)
{
	return (unsigned int)r < PA_DROP_MAX ? drop_names[r] : "unknown";
}

const char *
pa_stats_stage_name(enum pa_stage_id s)
{
	return (unsigned int)s < PA_STAGE_MAX ? stage_names[s] : "unknown";
}

static inline uint64_t
read_once(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void
pa_stats_accumulate(struct pa_lcore_stats *dst,
		const struct pa_lcore_stats *src)
{
	unsigned int i;

	dst->rx_packets += read_once(&src->rx_packets);
	dst->tx_packets += read_once(&src->tx_packets);
	for (i = 0; i < PA_STAGE_MAX; i++)
		dst->stage_packets[i] += read_once(&src->stage_packets[i]);
	for (i = 0; i < PA_DROP_MAX; i++)
		dst->drops[i] += read_once(&src->drops[i]);
	dst->busy_polls += read_once(&src->busy_polls);
	dst->idle_polls += read_once(&src->idle_polls);
	dst->busy_cycles += read_once(&src->busy_cycles);
	dst->sleeps += read_once(&src->sleeps);
	dst->sleep_cycles += read_once(&src->sleep_cycles);
	dst->ctrl_tx_packets += read_once(&src->ctrl_tx_packets);
	dst->ctrl_tx_dropped += read_once(&src->ctrl_tx_dropped);
	dst->icmp_tx_packets += read_once(&src->icmp_tx_packets);
	dst->icmp_tx_dropped += read_once(&src->icmp_tx_dropped);
	dst->icmp_rate_limited += read_once(&src->icmp_rate_limited);
	dst->icmp_not_sent += read_once(&src->icmp_not_sent);
	dst->handover_packets += read_once(&src->handover_packets);
	dst->handover_received += read_once(&src->handover_received);
}

uint64_t
pa_stats_total_drops(const struct pa_lcore_stats *s)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < PA_DROP_MAX; i++)
		sum += s->drops[i];
	return sum;
}

json_t *
pa_stats_drops_json(const struct pa_lcore_stats *s)
{
	json_t *o = json_object();
	unsigned int i;

	if (o == NULL)
		return NULL;
	for (i = 0; i < PA_DROP_MAX; i++) {
		if (json_object_set_new(o, drop_names[i],
				json_integer((json_int_t)s->drops[i])) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

uint64_t
pa_stats_latency_bucket_lower(unsigned int i)
{
	unsigned int shift;

	if (i < PA_STATS_LAT_SUB)
		return i;
	shift = (i - PA_STATS_LAT_SUB) / PA_STATS_LAT_SUB;
	return (uint64_t)(PA_STATS_LAT_SUB + (i - PA_STATS_LAT_SUB) %
		PA_STATS_LAT_SUB) << shift;
}

uint64_t
pa_stats_latency_bucket_upper(unsigned int i)
{
	unsigned int shift;

	if (i < PA_STATS_LAT_SUB)
		return i;
	if (i >= PA_STATS_LAT_BUCKETS - 1)
		return UINT64_MAX;
	shift = (i - PA_STATS_LAT_SUB) / PA_STATS_LAT_SUB;
	return pa_stats_latency_bucket_lower(i) + (UINT64_C(1) << shift) - 1;
}

void
pa_stats_latency_merge(struct pa_stats_latency *dst,
		const struct pa_stats_latency *src)
{
	uint64_t m = read_once(&src->max);
	unsigned int i;

	for (i = 0; i < PA_STATS_LAT_BUCKETS; i++)
		dst->bucket[i] += read_once(&src->bucket[i]);
	dst->sum += read_once(&src->sum);
	if (m > dst->max)
		dst->max = m;
}

uint64_t
pa_stats_latency_count(const struct pa_stats_latency *h)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < PA_STATS_LAT_BUCKETS; i++)
		n += h->bucket[i];
	return n;
}

uint64_t
pa_stats_latency_quantile(const struct pa_stats_latency *h, double q)
{
	uint64_t n = pa_stats_latency_count(h), rank, cum = 0, lo, hi, mid;
	unsigned int i;
	double x;

	if (n == 0)
		return 0;
	if (!(q > 0.0))
		q = 0.0;
	if (q > 1.0)
		q = 1.0;
	x = q * (double)n;
	rank = (uint64_t)x;
	if ((double)rank < x)
		rank++;		/* ceil, without libm */
	if (rank == 0)
		rank = 1;
	if (rank >= n && h->max != 0)
		return h->max;	/* the top value is known exactly */
	for (i = 0; i < PA_STATS_LAT_BUCKETS; i++) {
		cum += h->bucket[i];
		if (cum >= rank)
			break;
	}
	if (i == PA_STATS_LAT_BUCKETS)
		i = PA_STATS_LAT_BUCKETS - 1;
	lo = pa_stats_latency_bucket_lower(i);
	hi = pa_stats_latency_bucket_upper(i);
	mid = lo + (hi - lo) / 2;
	/* the maximum is exact; a bucket's midpoint may lie above it */
	return h->max != 0 && mid > h->max ? h->max : mid;
}

static uint64_t
cycles_to_ns(uint64_t cycles, uint64_t tsc_hz)
{
	double ns;

	if (tsc_hz == 0)
		return 0;
	ns = (double)cycles * 1e9 / (double)tsc_hz;
	return ns >= 9.2e18 ? (uint64_t)INT64_MAX : (uint64_t)(ns + 0.5);
}

void
pa_stats_latency_summarize(const struct pa_stats_latency *h, uint64_t tsc_hz,
		struct pa_stats_latency_summary *out)
{
	uint64_t n = h != NULL ? pa_stats_latency_count(h) : 0;

	memset(out, 0, sizeof(*out));
	out->enabled = h != NULL;
	out->count = n;
	if (n == 0)
		return;
	out->mean_ns = cycles_to_ns(h->sum / n, tsc_hz);
	out->p50_ns = cycles_to_ns(pa_stats_latency_quantile(h, 0.5), tsc_hz);
	out->p90_ns = cycles_to_ns(pa_stats_latency_quantile(h, 0.9), tsc_hz);
	out->p99_ns = cycles_to_ns(pa_stats_latency_quantile(h, 0.99),
		tsc_hz);
	out->p999_ns = cycles_to_ns(pa_stats_latency_quantile(h, 0.999),
		tsc_hz);
	out->max_ns = cycles_to_ns(h->max, tsc_hz);
}

json_t *
pa_stats_latency_summary_json(const struct pa_stats_latency_summary *s)
{
	return json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"enabled", s->enabled,
		"count", (json_int_t)s->count,
		"mean_ns", (json_int_t)s->mean_ns,
		"p50_ns", (json_int_t)s->p50_ns,
		"p90_ns", (json_int_t)s->p90_ns,
		"p99_ns", (json_int_t)s->p99_ns,
		"p999_ns", (json_int_t)s->p999_ns,
		"max_ns", (json_int_t)s->max_ns);
}

json_t *
pa_stats_latency_json(const struct pa_stats_latency *h, uint64_t tsc_hz)
{
	struct pa_stats_latency_summary s;

	pa_stats_latency_summarize(h, tsc_hz, &s);
	return pa_stats_latency_summary_json(&s);
}

json_t *
pa_stats_icmp_errors_json(const struct pa_lcore_stats *s)
{
	return json_pack("{s:I, s:I, s:I, s:I}",
		"icmp_tx_packets", (json_int_t)s->icmp_tx_packets,
		"icmp_tx_dropped", (json_int_t)s->icmp_tx_dropped,
		"icmp_rate_limited", (json_int_t)s->icmp_rate_limited,
		"icmp_not_sent", (json_int_t)s->icmp_not_sent);
}

json_t *
pa_stats_handover_json(const struct pa_lcore_stats *s)
{
	return json_pack("{s:I, s:I}",
		"packets", (json_int_t)s->handover_packets,
		"received", (json_int_t)s->handover_received);
}
