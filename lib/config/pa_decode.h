/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_DECODE_H
#define PA_DECODE_H

/**
 * @file
 * The decoding kit: strict JSON to C structures, one field table per
 * object, in the spirit of SPDK's spdk_json_object_decoder[].
 *
 * Shared by the configuration loader (paths "$.acl.rules[3]") and the RPC
 * adapters (path "params"). Every failure writes "<path>: <reason>" to
 * @p err (control characters of the document replaced by '?', so the
 * message stays one printable line) and returns -EINVAL, or -ENOMEM with
 * "<path>: out of memory". Depends on jansson and lib/net only: no
 * subsystem. Reentrant; no global state.
 *
 * A field is declared once, in a table:
 *
 *     static const struct pa_decode_field backend_fields[] = {
 *         { .name = "addr", .type = PA_DECODE_IP, .required = true,
 *           PA_DECODE_AT(struct pa_config_backend, addr),
 *           .check = backend_addr_check },
 *         { .name = "weight", .type = PA_DECODE_INT, .min = 0,
 *           .max = 65535, PA_DECODE_AT(struct pa_config_backend, weight) },
 *         ...
 *     };
 *
 * pa_decode_object() refuses any key that is not in the table, then
 * decodes the fields in table order (so the error reported does not
 * depend on the key order of the document). An absent field leaves its
 * destination as the caller initialised it (the default).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "pa_net.h"

#define PA_DECODE_PATH_MAX	256	/**< a JSON path; longer ones end in "..." */
#define PA_DECODE_WHY_MAX	256	/**< a reason without its path */
#define PA_DECODE_NAME_MAX	32	/**< a name (pa_decode_check_name()), NUL included */

/** What a field holds and how it is stored at its offset. */
enum pa_decode_type {
	/** Integer in min..max, stored in an integer of .size bytes. */
	PA_DECODE_INT,
	/** Same, and a power of two. */
	PA_DECODE_POW2,
	/** true/false, stored in a bool. */
	PA_DECODE_BOOL,
	/** Any string, stored as a borrowed const char * (valid while the
	 * JSON document is). */
	PA_DECODE_STRING,
	/** One of .names, stored as its index in an integer of .size bytes. */
	PA_DECODE_ENUM,
	/** pa_decode_check_name(), copied into a char[PA_DECODE_NAME_MAX]. */
	PA_DECODE_NAME,
	/** struct pa_ip_addr */
	PA_DECODE_IP,
	/** struct pa_ip_prefix, "any" allowed, no host bits */
	PA_DECODE_PREFIX,
	/** uint8_t[6] */
	PA_DECODE_MAC,
	/** A port number in min..max, as an integer or a string of digits;
	 * stored in an integer of .size bytes. */
	PA_DECODE_PORT,
	/** struct pa_port_range, a string ("any", "N", "LO-HI") or an
	 * integer (a single port) */
	PA_DECODE_PORT_RANGE,
	/** int protocol, pa_decode_parse_proto() */
	PA_DECODE_PROTO,
	/** .decode does all the work. */
	PA_DECODE_CUSTOM,
};

/** Call .decode / .check also when the key is absent (with v NULL). */
#define PA_DECODE_ALWAYS	0x1

struct pa_decode_field;

/**
 * A custom decoder (.decode) or a check after a typed field was stored
 * (.check).
 * @param f     the field
 * @param v     its value, NULL only with PA_DECODE_ALWAYS and no key
 * @param path  the field's path ("<object path>.<name>")
 * @param out   the object being decoded (earlier fields already stored)
 * @param arg   pa_decode_object()'s @p arg
 * @return 0, or -EINVAL / -ENOMEM with @p err written.
 */
typedef int (*pa_decode_fn)(const struct pa_decode_field *f, const json_t *v,
		const char *path, void *out, void *arg,
		char *err, size_t err_len);

/**
 * A field's JSON Schema (.schema), for what its type does not say: the
 * whole schema of a CUSTOM field (its decoder's rules), or one that
 * replaces the schema of a typed field whose .check narrows it.
 * @return new reference, or NULL when out of memory.
 */
typedef json_t *(*pa_decode_schema_fn)(const struct pa_decode_field *f);

/** One key of an object. */
struct pa_decode_field {
	const char *name;		/**< the key */
	enum pa_decode_type type;
	bool required;			/**< absent: "<path>.<name>: required
					 * key missing" */
	size_t offset;			/**< where it goes (PA_DECODE_AT) */
	size_t size;			/**< size of the destination */
	long long min;			/**< INT, POW2, PORT bounds */
	long long max;
	const char *const *names;	/**< ENUM: NULL-terminated */
	pa_decode_fn decode;		/**< CUSTOM */
	pa_decode_fn check;		/**< typed fields: after storing */
	bool has_present;		/**< set a bool when the key is there */
	size_t present_offset;		/**< (PA_DECODE_PRESENT) */
	unsigned int flags;		/**< PA_DECODE_ALWAYS */
	/** JSON Schema of the field (pa_decode_schema_field()): CUSTOM
	 * fields' own (NULL: any value), or a typed field's narrower one
	 * (NULL: the one its type, bounds and names give). */
	pa_decode_schema_fn schema;
	const char *doc;		/**< one line for the schema's
					 * "description" (NULL: none) */
};

/** Destination of a field: member @p m of struct type @p t. */
#define PA_DECODE_AT(t, m) \
	.offset = offsetof(t, m), .size = sizeof(((t *)0)->m)

/** A bool member @p m of @p t that tells whether the key was given. */
#define PA_DECODE_PRESENT(t, m) \
	.has_present = true, .present_offset = offsetof(t, m)

/** Number of entries of a field table. */
#define PA_DECODE_N(table)	(sizeof(table) / sizeof((table)[0]))

/**
 * Decode object @p obj at @p path into @p out with @p fields: an object
 * is required (@p obj NULL: "<path>: expected an object, got nothing"),
 * unknown keys are refused, then each field in order.
 * @param arg  passed to the fields' decode and check functions
 * @return 0, -EINVAL or -ENOMEM (message in @p err).
 */
int pa_decode_object(const json_t *obj, const char *path,
		const struct pa_decode_field *fields, size_t n_fields,
		void *out, void *arg, char *err, size_t err_len);

/**
 * Store integer @p x as field @p f's destination (an integer of f->size
 * bytes at f->offset of @p out); for custom decoders of integer fields.
 */
void pa_decode_store_int(const struct pa_decode_field *f, void *out,
		long long x);

/* ---- JSON Schema of a table (rpc.discover, docs/openrpc.json) ---- */

/**
 * The JSON Schema of what field @p f accepts, derived from the same table
 * that decodes it: INT as an integer with "minimum" and "maximum", POW2 as
 * the "enum" of its powers of two, ENUM as a string "enum", IP, PREFIX,
 * MAC, NAME, PORT_RANGE and PROTO as strings with a "pattern" (PORT,
 * PORT_RANGE and PROTO also as integers), CUSTOM from its .schema hook.
 * A .schema hook of a typed field replaces the derived schema.
 * @return new reference, NULL when out of memory.
 */
json_t *pa_decode_schema_field(const struct pa_decode_field *f);

/**
 * The JSON Schema of an object decoded by pa_decode_object() with
 * @p fields: "type": "object", each field under "properties" (in table
 * order), "required", "additionalProperties": false.
 * @return new reference, NULL when out of memory.
 */
json_t *pa_decode_schema_object(const struct pa_decode_field *fields,
		size_t n_fields);

/**
 * {"type": "array", "items": @p items} (the reference to @p items is
 * stolen, as by json_object_set_new()); @p max_items 0: no bound.
 * @return new reference, NULL when out of memory (or @p items NULL).
 */
json_t *pa_decode_schema_array(json_t *items, size_t max_items);

/** .schema hooks for CUSTOM fields whose decoder takes what a typed
 * field would: an integer in f->min..f->max (_int), a name as
 * pa_decode_check_name() wants it (_name), any string (_string), an IP
 * address (_ip). */
json_t *pa_decode_schema_int(const struct pa_decode_field *f);
json_t *pa_decode_schema_name(const struct pa_decode_field *f);
json_t *pa_decode_schema_string(const struct pa_decode_field *f);
json_t *pa_decode_schema_ip(const struct pa_decode_field *f);

/**
 * A schema written as JSON text (a constant of the program).
 * @return new reference, NULL when out of memory or not JSON.
 */
json_t *pa_decode_schema_text(const char *text);

/* ---- messages and paths ---- */

/**
 * Write a reason (no path) to @p why, if @p why is not NULL and
 * @p why_len not 0. @return -EINVAL.
 */
int pa_decode_why(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * Write an error message ("<path>: <reason>") to @p err; control
 * characters are replaced by '?'. @return -EINVAL.
 */
int pa_decode_fail(char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** "<path>: out of memory". @return -ENOMEM. */
int pa_decode_nomem(char *err, size_t err_len, const char *path);

/** "an object", "a string", "an integer", ... for messages; "nothing"
 * for NULL (an absent value, e.g. an RPC's missing params). */
const char *pa_decode_type_name(const json_t *v);

/** "<path>.<key>" into @p buf; too long: ends in "...". @return @p buf. */
const char *pa_decode_key_path(char *buf, size_t len, const char *path,
		const char *key);

/** "<path>[<i>]" into @p buf; too long: ends in "...". @return @p buf. */
const char *pa_decode_index_path(char *buf, size_t len, const char *path,
		size_t i);

/* ---- containers ---- */

/** "<path>: expected an object, got ..." unless @p v is an object. */
int pa_decode_want_object(const json_t *v, const char *path,
		char *err, size_t err_len);

/** "<path>: expected an array, got ..." unless @p v is an array. */
int pa_decode_want_array(const json_t *v, const char *path,
		char *err, size_t err_len);

/**
 * Decode element @p i of an array (value @p v at @p path "<array>[i]")
 * into element @p i of @p elems; the elements before it are whole, for
 * checks against them. Either the element is whole on return 0, or
 * nothing of it is left allocated.
 * @return 0, -EINVAL or -ENOMEM (message in @p err).
 */
typedef int (*pa_decode_elem_fn)(const json_t *v, const char *path,
		void *elems, size_t i, void *arg, char *err, size_t err_len);

/**
 * Decode array @p arr at @p path into a new array of @p elem_size-byte
 * elements (calloc'd, zeroed, in *@p out; none for an empty array), each
 * with @p fn. *@p n is the number of elements decoded so far: after a
 * failure the caller frees exactly those, and *@p out.
 * @return 0, -EINVAL or -ENOMEM (message in @p err).
 */
int pa_decode_array(const json_t *arr, const char *path, size_t elem_size,
		pa_decode_elem_fn fn, void *arg, void **out, unsigned int *n,
		char *err, size_t err_len);

/** Index of @p s in NULL-terminated @p names, or -1. */
int pa_decode_enum_index(const char *const *names, const char *s);

/** "\"a\", \"b\", \"c\"" into @p buf (cut short if it does not fit). */
void pa_decode_enum_list(const char *const *names, char *buf, size_t len);

/* ---- primitives: one value at @p path ---- */

/** Integer in @p min..@p max. */
int pa_decode_int(const json_t *v, const char *path, long long min,
		long long max, long long *out, char *err, size_t err_len);

/** Integer in @p min..@p max and a power of two. */
int pa_decode_pow2(const json_t *v, const char *path, long long min,
		long long max, long long *out, char *err, size_t err_len);

int pa_decode_bool(const json_t *v, const char *path, bool *out,
		char *err, size_t err_len);

/** A string (borrowed from @p v). */
int pa_decode_string(const json_t *v, const char *path, const char **out,
		char *err, size_t err_len);

/** A string from @p names; @p out gets its index. */
int pa_decode_enum(const json_t *v, const char *path,
		const char *const *names, int *out, char *err, size_t err_len);

/** A name (pa_decode_check_name()) copied into @p out. */
int pa_decode_name(const json_t *v, const char *path,
		char out[PA_DECODE_NAME_MAX], char *err, size_t err_len);

int pa_decode_ip(const json_t *v, const char *path, struct pa_ip_addr *out,
		char *err, size_t err_len);

/** A rule prefix: pa_net_parse_prefix(). */
int pa_decode_prefix(const json_t *v, const char *path,
		struct pa_ip_prefix *out, char *err, size_t err_len);

int pa_decode_mac(const json_t *v, const char *path, uint8_t out[6],
		char *err, size_t err_len);

/** A port number in @p min..@p max: an integer or a string of digits. */
int pa_decode_port(const json_t *v, const char *path, unsigned long min,
		unsigned long max, unsigned long *out, char *err,
		size_t err_len);

/** A port range: "any", "N", "LO-HI" or an integer. */
int pa_decode_port_range(const json_t *v, const char *path,
		struct pa_port_range *out, char *err, size_t err_len);

/** A protocol: pa_decode_parse_proto(). */
int pa_decode_proto(const json_t *v, const char *path, int *out,
		char *err, size_t err_len);

/* ---- reason-only checks (no path: the caller adds it) ---- */

/**
 * A protocol as a JSON value: an integer 0..255 or a string that
 * pa_net_parse_proto() accepts. @return 0 or -EINVAL (reason in @p why).
 */
int pa_decode_parse_proto(const json_t *v, int *proto,
		char *why, size_t why_len);

/**
 * A port, service or profile name: 1..31 characters of [A-Za-z0-9_.-].
 * @return 0 or -EINVAL (reason in @p why).
 */
int pa_decode_check_name(const char *s, char *why, size_t why_len);

#endif /* PA_DECODE_H */
