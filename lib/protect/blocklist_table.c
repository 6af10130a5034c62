/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building a blocklist table from a normalised prefix set (layout in
 * blocklist_priv.h). Plain C: the table lives in ordinary memory (2 MiB
 * aligned and advised to use transparent huge pages where large), read
 * by the lcores, never by a device.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "blocklist_priv.h"

#define HUGE_ALIGN	(2u << 20)

static void *
big_zalloc(size_t size, size_t *acc)
{
	void *p = NULL;

	if (size >= HUGE_ALIGN) {
		if (posix_memalign(&p, HUGE_ALIGN, size) != 0)
			return NULL;
#ifdef MADV_HUGEPAGE
		(void)madvise(p, size, MADV_HUGEPAGE);
#endif
	} else if (posix_memalign(&p, 64, size == 0 ? 64 : size) != 0) {
		return NULL;
	}
	memset(p, 0, size);
	*acc += size;
	return p;
}

void
pa_bl_table_free(struct pa_bl_table *t)
{
	if (t == NULL)
		return;
	free(t->w4);
	free(t->rank4);
	free(t->hosts4);
	free(t->filter6);
	bl6_set_free(&t->s6);
	free(t);
}

size_t
pa_bl_table_memory(const struct pa_bl_table *t)
{
	return t != NULL ? t->memory : 0;
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Set "full" bits [lo, hi) of the IPv4 words. */
static void
set_range4(struct bl4_word *w, uint32_t lo, uint32_t hi)
{
	while (lo < hi) {
		uint32_t bit = lo & 63, n = min_u32(64 - bit, hi - lo);
		uint64_t m = n == 64 ? UINT64_MAX :
			((UINT64_C(1) << n) - 1) << bit;

		w[lo >> 6].full |= m;
		lo += n;
	}
}

/* Set bits [lo, hi) of bitmap @p w. */
static void
set_range_bits(uint64_t *w, uint32_t lo, uint32_t hi)
{
	while (lo < hi) {
		uint32_t bit = lo & 63, n = min_u32(64 - bit, hi - lo);
		uint64_t m = n == 64 ? UINT64_MAX :
			((UINT64_C(1) << n) - 1) << bit;

		w[lo >> 6] |= m;
		lo += n;
	}
}

static int
build4(struct pa_bl_table *t, const struct pa_bl_set *s)
{
	uint32_t i, rank = 0;

	t->w4 = big_zalloc(sizeof(*t->w4) * BL4_WORDS, &t->memory);
	t->rank4 = big_zalloc(sizeof(*t->rank4) * BL4_WORDS, &t->memory);
	if (t->w4 == NULL || t->rank4 == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n4; i++) {
		uint32_t a = (uint32_t)(s->v4[i] >> 8);
		unsigned int len = (uint8_t)s->v4[i];

		if (len == 0)
			t->all4 = true;
		if (len <= 24)
			set_range4(t->w4, a >> 8, (uint32_t)(((uint64_t)(a >> 8)) +
				(UINT64_C(1) << (24 - len))));
		else
			t->w4[a >> 14].sub |= UINT64_C(1) << ((a >> 8) & 63);
	}
	/* a covered /24 needs no host map */
	for (i = 0; i < BL4_WORDS; i++) {
		t->w4[i].sub &= ~t->w4[i].full;
		t->rank4[i] = rank;
		rank += (uint32_t)__builtin_popcountll(t->w4[i].sub);
	}
	t->n_hosts4 = rank;
	t->hosts4 = big_zalloc(sizeof(*t->hosts4) * (rank + 1), &t->memory);
	if (t->hosts4 == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n4; i++) {
		uint32_t a = (uint32_t)(s->v4[i] >> 8);
		unsigned int len = (uint8_t)s->v4[i];
		struct bl4_word *w = &t->w4[a >> 14];
		uint64_t bit = UINT64_C(1) << ((a >> 8) & 63);
		uint32_t idx, h;

		if (len <= 24 || !(w->sub & bit))
			continue;
		idx = t->rank4[a >> 14] + (uint32_t)__builtin_popcountll(w->sub &
			(bit - 1));
		h = a & 0xff;
		set_range_bits(t->hosts4[idx].b, h, h + (1u << (32 - len)));
	}
	return 0;
}

static void
mask6(unsigned int len, uint64_t *mh, uint64_t *ml)
{
	*mh = len == 0 ? 0 : len >= 64 ? UINT64_MAX : ~(UINT64_MAX >> len);
	*ml = len <= 64 ? 0 : len >= 128 ? UINT64_MAX :
		~(UINT64_MAX >> (len - 64));
}

void
bl6_set_free(struct bl6_set *x)
{
	unsigned int i;

	for (i = 0; x->h != NULL && i < x->n; i++)
		free(x->h[i].keys);
	free(x->h);
	memset(x, 0, sizeof(*x));
}

/* The hash tables of the IPv6 prefixes of @p s, one per length. */
int
bl6_set_build(struct bl6_set *x, const struct pa_bl_set *s, size_t *memory)
{
	uint32_t count[129] = { 0 };
	unsigned int len, k, n_len = 0;
	uint32_t i;

	memset(x, 0, sizeof(*x));
	for (i = 0; i < s->n6; i++) {
		const struct pa_bl_v6 *e = &s->v6[i];

		if (e->len == 0)
			x->all = true;
		else if (e->len == 128 && e->hi == UINT64_MAX &&
				e->lo == UINT64_MAX)
			x->ones = true;
		else if (count[e->len]++ == 0)
			n_len++;
	}
	if (n_len == 0)
		return 0;
	x->h = calloc(n_len, sizeof(*x->h));
	if (x->h == NULL)
		return -ENOMEM;
	*memory += n_len * sizeof(*x->h);
	for (len = 128, k = 0; len >= 1; len--) {
		struct bl6_hash *h;
		uint32_t slots;

		if (count[len] == 0)
			continue;
		h = &x->h[k++];
		h->len = (uint8_t)len;
		mask6(len, &h->mask_hi, &h->mask_lo);
		slots = 16;
		while (slots < 2 * count[len])
			slots *= 2;
		h->mask = slots - 1;
		x->n = k;
		h->keys = big_zalloc(sizeof(*h->keys) * slots, memory);
		if (h->keys == NULL) {
			bl6_set_free(x);
			return -ENOMEM;
		}
		memset(h->keys, 0xff, sizeof(*h->keys) * slots);
	}
	for (i = 0; i < s->n6; i++) {
		const struct pa_bl_v6 *e = &s->v6[i];
		struct bl6_hash *h = NULL;
		uint32_t slot;

		if (e->len == 0 || (e->len == 128 && e->hi == UINT64_MAX &&
				e->lo == UINT64_MAX))
			continue;
		for (k = 0; k < x->n; k++)
			if (x->h[k].len == e->len)
				h = &x->h[k];
		slot = bl6_hash_fn(e->hi, e->lo) & h->mask;
		while (!(h->keys[slot].hi == UINT64_MAX &&
			 h->keys[slot].lo == UINT64_MAX)) {
			if (h->keys[slot].hi == e->hi &&
			    h->keys[slot].lo == e->lo)
				break;
			slot = (slot + 1) & h->mask;
		}
		h->keys[slot].hi = e->hi;
		h->keys[slot].lo = e->lo;
	}
	return 0;
}

static int
build6(struct pa_bl_table *t, const struct pa_bl_set *s)
{
	unsigned int lmin = 128;
	bool all = false;
	uint32_t i;

	t->filter6 = big_zalloc(sizeof(uint64_t) * BL6_FILTER_WORDS,
		&t->memory);
	if (t->filter6 == NULL)
		return -ENOMEM;
	/* the filter keys on the first bits of the shortest length */
	for (i = 0; i < s->n6; i++) {
		if (s->v6[i].len == 0)
			all = true;
		else if (s->v6[i].len < lmin)
			lmin = s->v6[i].len;
	}
	mask6(lmin, &t->f6_mask_hi, &t->f6_mask_lo);
	if (all) {
		memset(t->filter6, 0xff, sizeof(uint64_t) * BL6_FILTER_WORDS);
	} else {
		for (i = 0; i < s->n6; i++) {
			uint32_t b = bl6_filter_bit(t, s->v6[i].hi,
				s->v6[i].lo);

			t->filter6[b >> 6] |= UINT64_C(1) << (b & 63);
		}
	}
	return bl6_set_build(&t->s6, s, &t->memory);
}

struct pa_bl_table *
pa_bl_table_build(const struct pa_bl_set *s)
{
	struct pa_bl_table *t;

	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	t->memory = sizeof(*t);
	t->n4 = s->n4;
	t->n6 = s->n6;
	if ((s->n4 != 0 && build4(t, s) != 0) ||
	    (s->n6 != 0 && build6(t, s) != 0)) {
		pa_bl_table_free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

bool
pa_bl_table_lookup4(const struct pa_bl_table *t, uint32_t addr)
{
	return bl_lookup4(t, addr);
}

bool
pa_bl_table_lookup6(const struct pa_bl_table *t, const uint8_t *a)
{
	uint64_t hi, lo;

	bl6_split(a, &hi, &lo);
	return bl_lookup6(t, hi, lo);
}

/* ------------------------------------------------------------------ */
/* The delta tier (layout in blocklist_priv.h)                          */
/* ------------------------------------------------------------------ */

void
bl_delta_free(struct bl_delta *d)
{
	if (d == NULL)
		return;
	free(d->keys4);
	free(d->maps4);
	bl6_set_free(&d->add6);
	bl6_set_free(&d->del6);
	free(d);
}

static int
cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Is IPv4 key (address << 8 | length) in (b - d) + a? */
static bool
live4(const struct pa_bl_set *b, const struct pa_bl_set *a,
		const struct pa_bl_set *d, uint64_t key)
{
	return pa_bl_set_has4(a, key) ||
		(pa_bl_set_has4(b, key) && !pa_bl_set_has4(d, key));
}

/* The prefixes longer than /24 inside /24 @p x of @p s (not in @p d when
 * given) into host map @p m. */
static void
hosts_of(const struct pa_bl_set *s, const struct pa_bl_set *d, uint32_t x,
		struct bl4_hosts *m)
{
	uint32_t i = pa_bl_set_lower4(s, (uint64_t)x << 16);

	for (; i < s->n4 && (uint32_t)(s->v4[i] >> 16) == x; i++) {
		unsigned int len = (uint8_t)s->v4[i], h;

		if (len <= 24 || (d != NULL && pa_bl_set_has4(d, s->v4[i])))
			continue;
		h = (uint32_t)(s->v4[i] >> 8) & 0xff;
		set_range_bits(m->b, h, h + (1u << (32 - len)));
	}
}

/* The exact host map of /24 @p x under (b - d) + a. */
static void
map_of(const struct pa_bl_set *b, const struct pa_bl_set *a,
		const struct pa_bl_set *d, uint32_t x, struct bl4_hosts *m)
{
	unsigned int len;

	memset(m, 0, sizeof(*m));
	for (len = 0; len <= 24; len++) {
		uint32_t mask = len == 0 ? 0 : ~0u << (32 - len);
		uint64_t key = (uint64_t)((x << 8) & mask) << 8 | len;

		if (live4(b, a, d, key)) {
			memset(m, 0xff, sizeof(*m));
			return;
		}
	}
	hosts_of(b, d, x, m);
	hosts_of(a, NULL, x, m);
}

/* The /24s the IPv4 prefixes of @p s touch, appended to @p xs. */
static int
touched4(const struct pa_bl_set *s, uint32_t *xs, uint32_t *n)
{
	uint32_t i;

	for (i = 0; i < s->n4; i++) {
		uint32_t x = (uint32_t)(s->v4[i] >> 16);
		unsigned int len = (uint8_t)s->v4[i];
		uint32_t k, cnt = len >= 24 ? 1 : 1u << (24 - len);

		if (cnt > BL_DELTA_OVR4_MAX - *n)
			return -E2BIG;
		for (k = 0; k < cnt; k++)
			xs[(*n)++] = x + k;
	}
	return 0;
}

struct bl_delta *
bl_delta_build(const struct pa_bl_set *b, const struct pa_bl_set *a,
		const struct pa_bl_set *d)
{
	struct bl_delta *dt = calloc(1, sizeof(*dt));
	uint32_t *xs = NULL, n = 0, i, k, slots;
	int err = ENOMEM;

	if (dt == NULL)
		goto fail;
	dt->memory = sizeof(*dt);
	dt->n_add = pa_bl_set_count(a);
	dt->n_del = pa_bl_set_count(d);
	if (a->n4 + d->n4 != 0) {
		xs = malloc(sizeof(*xs) * BL_DELTA_OVR4_MAX);
		if (xs == NULL)
			goto fail;
		if (touched4(a, xs, &n) != 0 || touched4(d, xs, &n) != 0) {
			err = E2BIG;
			goto fail;
		}
		qsort(xs, n, sizeof(*xs), cmp_u32);
		for (i = 0, k = 0; i < n; i++)
			if (k == 0 || xs[i] != xs[k - 1])
				xs[k++] = xs[i];
		n = k;
		for (slots = 16; slots < 2 * n; slots *= 2)
			;
		dt->mask4 = slots - 1;
		dt->keys4 = big_zalloc(sizeof(*dt->keys4) * slots,
			&dt->memory);
		dt->maps4 = big_zalloc(sizeof(*dt->maps4) * slots,
			&dt->memory);
		if (dt->keys4 == NULL || dt->maps4 == NULL)
			goto fail;
		memset(dt->keys4, 0xff, sizeof(*dt->keys4) * slots);
		for (i = 0; i < n; i++) {
			uint32_t x = xs[i], s = (x * 0x9e3779b1u) >> 8 &
				dt->mask4;

			while (dt->keys4[s] != UINT32_MAX)
				s = (s + 1) & dt->mask4;
			dt->keys4[s] = x;
			map_of(b, a, d, x, &dt->maps4[s]);
		}
		dt->n_ovr4 = n;
		free(xs);
		xs = NULL;
	}
	if (bl6_set_build(&dt->add6, a, &dt->memory) != 0 ||
	    bl6_set_build(&dt->del6, d, &dt->memory) != 0)
		goto fail;
	return dt;
fail:
	free(xs);
	bl_delta_free(dt);
	errno = err;
	return NULL;
}
