/* test_shell.h -- what the suites that drive the dtsim binary share: a
 * private temporary folder per test, shell commands with their exit
 * status, and reading whole files.  Header-only (static functions), for
 * test files only; failures are Check assertions.
 */
#ifndef TEST_SHELL_H
#define TEST_SHELL_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char tmpdir[256];

/* A fresh folder /tmp/dtsim-test-XXXXXX in tmpdir. */
static inline void make_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dtsim-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static inline void remove_tmp(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Runs a shell command line; returns its exit status. */
static inline int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* The whole file, NUL-terminated; the caller frees it. */
static inline char *slurp_path(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static inline char *slurpf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *slurpf(const char *fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    return slurp_path(path);
}

static inline int same_file(const char *a, const char *b)
{
    char *x = slurp_path(a), *y = slurp_path(b);
    int same = strcmp(x, y) == 0;
    free(x);
    free(y);
    return same;
}

static inline int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

#endif
