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
	unsigned int i;

	if (t == NULL)
		return;
	free(t->w4);
	free(t->hosts4);
	free(t->filter6);
	for (i = 0; i < t->n_h6; i++)
		free(t->h6[i].keys);
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
	if (t->w4 == NULL)
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
		t->w4[i].rank = rank;
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
		idx = w->rank + (uint32_t)__builtin_popcountll(w->sub &
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

static int
build6(struct pa_bl_table *t, const struct pa_bl_set *s)
{
	uint32_t count[129] = { 0 };
	unsigned int len, k;
	uint32_t i;

	t->filter6 = big_zalloc(sizeof(uint64_t) * BL6_FILTER_WORDS,
		&t->memory);
	if (t->filter6 == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n6; i++) {
		const struct pa_bl_v6 *e = &s->v6[i];
		uint32_t top = (uint32_t)(e->hi >> (64 - BL6_FILTER_BITS));

		if (e->len == 0) {
			t->all6 = true;
		} else if (e->len == 128 && e->hi == UINT64_MAX &&
				e->lo == UINT64_MAX) {
			t->ones6 = true;
		} else {
			count[e->len]++;
		}
		if (e->len < BL6_FILTER_BITS)
			set_range_bits(t->filter6, top,
				top + (1u << (BL6_FILTER_BITS - e->len)));
		else
			t->filter6[top >> 6] |= UINT64_C(1) << (top & 63);
	}
	for (len = 128, k = 0; len >= 1; len--) {
		struct bl6_hash *h;
		uint32_t slots;

		if (count[len] == 0)
			continue;
		h = &t->h6[k++];
		h->len = (uint8_t)len;
		mask6(len, &h->mask_hi, &h->mask_lo);
		slots = 16;
		while (slots < 2 * count[len])
			slots *= 2;
		h->mask = slots - 1;
		t->n_h6 = k;
		h->keys = big_zalloc(sizeof(*h->keys) * slots, &t->memory);
		if (h->keys == NULL)
			return -ENOMEM;
		memset(h->keys, 0xff, sizeof(*h->keys) * slots);
	}
	for (i = 0; i < s->n6; i++) {
		const struct pa_bl_v6 *e = &s->v6[i];
		struct bl6_hash *h = NULL;
		uint32_t slot;

		if (e->len == 0 || count[e->len] == 0 ||
		    (e->len == 128 && e->hi == UINT64_MAX &&
		     e->lo == UINT64_MAX))
			continue;
		for (k = 0; k < t->n_h6; k++)
			if (t->h6[k].len == e->len)
				h = &t->h6[k];
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
