// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* name_to_handle_at, open_by_handle_at */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgid.h"

/* kernfs exports FILEID_KERNFS handles whose 8 bytes are the node id. */
#define FILEID_KERNFS 0xfe

struct cgid_entry {
	__u64 id;
	char *path;
};

struct cgid_index {
	int mount_fd;
	size_t mount_len;
	char *mount_path;
	struct cgid_entry *v; /* sorted by id */
	size_t n, cap;
};

struct kernfs_handle {
	struct file_handle fh;
	unsigned char id[8];
};

int cgid_of_path(const char *path, __u64 *ret_id)
{
	struct kernfs_handle h = { .fh.handle_bytes = sizeof(h.id) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	if (h.fh.handle_bytes != sizeof(h.id))
		return -EINVAL;
	memcpy(ret_id, h.fh.f_handle, sizeof(*ret_id));
	return 0;
}

int cgid_index__new(const char *mount_dir, struct cgid_index **ret)
{
	struct cgid_index *idx;
	char real[PATH_MAX];
	int err;

	if (!realpath(mount_dir, real))
		return -errno;
	idx = calloc(1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	idx->mount_fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (idx->mount_fd < 0) {
		err = -errno;
		goto err_free;
	}
	idx->mount_path = strdup(real);
	if (!idx->mount_path) {
		err = -ENOMEM;
		goto err_free;
	}
	idx->mount_len = strlen(real);
	*ret = idx;
	return 0;

err_free:
	cgid_index__free(idx);
	return err;
}

void cgid_index__free(struct cgid_index *idx)
{
	if (!idx)
		return;
	if (idx->mount_fd >= 0)
		close(idx->mount_fd);
	free(idx->mount_path);
	for (size_t i = 0; i < idx->n; i++)
		free(idx->v[i].path);
	free(idx->v);
	free(idx);
}

size_t cgid_index__size(const struct cgid_index *idx)
{
	return idx->n;
}

/* Index of the first entry with id >= @id. */
static size_t lower_bound(const struct cgid_index *idx, __u64 id)
{
	size_t lo = 0, hi = idx->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int resolve(const struct cgid_index *idx, __u64 id, char **ret_path)
{
	struct kernfs_handle h = { .fh.handle_bytes = sizeof(h.id),
				   .fh.handle_type = FILEID_KERNFS };
	char link[64], buf[PATH_MAX];
	ssize_t len;
	int fd, err = 0;

	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(idx->mount_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ESTALE ? -ESTALE : -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, buf, sizeof(buf) - 1);
	if (len < 0) {
		err = -errno;
		goto out;
	}
	buf[len] = '\0';
	/* An id from another hierarchy can still resolve, to a path outside this mount. */
	if (strncmp(buf, idx->mount_path, idx->mount_len) ||
	    (buf[idx->mount_len] && buf[idx->mount_len] != '/')) {
		err = -ENOENT;
		goto out;
	}
	*ret_path = strdup(buf[idx->mount_len] ? buf + idx->mount_len : "/");
	if (!*ret_path)
		err = -ENOMEM;
out:
	close(fd);
	return err;
}

static int insert(struct cgid_index *idx, size_t pos, __u64 id, char *path)
{
	if (idx->n == idx->cap) {
		size_t cap = idx->cap ? idx->cap * 2 : 64;
		struct cgid_entry *v = realloc(idx->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		idx->v = v;
		idx->cap = cap;
	}
	memmove(idx->v + pos + 1, idx->v + pos, (idx->n - pos) * sizeof(*idx->v));
	idx->v[pos] = (struct cgid_entry){ .id = id, .path = path };
	idx->n++;
	return 0;
}

/* The path of @id, which belongs at @pos: known, or resolved and inserted there. */
static int path_at(struct cgid_index *idx, size_t pos, __u64 id, const char **ret_path)
{
	char *path;
	int err;

	if (pos < idx->n && idx->v[pos].id == id) {
		*ret_path = idx->v[pos].path;
		return 0;
	}
	err = resolve(idx, id, &path);
	if (err)
		return err;
	err = insert(idx, pos, id, path);
	if (err) {
		free(path);
		return err;
	}
	*ret_path = path;
	return 0;
}

int cgid_index__path(struct cgid_index *idx, __u64 id, const char **ret_path)
{
	return path_at(idx, lower_bound(idx, id), id, ret_path);
}

int cgid_index__path_next(struct cgid_index *idx, __u64 id, size_t *cursor, const char **ret_path)
{
	size_t pos = *cursor < idx->n && (!*cursor || idx->v[*cursor - 1].id < id) ? *cursor : 0;

	if (!pos)
		pos = lower_bound(idx, id);
	while (pos < idx->n && idx->v[pos].id < id)
		pos++;
	*cursor = pos;
	return path_at(idx, pos, id, ret_path);
}

void cgid_index__forget(struct cgid_index *idx, __u64 id)
{
	size_t pos = lower_bound(idx, id);

	if (pos >= idx->n || idx->v[pos].id != id)
		return;
	free(idx->v[pos].path);
	memmove(idx->v + pos, idx->v + pos + 1, (idx->n - pos - 1) * sizeof(*idx->v));
	idx->n--;
}

int cgid_index__check(struct cgid_index *idx, __u64 id)
{
	char *path = NULL;
	int err = resolve(idx, id, &path);

	free(path);
	if (err == -ESTALE)
		cgid_index__forget(idx, id);
	return err == -ESTALE ? err : 0;
}
