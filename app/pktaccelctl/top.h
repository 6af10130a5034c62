/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccelctl top, between its two rooms: top.c reads the daemon and
 * drives the terminal (or writes batch screens); top_view.c turns two
 * readings into the lines of one screen, for a given width, knowing
 * nothing of terminals.
 */
#ifndef PKTACCELCTL_TOP_H
#define PKTACCELCTL_TOP_H

#include <stdbool.h>
#include <time.h>

#include <jansson.h>

/* What one reading asks the daemon, in this order. */
enum top_src {
	TOP_STATS,		/* stats_get */
	TOP_PIPELINE,		/* pipeline_get */
	TOP_ACL,		/* acl_rule_list */
	TOP_LB,			/* lb_service_list */
	TOP_NEIGH,		/* neigh_list */
	TOP_N_SRC
};

/* The column the lists (rules, services, backends) are sorted by. */
enum top_sort {
	TOP_SORT_RATE,		/* per second, highest first */
	TOP_SORT_TOTAL,		/* since start (or since added), highest first */
	TOP_SORT_NAME,		/* rule id, service name, backend address */
	TOP_N_SORT
};

/*
 * One reading of the daemon: each method's result (NULL: not asked, the
 * daemon does not have it, or it answered an error, then in err) and the
 * CLOCK_MONOTONIC time it stands for (the middle of its call), seconds.
 */
struct top_sample {
	json_t *res[TOP_N_SRC];
	char *err[TOP_N_SRC];
	double t[TOP_N_SRC];
	time_t wall;		/* when it was taken, for the header */
	bool valid;
};

void top_sample_clear(struct top_sample *s);

/* The screen's sections, top to bottom: the lower ones give way first. */
enum top_sec {
	TOP_SEC_HEADER,
	TOP_SEC_TOTALS,
	TOP_SEC_PORTS,
	TOP_SEC_DROPS,
	TOP_SEC_LCORES,
	TOP_SEC_LATENCY,
	TOP_SEC_ACL,
	TOP_SEC_LB,
	TOP_SEC_NEIGH,
	TOP_N_SEC
};

/* Line kinds, for emphasis on a terminal. */
#define TOP_LINE_TEXT	0
#define TOP_LINE_HEAD	1	/* a table's column titles */
#define TOP_LINE_TITLE	2	/* the header line */

struct top_line {
	char *text;		/* printable ASCII only */
	int kind;		/* TOP_LINE_* */
	int sec;		/* enum top_sec */
};

/* A rendered screen: lines in section order. */
struct top_screen {
	struct top_line *line;
	int n;
	int cap;
};

/* What one screen shows. */
struct top_view {
	const struct top_sample *prev;	/* NULL or !valid: no rates yet */
	const struct top_sample *cur;
	enum top_sort sort;
	const char *socket;
	double delay_s;
	bool paused;
};

/*
 * Render @p v into @p scr (emptied first) for a terminal @p width
 * columns wide (0: no limit, as in batch mode): tables keep the columns
 * that fit whole, text lines may be longer (the caller clips them).
 * @return 0, or -ENOMEM.
 */
int top_view_render(const struct top_view *v, int width,
		struct top_screen *scr);

void top_screen_free(struct top_screen *scr);

/* The sort column's name ("rate", "total", "name"). */
const char *top_sort_name(enum top_sort s);

#endif /* PKTACCELCTL_TOP_H */
