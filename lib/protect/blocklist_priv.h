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

/* 64 consecutive /24s. */
struct bl4_word {
	uint64_t full;		/* bit: the /24 is covered (prefix <= 24) */
	uint64_t sub;		/* bit: the /24 has a host map */
	uint32_t rank;		/* host maps before this word */
	uint32_t pad;
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

struct pa_bl_table {
	uint32_t n4, n6;
	bool all4;			/* 0.0.0.0/0 */
	bool all6;			/* ::/0 */
	bool ones6;			/* ffff:...:ffff/128 */
	struct bl4_word *w4;		/* NULL when no IPv4 prefix */
	struct bl4_hosts *hosts4;
	uint32_t n_hosts4;
	uint64_t *filter6;		/* NULL when no IPv6 prefix */
	unsigned int n_h6;		/* lengths present */
	struct bl6_hash h6[129];	/* longest first */
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
	if (w->full & bit)
		return true;
	if (!(w->sub & bit))
		return false;
	below = w->sub & (bit - 1);
	idx = w->rank + (uint32_t)__builtin_popcountll(below);
	return (t->hosts4[idx].b[(a >> 6) & 3] >> (a & 63)) & 1;
}

static inline bool
bl_lookup6(const struct pa_bl_table *t, uint64_t hi, uint64_t lo)
{
	uint32_t top = (uint32_t)(hi >> (64 - BL6_FILTER_BITS));
	unsigned int i;

	if (t->filter6 == NULL)
		return false;
	if (!((t->filter6[top >> 6] >> (top & 63)) & 1))
		return false;
	if (t->all6)
		return true;
	for (i = 0; i < t->n_h6; i++) {
		const struct bl6_hash *h = &t->h6[i];
		uint64_t khi = hi & h->mask_hi, klo = lo & h->mask_lo;
		uint32_t s = bl6_hash_fn(khi, klo) & h->mask;

		for (;;) {
			if (h->keys[s].hi == khi && h->keys[s].lo == klo) {
				if (khi != UINT64_MAX || klo != UINT64_MAX)
					return true;
				break;
			}
			if (h->keys[s].hi == UINT64_MAX &&
			    h->keys[s].lo == UINT64_MAX)
				break;
			s = (s + 1) & h->mask;
		}
	}
	return t->ones6 && hi == UINT64_MAX && lo == UINT64_MAX;
}

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
