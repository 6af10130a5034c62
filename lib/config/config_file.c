/* SPDX-License-Identifier: BSD-3-Clause */
/* Writing a configuration back to its file, atomically. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_err.h"

#define SAVE_MODE_NEW	0640

static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Split @p path into its directory (".": none) and the last component. */
static int
split_path(const char *path, char *dir, size_t dir_len, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (slash == NULL) {
		snprintf(dir, dir_len, ".");
		*base = path;
		return 0;
	}
	n = (size_t)(slash - path);
	if (n == 0)
		n = 1;			/* "/name": the root */
	if (n >= dir_len)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = '\0';
	*base = slash + 1;
	return 0;
}

static int
fsync_dir(const char *dir)
{
	int fd, rc = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = -errno;
	close(fd);
	return rc;
}

int
pa_config_save_file(const struct pa_config *cfg, const char *path,
		char *err, size_t err_len)
{
	char target[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX + 16];
	const char *base;
	struct stat st;
	mode_t mode = SAVE_MODE_NEW;
	bool exists = false, tmp_made = false;
	char *text = NULL;
	json_t *doc;
	int fd = -1, rc, n;

	if (path == NULL || path[0] == '\0') {
		pa_seterr(err, err_len, "no file name");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(target)) {
		pa_seterr(err, err_len, "%s: %s", "file name too long",
			strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	snprintf(target, sizeof(target), "%s", path);

	/* A symbolic link (a config kept elsewhere) is followed: its target
	 * is the file replaced, not the link. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (realpath(path, target) == NULL) {
			rc = -errno;
			pa_seterr(err, err_len, "%s: %s", path, strerror(-rc));
			return rc;
		}
	}
	if (stat(target, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			pa_seterr(err, err_len, "%s: not a regular file", path);
			return -EISDIR;
		}
		exists = true;
		mode = st.st_mode & 07777;
	} else if (errno != ENOENT) {
		rc = -errno;
		pa_seterr(err, err_len, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (target[strlen(target) - 1] == '/' ||
	    split_path(target, dir, sizeof(dir), &base) != 0 ||
	    base[0] == '\0') {
		pa_seterr(err, err_len, "%s: not a file name", path);
		return -EISDIR;
	}

	doc = pa_config_to_json(cfg);
	if (doc != NULL)
		text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (text == NULL) {
		pa_seterr(err, err_len, "out of memory");
		return -ENOMEM;
	}

	/* The temporary file sits beside the target: rename() is atomic only
	 * within one file system. */
	if (strcmp(dir, "/") == 0)
		n = snprintf(tmp, sizeof(tmp), "/.%s.XXXXXX", base);
	else
		n = snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, base);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		rc = -ENAMETOOLONG;
		pa_seterr(err, err_len, "%s: %s", path, strerror(-rc));
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		pa_seterr(err, err_len, "%s: cannot create a file in %s: %s",
			path, dir, strerror(-rc));
		goto out;
	}
	tmp_made = true;
	if (exists && fchown(fd, st.st_uid, st.st_gid) != 0) {
		/* Not the owner's file to give away: keep ours, say nothing. */
	}
	rc = 0;
	if (fchmod(fd, mode) != 0 ||
	    (rc = write_all(fd, text, strlen(text))) != 0 ||
	    (rc = write_all(fd, "\n", 1)) != 0 ||
	    fsync(fd) != 0) {
		if (rc == 0)
			rc = -errno;
		pa_seterr(err, err_len, "%s: cannot write %s: %s", path, tmp,
			strerror(-rc));
		goto out;
	}
	rc = close(fd);
	fd = -1;
	if (rc != 0) {
		rc = -errno;
		pa_seterr(err, err_len, "%s: cannot write %s: %s", path, tmp,
			strerror(-rc));
		goto out;
	}
	if (rename(tmp, target) != 0) {
		rc = -errno;
		pa_seterr(err, err_len, "%s: cannot rename %s over it: %s",
			path, tmp, strerror(-rc));
		goto out;
	}
	tmp_made = false;
	rc = fsync_dir(dir);
	if (rc != 0)
		pa_seterr(err, err_len, "%s: written, but cannot sync %s: %s",
			path, dir, strerror(-rc));
out:
	if (fd >= 0)
		close(fd);
	if (tmp_made)
		unlink(tmp);
	free(text);
	return rc;
}
