/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/stats: the latency histogram (bucket math, quantiles
 * against a sorted reference, merging, JSON view) and counter sums. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "pa_stats.h"
#include "pa_test_main.h"

/* xorshift64*: reproducible values without libc's rand() state */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* log-uniform in [lo, hi): latencies spread over several decades */
static uint64_t
log_uniform(uint64_t lo, unsigned int decades_bits)
{
	unsigned int e = (unsigned int)(rng() % decades_bits);

	return lo + (rng() & ((UINT64_C(1) << e) - 1)) + (UINT64_C(1) << e);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct pa_stats_latency *
hist_new(void)
{
	struct pa_stats_latency *h = calloc(1, sizeof(*h));

	ck_assert_ptr_nonnull(h);
	return h;
}

START_TEST(test_small_values_have_a_bucket_each)
{
	uint64_t v;

	for (v = 0; v < 32; v++) {
		unsigned int b = pa_stats_latency_bucket(v);

		ck_assert_uint_eq(b, v);
		ck_assert_uint_eq(pa_stats_latency_bucket_lower(b), v);
		ck_assert_uint_eq(pa_stats_latency_bucket_upper(b), v);
	}
}
END_TEST

START_TEST(test_buckets_tile_the_whole_range_without_gaps)
{
	unsigned int i;

	ck_assert_uint_eq(PA_STATS_LAT_BUCKETS, 976);
	ck_assert_uint_eq(pa_stats_latency_bucket_lower(0), 0);
	for (i = 0; i < PA_STATS_LAT_BUCKETS; i++) {
		uint64_t lo = pa_stats_latency_bucket_lower(i);
		uint64_t hi = pa_stats_latency_bucket_upper(i);

		ck_assert_msg(lo <= hi, "bucket %u: %lu > %lu", i,
			(unsigned long)lo, (unsigned long)hi);
		ck_assert_uint_eq(pa_stats_latency_bucket(lo), i);
		ck_assert_uint_eq(pa_stats_latency_bucket(hi), i);
		if (i + 1 < PA_STATS_LAT_BUCKETS)
			ck_assert_uint_eq(pa_stats_latency_bucket_lower(i + 1),
				hi + 1);
	}
	ck_assert_uint_eq(pa_stats_latency_bucket_upper(PA_STATS_LAT_BUCKETS - 1),
		UINT64_MAX);
	ck_assert_uint_eq(pa_stats_latency_bucket(UINT64_MAX),
		PA_STATS_LAT_BUCKETS - 1);
}
END_TEST

START_TEST(test_bucket_width_is_at_most_a_sixteenth_of_its_values)
{
	unsigned int i, k;

	for (i = PA_STATS_LAT_SUB; i < PA_STATS_LAT_BUCKETS; i++) {
		uint64_t lo = pa_stats_latency_bucket_lower(i);
		uint64_t w = pa_stats_latency_bucket_upper(i) - lo + 1;

		ck_assert_msg(w * 16 <= lo || (w == 0 && i ==
			PA_STATS_LAT_BUCKETS - 1), "bucket %u: width %lu, lower %lu",
			i, (unsigned long)w, (unsigned long)lo);
	}
	/* random values land in the bucket whose bounds hold them */
	for (k = 0; k < 100000; k++) {
		uint64_t v = rng() >> (rng() % 64);
		unsigned int b = pa_stats_latency_bucket(v);

		ck_assert(pa_stats_latency_bucket_lower(b) <= v);
		ck_assert(v <= pa_stats_latency_bucket_upper(b));
	}
}
END_TEST

static void
check_quantiles_against_sorted(uint64_t *vals, unsigned int n)
{
	static const double qs[] = { 0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0 };
	struct pa_stats_latency *h = hist_new();
	unsigned int i;

	for (i = 0; i < n; i++)
		pa_stats_latency_add(h, vals[i], 1);
	qsort(vals, n, sizeof(vals[0]), cmp_u64);
	ck_assert_uint_eq(pa_stats_latency_count(h), n);
	ck_assert_uint_eq(h->max, vals[n - 1]);
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t rank = (uint64_t)(qs[i] * n + 0.999999);
		uint64_t ref = vals[(rank == 0 ? 1 : rank) - 1];
		uint64_t got = pa_stats_latency_quantile(h, qs[i]);
		uint64_t err = got > ref ? got - ref : ref - got;

		/* half a bucket: at most 1/32 of the value (+1 for rounding) */
		ck_assert_msg(err * 32 <= ref + 32,
			"q=%g: got %lu, exact %lu", qs[i],
			(unsigned long)got, (unsigned long)ref);
	}
	ck_assert_uint_eq(pa_stats_latency_quantile(h, 1.0), vals[n - 1]);
	free(h);
}

START_TEST(test_quantiles_match_a_sorted_reference_within_half_a_bucket)
{
	unsigned int n = 200000, i;
	uint64_t *vals = malloc(n * sizeof(*vals));

	ck_assert_ptr_nonnull(vals);
	/* a few decades, log-uniform: 200 cycles to ~50 M */
	for (i = 0; i < n; i++)
		vals[i] = log_uniform(200, 26);
	check_quantiles_against_sorted(vals, n);

	/* a tight mode with a long thin tail: p99.9 is in the tail */
	for (i = 0; i < n; i++)
		vals[i] = i % 500 == 0 ? 1000000 + rng() % 9000000 :
			900 + rng() % 200;
	check_quantiles_against_sorted(vals, n);

	/* tiny values are exact */
	for (i = 0; i < 1000; i++)
		vals[i] = rng() % 32;
	check_quantiles_against_sorted(vals, 1000);
	free(vals);
}
END_TEST

START_TEST(test_quantile_of_one_value_is_that_value)
{
	struct pa_stats_latency *h = hist_new();

	pa_stats_latency_add(h, 123457, 1);
	/* the bucket midpoint lies above; the exact maximum caps it */
	ck_assert_uint_le(pa_stats_latency_quantile(h, 0.5), 123457);
	ck_assert_uint_ge(pa_stats_latency_quantile(h, 0.5) * 32, 123457 * 31ULL);
	ck_assert_uint_eq(pa_stats_latency_quantile(h, 1.0), 123457);
	free(h);
}
END_TEST

START_TEST(test_empty_histogram_reports_zero)
{
	struct pa_stats_latency *h = hist_new();

	ck_assert_uint_eq(pa_stats_latency_count(h), 0);
	ck_assert_uint_eq(pa_stats_latency_quantile(h, 0.5), 0);
	ck_assert_uint_eq(pa_stats_latency_quantile(h, 0.999), 0);
	free(h);
}
END_TEST

START_TEST(test_add_with_a_count_equals_repeated_adds)
{
	struct pa_stats_latency *a = hist_new(), *b = hist_new();
	unsigned int i, k;

	for (i = 0; i < 1000; i++) {
		uint64_t v = rng() % 5000000, c = 1 + rng() % 32;

		pa_stats_latency_add(a, v, c);
		for (k = 0; k < c; k++)
			pa_stats_latency_add(b, v, 1);
	}
	ck_assert_mem_eq(a, b, sizeof(*a));
	free(a);
	free(b);
}
END_TEST

START_TEST(test_merge_of_parts_equals_the_whole)
{
	struct pa_stats_latency *whole = hist_new(), *sum = hist_new();
	struct pa_stats_latency *part[4];
	unsigned int i;

	for (i = 0; i < 4; i++)
		part[i] = hist_new();
	for (i = 0; i < 50000; i++) {
		uint64_t v = log_uniform(10, 30);

		pa_stats_latency_add(whole, v, 1);
		/* uneven split: lcore 3 sees nothing at all */
		pa_stats_latency_add(part[v % 3], v, 1);
	}
	for (i = 0; i < 4; i++)
		pa_stats_latency_merge(sum, part[i]);
	ck_assert_mem_eq(sum, whole, sizeof(*sum));
	ck_assert_uint_eq(pa_stats_latency_count(sum), 50000);
	ck_assert_uint_eq(pa_stats_latency_quantile(sum, 0.99),
		pa_stats_latency_quantile(whole, 0.99));
	for (i = 0; i < 4; i++)
		free(part[i]);
	free(whole);
	free(sum);
}
END_TEST

START_TEST(test_json_converts_cycles_to_ns_and_orders_percentiles)
{
	struct pa_stats_latency *h = hist_new();
	json_t *o;
	unsigned int i;

	/* 1000 values: 1..1000 us at a 2 GHz TSC (2000 cycles per us) */
	for (i = 1; i <= 1000; i++)
		pa_stats_latency_add(h, (uint64_t)i * 2000, 1);
	o = pa_stats_latency_json(h, 2000000000ULL);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_true(json_object_get(o, "enabled")));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "count")), 1000);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "max_ns")),
		1000000);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "mean_ns")),
		500500);
	/* exact p50 is 500 us, p90 900 us, p99 990 us, p99.9 999 us */
	ck_assert_int_le(labs(json_integer_value(json_object_get(o, "p50_ns")) -
		500000), 500000 / 32);
	ck_assert_int_le(labs(json_integer_value(json_object_get(o, "p90_ns")) -
		900000), 900000 / 32);
	ck_assert_int_le(labs(json_integer_value(json_object_get(o, "p99_ns")) -
		990000), 990000 / 32);
	ck_assert_int_le(json_integer_value(json_object_get(o, "p50_ns")),
		json_integer_value(json_object_get(o, "p90_ns")));
	ck_assert_int_le(json_integer_value(json_object_get(o, "p90_ns")),
		json_integer_value(json_object_get(o, "p99_ns")));
	ck_assert_int_le(json_integer_value(json_object_get(o, "p99_ns")),
		json_integer_value(json_object_get(o, "p999_ns")));
	ck_assert_int_le(json_integer_value(json_object_get(o, "p999_ns")),
		json_integer_value(json_object_get(o, "max_ns")));
	json_decref(o);
	free(h);
}
END_TEST

START_TEST(test_json_of_disabled_latency_is_zero)
{
	json_t *o = pa_stats_latency_json(NULL, 2000000000ULL);

	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_false(json_object_get(o, "enabled")));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "count")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "p99_ns")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "max_ns")), 0);
	json_decref(o);
}
END_TEST

START_TEST(test_accumulate_sums_polls_and_sleeps)
{
	struct pa_lcore_stats a, b, sum;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&sum, 0, sizeof(sum));
	a.busy_polls = 3;
	a.idle_polls = 5;
	a.sleeps = 7;
	a.sleep_cycles = 1000;
	b.busy_polls = 11;
	b.idle_polls = 13;
	b.sleeps = 17;
	b.sleep_cycles = 2000;
	pa_stats_accumulate(&sum, &a);
	pa_stats_accumulate(&sum, &b);
	ck_assert_uint_eq(sum.busy_polls, 14);
	ck_assert_uint_eq(sum.idle_polls, 18);
	ck_assert_uint_eq(sum.sleeps, 24);
	ck_assert_uint_eq(sum.sleep_cycles, 3000);
}
END_TEST

static Suite *
stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("latency");

	tcase_add_test(tc, test_small_values_have_a_bucket_each);
	tcase_add_test(tc, test_buckets_tile_the_whole_range_without_gaps);
	tcase_add_test(tc, test_bucket_width_is_at_most_a_sixteenth_of_its_values);
	tcase_add_test(tc, test_quantiles_match_a_sorted_reference_within_half_a_bucket);
	tcase_add_test(tc, test_quantile_of_one_value_is_that_value);
	tcase_add_test(tc, test_empty_histogram_reports_zero);
	tcase_add_test(tc, test_add_with_a_count_equals_repeated_adds);
	tcase_add_test(tc, test_merge_of_parts_equals_the_whole);
	tcase_add_test(tc, test_json_converts_cycles_to_ns_and_orders_percentiles);
	tcase_add_test(tc, test_json_of_disabled_latency_is_zero);
	tcase_add_test(tc, test_accumulate_sums_polls_and_sleeps);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { stats_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_stats",
		.suites = suites,
	};

	return pa_test_main(&t);
}
