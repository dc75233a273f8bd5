/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_FILEIO_H
#define KQOS_TESTS_FILEIO_H

#include <stddef.h>

/*
 * The one-value files of cgroupfs and resctrl, read and written as the kernel wants them.
 * Free of the other helpers: bench/soakload links this and soak.o alone.
 */

/* One write() of @val to @path (a cgroup file takes a value per write); 0 or -errno. */
int fileio_put(const char *path, const char *val);
/* @path into @buf up to its first newline; "" when unreadable. */
void fileio_get_line(const char *path, char *buf, size_t n);

#endif
