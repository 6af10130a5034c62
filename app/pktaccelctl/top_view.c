/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * top's screen: two readings of the daemon (stats_get, pipeline_get,
 * acl_rule_list, lb_service_list, neigh_list) into lines, section by
 * section (docs/console.md, "top"). Rates are deltas over the measured
 * time between the two readings of each method. Tables keep only the
 * columns that fit the width whole, so that no number is ever cut.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktaccelctl.h"
#include "top.h"

#define ACL_ROWS	10	/* top rules shown */
#define LB_ROWS		12	/* services and backends shown, together */
#define LB_BACKENDS	5	/* backends shown under one service */
#define NEIGH_ROWS	6	/* neighbour entries shown */
#define MAX_COLS	12

const char *
top_sort_name(enum top_sort s)
{
	static const char *const names[TOP_N_SORT] = {
		"rate", "total", "name"
	};

	return (unsigned int)s < TOP_N_SORT ? names[s] : "?";
}

void
top_sample_clear(struct top_sample *s)
{
	int i;

	for (i = 0; i < TOP_N_SRC; i++) {
		json_decref(s->res[i]);
		free(s->err[i]);
	}
	memset(s, 0, sizeof(*s));
}

void
top_screen_free(struct top_screen *scr)
{
	int i;

	for (i = 0; i < scr->n; i++)
		free(scr->line[i].text);
	free(scr->line);
	memset(scr, 0, sizeof(*scr));
}

/* ---- lines ---- */

/* Names come from the daemon: keep lines to printable ASCII. */
static void
sanitize(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
}

static int
add_line(struct top_screen *scr, int sec, int kind, const char *text)
{
	struct top_line *l;
	char *t;
	size_t n;

	if (scr->n == scr->cap) {
		l = realloc(scr->line, sizeof(*l) * (size_t)(scr->cap * 2 + 16));
		if (l == NULL)
			return -ENOMEM;
		scr->line = l;
		scr->cap = scr->cap * 2 + 16;
	}
	t = strdup(text);
	if (t == NULL)
		return -ENOMEM;
	sanitize(t);
	n = strlen(t);			/* no trailing blanks */
	while (n > 0 && t[n - 1] == ' ')
		t[--n] = '\0';
	scr->line[scr->n].text = t;
	scr->line[scr->n].kind = kind;
	scr->line[scr->n].sec = sec;
	scr->n++;
	return 0;
}

static int __attribute__((format(printf, 4, 5)))
add_linef(struct top_screen *scr, int sec, int kind, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return add_line(scr, sec, kind, buf);
}

/* ---- tables that drop the columns that do not fit ---- */

struct tcol {
	const char *title;
	bool right;		/* numbers */
	bool flex;		/* the last, text column: may be cut */
};

struct ttab {
	const struct tcol *col;
	int ncols;
	char **cell;		/* nrows * ncols */
	int nrows;
	int cap;
};

static void
ttab_free(struct ttab *t)
{
	int i;

	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cell[i]);
	free(t->cell);
	t->cell = NULL;
	t->nrows = t->cap = 0;
}

/* Append a row of ncols strings (copied; NULL: blank). */
static int
ttab_add(struct ttab *t, const char *const *vals)
{
	char **c;
	int i;

	if (t->nrows == t->cap) {
		c = realloc(t->cell, sizeof(*c) * (size_t)t->ncols *
			(size_t)(t->cap * 2 + 8));
		if (c == NULL)
			return -ENOMEM;
		t->cell = c;
		t->cap = t->cap * 2 + 8;
	}
	for (i = 0; i < t->ncols; i++) {
		t->cell[t->nrows * t->ncols + i] = strdup(vals[i] != NULL ?
			vals[i] : "");
		if (t->cell[t->nrows * t->ncols + i] == NULL) {
			while (--i >= 0)
				free(t->cell[t->nrows * t->ncols + i]);
			return -ENOMEM;
		}
	}
	t->nrows++;
	return 0;
}

/* Print a cell padded to w into p (room for w + 1 bytes: at most w
 * characters and the NUL). */
static size_t
put_cell(char *p, const char *s, int w, bool right, bool last)
{
	const size_t room = (size_t)w + 1;
	int l = (int)strlen(s), n;

	if (l > w)
		l = w;
	if (right)
		n = snprintf(p, room, "%*s%.*s", w - l, "", l, s);
	else if (last)
		n = snprintf(p, room, "%.*s", l, s);
	else
		n = snprintf(p, room, "%.*s%*s", l, s, w - l, "");
	return n < 0 ? 0 : (size_t)n;
}

static int
ttab_render(const struct ttab *t, struct top_screen *scr, int sec,
		int width)
{
	int w[MAX_COLS], shown = 0, used = 0, c, r, need, rc = 0;
	char *buf, *p;
	size_t cap;

	for (c = 0; c < t->ncols; c++) {
		w[c] = (int)strlen(t->col[c].title);
		for (r = 0; r < t->nrows; r++) {
			int l = (int)strlen(t->cell[r * t->ncols + c]);

			if (l > w[c])
				w[c] = l;
		}
	}
	for (c = 0; c < t->ncols; c++) {
		need = (c > 0 ? 2 : 0) + w[c];
		if (width <= 0 || used + need <= width) {
			used += need;
			shown++;
			continue;
		}
		if ((t->col[c].flex || c == 0) &&
		    width - used - (c > 0 ? 2 : 0) >= 4) {
			w[c] = width - used - (c > 0 ? 2 : 0);
			used = width;
			shown++;
		}
		break;
	}
	cap = (size_t)used + (size_t)t->ncols * 2 + 16;
	for (c = 0; c < shown; c++)
		cap += (size_t)w[c];
	buf = malloc(cap);
	if (buf == NULL)
		return -ENOMEM;
	for (r = -1; r < t->nrows && rc == 0; r++) {
		p = buf;
		for (c = 0; c < shown; c++) {
			if (c > 0) {
				*p++ = ' ';
				*p++ = ' ';
			}
			p += put_cell(p, r < 0 ? t->col[c].title :
				t->cell[r * t->ncols + c], w[c], t->col[c].right,
				c + 1 == shown);
		}
		*p = '\0';
		rc = add_line(scr, sec, r < 0 ? TOP_LINE_HEAD : TOP_LINE_TEXT,
			buf);
	}
	free(buf);
	return rc;
}

/* ---- readings ---- */

struct ctx {
	const struct top_view *v;
	const json_t *cur[TOP_N_SRC];
	const json_t *prev[TOP_N_SRC];	/* NULL: no rates */
	double dt[TOP_N_SRC];		/* seconds between the two */
};

/* Rate of counter @p key of objects @p cur and @p prev over @p dt. */
static double
rate_of(const json_t *cur, const json_t *prev, const char *key, double dt)
{
	if (prev == NULL)
		return NAN;
	return ctl_rate(ctl_num(cur, key), ctl_num(prev, key), dt);
}

static const char *
str_of(const json_t *o, const char *key, const char *dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

/* ---- sections ---- */

static int
sec_header(struct ctx *x, struct top_screen *scr)
{
	const struct top_view *v = x->v;
	char when[16] = "--:--:--", iv[32] = "-";
	struct tm tm;

	if (localtime_r(&v->cur->wall, &tm) != NULL)
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (x->prev[TOP_STATS] != NULL)
		snprintf(iv, sizeof(iv), "%.3fs", x->dt[TOP_STATS]);
	return add_linef(scr, TOP_SEC_HEADER, TOP_LINE_TITLE,
		"pktaccel top  %s  every %gs  interval %s  sort %s%s  %s",
		when, v->delay_s, iv, top_sort_name(v->sort),
		v->paused ? "  PAUSED" : "", v->socket);
}

static int
sec_totals(struct ctx *x, struct top_screen *scr)
{
	const json_t *s = x->cur[TOP_STATS], *p = x->prev[TOP_STATS];
	double dt = x->dt[TOP_STATS];
	char rx[32], tx[32], dr[32];

	if (s == NULL)
		return add_linef(scr, TOP_SEC_TOTALS, TOP_LINE_TEXT,
			"Total    stats_get: %s", x->v->cur->err[TOP_STATS] ?
			x->v->cur->err[TOP_STATS] : "no answer");
	ctl_fmt_fixed(rx, sizeof(rx), rate_of(s, p, "rx_packets", dt), 1e6, 3);
	ctl_fmt_fixed(tx, sizeof(tx), rate_of(s, p, "tx_packets", dt), 1e6, 3);
	ctl_fmt_fixed(dr, sizeof(dr), rate_of(s, p, "dropped_packets", dt),
		1e6, 3);
	return add_linef(scr, TOP_SEC_TOTALS, TOP_LINE_TEXT,
		"Total    rx %s Mpps  tx %s Mpps  dropped %s Mpps  mbufs %.0f",
		rx, tx, dr, ctl_num(s, "mbufs_in_use"));
}

static int
sec_ports(struct ctx *x, struct top_screen *scr, int width)
{
	static const struct tcol cols[] = {
		{ "PORT", false, false }, { "LINK", false, false },
		{ "RX_Mpps", true, false }, { "RX_Gbps", true, false },
		{ "TX_Mpps", true, false }, { "TX_Gbps", true, false },
		{ "MISSED/s", true, false }, { "RX_PKTS", true, false },
		{ "TX_PKTS", true, false }, { "RX_MISSED", true, false },
	};
	const json_t *ports = json_object_get(x->cur[TOP_STATS], "ports");
	const json_t *pports = json_object_get(x->prev[TOP_STATS], "ports");
	struct ttab t = { cols, 10, NULL, 0, 0 };
	double dt = x->dt[TOP_STATS];
	char c[10][32];
	const char *row[10];
	const json_t *po, *pp;
	const char *name;
	int i, rc = 0;

	if (!json_is_object(ports) || json_object_size(ports) == 0)
		return 0;
	for (i = 0; i < 10; i++)
		row[i] = c[i];
	json_object_foreach((json_t *)ports, name, po) {
		pp = x->prev[TOP_STATS] != NULL ?
			json_object_get(pports, name) : NULL;
		snprintf(c[0], sizeof(c[0]), "%s", name);
		snprintf(c[1], sizeof(c[1]), "%s", str_of(po, "link", "-"));
		ctl_fmt_fixed(c[2], 32, rate_of(po, pp, "rx_packets", dt), 1e6, 3);
		ctl_fmt_fixed(c[3], 32, rate_of(po, pp, "rx_bytes", dt), 1.25e8, 3);
		ctl_fmt_fixed(c[4], 32, rate_of(po, pp, "tx_packets", dt), 1e6, 3);
		ctl_fmt_fixed(c[5], 32, rate_of(po, pp, "tx_bytes", dt), 1.25e8, 3);
		ctl_fmt_fixed(c[6], 32, rate_of(po, pp, "rx_missed", dt), 1, 0);
		ctl_fmt_fixed(c[7], 32, ctl_num(po, "rx_packets"), 1, 0);
		ctl_fmt_fixed(c[8], 32, ctl_num(po, "tx_packets"), 1, 0);
		ctl_fmt_fixed(c[9], 32, ctl_num(po, "rx_missed"), 1, 0);
		rc = ttab_add(&t, row);
		if (rc != 0)
			goto out;
	}
	rc = ttab_render(&t, scr, TOP_SEC_PORTS, width);
out:
	ttab_free(&t);
	return rc;
}

struct item {
	const char *name;
	double rate;
	double total;
	double id;		/* sorting by name: a number, else name */
	const json_t *obj;
};

static int
cmp_name(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (!isnan(x->id) || !isnan(y->id)) {
		if (isnan(x->id) || isnan(y->id))
			return isnan(x->id) ? 1 : -1;
		if (x->id != y->id)
			return x->id < y->id ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

/* Highest first; no value ("-") last. */
static int
cmp_desc(double x, double y)
{
	x = isnan(x) ? -1 : x;
	y = isnan(y) ? -1 : y;
	return x > y ? -1 : x < y;
}

static int
cmp_rate(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = cmp_desc(x->rate, y->rate);

	if (c == 0)
		c = cmp_desc(x->total, y->total);
	return c != 0 ? c : cmp_name(a, b);
}

static int
cmp_total(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = cmp_desc(x->total, y->total);

	if (c == 0)
		c = cmp_desc(x->rate, y->rate);
	return c != 0 ? c : cmp_name(a, b);
}

static void
sort_items(struct item *it, size_t n, enum top_sort s)
{
	qsort(it, n, sizeof(*it), s == TOP_SORT_TOTAL ? cmp_total :
		s == TOP_SORT_NAME ? cmp_name : cmp_rate);
}

/* "Drops/s  police 1.13M  acl 12.0k": the reasons that counted in the
 * interval, busiest first, wrapped to the width. */
static int
sec_drops(struct ctx *x, struct top_screen *scr, int width)
{
	const json_t *d = json_object_get(x->cur[TOP_STATS], "drops");
	const json_t *pd = json_object_get(x->prev[TOP_STATS], "drops");
	struct item it[64];
	char line[1024], word[96], num[32];
	const char *name;
	const json_t *v;
	size_t n = 0, i, len, unknown = 0;
	int rc;

	if (!json_is_object(d))
		return 0;
	if (x->prev[TOP_STATS] == NULL)
		return add_line(scr, TOP_SEC_DROPS, TOP_LINE_TEXT,
			"Drops/s  -");
	json_object_foreach((json_t *)d, name, v) {
		double r = rate_of(d, pd, name, x->dt[TOP_STATS]);

		if (isnan(r))
			unknown++;
		if (n == sizeof(it) / sizeof(it[0]) || isnan(r) || r <= 0)
			continue;
		it[n].name = name;
		it[n].rate = r;
		it[n].total = json_number_value(v);
		it[n].id = NAN;
		n++;
	}
	if (n == 0)		/* "-": counters went back, no rates */
		return add_line(scr, TOP_SEC_DROPS, TOP_LINE_TEXT,
			unknown > 0 ? "Drops/s  -" : "Drops/s  none");
	sort_items(it, n, TOP_SORT_RATE);
	len = (size_t)snprintf(line, sizeof(line), "Drops/s ");
	for (i = 0; i < n; i++) {
		snprintf(word, sizeof(word), " %s %s", it[i].name,
			ctl_fmt_si(num, sizeof(num), it[i].rate));
		if (width > 0 && len > 9 && len + strlen(word) > (size_t)width) {
			rc = add_line(scr, TOP_SEC_DROPS, TOP_LINE_TEXT, line);
			if (rc != 0)
				return rc;
			len = (size_t)snprintf(line, sizeof(line), "        ");
		}
		if (len + strlen(word) < sizeof(line)) {
			memcpy(line + len, word, strlen(word) + 1);
			len += strlen(word);
		}
	}
	return add_line(scr, TOP_SEC_DROPS, TOP_LINE_TEXT, line);
}

/* The fullest input ring of a pipeline_get lcore: "COUNT/CAPACITY". */
static void
ring_fill(const json_t *lc, char *buf, size_t len)
{
	const json_t *rings = json_object_get(lc, "rings_in"), *r;
	double best = -1, cnt, capa;
	size_t i;

	snprintf(buf, len, "-");
	json_array_foreach(rings, i, r) {
		cnt = ctl_num(r, "count");
		capa = ctl_num(r, "capacity");
		if (isnan(cnt) || isnan(capa) || capa <= 0)
			continue;
		if (cnt / capa > best) {
			best = cnt / capa;
			snprintf(buf, len, "%.0f/%.0f", cnt, capa);
		}
	}
}

static int
lcore_row(struct ctx *x, struct ttab *t, const char *id, const json_t *pl)
{
	const json_t *lcs = json_object_get(x->cur[TOP_STATS], "lcores");
	const json_t *plcs = json_object_get(x->prev[TOP_STATS], "lcores");
	const json_t *s = json_object_get(lcs, id), *ps, *st;
	double dt = x->dt[TOP_STATS], hz, busy;
	char c[9][64];
	const char *row[9];
	size_t i, o = 0;

	ps = x->prev[TOP_STATS] != NULL ? json_object_get(plcs, id) : NULL;
	for (i = 0; i < 9; i++)
		row[i] = c[i];
	snprintf(c[0], 64, "%s", id);
	snprintf(c[1], 64, "%s", str_of(pl, "role", "-"));
	c[2][0] = '\0';
	json_array_foreach(json_object_get(pl, "stages"), i, st)
		if (json_is_string(st) && o + strlen(json_string_value(st)) +
				2 < sizeof(c[2]))
			o += (size_t)snprintf(c[2] + o, sizeof(c[2]) - o, "%s%s",
				i > 0 ? "," : "", json_string_value(st));
	if (c[2][0] == '\0')
		snprintf(c[2], 64, "-");
	hz = ctl_num(x->cur[TOP_PIPELINE], "tsc_hz");
	busy = rate_of(s, ps, "busy_cycles", dt);
	if (!isnan(busy) && hz > 0) {
		busy = busy / hz * 100.0;
		if (busy > 100.0)
			busy = 100.0;
	} else {
		busy = NAN;
	}
	ctl_fmt_fixed(c[3], 64, busy, 1, 1);
	ctl_fmt_si(c[4], 64, rate_of(s, ps, "sleeps", dt));
	ctl_fmt_fixed(c[5], 64, rate_of(s, ps, "rx_packets", dt), 1e6, 3);
	ctl_fmt_fixed(c[6], 64, rate_of(s, ps, "tx_packets", dt), 1e6, 3);
	ctl_fmt_si(c[7], 64, rate_of(s, ps, "dropped_packets", dt));
	ring_fill(pl, c[8], 64);
	return ttab_add(t, row);
}

static int
sec_lcores(struct ctx *x, struct top_screen *scr, int width)
{
	static const struct tcol cols[] = {
		{ "LCORE", false, false }, { "ROLE", false, false },
		{ "STAGES", false, false }, { "BUSY%", true, false },
		{ "SLEEPS/s", true, false }, { "RX_Mpps", true, false },
		{ "TX_Mpps", true, false }, { "DROPS/s", true, false },
		{ "RING_FILL", true, false },
	};
	const json_t *pls = json_object_get(x->cur[TOP_PIPELINE], "lcores");
	const json_t *lcs = json_object_get(x->cur[TOP_STATS], "lcores");
	struct ttab t = { cols, 9, NULL, 0, 0 };
	const json_t *pl, *v;
	const char *id;
	char ids[16];
	size_t i;
	int rc = 0;

	if (json_array_size(pls) > 0) {
		json_array_foreach(pls, i, pl) {
			snprintf(ids, sizeof(ids), "%.0f", ctl_num(pl, "lcore"));
			rc = lcore_row(x, &t, ids, pl);
			if (rc != 0)
				goto out;
		}
	} else if (json_is_object(lcs)) {
		json_object_foreach((json_t *)lcs, id, v) {
			rc = lcore_row(x, &t, id, NULL);
			if (rc != 0)
				goto out;
		}
	}
	if (t.nrows > 0)
		rc = ttab_render(&t, scr, TOP_SEC_LCORES, width);
out:
	ttab_free(&t);
	return rc;
}

static int
sec_latency(struct ctx *x, struct top_screen *scr)
{
	const json_t *l = json_object_get(x->cur[TOP_STATS], "latency");
	char p50[16], p99[16], p999[16], mx[16];

	if (!json_is_true(json_object_get(l, "enabled")))
		return 0;
	if (!(ctl_num(l, "count") > 0))
		return add_line(scr, TOP_SEC_LATENCY, TOP_LINE_TEXT,
			"Latency  -  (no packet forwarded yet)");
	return add_linef(scr, TOP_SEC_LATENCY, TOP_LINE_TEXT,
		"Latency  p50 %s  p99 %s  p999 %s  max %s  (since start, %.0f packets)",
		ctl_fmt_ns(p50, 16, ctl_num(l, "p50_ns")),
		ctl_fmt_ns(p99, 16, ctl_num(l, "p99_ns")),
		ctl_fmt_ns(p999, 16, ctl_num(l, "p999_ns")),
		ctl_fmt_ns(mx, 16, ctl_num(l, "max_ns")),
		ctl_num(l, "count"));
}

/* A rule of the previous reading: its id and hits, sorted by id so
 * that a large table costs n log n, not n squared. */
struct prev_hits {
	double id;
	double hits;
};

static int
cmp_prev_hits(const void *a, const void *b)
{
	const struct prev_hits *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The previous reading's rules by id (free it), or NULL. */
static struct prev_hits *
prev_rules(const json_t *rules, size_t *n)
{
	struct prev_hits *p;
	const json_t *r;
	size_t i;

	*n = 0;
	p = calloc(json_array_size(rules) + 1, sizeof(*p));
	if (p == NULL)
		return NULL;
	json_array_foreach(rules, i, r) {
		p[*n].id = ctl_num(r, "id");
		p[*n].hits = ctl_num(r, "hits");
		(*n)++;
	}
	qsort(p, *n, sizeof(*p), cmp_prev_hits);
	return p;
}

/* Hits of rule @p id in the previous reading; NAN when it had none. */
static double
prev_rule_hits(const struct prev_hits *p, size_t n, double id)
{
	struct prev_hits key = { .id = id }, *f;

	if (p == NULL)
		return NAN;
	f = bsearch(&key, p, n, sizeof(*p), cmp_prev_hits);
	return f != NULL ? f->hits : NAN;
}

static int
sec_acl(struct ctx *x, struct top_screen *scr, int width)
{
	static const struct tcol cols[] = {
		{ "ACL_RULE", false, false }, { "PRIO", true, false },
		{ "HITS/s", true, false }, { "HITS", true, false },
		{ "ACTION", false, false }, { "MATCH", false, true },
	};
	const json_t *rules = x->cur[TOP_ACL], *prules = x->prev[TOP_ACL];
	const json_t *st = json_object_get(x->cur[TOP_STATS], "acl");
	const json_t *pst = json_object_get(x->prev[TOP_STATS], "acl");
	struct ttab t = { cols, 6, NULL, 0, 0 };
	size_t n = 0, i, nr = json_array_size(rules), np = 0;
	struct prev_hits *ph = NULL;
	struct item *it;
	const json_t *r;
	char c[6][256];
	const char *row[6];
	json_t *m, *a;
	int rc = 0;

	if (!json_is_array(rules) || (nr == 0 && !json_is_object(st)))
		return 0;
	it = calloc(nr + 1, sizeof(*it));
	if (it == NULL)
		return -ENOMEM;
	if (prules != NULL) {
		ph = prev_rules(prules, &np);
		if (ph == NULL) {
			free(it);
			return -ENOMEM;
		}
	}
	json_array_foreach(rules, i, r) {
		if (!json_is_object(r))
			continue;
		it[n].obj = r;
		it[n].id = ctl_num(r, "id");
		it[n].name = "";
		it[n].total = ctl_num(r, "hits");
		it[n].rate = ctl_rate(it[n].total,
			prev_rule_hits(ph, np, it[n].id), x->dt[TOP_ACL]);
		n++;
	}
	if (json_is_object(st) && json_object_get(st, "default_hits")) {
		it[n].obj = NULL;
		it[n].id = NAN;
		it[n].name = "default";
		it[n].total = ctl_num(st, "default_hits");
		it[n].rate = x->prev[TOP_STATS] == NULL ? NAN :
			rate_of(st, pst, "default_hits", x->dt[TOP_STATS]);
		n++;
	}
	sort_items(it, n, x->v->sort);
	for (i = 0; i < 6; i++)
		row[i] = c[i];
	for (i = 0; i < n && i < ACL_ROWS; i++) {
		r = it[i].obj;
		if (r == NULL) {
			snprintf(c[0], 256, "default");
			snprintf(c[1], 256, "-");
			snprintf(c[4], 256, "%s", str_of(st, "default", "-"));
			snprintf(c[5], 256, "(no rule matched)");
		} else {
			snprintf(c[0], 256, "%.0f", it[i].id);
			ctl_fmt_fixed(c[1], 256, ctl_num(r, "priority"), 1, 0);
			a = ctl_view_acl_action(r);
			m = ctl_view_acl_match(r);
			snprintf(c[4], 256, "%s", json_is_string(a) ?
				json_string_value(a) : "?");
			snprintf(c[5], 256, "%s", json_is_string(m) ?
				json_string_value(m) : "?");
			json_decref(a);
			json_decref(m);
		}
		ctl_fmt_si(c[2], 256, it[i].rate);
		ctl_fmt_si(c[3], 256, it[i].total);
		rc = ttab_add(&t, row);
		if (rc != 0)
			goto out;
	}
	if (t.nrows > 0)
		rc = ttab_render(&t, scr, TOP_SEC_ACL, width);
out:
	ttab_free(&t);
	free(ph);
	free(it);
	return rc;
}

/* The previous reading's service named @p name, or NULL. */
static const json_t *
prev_service(const json_t *svcs, const char *name)
{
	const json_t *s;
	size_t i;

	json_array_foreach(svcs, i, s)
		if (strcmp(str_of(s, "name", ""), name) == 0)
			return s;
	return NULL;
}

static const json_t *
prev_backend(const json_t *psvc, const json_t *be)
{
	const json_t *b;
	size_t i;

	json_array_foreach(json_object_get(psvc, "backends"), i, b)
		if (strcmp(str_of(b, "addr", ""), str_of(be, "addr", "?")) == 0 &&
		    ctl_num(b, "port") == ctl_num(be, "port"))
			return b;
	return NULL;
}

/* Packets of a service: the sum over its backends (those in @p pref
 * only when it is given, so that a new backend makes no false rate). */
static double
service_packets(const json_t *svc, const json_t *pref)
{
	const json_t *be;
	double sum = 0, p;
	size_t i;

	json_array_foreach(json_object_get(svc, "backends"), i, be) {
		if (pref != NULL && prev_backend(pref, be) == NULL)
			continue;
		p = ctl_num(be, "packets");
		if (!isnan(p))
			sum += p;
	}
	return sum;
}

static int
lb_backends(struct ctx *x, struct ttab *t, const json_t *svc,
		const json_t *psvc, int room)
{
	const json_t *bes = json_object_get(svc, "backends"), *be;
	size_t n = 0, i, nb = json_array_size(bes);
	struct item *it;
	char c[6][160];
	const char *row[6];
	int rc = 0;

	if (nb == 0 || room <= 0)
		return 0;
	it = calloc(nb, sizeof(*it));
	if (it == NULL)
		return -ENOMEM;
	json_array_foreach(bes, i, be) {
		it[n].obj = be;
		it[n].name = str_of(be, "addr", "?");
		it[n].id = NAN;
		it[n].total = ctl_num(be, "packets");
		it[n].rate = psvc == NULL ? NAN : rate_of(be,
			prev_backend(psvc, be), "packets", x->dt[TOP_LB]);
		n++;
	}
	sort_items(it, n, x->v->sort);
	for (i = 0; i < 6; i++)
		row[i] = c[i];
	for (i = 0; i < n && (int)i < room; i++) {
		be = it[i].obj;
		if (ctl_num(be, "port") > 0)
			snprintf(c[0], 160, strchr(it[i].name, ':') != NULL ?
				"  [%s]:%.0f" : "  %s:%.0f", it[i].name,
				ctl_num(be, "port"));
		else
			snprintf(c[0], 160, "  %s", it[i].name);
		snprintf(c[1], 160, "%s", str_of(be, "state", "-"));
		snprintf(c[2], 160, "%s", str_of(be, "health", "-"));
		ctl_fmt_si(c[3], 160, it[i].rate);
		ctl_fmt_si(c[4], 160, it[i].total);
		ctl_fmt_fixed(c[5], 160, ctl_num(be, "flows"), 1, 0);
		rc = ttab_add(t, row);
		if (rc != 0)
			break;
	}
	free(it);
	return rc;
}

/* The flow table above the services: occupancy, its peak since start,
 * new flows per second, and the new flows refused per second (table
 * full, per-source limits, max_flows). */
static int
lb_flows_line(struct ctx *x, struct top_screen *scr)
{
	const json_t *lb = json_object_get(x->cur[TOP_STATS], "lb");
	const json_t *plb = json_object_get(x->prev[TOP_STATS], "lb");
	double dt = x->dt[TOP_STATS];
	char cap[32], nw[32], full[32];
	double refused = NAN;

	if (!(ctl_num(lb, "flow_table_capacity") > 0))
		return 0;
	if (plb != NULL)
		refused = rate_of(lb, plb, "flow_table_full", dt) +
			rate_of(lb, plb, "src_limited", dt) +
			rate_of(lb, plb, "max_flows_dropped", dt);
	return add_linef(scr, TOP_SEC_LB, TOP_LINE_TEXT,
		"Flows    %.0f of %s  peak %.0f  new/s %s  refused/s %s",
		ctl_num(lb, "flows"), ctl_fmt_si(cap, sizeof(cap),
			ctl_num(lb, "flow_table_capacity")),
		ctl_num(lb, "flows_peak"), ctl_fmt_si(nw, sizeof(nw),
			rate_of(lb, plb, "flows_created", dt)),
		ctl_fmt_si(full, sizeof(full), refused));
}

/* Full NAT under the flow table, with a pool (stats_get lb.fnat): its
 * flows, new ones and translated replies per second, its drops per
 * second (the fnat_* reasons), then each pool address's ports in use of
 * its ports. */
static int
lb_fnat_lines(struct ctx *x, struct top_screen *scr)
{
	static const char *const reasons[] = {
		"fnat_no_port", "fnat_table_full", "fnat_fragment",
		"fnat_unmatched", "fnat_xlat",
	};
	const json_t *st = x->cur[TOP_STATS], *pst = x->prev[TOP_STATS];
	const json_t *fn = json_object_get(json_object_get(st, "lb"), "fnat");
	const json_t *pfn = json_object_get(json_object_get(pst, "lb"),
		"fnat");
	const json_t *pool = json_object_get(fn, "pool"), *a;
	double dt = x->dt[TOP_STATS], dropped = NAN;
	char nw[32], rp[32], dr[32], line[1024];
	size_t i, n = 0;
	unsigned int k;
	int rc;

	if (!json_is_object(fn))
		return 0;
	if (pst != NULL) {
		dropped = 0;
		for (k = 0; k < sizeof(reasons) / sizeof(reasons[0]); k++)
			dropped += rate_of(json_object_get(st, "drops"),
				json_object_get(pst, "drops"), reasons[k], dt);
	}
	rc = add_linef(scr, TOP_SEC_LB, TOP_LINE_TEXT,
		"Fnat     %.0f flows  new/s %s  replies/s %s  dropped/s %s",
		ctl_num(fn, "flows"), ctl_fmt_si(nw, sizeof(nw),
			rate_of(fn, pfn, "flows_created", dt)),
		ctl_fmt_si(rp, sizeof(rp), rate_of(fn, pfn, "replies", dt)),
		ctl_fmt_si(dr, sizeof(dr), dropped));
	if (rc != 0 || json_array_size(pool) == 0)
		return rc;
	n = (size_t)snprintf(line, sizeof(line), "Pool    ");
	json_array_foreach(pool, i, a) {
		double ports = ctl_num(a, "ports");

		if (n >= sizeof(line))
			break;
		n += (size_t)snprintf(line + n, sizeof(line) - n,
			"%s%s %.0f/%.0f %.1f%%", i == 0 ? " " : "  ",
			str_of(a, "addr", "?"),
			ctl_num(a, "in_use"), ports, ports > 0 ?
				ctl_num(a, "in_use") / ports * 100 : 0);
	}
	return add_line(scr, TOP_SEC_LB, TOP_LINE_TEXT, line);
}

static int
sec_lb(struct ctx *x, struct top_screen *scr, int width)
{
	static const struct tcol cols[] = {
		{ "SERVICE/BACKEND", false, false }, { "STATE", false, false },
		{ "HEALTH", false, false }, { "PKTS/s", true, false },
		{ "PACKETS", true, false }, { "FLOWS", true, false },
	};
	const json_t *svcs = x->cur[TOP_LB], *psvcs = x->prev[TOP_LB], *svc;
	const json_t *psvc;
	struct ttab t = { cols, 6, NULL, 0, 0 };
	size_t n = 0, i, ns = json_array_size(svcs);
	const char *vip, *row[6];
	struct item *it;
	char c[6][160], port[16];
	int rc = 0, room;

	if (ns == 0)
		return 0;
	rc = lb_flows_line(x, scr);
	if (rc == 0)
		rc = lb_fnat_lines(x, scr);
	if (rc != 0)
		return rc;
	it = calloc(ns, sizeof(*it));
	if (it == NULL)
		return -ENOMEM;
	json_array_foreach(svcs, i, svc) {
		if (!json_is_object(svc))
			continue;
		psvc = psvcs != NULL ? prev_service(psvcs,
			str_of(svc, "name", "")) : NULL;
		it[n].obj = svc;
		it[n].name = str_of(svc, "name", "?");
		it[n].id = NAN;
		it[n].total = service_packets(svc, NULL);
		it[n].rate = psvc == NULL ? NAN : ctl_rate(
			service_packets(svc, psvc), service_packets(psvc, NULL),
			x->dt[TOP_LB]);
		n++;
	}
	sort_items(it, n, x->v->sort);
	for (i = 0; i < 6; i++)
		row[i] = c[i];
	for (i = 0; i < n && t.nrows < LB_ROWS; i++) {
		svc = it[i].obj;
		vip = str_of(svc, "vip", "?");
		ctl_fmt_fixed(port, sizeof(port), ctl_num(svc, "port"), 1, 0);
		snprintf(c[0], 160, strchr(vip, ':') != NULL ? "%s [%s]:%s/%s" :
			"%s %s:%s/%s", it[i].name, vip, port,
			str_of(svc, "proto", "?"));
		snprintf(c[1], 160, "%.0f/%zu up", ctl_num(svc, "usable_backends"),
			json_array_size(json_object_get(svc, "backends")));
		if (isnan(ctl_num(svc, "usable_backends")))
			snprintf(c[1], 160, "-");
		snprintf(c[2], 160, "%s", str_of(svc, "health", "-"));
		ctl_fmt_si(c[3], 160, it[i].rate);
		ctl_fmt_si(c[4], 160, it[i].total);
		ctl_fmt_fixed(c[5], 160, ctl_num(svc, "flows"), 1, 0);
		rc = ttab_add(&t, row);
		if (rc != 0)
			goto out;
		room = LB_ROWS - t.nrows;
		rc = lb_backends(x, &t, svc, psvcs != NULL ?
			prev_service(psvcs, it[i].name) : NULL,
			room < LB_BACKENDS ? room : LB_BACKENDS);
		if (rc != 0)
			goto out;
	}
	rc = ttab_render(&t, scr, TOP_SEC_LB, width);
out:
	ttab_free(&t);
	free(it);
	return rc;
}

/* Worst first: what needs an operator's eye. */
static int
state_rank(const char *s)
{
	static const char *const order[] = {
		"failed", "incomplete", "probe", "stale", "reachable"
	};
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (strcmp(s, order[i]) == 0)
			return (int)i;
	return (int)i;
}

static int
cmp_neigh(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	int rx = state_rank(str_of(x, "state", "")),
	    ry = state_rank(str_of(y, "state", ""));

	if (rx != ry)
		return rx - ry;
	return strcmp(str_of(x, "address", ""), str_of(y, "address", ""));
}

static int
sec_neigh(struct ctx *x, struct top_screen *scr, int width)
{
	static const struct tcol cols[] = {
		{ "NEIGHBOUR", false, false }, { "PORT", false, false },
		{ "STATE", false, false }, { "MAC", false, false },
		{ "AGE", true, false }, { "TARGET", false, false },
	};
	static const char *const states[] = {
		"reachable", "stale", "probe", "incomplete", "failed"
	};
	const json_t *ents = x->cur[TOP_NEIGH], *e;
	struct ttab t = { cols, 6, NULL, 0, 0 };
	size_t n = json_array_size(ents), i, k, cnt, o;
	const json_t **sorted;
	char line[512], c[6][64];
	const char *row[6];
	int rc;

	if (n == 0)
		return 0;
	o = (size_t)snprintf(line, sizeof(line), "Neigh    %zu entr%s:", n,
		n == 1 ? "y" : "ies");
	for (k = 0; k < sizeof(states) / sizeof(states[0]); k++) {
		cnt = 0;
		json_array_foreach(ents, i, e)
			if (strcmp(str_of(e, "state", ""), states[k]) == 0)
				cnt++;
		if (cnt > 0 && o < sizeof(line))
			o += (size_t)snprintf(line + o, sizeof(line) - o,
				"  %s %zu", states[k], cnt);
	}
	rc = add_line(scr, TOP_SEC_NEIGH, TOP_LINE_TEXT, line);
	if (rc != 0)
		return rc;
	sorted = calloc(n, sizeof(*sorted));
	if (sorted == NULL)
		return -ENOMEM;
	json_array_foreach(ents, i, e)
		sorted[i] = e;
	qsort(sorted, n, sizeof(*sorted), cmp_neigh);
	for (i = 0; i < 6; i++)
		row[i] = c[i];
	for (i = 0; i < n && i < NEIGH_ROWS && rc == 0; i++) {
		e = sorted[i];
		snprintf(c[0], 64, "%s", str_of(e, "address", "?"));
		snprintf(c[1], 64, "%s", str_of(e, "port", "-"));
		snprintf(c[2], 64, "%s", str_of(e, "state", "-"));
		snprintf(c[3], 64, "%s", str_of(e, "mac", "-"));
		ctl_fmt_fixed(c[4], 64, ctl_num(e, "age"), 1, 1);
		snprintf(c[5], 64, "%s", str_of(e, "target", "-"));
		rc = ttab_add(&t, row);
	}
	if (rc == 0)
		rc = ttab_render(&t, scr, TOP_SEC_NEIGH, width);
	ttab_free(&t);
	free(sorted);
	return rc;
}

/* A section whose method answered an error says so, in one line. */
static int
sec_error(struct ctx *x, struct top_screen *scr, enum top_src src, int sec,
		const char *method)
{
	const char *err = x->v->cur->err[src];

	if (x->cur[src] != NULL || err == NULL)
		return 0;
	return add_linef(scr, sec, TOP_LINE_TEXT, "%-8s %s: %s",
		sec == TOP_SEC_LCORES ? "Lcores" : sec == TOP_SEC_ACL ? "ACL" :
		sec == TOP_SEC_LB ? "LB" : "Neigh", method, err);
}

int
top_view_render(const struct top_view *v, int width, struct top_screen *scr)
{
	struct ctx x = { .v = v };
	bool rates = v->prev != NULL && v->prev->valid;
	int i, rc;

	top_screen_free(scr);
	for (i = 0; i < TOP_N_SRC; i++) {
		x.cur[i] = v->cur->res[i];
		if (rates && v->prev->res[i] != NULL && x.cur[i] != NULL &&
		    v->cur->t[i] > v->prev->t[i]) {
			x.prev[i] = v->prev->res[i];
			x.dt[i] = v->cur->t[i] - v->prev->t[i];
		}
	}
	rc = sec_header(&x, scr);
	if (rc == 0)
		rc = sec_totals(&x, scr);
	if (rc == 0)
		rc = sec_ports(&x, scr, width);
	if (rc == 0)
		rc = sec_drops(&x, scr, width);
	if (rc == 0)
		rc = sec_lcores(&x, scr, width);
	if (rc == 0)
		rc = sec_error(&x, scr, TOP_PIPELINE, TOP_SEC_LCORES,
			"pipeline_get");
	if (rc == 0)
		rc = sec_latency(&x, scr);
	if (rc == 0)
		rc = sec_acl(&x, scr, width);
	if (rc == 0)
		rc = sec_error(&x, scr, TOP_ACL, TOP_SEC_ACL, "acl_rule_list");
	if (rc == 0)
		rc = sec_lb(&x, scr, width);
	if (rc == 0)
		rc = sec_error(&x, scr, TOP_LB, TOP_SEC_LB, "lb_service_list");
	if (rc == 0)
		rc = sec_neigh(&x, scr, width);
	if (rc == 0)
		rc = sec_error(&x, scr, TOP_NEIGH, TOP_SEC_NEIGH, "neigh_list");
	return rc;
}
