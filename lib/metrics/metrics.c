/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prometheus text exposition format 0.0.4 renderer:
 * https://prometheus.io/docs/instrumenting/exposition_formats/
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "pa_metrics.h"

RTE_LOG_REGISTER(pa_metrics_logtype, pa.metrics, INFO);

struct sample {
	char *labels;		/* rendered "{a=\"x\",b=\"y\"}", or "" */
	size_t seq;		/* order of addition: the first of equals wins */
	char value[32];
};

struct family {
	char *name;
	char *help;
	enum pa_metrics_type type;
	struct sample *s;
	size_t n, cap;
};

struct pa_metrics {
	struct family *f;
	size_t n, cap;
	size_t last;		/* family of the previous sample (cache) */
	size_t samples;
	size_t duplicates;
};

/* A growable string. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void
sb_reserve(struct sbuf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->failed || b->len + more + 1 <= b->cap)
		return;
	cap = b->cap != 0 ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (p == NULL) {
		b->failed = true;
		return;
	}
	if (b->len == 0)
		p[0] = '\0';
	b->p = p;
	b->cap = cap;
}

static void
sb_putn(struct sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	if (b->failed)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sb_puts(struct sbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void
sb_putc(struct sbuf *b, char c)
{
	sb_putn(b, &c, 1);
}

/* Length of the valid UTF-8 sequence at @p s (of @p n bytes), or 0. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong, surrogate, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/*
 * Escape @p s: backslash and newline always, the double quote too in a
 * label value (@p quote); invalid UTF-8 bytes become '?'.
 */
static void
sb_escape(struct sbuf *b, const char *s, bool quote)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, l;

	while (i < n) {
		if (u[i] == '\\') {
			sb_puts(b, "\\\\");
			i++;
		} else if (u[i] == '\n') {
			sb_puts(b, "\\n");
			i++;
		} else if (u[i] == '"' && quote) {
			sb_puts(b, "\\\"");
			i++;
		} else {
			l = utf8_len(u + i, n - i);
			if (l == 0) {
				sb_putc(b, '?');
				i++;
			} else {
				sb_putn(b, s + i, l);
				i += l;
			}
		}
	}
}

static bool
name_char(char c, bool first, bool colon)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	if (c == ':' && colon)
		return true;
	return !first && c >= '0' && c <= '9';
}

bool
pa_metrics_valid_name(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0')
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (!name_char(s[i], i == 0, true))
			return false;
	return true;
}

bool
pa_metrics_valid_label(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || strncmp(s, "__", 2) == 0)
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (!name_char(s[i], i == 0, false))
			return false;
	return true;
}

struct pa_metrics *
pa_metrics_new(void)
{
	struct pa_metrics *m = calloc(1, sizeof(*m));

	if (m == NULL)
		rte_errno = ENOMEM;
	return m;
}

void
pa_metrics_free(struct pa_metrics *m)
{
	size_t i, j;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		for (j = 0; j < m->f[i].n; j++)
			free(m->f[i].s[j].labels);
		free(m->f[i].s);
		free(m->f[i].name);
		free(m->f[i].help);
	}
	free(m->f);
	free(m);
}

size_t
pa_metrics_count(const struct pa_metrics *m)
{
	return m->samples;
}

size_t
pa_metrics_duplicates(const struct pa_metrics *m)
{
	return m->duplicates;
}

static int
family_get(struct pa_metrics *m, enum pa_metrics_type type, const char *name,
		const char *help, struct family **out)
{
	struct family *f;
	size_t i;

	if (m->last < m->n && strcmp(m->f[m->last].name, name) == 0) {
		i = m->last;
	} else {
		for (i = 0; i < m->n; i++)
			if (strcmp(m->f[i].name, name) == 0)
				break;
	}
	if (i < m->n) {
		if (m->f[i].type != type)
			return -EINVAL;
		m->last = i;
		*out = &m->f[i];
		return 0;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap != 0 ? m->cap * 2 : 64;

		f = realloc(m->f, cap * sizeof(*f));
		if (f == NULL)
			return -ENOMEM;
		m->f = f;
		m->cap = cap;
	}
	f = &m->f[m->n];
	memset(f, 0, sizeof(*f));
	f->type = type;
	f->name = strdup(name);
	f->help = strdup(help != NULL ? help : "");
	if (f->name == NULL || f->help == NULL) {
		free(f->name);
		free(f->help);
		return -ENOMEM;
	}
	m->last = m->n++;
	*out = f;
	return 0;
}

/* Sort label indexes by name (insertion sort: at most 8) and render. */
static int
render_labels(unsigned int n, const char *const *names,
		const char *const *values, char **out)
{
	unsigned int order[PA_METRICS_MAX_LABELS], i, j, t;
	struct sbuf b = { 0 };

	for (i = 0; i < n; i++) {
		if (!pa_metrics_valid_label(names[i]) || values[i] == NULL)
			return -EINVAL;
		order[i] = i;
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(names[order[j - 1]],
				names[order[j]]) > 0; j--) {
			t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (i = 1; i < n; i++)
		if (strcmp(names[order[i - 1]], names[order[i]]) == 0)
			return -EINVAL;
	if (n == 0) {
		*out = strdup("");
		return *out != NULL ? 0 : -ENOMEM;
	}
	sb_putc(&b, '{');
	for (i = 0; i < n; i++) {
		if (i > 0)
			sb_putc(&b, ',');
		sb_puts(&b, names[order[i]]);
		sb_puts(&b, "=\"");
		sb_escape(&b, values[order[i]], true);
		sb_putc(&b, '"');
	}
	sb_putc(&b, '}');
	if (b.failed) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	return 0;
}

static int
add_sample(struct pa_metrics *m, enum pa_metrics_type type, const char *name,
		const char *help, const char *value, unsigned int n_labels,
		const char *const *names, const char *const *values)
{
	struct family *f;
	struct sample *s;
	char *labels;
	int rc;

	if (m == NULL || !pa_metrics_valid_name(name) ||
	    (type != PA_METRICS_COUNTER && type != PA_METRICS_GAUGE) ||
	    n_labels > PA_METRICS_MAX_LABELS)
		return -EINVAL;
	rc = render_labels(n_labels, names, values, &labels);
	if (rc != 0)
		return rc;
	rc = family_get(m, type, name, help, &f);
	if (rc != 0) {
		free(labels);
		return rc;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap != 0 ? f->cap * 2 : 8;

		s = realloc(f->s, cap * sizeof(*s));
		if (s == NULL) {
			free(labels);
			return -ENOMEM;
		}
		f->s = s;
		f->cap = cap;
	}
	s = &f->s[f->n++];
	s->labels = labels;
	s->seq = m->samples++;
	snprintf(s->value, sizeof(s->value), "%s", value);
	return 0;
}

static int
add_va(struct pa_metrics *m, enum pa_metrics_type type, const char *name,
		const char *help, const char *value, va_list ap)
{
	const char *names[PA_METRICS_MAX_LABELS], *values[PA_METRICS_MAX_LABELS];
	const char *k;
	unsigned int n = 0;

	while ((k = va_arg(ap, const char *)) != NULL) {
		if (n == PA_METRICS_MAX_LABELS)
			return -EINVAL;
		names[n] = k;
		values[n] = va_arg(ap, const char *);
		n++;
	}
	return add_sample(m, type, name, help, value, n, names, values);
}

static void
format_f64(double v, char *buf, size_t len)
{
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
	} else if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
	} else {
		/* the shortest of %.15g and %.17g that reads back exactly */
		snprintf(buf, len, "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, len, "%.17g", v);
	}
}

int
pa_metrics_add_u64(struct pa_metrics *m, enum pa_metrics_type type,
		const char *name, const char *help, uint64_t value, ...)
{
	char buf[32];
	va_list ap;
	int rc;

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	va_start(ap, value);
	rc = add_va(m, type, name, help, buf, ap);
	va_end(ap);
	return rc;
}

int
pa_metrics_add_f64(struct pa_metrics *m, enum pa_metrics_type type,
		const char *name, const char *help, double value, ...)
{
	char buf[32];
	va_list ap;
	int rc;

	format_f64(value, buf, sizeof(buf));
	va_start(ap, value);
	rc = add_va(m, type, name, help, buf, ap);
	va_end(ap);
	return rc;
}

int
pa_metrics_add_u64_v(struct pa_metrics *m, enum pa_metrics_type type,
		const char *name, const char *help, uint64_t value,
		unsigned int n_labels, const char *const *label_names,
		const char *const *label_values)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return add_sample(m, type, name, help, buf, n_labels, label_names,
		label_values);
}

static int
cmp_family(const void *a, const void *b)
{
	return strcmp(((const struct family *)a)->name,
		((const struct family *)b)->name);
}

static int
cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;
	int c = strcmp(x->labels, y->labels);

	if (c != 0)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int
pa_metrics_render(struct pa_metrics *m, char **text, size_t *len)
{
	struct sbuf b = { 0 };
	size_t i, j;

	m->duplicates = 0;
	if (m->n > 1)
		qsort(m->f, m->n, sizeof(*m->f), cmp_family);
	m->last = m->n;
	sb_reserve(&b, m->samples * 48 + m->n * 128);
	for (i = 0; i < m->n; i++) {
		struct family *f = &m->f[i];

		if (f->n > 1)
			qsort(f->s, f->n, sizeof(*f->s), cmp_sample);
		sb_puts(&b, "# HELP ");
		sb_puts(&b, f->name);
		if (f->help[0] != '\0') {
			sb_putc(&b, ' ');
			sb_escape(&b, f->help, false);
		}
		sb_puts(&b, "\n# TYPE ");
		sb_puts(&b, f->name);
		sb_puts(&b, f->type == PA_METRICS_COUNTER ? " counter\n" :
			" gauge\n");
		for (j = 0; j < f->n; j++) {
			if (j > 0 && strcmp(f->s[j].labels,
					f->s[j - 1].labels) == 0) {
				m->duplicates++;
				continue;
			}
			sb_puts(&b, f->name);
			sb_puts(&b, f->s[j].labels);
			sb_putc(&b, ' ');
			sb_puts(&b, f->s[j].value);
			sb_putc(&b, '\n');
		}
	}
	sb_reserve(&b, 0);	/* an empty set renders as "" */
	if (b.failed) {
		free(b.p);
		return -ENOMEM;
	}
	*text = b.p;
	*len = b.len;
	return 0;
}
