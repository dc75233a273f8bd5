/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_FUZZ_H
#define KQOS_TESTS_FUZZ_H

/*
 * Helpers shared by the libFuzzer harnesses (docs/testing.md). Each harness defines
 * LLVMFuzzerTestOneInput; these turn the raw bytes into what a parser expects (a C string, a
 * file) and keep the agent's logger quiet, so that a run measures the parser and not stderr.
 */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A NUL-terminated malloc'd copy (embedded NULs stay: the parser sees a shorter string). */
char *fuzz_cstr(const uint8_t *data, size_t size);

/* Send the agent's log lines (and resctrl's debug callback) nowhere. Once, from Initialize. */
void fuzz_quiet(void);

/*
 * A private scratch directory for parsers that only read files, made once and removed at exit,
 * under $TMPDIR or else /dev/shm (tmpfs). Returns its path; aborts when it cannot be made, since
 * the harness would then test nothing.
 */
const char *fuzz_tmpdir(void);

/* Replace @path (absolute, or relative to fuzz_tmpdir()) with @size bytes, making parents. */
int fuzz_write_file(const char *path, const void *data, size_t size);

/*
 * Split @data at the first "\n--\n" separator into @nr parts (the rest empty when there are
 * fewer): how one input carries several files. Parts point into @data and are not terminated.
 */
struct fuzz_part {
	const uint8_t *data;
	size_t size;
};
void fuzz_split(const uint8_t *data, size_t size, struct fuzz_part *parts, unsigned int nr);

#endif
