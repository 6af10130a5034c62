/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_BLOCKLIST_PRIV_H
#define PA_BLOCKLIST_PRIV_H

/* The blocklist table's layout and its lookups, shared by
 * blocklist_table.c (build) and blocklist.c (data path). */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pa_blocklist.h"

#define BL4_WORDS	(1u << 18)	/* 2^24 /24s, 64 a word */
#define BL6_FILTER_BITS	24
#define BL6_FILTER_WORDS ((1u << BL6_FILTER_BITS) / 64)

/* 64 consecutive /24s: 16 bytes, four a cache line (a miss reads one
 * line); the rank of their host maps is apart (read only on a hit). */
struct bl4_word {
	uint64_t full;		/* bit: the /24 is covered (prefix <= 24) */
	uint64_t sub;		/* bit: the /24 has a host map */
};

/* 256 hosts of one /24. */
struct bl4_hosts {
	uint64_t b[4];
};

/* The prefixes of one length: open addressing, linear probing, load
 * <= 1/2; an empty slot is all ones (no canonical prefix of length < 128
 * is, and ffff..ff/128 has its own flag). */
struct bl6_hash {
	uint8_t len;
	uint64_t mask_hi, mask_lo;
	uint32_t mask;		/* slots - 1 */
	struct { uint64_t hi, lo; } *keys;
};

/* The prefixes of one family's hash tables (base IPv6, or a delta's
 * added / deleted IPv6 prefixes). */
struct bl6_set {
	unsigned int n;			/* lengths present */
	bool all;			/* ::/0 */
	bool ones;			/* ffff:...:ffff/128 */
	struct bl6_hash *h;		/* [n], longest first */
};

struct pa_bl_table {
	uint32_t n4, n6;
	bool all4;			/* 0.0.0.0/0 */
	struct bl4_word *w4;		/* NULL when no IPv4 prefix */
	uint32_t *rank4;		/* [BL4_WORDS]: host maps before */
	struct bl4_hosts *hosts4;
	uint32_t n_hosts4;
	uint64_t *filter6;		/* NULL when no IPv6 prefix */
	uint64_t f6_mask_hi, f6_mask_lo;	/* the filter's key */
	struct bl6_set s6;		/* the IPv6 prefixes by length */
	size_t memory;
};

static inline uint32_t
bl6_hash_fn(uint64_t hi, uint64_t lo)
{
	uint64_t h = hi * 0x9e3779b97f4a7c15ull ^ lo * 0xc2b2ae3d27d4eb4full;

	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static inline bool
bl_lookup4(const struct pa_bl_table *t, uint32_t a)
{
	const struct bl4_word *w;
	uint64_t bit, below;
	uint32_t idx;

	if (t->w4 == NULL)
		return false;
	w = &t->w4[a >> 14];
	bit = UINT64_C(1) << ((a >> 8) & 63);
	if (!((w->full | w->sub) & bit))	/* the common case: a miss */
		return false;
	if (w->full & bit)
		return true;
	below = w->sub & (bit - 1);
	idx = t->rank4[a >> 14] + (uint32_t)__builtin_popcountll(below);
	return (t->hosts4[idx].b[(a >> 6) & 3] >> (a & 63)) & 1;
}

/*
 * The delta tier: what changed since the base table was built, consulted
 * with it (blocklist.c keeps base set B, added A (not in B) and deleted D
 * (in B); the live set is (B - D) + A).
 * - IPv4: every /24 an added or deleted prefix touches gets its exact
 *   256-bit host map under the live set, in a small hash by /24: where
 *   present it answers instead of the base.
 * - IPv6: the added prefixes, looked up before the base; the deleted ones,
 *   a match of the base in them does not count.
 */
struct bl_delta {
	uint32_t n_ovr4;		/* /24s overridden */
	uint32_t mask4;			/* slots - 1 */
	uint32_t *keys4;		/* /24 index; UINT32_MAX: empty */
	struct bl4_hosts *maps4;	/* [slots] */
	struct bl6_set add6, del6;
	uint32_t n_add, n_del;		/* prefixes (both families) */
	size_t memory;
};

/* Most /24s the delta overrides (32 bytes of map and 8 of slot at load
 * 1/2 each: 2.5 MiB); a change past it rebuilds the base. */
#define BL_DELTA_OVR4_MAX	32768u

/* What the data path reads: one pointer, swapped by every change. */
struct bl_view {
	const struct pa_bl_table *base;
	const struct bl_delta *delta;	/* NULL: none */
	uint32_t n4, n6;		/* the live set */
};

static inline bool
bl6_hash_has(const struct bl6_hash *h, uint64_t khi, uint64_t klo)
{
	uint32_t s = bl6_hash_fn(khi, klo) & h->mask;

	for (;;) {
		if (h->keys[s].hi == khi && h->keys[s].lo == klo)
			return khi != UINT64_MAX || klo != UINT64_MAX;
		if (h->keys[s].hi == UINT64_MAX && h->keys[s].lo == UINT64_MAX)
			return false;
		s = (s + 1) & h->mask;
	}
}

/* Is some prefix of @p x (a set, or NULL) not in @p del (or NULL) a
 * prefix of hi:lo? */
static inline bool
bl6_set_match(const struct bl6_set *x, const struct bl6_set *del,
		uint64_t hi, uint64_t lo)
{
	bool ones = hi == UINT64_MAX && lo == UINT64_MAX;
	unsigned int i, j;

	if (x->all && (del == NULL || !del->all))
		return true;
	for (i = 0; i < x->n; i++) {
		const struct bl6_hash *h = &x->h[i];
		uint64_t khi = hi & h->mask_hi, klo = lo & h->mask_lo;

		if (!bl6_hash_has(h, khi, klo))
			continue;
		if (del == NULL)
			return true;
		for (j = 0; j < del->n; j++)
			if (del->h[j].len == h->len)
				break;
		if (j == del->n || !bl6_hash_has(&del->h[j], khi, klo))
			return true;
	}
	return x->ones && ones && (del == NULL || !del->ones);
}

/* The IPv6 filter's bit of hi:lo: a hash of its first bits, as many as
 * the shortest prefix length present has (so that every prefix that may
 * match agrees with it there): a miss costs one cache line, wherever the
 * traffic is. */
static inline uint32_t
bl6_filter_bit(const struct pa_bl_table *t, uint64_t hi, uint64_t lo)
{
	uint64_t h = (hi & t->f6_mask_hi) * 0x9e3779b97f4a7c15ull ^
		(lo & t->f6_mask_lo) * 0xc2b2ae3d27d4eb4full;

	return (uint32_t)((h ^ h >> 29) >> (64 - BL6_FILTER_BITS));
}

static inline bool
bl6_filter_pass(const struct pa_bl_table *t, uint64_t hi, uint64_t lo)
{
	uint32_t b = bl6_filter_bit(t, hi, lo);

	return (t->filter6[b >> 6] >> (b & 63)) & 1;
}

static inline bool
bl_lookup6(const struct pa_bl_table *t, uint64_t hi, uint64_t lo)
{
	if (t->filter6 == NULL || !bl6_filter_pass(t, hi, lo))
		return false;
	return bl6_set_match(&t->s6, NULL, hi, lo);
}

/* -1: the delta does not know the /24 (ask the base); else the answer. */
static inline int
bl_delta4(const struct bl_delta *d, uint32_t a)
{
	uint32_t x = a >> 8, s;

	s = (x * 0x9e3779b1u) >> 8 & d->mask4;
	for (;;) {
		if (d->keys4[s] == x)
			return (int)((d->maps4[s].b[(a >> 6) & 3] >>
				(a & 63)) & 1);
		if (d->keys4[s] == UINT32_MAX)
			return -1;
		s = (s + 1) & d->mask4;
	}
}

/* The live set: base and delta. */
static inline bool
bl_view_lookup4(const struct bl_view *v, uint32_t a)
{
	if (v->delta != NULL && v->delta->n_ovr4 != 0) {
		int r = bl_delta4(v->delta, a);

		if (r >= 0)
			return r;
	}
	return bl_lookup4(v->base, a);
}

static inline bool
bl_view_lookup6(const struct bl_view *v, uint64_t hi, uint64_t lo)
{
	const struct bl_delta *d = v->delta;

	if (d == NULL)
		return bl_lookup6(v->base, hi, lo);
	if (bl6_set_match(&d->add6, NULL, hi, lo))
		return true;
	if (v->base->filter6 == NULL ||
	    !bl6_filter_pass(v->base, hi, lo))
		return false;
	return bl6_set_match(&v->base->s6, d->n_del != 0 ? &d->del6 : NULL,
		hi, lo);
}

/* blocklist_table.c */
int bl6_set_build(struct bl6_set *x, const struct pa_bl_set *s,
		size_t *memory);
void bl6_set_free(struct bl6_set *x);
/* blocklist_delta.c: the delta of added @p a and deleted @p d over base
 * set @p b (all normalised; a and b disjoint, d in b). NULL with errno
 * ENOMEM, or E2BIG past BL_DELTA_OVR4_MAX. */
struct bl_delta *bl_delta_build(const struct pa_bl_set *b,
		const struct pa_bl_set *a, const struct pa_bl_set *d);
void bl_delta_free(struct bl_delta *d);

static inline void
bl6_split(const uint8_t *a, uint64_t *hi, uint64_t *lo)
{
	uint64_t h, l;

	memcpy(&h, a, 8);
	memcpy(&l, a + 8, 8);
	*hi = __builtin_bswap64(h);
	*lo = __builtin_bswap64(l);
}

#endif /* PA_BLOCKLIST_PRIV_H */
