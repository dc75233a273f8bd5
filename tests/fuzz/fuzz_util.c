// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "log.h"
#include "resctrl.h"

char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static int print_nothing(const char *fmt, va_list ap)
{
	return 0;
}

void fuzz_quiet(void)
{
	FILE *null = fopen("/dev/null", "we");

	/* the logger still formats every line: a bug in a message's arguments is found too */
	if (null)
		log_set_stream(null);
	log_set_level(LOG_DEBUG);
	resctrl_set_print(print_nothing);
}

static char tmpdir[PATH_MAX];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_tmpdir(void)
{
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * tmpfs unless TMPDIR says otherwise: the file-backed harnesses rewrite a file or two per input,
 * and on a disk (ext4 /tmp) the journal's fsync and the block layer took most of their time.
 */
static const char *tmp_base(void)
{
	const char *base = getenv("TMPDIR");

	if (base && *base)
		return base;
	return access("/dev/shm", W_OK | X_OK) ? "/tmp" : "/dev/shm";
}

const char *fuzz_tmpdir(void)
{
	if (tmpdir[0])
		return tmpdir;
	snprintf(tmpdir, sizeof(tmpdir), "%s/kqos-fuzz.XXXXXX", tmp_base());
	if (!mkdtemp(tmpdir))
		abort();
	atexit(rm_tmpdir);
	return tmpdir;
}

static int mkdir_parents(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return 0;
}

int fuzz_write_file(const char *rel, const void *data, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err;

	if (rel[0] == '/')
		snprintf(path, sizeof(path), "%s", rel);
	else
		snprintf(path, sizeof(path), "%s/%s", fuzz_tmpdir(), rel);
	/* the parents exist after the first write: no mkdir per component per input */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		err = mkdir_parents(path);
		if (err)
			return err;
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return -errno;
	n = size ? write(fd, data, size) : 0;
	err = n < 0 ? -errno : (size_t)n == size ? 0 : -EIO;
	close(fd);
	return err;
}

void fuzz_split(const uint8_t *data, size_t size, struct fuzz_part *parts, unsigned int nr)
{
	static const char sep[] = "\n--\n";
	const size_t sep_len = sizeof(sep) - 1;

	for (unsigned int i = 0; i < nr; i++) {
		const uint8_t *end = i + 1 < nr ? memmem(data, size, sep, sep_len) : NULL;

		parts[i].data = data;
		parts[i].size = end ? (size_t)(end - data) : size;
		if (!end) {
			data += size;
			size = 0;
			continue;
		}
		size -= parts[i].size + sep_len;
		data = end + sep_len;
	}
}
