/* test_fuzz_regressions.c -- replays every input that fuzzing ever found
 * harmful (tests/fuzz/regressions/HARNESS/) and every seed of the corpus
 * (tests/fuzz/corpus/HARNESS/) through the same entry points as the
 * libFuzzer harnesses (tests/fuzz/fuzz_entry.c).  Each must end in success
 * or a clean error; a crash, a leak or an out-of-bounds access fails the
 * suite (the ASan build catches the last two).  Files named *.ok must be
 * accepted and files named *.err rejected, so a fix cannot silently turn an
 * error into acceptance.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_entry.h"

#define FUZZ_DIR DTSIM_SOURCE_DIR "/tests/fuzz/"

static const char *const harnesses[] = {"scenario", "scenario_set", "trace", "libsvm", "csv",
                                        "idx", "edges", NULL};

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t cap = 4096, n = 0, k;
    unsigned char *buf = malloc(cap);
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    ck_assert(buf != NULL);
    *size = n;
    return buf;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Replays every file of FUZZ_DIR/kind/harness; returns how many. */
static int replay(const char *kind, const char *harness)
{
    char dir[1024];
    snprintf(dir, sizeof dir, FUZZ_DIR "%s/%s", kind, harness);
    fuzz_fn fn = fuzz_entry_find(harness);
    ck_assert(fn != NULL);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[2048];
        size_t size;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unsigned char *buf = slurp(path, &size);
        int rc = fn(buf, size);
        free(buf);
        ck_assert_msg(rc == 0 || rc == 1, "%s: returned %d", path, rc);
        if (ends_with(e->d_name, ".ok"))
            ck_assert_msg(rc == 0, "%s: rejected, expected accepted", path);
        if (ends_with(e->d_name, ".err"))
            ck_assert_msg(rc == 1, "%s: accepted, expected rejected", path);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(test_regressions)
{
    for (int i = 0; harnesses[i]; i++)
        replay("regressions", harnesses[i]);
}
END_TEST

/* Every harness has seeds, and the seeds replay cleanly too. */
START_TEST(test_corpus)
{
    for (int i = 0; harnesses[i]; i++)
        ck_assert_msg(replay("corpus", harnesses[i]) > 0, "no seeds for %s", harnesses[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzz_regressions");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, test_regressions);
    tcase_add_test(tc, test_corpus);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
