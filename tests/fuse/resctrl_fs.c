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
 * --faults FILE injects failures, the way a busy or full kernel answers: FILE lives outside
 * the mount, is re-read whenever it changes (inode, size or mtime), and holds lines
 *	OP ERRNO COUNT [STATUS...]
 * OP is mkdir, rmdir, schemata or tasks; ERRNO is EBUSY, ENOSPC, EINVAL, EIO, ENOENT, EPERM or
 * ESRCH; COUNT is how many of the next such operations fail (-1: until FILE changes); STATUS is
 * left in info/last_cmd_status (else it is "ok"). An empty or absent FILE injects nothing. The
 * injected failure happens instead of the operation, so the tree is left as it was. After each
 * one FILE.hits is rewritten: one line "OP HITS LEFT" per rule, so a test sees it was hit.
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

enum fault_op { FAULT_MKDIR, FAULT_RMDIR, FAULT_SCHEMATA, FAULT_TASKS, FAULT_NR };

static const char *const fault_ops[FAULT_NR] = { "mkdir", "rmdir", "schemata", "tasks" };

static const struct {
	const char *name;
	int err;
} fault_errs[] = {
	{ "EBUSY", EBUSY },   { "ENOSPC", ENOSPC }, { "EINVAL", EINVAL }, { "EIO", EIO },
	{ "ENOENT", ENOENT }, { "EPERM", EPERM },   { "ESRCH", ESRCH },
};

struct fault {
	int err; /* positive errno; 0 = none */
	long left; /* -1: until the file changes */
	unsigned long hits;
	char status[256];
};

static struct {
	const char *path; /* NULL: no --faults */
	struct stat seen;
	struct fault f[FAULT_NR];
} faults;

static void fault_parse_line(char *line)
{
	char op[16], err[16];
	struct fault *f = NULL;
	int n = 0, i;
	long count;

	if (sscanf(line, "%15s %15s %ld %n", op, err, &count, &n) < 3)
		return;
	for (i = 0; i < FAULT_NR; i++)
		if (!strcmp(op, fault_ops[i]))
			f = &faults.f[i];
	if (!f)
		return;
	memset(f, 0, sizeof(*f));
	for (i = 0; i < (int)(sizeof(fault_errs) / sizeof(fault_errs[0])); i++)
		if (!strcmp(err, fault_errs[i].name))
			f->err = fault_errs[i].err;
	f->left = count;
	line[strcspn(line, "\n")] = '\0';
	snprintf(f->status, sizeof(f->status), "%s", n ? line + n : "");
}

static void fault_write_hits(void)
{
	char path[4096];
	FILE *fp;
	int i;

	snprintf(path, sizeof(path), "%s.hits", faults.path);
	fp = fopen(path, "we");
	if (!fp)
		return;
	for (i = 0; i < FAULT_NR; i++)
		fprintf(fp, "%s %lu %ld\n", fault_ops[i], faults.f[i].hits, faults.f[i].left);
	fclose(fp);
}

/* Re-read the rules only when the file changed: counts run down between changes. */
static void fault_reload(void)
{
	char line[512];
	struct stat st;
	FILE *fp;

	if (!faults.path)
		return;
	if (stat(faults.path, &st))
		memset(&st, 0, sizeof(st));
	if (st.st_ino == faults.seen.st_ino && st.st_size == faults.seen.st_size &&
	    st.st_mtim.tv_sec == faults.seen.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == faults.seen.st_mtim.tv_nsec)
		return;
	faults.seen = st;
	memset(faults.f, 0, sizeof(faults.f));
	fp = fopen(faults.path, "re");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp))
		fault_parse_line(line);
	fclose(fp);
	fault_write_hits();
}

/* -errno when this operation is to fail now, else 0. */
static int fault_take(enum fault_op op)
{
	struct fault *f = &faults.f[op];

	fault_reload();
	if (!f->err || !f->left)
		return 0;
	if (f->left > 0)
		f->left--;
	f->hits++;
	resctrl_fake__set_status(fake, f->status);
	fault_write_hits();
	return -f->err;
}

static enum fault_op write_op(const char *path)
{
	const char *slash = strrchr(path, '/'), *file = slash ? slash + 1 : path;

	return !strcmp(file, "schemata") ? FAULT_SCHEMATA :
	       !strcmp(file, "tasks")	 ? FAULT_TASKS :
					   FAULT_NR;
}

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
	enum fault_op op;
	int err;

	(void)off;
	(void)fi;
	op = write_op(rel(path));
	err = op < FAULT_NR ? fault_take(op) : 0;
	if (!err)
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
	int err = fault_take(FAULT_MKDIR);

	(void)mode;
	return err ? err : resctrl_fake_backend.mkdir(fake, root_fd, rel(path));
}

static int fs_rmdir(const char *path)
{
	int err = fault_take(FAULT_RMDIR);

	return err ? err : resctrl_fake_backend.rmdir(fake, root_fd, rel(path));
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
	int fargc = 0, err, arg = 1;

	if (argc > 2 && !strcmp(argv[1], "--faults")) {
		faults.path = argv[2];
		arg = 3;
	}
	if (argc - arg < 2) {
		fprintf(stderr, "usage: %s [--faults FILE] DIR|PROFILE MOUNTPOINT [-f]\n", argv[0]);
		return EXIT_FAILURE;
	}
	err = fake_open(argv[arg]);
	if (err) {
		fprintf(stderr, "fake-resctrl-fs: %s: %s\n", argv[arg], strerror(-err));
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
	if (argc > arg + 2 && !strcmp(argv[arg + 2], "-f"))
		fargv[fargc++] = "-f";
	fargv[fargc++] = argv[arg + 1];
	fargv[fargc] = NULL;
	err = fuse_main(fargc, fargv, &ops, NULL);
	close(root_fd);
	resctrl_fake__free(fake);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}
