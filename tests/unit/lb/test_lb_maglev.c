/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb, the Maglev table (lib/lb/maglev.c) against a
 * reference written from the NSDI'16 paper: the tables themselves,
 * balance, disruption, build time and the build's refusals.
 *
 * Part of test_lb (test_lb.c): the fixture is lb_fixture.h's.
 */

#include "lb_fixture.h"

/* ------------------------------------------------------------------ */
/* Maglev sets (the reference is lb_fixture.c's)                      */
/* ------------------------------------------------------------------ */

/* A set of Maglev backends with their own key storage. */
struct mg_set {
	unsigned int n;
	uint8_t keys[1000][16];
	struct pa_lb_maglev_backend be[1000];
};

/* n IPv4 (10.<i>) or IPv6 (2001:db8::<i>) backends, weights from @p w
 * (NULL: all 1). */
static struct mg_set *
mg_set_make(unsigned int n, bool v6, const uint32_t *w)
{
	struct mg_set *s = calloc(1, sizeof(*s));
	unsigned int i;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_le(n, RTE_DIM(s->be));
	s->n = n;
	for (i = 0; i < n; i++) {
		if (v6) {
			s->keys[i][0] = 0x20;
			s->keys[i][1] = 0x01;
			s->keys[i][2] = 0x0d;
			s->keys[i][3] = 0xb8;
			s->keys[i][14] = (uint8_t)(i >> 8);
			s->keys[i][15] = (uint8_t)(i + 1);
		} else {
			s->keys[i][0] = 10;
			s->keys[i][1] = (uint8_t)(i >> 16);
			s->keys[i][2] = (uint8_t)(i >> 8);
			s->keys[i][3] = (uint8_t)(i + 1);
		}
		s->be[i].key = s->keys[i];
		s->be[i].key_len = v6 ? 16 : 4;
		s->be[i].weight = w != NULL ? w[i] : 1;
	}
	return s;
}

static uint16_t *
mg_build(const struct pa_lb_maglev_backend *be, unsigned int n, uint32_t m)
{
	uint16_t *t = malloc((size_t)m * sizeof(*t));
	void *scratch = malloc(pa_lb_maglev_scratch_size(n));

	ck_assert(t != NULL && scratch != NULL);
	ck_assert_int_eq(pa_lb_maglev_build(be, n, m, t, scratch), 0);
	free(scratch);
	return t;
}

static void
mg_assert_matches_reference(const struct mg_set *s, uint32_t m)
{
	uint16_t *t = mg_build(s->be, s->n, m);
	uint16_t *r = malloc((size_t)m * sizeof(*r));
	uint32_t i;

	ck_assert_ptr_nonnull(r);
	ref_maglev(s->be, s->n, m, r);
	for (i = 0; i < m; i++)
		if (t[i] != r[i])
			ck_abort_msg("N=%u M=%u: entry %u is backend %u, the reference says %u",
				s->n, m, i, t[i], r[i]);
	free(t);
	free(r);
}

/* ------------------------------------------------------------------ */
/* Maglev tests                                                        */
/* ------------------------------------------------------------------ */

START_TEST(test_maglev_equal_weights_match_the_nsdi_reference)
{
	static const unsigned int ns[] = { 1, 3, 10, 100 };
	static const uint32_t ms[] = { 1021, 65537 };
	unsigned int i, j;

	for (i = 0; i < RTE_DIM(ns); i++)
		for (j = 0; j < RTE_DIM(ms); j++) {
			struct mg_set *s = mg_set_make(ns[i], false, NULL);

			mg_assert_matches_reference(s, ms[j]);
			free(s);
		}
}
END_TEST

START_TEST(test_maglev_mixed_weights_match_the_katran_style_reference)
{
	uint32_t w[100];
	unsigned int i;
	struct mg_set *s;

	for (i = 0; i < RTE_DIM(w); i++)
		w[i] = 1 + rng() % 100;
	s = mg_set_make(3, false, (const uint32_t[]){ 1, 5, 2 });
	mg_assert_matches_reference(s, 1021);
	mg_assert_matches_reference(s, 65537);
	free(s);
	s = mg_set_make(100, false, w);
	mg_assert_matches_reference(s, 1021);
	mg_assert_matches_reference(s, 65537);
	free(s);
	s = mg_set_make(1, false, (const uint32_t[]){ 7 });
	mg_assert_matches_reference(s, 1021);
	free(s);
}
END_TEST

START_TEST(test_maglev_ipv6_keys_match_the_reference)
{
	uint32_t w[100];
	unsigned int i;
	struct mg_set *s;

	for (i = 0; i < RTE_DIM(w); i++)
		w[i] = 1 + i % 4;
	s = mg_set_make(3, true, NULL);
	mg_assert_matches_reference(s, 65537);
	free(s);
	s = mg_set_make(100, true, w);
	mg_assert_matches_reference(s, 65537);
	mg_assert_matches_reference(s, 1021);
	free(s);
}
END_TEST

START_TEST(test_maglev_table_does_not_depend_on_input_order)
{
	struct mg_set *s = mg_set_make(100, false, NULL), *sh;
	unsigned int perm[100], i, j, round;
	uint16_t *a, *b;
	const uint32_t m = 65537;

	for (i = 0; i < s->n; i++)
		s->be[i].weight = 1 + i % 7;
	a = mg_build(s->be, s->n, m);
	for (round = 0; round < 3; round++) {
		sh = calloc(1, sizeof(*sh));
		ck_assert_ptr_nonnull(sh);
		for (i = 0; i < s->n; i++)
			perm[i] = i;
		for (i = s->n - 1; i > 0; i--) {
			unsigned int t, k = rng() % (i + 1);

			t = perm[i];
			perm[i] = perm[k];
			perm[k] = t;
		}
		sh->n = s->n;
		for (i = 0; i < s->n; i++)
			sh->be[i] = s->be[perm[i]];	/* keys stay in s */
		b = mg_build(sh->be, sh->n, m);
		for (j = 0; j < m; j++)
			ck_assert_msg(perm[b[j]] == a[j],
				"entry %u: backend %u shuffled, %u in order",
				j, perm[b[j]], a[j]);
		free(b);
		free(sh);
	}
	free(a);
	free(s);
}
END_TEST

/* Worst |share - expected| / expected over the backends. */
static double
mg_balance(const struct mg_set *s, uint32_t m)
{
	uint16_t *t = mg_build(s->be, s->n, m);
	uint64_t cnt[1000] = { 0 }, wsum = 0;
	double worst = 0, exp, dev;
	unsigned int i;

	for (i = 0; i < m; i++)
		cnt[t[i]]++;
	for (i = 0; i < s->n; i++)
		wsum += s->be[i].weight;
	for (i = 0; i < s->n; i++) {
		exp = (double)m * s->be[i].weight / (double)wsum;
		dev = (double)cnt[i] > exp ? (double)cnt[i] - exp :
			exp - (double)cnt[i];
		ck_assert_msg(dev <= 0.01 * exp + 1.0,
			"backend %u weight %u: %" PRIu64 " entries, %.1f expected",
			i, s->be[i].weight, cnt[i], exp);
		if (dev / exp > worst)
			worst = dev / exp;
	}
	free(t);
	return worst;
}

START_TEST(test_maglev_shares_follow_weights_within_one_percent)
{
	uint32_t w[10];
	unsigned int i;
	struct mg_set *s;
	double d1, d2, d3;

	for (i = 0; i < 10; i++)
		w[i] = i + 1;
	s = mg_set_make(10, false, w);
	d1 = mg_balance(s, 65537);
	free(s);
	s = mg_set_make(100, false, NULL);
	d2 = mg_balance(s, 65537);
	free(s);
	s = mg_set_make(100, true, NULL);
	d3 = mg_balance(s, 65537);
	free(s);
	printf("maglev balance M=65537: worst deviation %.3f%% (weights 1..10, N=10), %.3f%% (N=100 equal), %.3f%% (N=100 IPv6)\n",
		d1 * 100, d2 * 100, d3 * 100);
}
END_TEST

/* Share of the entries of the backends that stay which move when
 * backend @p gone of @p n is removed. */
static double
mg_disruption(unsigned int n, unsigned int gone)
{
	struct mg_set *s = mg_set_make(n, false, NULL), *r;
	const uint32_t m = 65537;
	uint16_t *a, *b;
	unsigned int i, k = 0;
	uint64_t others = 0, moved = 0;
	unsigned int map[1000];

	r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	for (i = 0; i < n; i++) {
		if (i == gone)
			continue;
		r->be[k] = s->be[i];
		map[k++] = i;
	}
	r->n = k;
	a = mg_build(s->be, n, m);
	b = mg_build(r->be, r->n, m);
	for (i = 0; i < m; i++) {
		if (a[i] == gone)
			continue;
		others++;
		if (map[b[i]] != a[i])
			moved++;
	}
	free(a);
	free(b);
	free(r);
	free(s);
	return (double)moved / (double)others;
}

START_TEST(test_maglev_removing_one_backend_moves_under_two_percent_of_the_others)
{
	double d10 = 0, d100 = 0, x;
	unsigned int g;

	for (g = 0; g < 10; g += 3) {
		x = mg_disruption(10, g);
		ck_assert_msg(x < 0.02, "N=10 without %u: %.3f%% moved", g,
			x * 100);
		d10 = RTE_MAX(d10, x);
	}
	for (g = 0; g < 100; g += 33) {
		x = mg_disruption(100, g);
		ck_assert_msg(x < 0.02, "N=100 without %u: %.3f%% moved", g,
			x * 100);
		d100 = RTE_MAX(d100, x);
	}
	printf("maglev disruption M=65537, one backend removed: %.3f%% of the other backends' entries moved (N=10), %.3f%% (N=100) (worst of 4 choices)\n",
		d10 * 100, d100 * 100);
}
END_TEST

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

START_TEST(test_maglev_build_time_is_measured_for_10_100_1000_backends)
{
	static const unsigned int ns[] = { 10, 100, 1000 };
	const uint32_t m = 65537;
	unsigned int i;

	for (i = 0; i < RTE_DIM(ns); i++) {
		struct mg_set *s = mg_set_make(ns[i], false, NULL);
		uint16_t *t = malloc(m * sizeof(*t));
		void *scratch = malloc(pa_lb_maglev_scratch_size(ns[i]));
		double t0, t1;

		ck_assert(t != NULL && scratch != NULL);
		t0 = now_ms();
		ck_assert_int_eq(pa_lb_maglev_build(s->be, s->n, m, t,
			scratch), 0);
		t1 = now_ms();
		printf("maglev build N=%u M=%u: %.2f ms\n", ns[i], m, t1 - t0);
		free(t);
		free(scratch);
		free(s);
	}
}
END_TEST

START_TEST(test_maglev_build_rejects_no_backends_too_many_and_zero_weight)
{
	struct mg_set *s = mg_set_make(5, false, NULL);
	uint16_t t[1021];
	uint8_t scratch[4096];

	ck_assert_uint_le(pa_lb_maglev_scratch_size(5), sizeof(scratch));
	ck_assert_int_eq(pa_lb_maglev_build(s->be, 0, 1021, t, scratch),
		-EINVAL);
	ck_assert_int_eq(pa_lb_maglev_build(s->be, 5, 3, t, scratch), -EINVAL);
	s->be[2].weight = 0;
	ck_assert_int_eq(pa_lb_maglev_build(s->be, 5, 1021, t, scratch),
		-EINVAL);
	s->be[2].weight = 1;
	ck_assert_int_eq(pa_lb_maglev_build(s->be, 5, 5, t, scratch), 0);
	free(s);
}
END_TEST

START_TEST(test_maglev_hash_seeds_differ_and_are_stable)
{
	const uint8_t k[4] = { 10, 0, 0, 1 };

	ck_assert(pa_lb_maglev_hash(k, 4, 0) != pa_lb_maglev_hash(k, 4, 1));
	ck_assert(pa_lb_maglev_hash(k, 4, 0) == pa_lb_maglev_hash(k, 4, 0));
	ck_assert(pa_lb_maglev_hash(k, 4, 0) != pa_lb_maglev_hash(k, 3, 0));
}
END_TEST

TCase *
lb_tcase_maglev(void)
{
	TCase *tc = tcase_create("maglev");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_maglev_equal_weights_match_the_nsdi_reference);
	tcase_add_test(tc, test_maglev_mixed_weights_match_the_katran_style_reference);
	tcase_add_test(tc, test_maglev_ipv6_keys_match_the_reference);
	tcase_add_test(tc, test_maglev_table_does_not_depend_on_input_order);
	tcase_add_test(tc, test_maglev_shares_follow_weights_within_one_percent);
	tcase_add_test(tc, test_maglev_removing_one_backend_moves_under_two_percent_of_the_others);
	tcase_add_test(tc, test_maglev_build_time_is_measured_for_10_100_1000_backends);
	tcase_add_test(tc, test_maglev_build_rejects_no_backends_too_many_and_zero_weight);
	tcase_add_test(tc, test_maglev_hash_seeds_differ_and_are_stable);
	return tc;
}
