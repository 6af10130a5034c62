/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Readable output of pktaccelctl: values as text, arrays of objects as
 * aligned tables, objects as indented "key: value" lines, a response's
 * error on stderr; or the raw result as JSON (-j).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktaccelctl.h"

/* Text of a value in a table cell or after "key: " (free it), or NULL. */
static char *
value_text(const json_t *v)
{
	char num[64];

	switch (json_typeof(v)) {
	case JSON_STRING:
		return strdup(json_string_value(v));
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			json_integer_value(v));
		return strdup(num);
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.10g", json_real_value(v));
		return strdup(num);
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	case JSON_NULL:
		return strdup("-");
	default:
		return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	}
}

/* Print a value's text ("?" when it cannot be had). */
static void
put_value(const json_t *v)
{
	char *t = value_text(v);

	fputs(t != NULL ? t : "?", stdout);
	free(t);
}

/* Display width: code points (wide characters count as one). */
static size_t
text_width(const char *s)
{
	size_t w = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void
print_padded(const char *s, size_t width, bool right, bool last)
{
	size_t w = text_width(s), pad = width > w ? width - w : 0;

	if (right)
		printf("%*s%s", (int)pad, "", s);
	else if (last)
		fputs(s, stdout);
	else
		printf("%s%*s", s, (int)pad, "");
}

bool
ctl_fmt_is_table(const json_t *arr)
{
	size_t i;
	json_t *v;

	if (json_array_size(arr) == 0)
		return false;
	json_array_foreach(arr, i, v)
		if (!json_is_object(v))
			return false;
	return true;
}

static bool
all_scalars(const json_t *arr)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_is_object(v) || json_is_array(v))
			return false;
	return true;
}

void
ctl_fmt_table(const json_t *arr, int indent)
{
	size_t ncols = 0, nrows = json_array_size(arr), i, c, last;
	const char **cols = NULL;
	size_t *width = NULL;
	bool *numeric = NULL;
	char **cell = NULL;
	json_t *seen, *row, *v;
	const char *key;

	/* columns in first-seen key order */
	seen = json_object();
	if (seen == NULL)
		return;
	json_array_foreach(arr, i, row) {
		json_object_foreach(row, key, v) {
			if (json_object_get(seen, key) == NULL) {
				json_object_set_new(seen, key, json_integer(
					(json_int_t)json_object_size(seen)));
				ncols++;
			}
		}
	}
	cols = calloc(ncols + 1, sizeof(*cols));
	width = calloc(ncols + 1, sizeof(*width));
	numeric = calloc(ncols + 1, sizeof(*numeric));
	cell = calloc(ncols * nrows + 1, sizeof(*cell));
	if (cols == NULL || width == NULL || numeric == NULL || cell == NULL)
		goto out_free;
	json_object_foreach(seen, key, v) {
		c = (size_t)json_integer_value(v);
		cols[c] = key;
		width[c] = text_width(key);
		numeric[c] = true;
	}
	json_array_foreach(arr, i, row) {
		for (c = 0; c < ncols; c++) {
			v = json_object_get(row, cols[c]);
			cell[i * ncols + c] = v != NULL ? value_text(v) :
				strdup("");
			if (cell[i * ncols + c] == NULL)
				goto out_free;
			if (v != NULL && !json_is_number(v))
				numeric[c] = false;
			if (text_width(cell[i * ncols + c]) > width[c])
				width[c] = text_width(cell[i * ncols + c]);
		}
	}

	printf("%*s", indent, "");
	for (c = 0; c < ncols; c++) {
		print_padded(cols[c], width[c], numeric[c], c + 1 == ncols);
		if (c + 1 < ncols)
			fputs("  ", stdout);
	}
	putchar('\n');
	for (i = 0; i < nrows; i++) {
		/* no trailing blanks: stop after the last non-empty cell */
		last = 0;
		for (c = 0; c < ncols; c++)
			if (cell[i * ncols + c][0] != '\0')
				last = c;
		printf("%*s", indent, "");
		for (c = 0; c <= last; c++) {
			v = json_object_get(json_array_get(arr, i), cols[c]);
			print_padded(cell[i * ncols + c], width[c],
				v != NULL && json_is_number(v), c == last);
			if (c < last)
				fputs("  ", stdout);
		}
		putchar('\n');
	}
out_free:
	if (cell != NULL)
		for (i = 0; i < ncols * nrows; i++)
			free(cell[i]);
	free(cell);
	free(numeric);
	free(width);
	free(cols);
	json_decref(seen);
}

static void print_object(const json_t *obj, int indent);

/* "key: value" for one member; nested objects and tables indented. */
static void
print_member(const char *key, const json_t *v, int indent)
{
	size_t i;
	json_t *e;

	if (json_is_object(v) && json_object_size(v) > 0) {
		printf("%*s%s:\n", indent, "", key);
		print_object(v, indent + 2);
		return;
	}
	if (ctl_fmt_is_table(v)) {
		printf("%*s%s:\n", indent, "", key);
		ctl_fmt_table(v, indent + 2);
		return;
	}
	printf("%*s%s: ", indent, "", key);
	if (json_is_array(v) && json_array_size(v) > 0 && all_scalars(v)) {
		json_array_foreach(v, i, e) {
			if (i > 0)
				fputs(", ", stdout);
			put_value(e);
		}
	} else {
		put_value(v);
	}
	putchar('\n');
}

static void
print_object(const json_t *obj, int indent)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v)
		print_member(key, v, indent);
}

void
ctl_fmt_result(const char *method, const json_t *r, bool json_out)
{
	json_t *shown = NULL;
	size_t i;
	json_t *e;
	char *t;

	if (json_out) {
		t = json_dumps(r, JSON_INDENT(2) | JSON_ENCODE_ANY);
		if (t != NULL)
			printf("%s\n", t);
		free(t);
		return;
	}
	if (ctl_view_print(method, r))
		return;
	shown = ctl_view_format(method, r);
	if (shown != NULL)
		r = shown;
	if (json_is_true(r)) {
		printf("ok\n");
	} else if (json_is_object(r)) {
		if (json_object_size(r) == 0)
			printf("{}\n");
		print_object(r, 0);
	} else if (json_is_array(r)) {
		if (json_array_size(r) == 0)
			printf("(empty)\n");
		else if (ctl_fmt_is_table(r))
			ctl_fmt_table(r, 0);
		else
			json_array_foreach(r, i, e) {
				put_value(e);
				putchar('\n');
			}
	} else if (json_is_null(r)) {
		printf("null\n");
	} else {
		put_value(r);
		putchar('\n');
	}
	json_decref(shown);
}

int
ctl_fmt_response(const char *method, const json_t *resp, bool json_out)
{
	const json_t *err = json_object_get(resp, "error"), *data;
	const char *msg;
	char *t;

	if (err == NULL) {
		ctl_fmt_result(method, json_object_get(resp, "result"),
			json_out);
		fflush(stdout);
		return EXIT_OK;
	}
	msg = json_string_value(json_object_get(err, "message"));
	fflush(stdout);
	fprintf(stderr, "error %" JSON_INTEGER_FORMAT ": %s\n",
		json_integer_value(json_object_get(err, "code")),
		msg != NULL ? msg : "(no message)");
	data = json_object_get(err, "data");
	if (data != NULL) {
		t = json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY);
		if (t != NULL)
			fprintf(stderr, "  data: %s\n", t);
		free(t);
	}
	return EXIT_RPC_ERROR;
}
