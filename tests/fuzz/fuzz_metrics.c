/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_metrics: what lib/metrics/ parses or escapes itself.
 *
 * - The input as a string through pa_metrics_parse_listen(): what parses
 *   must format ("A.B.C.D:P" / "[V6]:P") and parse back to the same
 *   address.
 * - The input split at '\x01' into a metric name, a help text and label
 *   name/value pairs, added to a set (invalid names refused, never
 *   crashing), next to samples whose help and label values are the raw
 *   input; the rendered text must then be valid exposition format: every
 *   line "# HELP name text", "# TYPE name counter|gauge" or
 *   "name{label="value",...} number", escapes only \\ \" \n, valid UTF-8,
 *   each family's HELP/TYPE once, series unique. Anything else aborts.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz_common.h"
#include "pa_metrics.h"

#define TARGET	"fuzz_metrics"
#define MAX_FIELDS	(2 + 2 * PA_METRICS_MAX_LABELS + 2)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
listen_roundtrip(const char *s)
{
	struct sockaddr_in6 a, b;
	char host[INET6_ADDRSTRLEN], again[80];
	unsigned int la, lb;

	if (pa_metrics_parse_listen(s, &a, &la) != 0)
		return;
	if (a.sin6_family == AF_INET6) {
		inet_ntop(AF_INET6, &a.sin6_addr, host, sizeof(host));
		snprintf(again, sizeof(again), "[%s]:%u", host,
			ntohs(a.sin6_port));
	} else {
		const struct sockaddr_in *a4 = (const void *)&a;

		inet_ntop(AF_INET, &a4->sin_addr, host, sizeof(host));
		snprintf(again, sizeof(again), "%s:%u", host,
			ntohs(a4->sin_port));
	}
	if (pa_metrics_parse_listen(again, &b, &lb) != 0 || la != lb ||
	    memcmp(&a, &b, la) != 0)
		fuzz_fail(TARGET, "listen '%s' formats as '%s', which parses differently",
			s, again);
}

/* Length of a valid UTF-8 sequence at p (n bytes left), 0 if invalid. */
static size_t
utf8_ok(const unsigned char *p, size_t n)
{
	size_t len, i;

	if (p[0] < 0x80)
		return 1;
	len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
	if (len == 0 || len > n)
		return 0;
	for (i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* Skip an escaped text up to @p stop (or the end of line); returns the
 * position of the stop character, or NULL on a bad escape / raw quote. */
static const char *
skip_escaped(const char *p, const char *end, char stop, bool label)
{
	while (p < end && *p != stop) {
		if (*p == '\\') {
			if (p + 1 >= end || (p[1] != '\\' && p[1] != 'n' &&
			    !(label && p[1] == '"')))
				return NULL;
			p += 2;
			continue;
		}
		p++;
	}
	return p;
}

static const char *
skip_name(const char *p, const char *end, bool colon)
{
	const char *s = p;

	while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	       *p == '_' || (colon && *p == ':') ||
	       (p > s && *p >= '0' && *p <= '9')))
		p++;
	return p > s ? p : NULL;
}

static void
check_line(const char *l, const char *end, const char *text)
{
	const char *p;
	char *num_end;

	if (strncmp(l, "# HELP ", 7) == 0) {
		p = skip_name(l + 7, end, true);
		if (p == NULL || (p < end && (*p != ' ' ||
		    skip_escaped(p + 1, end, '\n', false) == NULL)))
			fuzz_fail(TARGET, "bad HELP line in:\n%s", text);
		return;
	}
	if (strncmp(l, "# TYPE ", 7) == 0) {
		p = skip_name(l + 7, end, true);
		if (p == NULL || !((end - p == 8 && memcmp(p, " counter", 8) == 0) ||
		    (end - p == 6 && memcmp(p, " gauge", 6) == 0)))
			fuzz_fail(TARGET, "bad TYPE line in:\n%s", text);
		return;
	}
	p = skip_name(l, end, true);
	if (p == NULL)
		fuzz_fail(TARGET, "bad sample name in:\n%s", text);
	if (p < end && *p == '{') {
		p++;
		while (true) {
			p = skip_name(p, end, false);
			if (p == NULL || p + 1 >= end || p[0] != '=' || p[1] != '"')
				fuzz_fail(TARGET, "bad label in:\n%s", text);
			p = skip_escaped(p + 2, end, '"', true);
			if (p == NULL || p >= end)
				fuzz_fail(TARGET, "bad label value in:\n%s", text);
			p++;
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p >= end || *p != '}')
				fuzz_fail(TARGET, "bad label set in:\n%s", text);
			p++;
			break;
		}
	}
	if (p >= end || *p != ' ')
		fuzz_fail(TARGET, "no value in:\n%s", text);
	p++;
	if (strncmp(p, "NaN", 3) != 0 && strncmp(p, "+Inf", 4) != 0 &&
	    strncmp(p, "-Inf", 4) != 0) {
		strtod(p, &num_end);
		if (num_end != end)
			fuzz_fail(TARGET, "bad value in:\n%s", text);
	}
}

static void
check_text(const char *text, size_t len)
{
	const unsigned char *u = (const unsigned char *)text;
	const char *l = text, *nl;
	size_t i = 0, n;

	while (i < len) {
		n = utf8_ok(u + i, len - i);
		if (n == 0)
			fuzz_fail(TARGET, "invalid UTF-8 at %zu", i);
		i += n;
	}
	if (len > 0 && text[len - 1] != '\n')
		fuzz_fail(TARGET, "text does not end with a newline");
	while (l < text + len) {
		nl = memchr(l, '\n', (size_t)(text + len - l));
		check_line(l, nl, text);
		l = nl + 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *f[MAX_FIELDS], *names[PA_METRICS_MAX_LABELS + 1];
	const char *values[PA_METRICS_MAX_LABELS + 1];
	struct pa_metrics *m;
	unsigned int n = 0, nl, i;
	char *s, *p, *text;
	size_t len;
	int rc;

	s = fuzz_strndup(data, size);
	if (s == NULL)
		return 0;
	listen_roundtrip(s);

	m = pa_metrics_new();
	if (m == NULL)
		goto out;
	/* the raw input as help and label value of valid families */
	pa_metrics_add_u64(m, PA_METRICS_COUNTER, "pktaccel_fuzz_total", s, 1,
		"v", s, NULL);
	pa_metrics_add_u64(m, PA_METRICS_COUNTER, "pktaccel_fuzz_total", s, 2,
		"v", s, NULL);			/* a duplicate */
	pa_metrics_add_f64(m, PA_METRICS_GAUGE, "pktaccel_fuzz_level", s,
		size > 0 ? (double)data[0] / 7.0 : 0.0, "a", s, "b", "x", NULL);

	/* the input as fields: name, help, label pairs */
	for (p = s; n < MAX_FIELDS; n++) {
		f[n] = p;
		p = strchr(p, '\x01');
		if (p == NULL) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	if (n >= 2) {
		nl = (n - 2) / 2;
		for (i = 0; i < nl; i++) {
			names[i] = f[2 + 2 * i];
			values[i] = f[3 + 2 * i];
		}
		rc = pa_metrics_add_u64_v(m, size % 2 ? PA_METRICS_GAUGE :
			PA_METRICS_COUNTER, f[0], f[1], size, nl, names, values);
		if (rc == 0 && (!pa_metrics_valid_name(f[0]) ||
		    nl > PA_METRICS_MAX_LABELS))
			fuzz_fail(TARGET, "accepted metric name '%s'", f[0]);
		for (i = 0; rc == 0 && i < nl; i++)
			if (!pa_metrics_valid_label(names[i]))
				fuzz_fail(TARGET, "accepted label name '%s'",
					names[i]);
	}
	if (pa_metrics_render(m, &text, &len) == 0) {
		check_text(text, len);
		if (pa_metrics_duplicates(m) < 1)
			fuzz_fail(TARGET, "duplicate series rendered");
		free(text);
	}
	pa_metrics_free(m);
out:
	free(s);
	return 0;
}
