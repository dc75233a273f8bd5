// SPDX-License-Identifier: GPL-2.0
/*
 * kqos-fake-resctrl-fs DIR|PROFILE MOUNTPOINT [-f]: the fake resctrl backend (tests/lib/
 * resctrl_fake.c) served as a filesystem, so a process that only uses syscalls, kqosd
 * unmodified, meets the kernel's rules. DIR is any resctrl tree: its info/, root schemata and
 * mon_data are copied and the rules follow what its info/ says (resctrl_fake__new_dir); a
 * profile name of the fake (skx2s, cdp, ...) is served as the fake builds it. Then mkdir of a group creates schemata, tasks, cpus, mode,
 * mon_data and mon_groups; schemata writes are validated and a failure sets
 * info/last_cmd_status; a tid written to tasks leaves its old group; CLOSID and RMID limits
 * apply. Reads come from the fake's tree, which it rewrites after every mutation.
 *
 * Single-threaded (-s): the fake is not thread-safe. Attribute and entry caches are off and
 * every open is direct I/O, since a file's size changes behind the kernel's back.
 */
#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <fuse.h>

#include "resctrl_fake.h"

static struct resctrl_fake *fake;
static int root_fd = -1;

/* FUSE paths start with '/': the fake's are relative to its root, "." for the root itself. */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->direct_io = 1;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	return fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct dirent *de;
	DIR *d;
	int fd;

	(void)off;
	(void)fi;
	(void)flags;
	fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d)))
		fill(buf, de->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct stat st;

	if (fstatat(root_fd, rel(path), &st, 0))
		return -errno;
	fi->direct_io = 1;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n;
	int fd;

	(void)fi;
	fd = openat(root_fd, rel(path), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, size, off);
	if (n < 0)
		n = -errno;
	close(fd);
	return (int)n;
}

/* kernfs takes each write() as a whole command, whatever the offset: so does the fake. */
static int fs_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	int err;

	(void)off;
	(void)fi;
	err = resctrl_fake_backend.write(fake, root_fd, rel(path), buf, size);
	return err ? err : (int)size;
}

/* O_TRUNC from a shell's '>' reaches here; kernfs ignores it. */
static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)path;
	(void)size;
	(void)fi;
	return 0;
}

static int fs_mkdir(const char *path, mode_t mode)
{
	(void)mode;
	return resctrl_fake_backend.mkdir(fake, root_fd, rel(path));
}

static int fs_rmdir(const char *path)
{
	return resctrl_fake_backend.rmdir(fake, root_fd, rel(path));
}

/* resctrl has no regular files but its own: nothing is created, removed or renamed. */
static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)path;
	(void)mode;
	(void)fi;
	return -EACCES;
}

static int fs_unlink(const char *path)
{
	(void)path;
	return -EPERM;
}

static const struct fuse_operations ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.truncate = fs_truncate,
	.mkdir = fs_mkdir,
	.rmdir = fs_rmdir,
	.create = fs_create,
	.unlink = fs_unlink,
};

/* A directory is served as a copy; anything else must name a profile. */
static int fake_open(const char *what)
{
	struct stat st;

	if (!stat(what, &st) && S_ISDIR(st.st_mode))
		return resctrl_fake__new_dir(what, &fake);
	return resctrl_fake__new(what, &fake);
}

int main(int argc, char **argv)
{
	char *fargv[8];
	int fargc = 0, err;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DIR|PROFILE MOUNTPOINT [-f]\n", argv[0]);
		return EXIT_FAILURE;
	}
	err = fake_open(argv[1]);
	if (err) {
		fprintf(stderr, "fake-resctrl-fs: %s: %s\n", argv[1], strerror(-err));
		return EXIT_FAILURE;
	}
	root_fd = open(resctrl_fake__root(fake), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		perror("fake-resctrl-fs: open");
		resctrl_fake__free(fake);
		return EXIT_FAILURE;
	}
	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-s";
	fargv[fargc++] = "-o";
	fargv[fargc++] = "default_permissions,fsname=resctrl-fake";
	if (argc > 3 && !strcmp(argv[3], "-f"))
		fargv[fargc++] = "-f";
	fargv[fargc++] = argv[2];
	fargv[fargc] = NULL;
	err = fuse_main(fargc, fargv, &ops, NULL);
	close(root_fd);
	resctrl_fake__free(fake);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}
