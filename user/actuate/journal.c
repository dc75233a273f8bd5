// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "journal.h"
#include "log.h"

#define JOURNAL_NAME   "journal"
#define JOURNAL_HEADER "# kqos journal v1: knob<TAB>cgroup<TAB>original value\n"
#define LINE_MAX_LEN   (PLAN_CGROUP_MAX + CPULIST_BUF_SIZE + 32)

struct journal_entry *journal_find(struct journal *j, const char *cgroup, enum plan_knob knob)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->e[i].knob == knob && !strcmp(j->e[i].cgroup, cgroup))
			return &j->e[i];
	return NULL;
}

int journal_reserve(struct journal *j, size_t extra)
{
	size_t cap = j->cap ? j->cap : 32;
	void *n;

	while (cap < j->n + extra)
		cap *= 2;
	if (cap == j->cap)
		return 0;
	n = realloc(j->e, cap * sizeof(*j->e));
	if (!n)
		return -ENOMEM;
	j->e = n;
	j->cap = cap;
	return 0;
}

int journal_add(struct journal *j, const char *cgroup, enum plan_knob knob,
		const struct knob_value *orig)
{
	struct journal_entry *e;
	int err = journal_reserve(j, 1);

	if (err)
		return err;
	e = &j->e[j->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->cgroup, sizeof(e->cgroup), "%s", cgroup);
	e->knob = knob;
	e->orig = *orig;
	return 0;
}

void journal_del(struct journal *j, size_t i)
{
	j->e[i] = j->e[--j->n];
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

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

static int write_lines(const struct journal *j, int fd)
{
	char line[LINE_MAX_LEN], val[CPULIST_BUF_SIZE];
	int err = write_all(fd, JOURNAL_HEADER, strlen(JOURNAL_HEADER));

	for (size_t i = 0; i < j->n && !err; i++) {
		err = knob_ops(j->e[i].knob)->format(&j->e[i].orig, val, sizeof(val));
		if (err)
			break;
		snprintf(line, sizeof(line), "%s\t%s\t%s\n", plan_knob_name(j->e[i].knob),
			 j->e[i].cgroup, val);
		err = write_all(fd, line, strlen(line));
	}
	return err;
}

static int save(struct journal *j)
{
	char tmp[PATH_MAX + 8];
	int fd, err;

	if (!j->n) {
		if (unlink(j->path) && errno != ENOENT)
			return -errno;
		return fsync_dir(j->dir);
	}
	/* a state dir that could not be made at start may be possible now */
	if (mkdir(j->dir, 0700) && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.tmp", j->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_lines(j, fd);
	if (!err && fsync(fd))
		err = -errno;
	close(fd);
	if (!err && rename(tmp, j->path))
		err = -errno;
	if (!err)
		err = fsync_dir(j->dir);
	if (err)
		unlink(tmp);
	return err;
}

/* Crash-safe: the old journal or the new one is on disk, never a torn file. */
int journal_save(struct journal *j)
{
	int err = save(j);

	if (err && err != j->save_err)
		log_err("journal cannot be saved: cgroup values whose originals it would hold are "
			"left unchanged until it can",
			"path=%s err=%d", j->path, err);
	else if (err)
		log_dbg("journal still cannot be saved", "path=%s err=%d", j->path, err);
	else if (j->save_err)
		log_info("journal saved again", "path=%s", j->path);
	j->save_err = err;
	return err;
}

static int parse_line(struct journal *j, char *line, unsigned int lineno)
{
	char *knob = line, *cg, *val, *nl = strchr(line, '\n');
	struct knob_value o = { 0 };
	enum plan_knob k;

	/* every line is written whole with its newline: one without was cut short */
	if (!nl)
		goto bad;
	*nl = '\0';
	if (!line[0] || line[0] == '#')
		return 0;
	cg = strchr(knob, '\t');
	val = cg ? strchr(cg + 1, '\t') : NULL;
	if (!val)
		goto bad;
	*cg++ = '\0';
	*val++ = '\0';
	if (plan_knob_parse(knob, &k) || !cgpath_is_safe(cg) || strlen(cg) >= PLAN_CGROUP_MAX ||
	    knob_ops(k)->parse(val, &o))
		goto bad;
	if (journal_find(j, cg, k))
		return 0;
	return journal_add(j, cg, k, &o);
bad:
	/* a bad line cannot be restored; the others still can */
	log_err("journal line malformed, skipped", "path=%s line=%u", j->path, lineno);
	return 1;
}

/*
 * The next save replaces the journal, and with it what its bad lines held: the file as found is
 * kept beside it (a hard link to the same bytes) for a human to read.
 */
static void keep_bad(const struct journal *j, unsigned int nr_bad)
{
	char bad[PATH_MAX + 8];

	snprintf(bad, sizeof(bad), "%s.bad", j->path);
	unlink(bad);
	if (link(j->path, bad))
		log_warn("journal with malformed lines could not be kept", "path=%s err=%d", bad,
			 -errno);
	else
		log_warn("journal with malformed lines kept as found", "path=%s bad_lines=%u", bad,
			 nr_bad);
}

/* Whole lines, however long: a long line's tail is no line of its own. */
static int load(struct journal *j)
{
	unsigned int lineno = 0, nr_bad = 0;
	FILE *f = fopen(j->path, "re");
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (err >= 0 && getline(&line, &cap, f) >= 0) {
		err = parse_line(j, line, ++lineno);
		nr_bad += err > 0;
	}
	free(line);
	fclose(f);
	if (err >= 0 && nr_bad)
		keep_bad(j, nr_bad);
	return err < 0 ? err : 0;
}

int journal_open(struct journal *j, const char *state_dir)
{
	int err;

	memset(j, 0, sizeof(*j));
	if (snprintf(j->dir, sizeof(j->dir), "%s", state_dir) >= (int)sizeof(j->dir) ||
	    snprintf(j->path, sizeof(j->path), "%s/%s", state_dir, JOURNAL_NAME) >=
		    (int)sizeof(j->path))
		return -ENAMETOOLONG;
	/*
	 * No state dir (a read-only or full parent) holds no journal to load: kqos runs, and the
	 * first save says that nothing is changed until one can be made.
	 */
	if (mkdir(j->dir, 0700) && errno != EEXIST) {
		log_warn("cannot create state dir; tried again at each save", "path=%s err=%d",
			 j->dir, -errno);
		return 0;
	}
	err = load(j);
	if (err)
		log_err("cannot read journal", "path=%s err=%d", j->path, err);
	return err;
}

void journal_close(struct journal *j)
{
	free(j->e);
	j->e = NULL;
	j->n = j->cap = 0;
}
