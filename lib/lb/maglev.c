/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Maglev lookup table (Eisenbud et al., NSDI'16, section 3.4), with
 * weights. Pure functions: no DPDK state, so tests and tools can call them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pa_lb.h"

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

uint64_t
pa_lb_maglev_hash(const uint8_t *key, unsigned int len, unsigned int seed)
{
	uint64_t h = FNV_OFFSET ^ ((uint64_t)seed * 0x9e3779b97f4a7c15ULL);
	unsigned int i;

	for (i = 0; i < len; i++) {
		h ^= key[i];
		h *= FNV_PRIME;
	}
	/* splitmix64's finaliser: FNV alone leaves neighbouring addresses
	 * (10.0.0.1, 10.0.0.2) with correlated permutations. */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

/* Per-backend state of a build. */
struct mg_state {
	uint32_t pos;		/* current slot of its permutation */
	uint32_t skip;
	uint32_t acc;		/* weight carried over rounds */
	uint32_t index;		/* index in the caller's array */
};

size_t
pa_lb_maglev_scratch_size(unsigned int n)
{
	return (size_t)n * (sizeof(struct mg_state) + sizeof(uint32_t));
}

/* Insertion sort of indexes by key: the build must not depend on the
 * caller's order, and qsort() with a global comparator base is not
 * reentrant; n is at most a few thousand and builds are rare. */
static void
order_by_key(const struct pa_lb_maglev_backend *be, uint32_t *idx,
		unsigned int n)
{
	unsigned int i, j;
	uint32_t t;

	for (i = 0; i < n; i++)
		idx[i] = i;
	for (i = 1; i < n; i++) {
		t = idx[i];
		for (j = i; j > 0; j--) {
			const struct pa_lb_maglev_backend *x = &be[idx[j - 1]];
			const struct pa_lb_maglev_backend *y = &be[t];
			int c = x->key_len != y->key_len ?
				(x->key_len < y->key_len ? -1 : 1) :
				memcmp(x->key, y->key, x->key_len);

			if (c <= 0)
				break;
			idx[j] = idx[j - 1];
		}
		idx[j] = t;
	}
}

int
pa_lb_maglev_build(const struct pa_lb_maglev_backend *be, unsigned int n,
		uint32_t m, uint16_t *table, void *scratch)
{
	struct mg_state *st = scratch;
	uint32_t *order = (uint32_t *)(st + n);
	uint32_t filled = 0, wmax = 0, c;
	unsigned int i;

	if (n == 0 || n > m || n >= UINT16_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (be[i].weight == 0)
			return -EINVAL;
		if (be[i].weight > wmax)
			wmax = be[i].weight;
	}
	order_by_key(be, order, n);
	for (i = 0; i < n; i++) {
		const struct pa_lb_maglev_backend *b = &be[order[i]];

		st[i].pos = (uint32_t)(pa_lb_maglev_hash(b->key, b->key_len, 0) %
			m);
		st[i].skip = (uint32_t)(pa_lb_maglev_hash(b->key, b->key_len,
			1) % (m - 1)) + 1;
		st[i].acc = 0;
		st[i].index = order[i];
	}
	memset(table, 0xff, (size_t)m * sizeof(*table));

	for (;;) {
		for (i = 0; i < n; i++) {
			struct mg_state *s = &st[i];

			s->acc += be[s->index].weight;
			while (s->acc >= wmax) {
				s->acc -= wmax;
				/* next free slot of this backend's permutation */
				c = s->pos;
				while (table[c] != UINT16_MAX) {
					c += s->skip;
					if (c >= m)
						c -= m;
				}
				table[c] = (uint16_t)s->index;
				c += s->skip;
				if (c >= m)
					c -= m;
				s->pos = c;
				if (++filled == m)
					return 0;
			}
		}
	}
}
