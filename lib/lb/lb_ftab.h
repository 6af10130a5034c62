/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_FTAB_H
#define PA_LB_FTAB_H

/*
 * The flow table of one lb lcore (issue 16): lb_flow_key -> position
 * (the index of the flow's lb_flow and key), keyed with the packet's own
 * flow hash (pa_pkt_meta.hash). Written and read by its lcore only (the
 * control thread reads it when the lcore has left the data path).
 *
 * An index of 8-byte slots, (hash << 32 | position + 1), 0 empty, open
 * addressing with linear probing from hash & mask, deletions by backward
 * shift (no tombstones), at most 3/4 full (positions <= 3/4 of the
 * slots); the keys in an array by position. A position is stable while
 * its flow lives. Positions come from a stack: the table holds exactly
 * the flows it was made for (n_pos - 1: the last position is never used),
 * then is full.
 *
 * Rather than rte_hash: a burst's lookups go in passes the caller drives
 * (lb_data.c: prefetch the home slot as soon as the hash is known, then
 * read the slots and prefetch the key and the flow, then compare), and a
 * hit costs a slot compare and a key compare, against ~146 instructions
 * a key for rte_hash's bulk lookup of a 48-byte key (measured with
 * perf/bench_lb_stage; docs/performance.md).
 *
 * Included by lb_priv.h, after struct lb_flow_key, lb_flow_key_eq() and
 * lb_flow_key_clear().
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_prefetch.h>

/* A key in a line of its own (a 48-byte key at a 48-byte stride would
 * cross a line every other position). */
struct lb_ftab_key {
	struct lb_flow_key k;
	uint8_t pad[64 - sizeof(struct lb_flow_key)];
} __rte_aligned(64);

struct lb_ftab {
	uint64_t *idx;			/* slots */
	uint32_t mask;			/* slots - 1 (a power of two) */
	uint32_t n_pos;			/* positions */
	uint32_t n_free;		/* positions on the free stack */
	uint32_t *free;			/* the stack */
	struct lb_ftab_key *keys;	/* by position; family 0 when free */
};

static __rte_always_inline uint64_t
lb_ftab_slot(uint32_t hash, uint32_t pos)
{
	return (uint64_t)hash << 32 | (pos + 1);
}

/** Prefetch the home slot of @p hash. */
static __rte_always_inline void
lb_ftab_prefetch(const struct lb_ftab *t, uint32_t hash)
{
	rte_prefetch0(&t->idx[hash & t->mask]);
}

/** The position of the first slot of @p hash's probe sequence whose hash
 * is @p hash (a candidate: its key is still to compare), or -ENOENT when
 * none before an empty slot (a certain miss). */
static __rte_always_inline int32_t
lb_ftab_candidate(const struct lb_ftab *t, uint32_t hash)
{
	uint32_t i = hash & t->mask;
	uint64_t v;

	for (;; i = (i + 1) & t->mask) {
		v = t->idx[i];
		if (v == 0)
			return -ENOENT;
		if ((uint32_t)(v >> 32) == hash)
			return (int32_t)((uint32_t)v - 1);
	}
}

/** Position of @p k (hash @p hash), or -ENOENT. */
static __rte_always_inline int32_t
lb_ftab_lookup(const struct lb_ftab *t, const struct lb_flow_key *k,
		uint32_t hash)
{
	uint32_t i = hash & t->mask, pos;
	uint64_t v;

	for (;; i = (i + 1) & t->mask) {
		v = t->idx[i];
		if (v == 0)
			return -ENOENT;
		if ((uint32_t)(v >> 32) != hash)
			continue;
		pos = (uint32_t)v - 1;
		if (lb_flow_key_eq(&t->keys[pos].k, k))
			return (int32_t)pos;
	}
}

/** Add @p k (hash @p hash): its position (the existing one when it is
 * there), or -ENOSPC when the table is full. */
static inline int32_t
lb_ftab_add(struct lb_ftab *t, const struct lb_flow_key *k, uint32_t hash)
{
	int32_t p = lb_ftab_lookup(t, k, hash);
	uint32_t i, pos;

	if (p >= 0)
		return p;
	if (t->n_free == 0)
		return -ENOSPC;
	pos = t->free[--t->n_free];
	t->keys[pos].k = *k;
	for (i = hash & t->mask; t->idx[i] != 0; i = (i + 1) & t->mask)
		;
	t->idx[i] = lb_ftab_slot(hash, pos);
	return (int32_t)pos;
}

/** Delete the flow at @p pos (added with hash @p hash). @return 0, or
 * -ENOENT when it is not there. */
static inline int
lb_ftab_del(struct lb_ftab *t, uint32_t pos, uint32_t hash)
{
	const uint64_t want = lb_ftab_slot(hash, pos);
	uint32_t i = hash & t->mask, j, home;
	uint64_t v;

	for (;; i = (i + 1) & t->mask) {
		v = t->idx[i];
		if (v == 0)
			return -ENOENT;
		if (v == want)
			break;
	}
	/* backward shift: move up every later slot of the cluster whose
	 * home is not in (i, j] cyclically */
	for (j = i;;) {
		j = (j + 1) & t->mask;
		v = t->idx[j];
		if (v == 0)
			break;
		home = (uint32_t)(v >> 32) & t->mask;
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->idx[i] = v;
			i = j;
		}
	}
	t->idx[i] = 0;
	lb_flow_key_clear(&t->keys[pos].k);
	t->free[t->n_free++] = pos;
	return 0;
}

#endif /* PA_LB_FTAB_H */
