/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_FTAB_H
#define PA_LB_FTAB_H

/*
 * The flow table of one lb lcore (issue 16): lb_flow_key -> position
 * (the index of the flow's line: its key and its struct lb_flow), keyed
 * with the packet's own flow hash (pa_pkt_meta.hash). Written and read by
 * its lcore only (the control thread reads it when the lcore has left
 * the data path).
 *
 * An index of 8-byte slots, (hash << 32 | position + 1), 0 empty, open
 * addressing with linear probing from hash & mask, deletions by backward
 * shift (no tombstones), at most 3/4 full (positions <= 3/4 of the
 * slots); the lines in an array by position, one 64-byte line a flow:
 * the key's 40 bytes (both families) and the 24-byte entry, so that a
 * hit reads two lines, the slot's and the flow's. The flows' hashes (for
 * deletes) are in an array of their own by position: a hit never reads
 * it. A position is stable while its flow lives. Positions come from a
 * stack: the table holds exactly the flows it was made for (n_pos - 1:
 * the last position is never used), then is full.
 *
 * Rather than rte_hash: a burst's lookups go in passes the caller drives
 * (lb_data.c: prefetch the home slot as soon as the hash is known, then
 * read the slots and prefetch the flow's line, then compare), and a
 * hit costs a slot compare and a key compare, against ~146 instructions
 * a key for rte_hash's bulk lookup of a 48-byte key (measured with
 * perf/bench_lb_stage; docs/performance.md).
 *
 * Bounded work whatever the traffic: the flow hash is the parser's,
 * unkeyed (two appliances must agree on it), so a client can craft many
 * flows of one hash, or of one home slot. An add is refused (the caller
 * counts flow_table_full and balances the flow statelessly, as when the
 * table is full) when its free slot would lie LB_FTAB_MAX_PROBE or more
 * slots past its home, or when LB_FTAB_MAX_TWINS flows of its hash are
 * there already. Backward-shift deletion only moves a flow towards its
 * home, so a lookup reads at most LB_FTAB_MAX_PROBE slots and compares
 * at most LB_FTAB_MAX_TWINS keys (rte_hash, for comparison: two buckets
 * of 8). With random hashes, at the worst load (3/4) about 1 add in
 * 10,000 probes that far; at 1/2 (the default 1M table) about none.
 *
 * Included by lb_priv.h, after struct lb_flow_key and struct lb_flow.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_prefetch.h>

/** Slots a flow may lie past its home (a cluster's run read by a lookup:
 * 8 lines of slots). */
#define LB_FTAB_MAX_PROBE	64
/** Flows of one hash in the table (key compares a lookup may make). */
#define LB_FTAB_MAX_TWINS	8

/* A flow's line: its key (the first LB_FLOW_KEY_LEN bytes of its
 * lb_flow_key; family 0 when the position is free) and its entry. */
struct lb_ftab_line {
	uint8_t key[LB_FLOW_KEY_LEN];
	struct lb_flow f;
} __rte_aligned(64);

_Static_assert(sizeof(struct lb_ftab_line) == 64,
	"a flow's key and entry are one cache line");

struct lb_ftab {
	uint64_t *idx;			/* slots */
	uint32_t mask;			/* slots - 1 (a power of two) */
	uint32_t n_pos;			/* positions */
	uint32_t n_free;		/* positions on the free stack */
	uint32_t hw;			/* 1 + the highest position ever
					 * handed out: every flow lies below
					 * (the stack hands out low positions
					 * first and takes freed ones back on
					 * top), so the ageing sweep need not
					 * go further */
	uint32_t *free;			/* the stack */
	struct lb_ftab_line *line;	/* by position */
	uint32_t *sig;			/* by position: the flow's hash */
};

/** Is the key of @p l @p k? (Whole words: padding is zero in every key.
 * Five 8-byte loads a side straight from the line and the key: arrays
 * filled by memcpy() went through the stack.) */
static __rte_always_inline bool
lb_ftab_key_eq(const struct lb_ftab_line *l, const struct lb_flow_key *k)
{
	const uint8_t *a = l->key, *b = (const uint8_t *)k;
	uint64_t x0, x1, x2, x3, x4, y0, y1, y2, y3, y4;

	RTE_BUILD_BUG_ON(LB_FLOW_KEY_LEN != 40);
	memcpy(&x0, a, 8);
	memcpy(&y0, b, 8);
	memcpy(&x1, a + 8, 8);
	memcpy(&y1, b + 8, 8);
	memcpy(&x2, a + 16, 8);
	memcpy(&y2, b + 16, 8);
	memcpy(&x3, a + 24, 8);
	memcpy(&y3, b + 24, 8);
	memcpy(&x4, a + 32, 8);
	memcpy(&y4, b + 32, 8);
	return ((x0 ^ y0) | (x1 ^ y1) | (x2 ^ y2) | (x3 ^ y3) |
		(x4 ^ y4)) == 0;
}

/** The entry of the flow at @p pos. */
static __rte_always_inline struct lb_flow *
lb_ftab_flow(const struct lb_ftab *t, uint32_t pos)
{
	return &t->line[pos].f;
}

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
	uint32_t i = hash & t->mask, d;
	uint64_t v;

	for (d = 0; d < LB_FTAB_MAX_PROBE; d++, i = (i + 1) & t->mask) {
		v = t->idx[i];
		if (v == 0)
			return -ENOENT;
		if ((uint32_t)(v >> 32) == hash)
			return (int32_t)((uint32_t)v - 1);
	}
	return -ENOENT;
}

/** Position of @p k (hash @p hash), or -ENOENT. */
static __rte_always_inline int32_t
lb_ftab_lookup(const struct lb_ftab *t, const struct lb_flow_key *k,
		uint32_t hash)
{
	uint32_t i = hash & t->mask, pos, d;
	uint64_t v;

	for (d = 0; d < LB_FTAB_MAX_PROBE; d++, i = (i + 1) & t->mask) {
		v = t->idx[i];
		if (v == 0)
			return -ENOENT;
		if ((uint32_t)(v >> 32) != hash)
			continue;
		pos = (uint32_t)v - 1;
		if (lb_ftab_key_eq(&t->line[pos], k))
			return (int32_t)pos;
	}
	return -ENOENT;
}

/** Add @p k (hash @p hash): its position (the existing one when it is
 * there), or -ENOSPC when the table is full, or when the flow would lie
 * too far from its home or have too many twins (see above). A new
 * flow's entry is the caller's to fill. */
static inline int32_t
lb_ftab_add(struct lb_ftab *t, const struct lb_flow_key *k, uint32_t hash)
{
	int32_t p = lb_ftab_lookup(t, k, hash);
	uint32_t i, pos, d, twins = 0;
	uint64_t v;

	if (p >= 0)
		return p;
	if (t->n_free == 0)
		return -ENOSPC;
	for (i = hash & t->mask, d = 0; (v = t->idx[i]) != 0;
			i = (i + 1) & t->mask) {
		if (++d >= LB_FTAB_MAX_PROBE)
			return -ENOSPC;
		if ((uint32_t)(v >> 32) == hash &&
		    ++twins >= LB_FTAB_MAX_TWINS)
			return -ENOSPC;
	}
	pos = t->free[--t->n_free];
	if (pos >= t->hw)
		t->hw = pos + 1;
	memcpy(t->line[pos].key, k, LB_FLOW_KEY_LEN);
	t->sig[pos] = hash;
	t->idx[i] = lb_ftab_slot(hash, pos);
	return (int32_t)pos;
}

/** Delete the flow at @p pos. @return 0, or -ENOENT when it is not
 * there. */
static inline int
lb_ftab_del(struct lb_ftab *t, uint32_t pos)
{
	uint32_t hash, i, j, home, d;
	uint64_t want, v;

	if (pos >= t->n_pos || t->line[pos].key[0] == 0)
		return -ENOENT;
	hash = t->sig[pos];
	want = lb_ftab_slot(hash, pos);
	i = hash & t->mask;
	for (d = 0;; d++, i = (i + 1) & t->mask) {
		if (d > t->mask)
			return -ENOENT;
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
	t->line[pos].key[0] = 0;	/* family 0: no packet's */
	t->free[t->n_free++] = pos;
	return 0;
}

#endif /* PA_LB_FTAB_H */
