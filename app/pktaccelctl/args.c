/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Operator words into a request: a console line split into words, and
 * the words after METHOD (one JSON document or key=value pairs) into the
 * call's parameters.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktaccelctl.h"

static bool
starts_json(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '{' || *s == '[';
}

/* The words joined by single blanks into one JSON document. */
static int
json_params(int argc, char *const argv[], json_t **params)
{
	json_error_t jerr;
	size_t total, off, l;
	char *doc;
	int i;

	for (i = 0, total = 1; i < argc; i++)
		total += strlen(argv[i]) + 1;
	doc = malloc(total);
	if (doc == NULL)
		return -ENOMEM;
	for (i = 0, off = 0; i < argc; i++) {
		l = strlen(argv[i]);
		memcpy(doc + off, argv[i], l);
		off += l;
		doc[off++] = i + 1 < argc ? ' ' : '\0';
	}
	*params = json_loads(doc, 0, &jerr);
	free(doc);
	if (*params == NULL) {
		fprintf(stderr, "%s: invalid JSON params: %s (column %d)\n",
			ctl_progname, jerr.text, jerr.column);
		return -EINVAL;
	}
	return 0;
}

/* key=value words into an object. */
static int
key_value_params(int argc, char *const argv[], json_t **params)
{
	json_t *obj, *v;
	char *eq;
	int i;

	obj = json_object();
	if (obj == NULL)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		eq = strchr(argv[i], '=');
		if (eq == NULL || eq == argv[i]) {
			fprintf(stderr, "%s: parameter '%s' is not key=value (or give one JSON object)\n",
				ctl_progname, argv[i]);
			goto out_err;
		}
		v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
		if (v == NULL)
			v = json_string(eq + 1);
		if (v == NULL) {
			fprintf(stderr, "%s: parameter '%s' is not valid UTF-8\n",
				ctl_progname, argv[i]);
			goto out_err;
		}
		if (json_object_setn_new(obj, argv[i], (size_t)(eq - argv[i]),
				v) != 0) {
			fprintf(stderr, "%s: bad parameter name in '%s'\n",
				ctl_progname, argv[i]);
			goto out_err;
		}
	}
	*params = obj;
	return 0;
out_err:
	json_decref(obj);
	return -EINVAL;
}

int
ctl_args_params(int argc, char *const argv[], json_t **params)
{
	*params = NULL;
	if (argc <= 0)
		return 0;
	if (starts_json(argv[0]))
		return json_params(argc, argv, params);
	return key_value_params(argc, argv, params);
}

void
ctl_args_free_words(char **argv, int argc)
{
	while (argc > 0)
		free(argv[--argc]);
	free(argv);
}

int
ctl_args_split_line(const char *line, char ***argv_out)
{
	size_t len = strlen(line), o;
	const char *p = line, *end;
	char **argv, *buf, *w;
	int argc = 0, rc = -ENOMEM;
	char q;

	*argv_out = NULL;
	argv = calloc(len / 2 + 2, sizeof(*argv));
	buf = malloc(len + 1);
	if (argv == NULL || buf == NULL)
		goto out_err;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		if (argc > 0 && (*p == '{' || *p == '[')) {
			end = line + len;
			while (end > p && isspace((unsigned char)end[-1]))
				end--;
			w = strndup(p, (size_t)(end - p));
			if (w == NULL)
				goto out_err;
			argv[argc++] = w;
			break;
		}
		o = 0;
		q = '\0';
		while (*p != '\0' && (q != '\0' || !isspace((unsigned char)*p))) {
			if (q == '\0' && (*p == '\'' || *p == '"')) {
				q = *p++;
				continue;
			}
			if (q != '\0' && *p == q) {
				q = '\0';
				p++;
				continue;
			}
			if (*p == '\\' && q != '\'' && p[1] != '\0') {
				buf[o++] = p[1];
				p += 2;
				continue;
			}
			buf[o++] = *p++;
		}
		if (q != '\0') {
			fprintf(stderr, "%s: unterminated %c quote\n", ctl_progname, q);
			rc = -EINVAL;
			goto out_err;
		}
		w = strndup(buf, o);
		if (w == NULL)
			goto out_err;
		argv[argc++] = w;
	}
	free(buf);
	*argv_out = argv;
	return argc;
out_err:
	if (argv != NULL)
		ctl_args_free_words(argv, argc);
	free(buf);
	return rc;
}
