/* test_inputs.c -- inputs that used to hang or eat memory, data that is not
 * finite, run folders that looked complete and were not, and sweep files
 * that were corrupt (issue 15, items 3, 7, 8 and 9): each is driven through
 * the dtsim binary (or the library call) and pinned by its exact message,
 * exit status and what is left on disk.
 */
#define _GNU_SOURCE   /* setenv */
#include "test_shell.h"

#include <fcntl.h>
#include <math.h>
#include <sys/file.h>
#include <unistd.h>

#include "mdl.h"

#define BIN DTSIM_BINARY

static void put(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* A 4-node scenario with extra JSON members. */
static void scenario(const char *name, const char *extra)
{
    char t[4096];
    snprintf(t, sizeof t, "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"data\": {\"train\": "
             "400, \"test\": 100}, \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"steps\": "
             "5}%s%s}\n", extra[0] ? ", " : "", extra);
    put(name, t);
}

/* stderr of the last command, in tmpdir/err */
static char *err_text(void)
{
    return slurpf("%s/err", tmpdir);
}

static void expect(int want_rc, const char *want_err, const char *cmd)
{
    int rc = sh("cd '%s' && %s 2>err", tmpdir, cmd);
    char *e = err_text();
    ck_assert_msg(rc == want_rc, "%s: exit %d, expected %d; stderr: %s", cmd, rc, want_rc, e);
    ck_assert_str_eq(e, want_err);
    free(e);
}

/* ---- item 3: input files that hang or eat memory ---- */

START_TEST(test_not_regular_files)
{
    make_tmp();
    ck_assert_int_eq(sh("cd '%s' && mkfifo fifo && ln -s /dev/zero zero", tmpdir), 0);
    scenario("tz.json", "\"compute\": {\"slowdowns\": [{\"kind\": \"trace\", \"file\": \"zero\"}]}");
    expect(2, "tz.json: /compute/slowdowns/0/file: error: cannot read \"zero\": a character "
              "device, not a regular file\n", BIN " validate tz.json");
    scenario("tf.json", "\"faults\": {\"events\": [{\"kind\": \"trace\", \"file\": \"fifo\"}]}");
    expect(2, "tf.json: /faults/events/0/file: error: cannot read \"fifo\": a FIFO, not a "
              "regular file\n", BIN " validate tf.json");
    put("el.json", "{\"nodes\": 4, \"topology\": {\"kind\": \"edge_list\", \"file\": \"fifo\"},"
        " \"data\": {\"train\": 400, \"test\": 100}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"stop\": {\"steps\": 5}}\n");
    expect(2, "fifo: error: cannot read: a FIFO, not a regular file\n", BIN " validate el.json");
    put("ez.json", "{\"nodes\": 4, \"topology\": {\"kind\": \"edge_list\", \"file\": \"zero\"},"
        " \"data\": {\"train\": 400, \"test\": 100}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"stop\": {\"steps\": 5}}\n");
    expect(2, "zero: error: cannot read: a character device, not a regular file\n",
           BIN " validate ez.json");
    put("sg.json", "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": "
        "\"none\", \"message_bytes\": 100}, \"algorithm\": {\"name\": \"sgp\", \"graph\": "
        "\"file\", \"graph_file\": \"zero\"}, \"stop\": {\"steps\": 5}}\n");
    /* an algorithm's file error is reported at the file, as it is */
    expect(2, "zero: error: cannot read: a character device, not a regular file\n",
           BIN " validate sg.json");
    put("sv.json", "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"data\": {\"kind\": "
        "\"libsvm\", \"train_file\": \"zero\"}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"stop\": {\"steps\": 5}}\n");
    expect(2, "zero: error: cannot read: a character device, not a regular file\n",
           BIN " validate sv.json");
    put("cf.json", "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"data\": {\"kind\": "
        "\"csv\", \"train_file\": \"fifo\"}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"stop\": {\"steps\": 5}}\n");
    expect(2, "fifo: error: cannot read: a FIFO, not a regular file\n", BIN " validate cf.json");
    put("ix.json", "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"data\": {\"kind\": "
        "\"idx\", \"train_images\": \"fifo\", \"train_labels\": \"fifo\", \"test_images\": "
        "\"fifo\", \"test_labels\": \"fifo\"}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"stop\": {\"steps\": 5}}\n");
    expect(2, "fifo: error: cannot read: a FIFO, not a regular file\n", BIN " validate ix.json");
    remove_tmp();
}
END_TEST

START_TEST(test_long_lines)
{
    make_tmp();
    /* a 4097-byte line: once split into phantom points, now an error */
    char *line = malloc(5000);
    ck_assert_ptr_nonnull(line);
    memset(line, '1', 4097);
    memcpy(line, "0,0,", 4);
    line[4097] = '\0';
    char *text = malloc(6000);
    snprintf(text, 6000, "node,time_s,factor\n%s\n0,1,2\n", line);
    put("long.csv", text);
    scenario("tl.json", "\"compute\": {\"slowdowns\": [{\"kind\": \"trace\", \"file\": \"long.csv\"}]}");
    expect(2, "long.csv:2: error: line longer than 4096 bytes\n", BIN " validate tl.json");
    /* exactly 4096 bytes is a line (and a bad factor, said as such) */
    line[4096] = '\0';
    snprintf(text, 6000, "node,time_s,factor\n%s\n", line);
    put("long.csv", text);
    sh("cd '%s' && " BIN " validate tl.json 2>err", tmpdir);
    char *e = err_text();
    const char *want = "long.csv:2: error: factor must be a number > 0, got \"1111";
    ck_assert_msg(strncmp(e, want, strlen(want)) == 0, "%s", e);
    free(e);
    /* edge lists and schedules alike */
    memset(line, ' ', 4097);
    memcpy(line, "0 1", 3);
    line[4097] = '\0';
    snprintf(text, 6000, "1 2\n%s\n", line);
    put("edges.txt", text);
    put("el.json", "{\"nodes\": 4, \"topology\": {\"kind\": \"edge_list\", \"file\": "
        "\"edges.txt\"}, \"data\": {\"train\": 400, \"test\": 100}, \"algorithm\": {\"name\": "
        "\"dpsgd\"}, \"stop\": {\"steps\": 5}}\n");
    expect(2, "edges.txt:2: error: line longer than 4096 bytes\n", BIN " validate el.json");
    /* a file over SIM_FILE_MAX_BYTES (sparse: it costs no disk) is refused
     * by its size before a byte is read (mutant sf-size) */
    ck_assert_int_eq(sh("cd '%s' && truncate -s 268435457 big.csv", tmpdir), 0);
    scenario("tb.json", "\"compute\": {\"slowdowns\": [{\"kind\": \"trace\", \"file\": \"big.csv\"}]}");
    expect(2, "tb.json: /compute/slowdowns/0/file: error: cannot read \"big.csv\": larger than "
           "268435456 bytes (the limit for trace files)\n", BIN " validate tb.json");
    /* a data file of NUL bytes is refused at its first chunk */
    ck_assert_int_eq(sh("cd '%s' && head -c 1000000 /dev/zero > zeros.svm", tmpdir), 0);
    put("sv.json", "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, \"data\": {\"kind\": "
        "\"libsvm\", \"train_file\": \"zeros.svm\"}, \"algorithm\": {\"name\": \"dpsgd\"},"
        " \"stop\": {\"steps\": 5}}\n");
    expect(2, "zeros.svm:1: error: not a text file (holds a NUL byte)\n", BIN " validate sv.json");
    free(text);
    free(line);
    remove_tmp();
}
END_TEST

START_TEST(test_schedule_rounds)
{
    make_tmp();
    /* round 99999 alone: two graphs (one empty, shared), not 10^5 */
    put("s10.txt", "99999 0 1\n");
    put("sg.json", "{\"nodes\": 2000, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": "
        "\"none\", \"message_bytes\": 100}, \"algorithm\": {\"name\": \"sgp\", \"graph\": "
        "\"file\", \"graph_file\": \"s10.txt\"}, \"limits\": {\"memory_bytes\": 1e8},"
        " \"stop\": {\"steps\": 5}}\n");
    expect(0, "", BIN " validate sg.json >/dev/null");
    /* a thousand rounds of 2000 nodes: counted (48.3 MB) before they are built */
    char p[512];
    snprintf(p, sizeof p, "%s/s1k.txt", tmpdir);
    FILE *f = fopen(p, "w");
    for (int r = 0; r < 1000; r++)
        fprintf(f, "%d 0 1\n", r);
    fclose(f);
    put("sk.json", "{\"nodes\": 2000, \"topology\": {\"kind\": \"ring\"}, \"model\": {\"kind\": "
        "\"none\", \"message_bytes\": 100}, \"algorithm\": {\"name\": \"sgp\", \"graph\": "
        "\"file\", \"graph_file\": \"s1k.txt\"}, \"limits\": {\"memory_bytes\": 6e7},"
        " \"stop\": {\"steps\": 5}}\n");
    expect(2, "sk.json: error: this run needs about 64.2 MB of memory (process 12.6 MB, data "
              "0 B, per-node state 3.07 MB, topology 256 KB, sgp's own 48.3 MB), more than the "
              "limit of 60 MB "
              "(limits.memory_bytes); lower the size, set limits.memory_bytes, or run with "
              "--force\n", BIN " validate sk.json");
    remove_tmp();
}
END_TEST

/* ---- item 7: non-finite IDX values, scaling overflow ---- */

static void be32(FILE *f, unsigned v)
{
    fputc((int)(v >> 24), f);
    fputc((int)(v >> 16) & 255, f);
    fputc((int)(v >> 8) & 255, f);
    fputc((int)v & 255, f);
}

START_TEST(test_idx_not_finite)
{
    make_tmp();
    char img[512], lab[512], err[512];
    snprintf(img, sizeof img, "%s/img", tmpdir);
    snprintf(lab, sizeof lab, "%s/lab", tmpdir);
    const float vals[3][8] = { { 0, 1, 2, 3, 4, 5, 6, 7 }, { 0, 1, 2, 3, 4, 5, NAN, 7 },
                               { 0, 1, 2, -INFINITY, 4, 5, 6, 7 } };
    const char *want[3] = { NULL, "image 2 of 2, value 3 of 4 is nan",
                            "image 1 of 2, value 4 of 4 is -inf" };
    for (int c = 0; c < 3; c++) {
        FILE *f = fopen(img, "wb");
        be32(f, 0x0D03);   /* float, 3 dimensions */
        be32(f, 2);
        be32(f, 2);
        be32(f, 2);
        for (int k = 0; k < 8; k++) {
            unsigned u;
            memcpy(&u, &vals[c][k], 4);
            be32(f, u);
        }
        fclose(f);
        f = fopen(lab, "wb");
        be32(f, 0x0801);
        be32(f, 2);
        fputc(0, f);
        fputc(1, f);
        fclose(f);
        mdl_dataset ds;
        int rc = mdl_idx_load(img, lab, &ds, err, sizeof err);
        if (!want[c]) {
            ck_assert_int_eq(rc, 0);
            mdl_dataset_fini(&ds);
            continue;
        }
        ck_assert_int_eq(rc, -1);
        char full[1024];
        snprintf(full, sizeof full, "%s: error: %s: a data set must hold finite numbers", img,
                 want[c]);
        ck_assert_str_eq(err, full);
    }
    remove_tmp();
}
END_TEST

START_TEST(test_scale_extremes)
{
    /* finite values near the largest double: the range and the squares
     * overflowed, and every scaled value was nan */
    double x[4] = { 1e308, -1e308, 0, 1.7e308 }, t[1] = { -1.7e308 };
    mdl_dataset tr = { .x = x, .n = 4, .d = 1 }, te = { .x = t, .n = 1, .d = 1 };
    ck_assert_int_eq(mdl_dataset_scale(&tr, &te, MDL_SCALE_MINMAX), 0);
    ck_assert_double_eq_tol(x[0], 2.0 / 2.7, 1e-15);
    ck_assert_double_eq(x[1], 0.0);
    ck_assert_double_eq_tol(x[2], 1.0 / 2.7, 1e-15);
    ck_assert_double_eq(x[3], 1.0);
    ck_assert_double_eq_tol(t[0], -0.7 / 2.7, 1e-15);
    double y[3] = { 1e308, -1e308, 1e308 };
    mdl_dataset ty = { .x = y, .n = 3, .d = 1 };
    ck_assert_int_eq(mdl_dataset_scale(&ty, NULL, MDL_SCALE_STANDARD), 0);
    /* mean 1e308/3, sd 2 sqrt(2)/3 1e308 */
    ck_assert_double_eq_tol(y[0], (2.0 / 3) / (2 * sqrt(2.0) / 3), 1e-14);
    ck_assert_double_eq_tol(y[1], (-4.0 / 3) / (2 * sqrt(2.0) / 3), 1e-14);
    /* tiny values (below 2^-480) keep their spread too */
    double z[2] = { 1e-300, 3e-300 };
    mdl_dataset tz = { .x = z, .n = 2, .d = 1 };
    ck_assert_int_eq(mdl_dataset_scale(&tz, NULL, MDL_SCALE_MINMAX), 0);
    ck_assert_double_eq(z[0], 0.0);
    ck_assert_double_eq(z[1], 1.0);
    /* ordinary values: bit for bit the plain formula */
    double w[3] = { 1, 3, 9 };
    mdl_dataset tw = { .x = w, .n = 3, .d = 1 };
    ck_assert_int_eq(mdl_dataset_scale(&tw, NULL, MDL_SCALE_MINMAX), 0);
    ck_assert_double_eq(w[1], (3.0 - 1.0) * (1.0 / 8.0));
}
END_TEST

/* ---- item 8: run folders ---- */

static const char *const quick = "{\"nodes\": 4, \"topology\": {\"kind\": \"ring\"}, "
    "\"data\": {\"train\": 400, \"test\": 100}, \"algorithm\": {\"name\": \"dpsgd\"}, "
    "\"stop\": {\"time_s\": 2}, \"metrics\": {\"every_s\": 0.01}}\n";

START_TEST(test_rerun_replaces_folder)
{
    make_tmp();
    put("q.json", quick);
    ck_assert_int_eq(sh("cd '%s' && " BIN " run --quiet q.json -o out --set output.trace=true "
                        "--set metrics.per_node=true", tmpdir), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/out/trace.csv", tmpdir);
    ck_assert(exists(p));
    ck_assert_int_eq(sh("cd '%s' && mkdir out/plots && echo x >out/plots/loss.png", tmpdir), 0);
    /* without --force a previous run is refused (exit 2), its folder untouched */
    ck_assert_int_eq(sh("cd '%s' && cp -r out before", tmpdir), 0);
    expect(2, "out: error: holds a previous run (metrics.csv, node_metrics.csv, nodes.csv, "
              "plots/, run.json, trace.csv); rerun with --force to replace it as a whole (no "
              "file of the old run is kept), or choose another -o\n",
           BIN " run --quiet q.json -o out --seed 3");
    ck_assert_int_eq(sh("cd '%s' && diff -r before out && rm -r before", tmpdir), 0);
    ck_assert_int_eq(sh("cd '%s' && " BIN " run --quiet q.json -o out --seed 3 --force", tmpdir),
                     0);
    /* the second run's folder holds its own files only: no trace.csv,
     * node_metrics.csv or plots/ of the first */
    ck_assert_int_eq(sh("cd '%s' && test \"$(ls -A out | tr '\\n' ' ')\" = "
                        "'metrics.csv nodes.csv run.json '", tmpdir), 0);
    ck_assert_int_eq(sh("cd '%s' && test -z \"$(ls -A | grep '^\\.out')\"", tmpdir), 0);
    /* a folder holding something dtsim did not write is never replaced */
    put("out/notes.txt", "mine\n");
    expect(1, "out: error: holds \"notes.txt\", which dtsim did not write; a run replaces its "
              "folder as a whole, so choose another -o or move it away\n",
           BIN " run --quiet q.json -o out --force");
    snprintf(p, sizeof p, "%s/out/notes.txt", tmpdir);
    ck_assert(exists(p));
    expect(1, ".: error: a run replaces its folder as a whole: name a folder of its own (e.g. "
              "-o results/NAME), not \".\", \"..\" or \"/\"\n", BIN " run --quiet q.json -o .");
    remove_tmp();
}
END_TEST

START_TEST(test_full_disk_keeps_old_run)
{
    make_tmp();
    put("q.json", quick);
    ck_assert_int_eq(sh("cd '%s' && " BIN " run --quiet q.json -o out && cp -r out before",
                        tmpdir), 0);
    /* files may hold 2 KB: the new metrics.csv cannot be written */
    int rc = sh("cd '%s' && (ulimit -f 4; trap '' XFSZ; exec " BIN " run --quiet q.json -o out "
                "--seed 9 --force) 2>err", tmpdir);
    ck_assert_int_eq(rc, 1);
    char *e = err_text();
    ck_assert_msg(strstr(e, "/metrics.csv: error: cannot write: File too large\n") != NULL, "%s", e);
    free(e);
    /* the old run, whole and untouched; no hidden folder left */
    ck_assert_int_eq(sh("cd '%s' && diff -r before out", tmpdir), 0);
    ck_assert_int_eq(sh("cd '%s' && test -z \"$(ls -A | grep '^\\.out')\"", tmpdir), 0);
    /* a first run that fails leaves no folder */
    rc = sh("cd '%s' && (ulimit -f 4; trap '' XFSZ; exec " BIN " run --quiet q.json -o new) "
            "2>err", tmpdir);
    ck_assert_int_eq(rc, 1);
    char p[512];
    snprintf(p, sizeof p, "%s/new", tmpdir);
    ck_assert(!exists(p));
    remove_tmp();
}
END_TEST

START_TEST(test_second_writer_refused)
{
    make_tmp();
    put("q.json", quick);
    char p[512];
    snprintf(p, sizeof p, "%s/out", tmpdir);
    ck_assert_int_eq(mkdir(p, 0777), 0);
    int fd = open(p, O_RDONLY | O_DIRECTORY);   /* a run in progress holds this lock */
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    expect(1, "out: error: another dtsim run is writing into this folder (it is locked); wait "
              "for it to end or choose another -o\n", BIN " run --quiet q.json -o out");
    ck_assert_int_eq(sh("cd '%s' && test -z \"$(ls -A out)\"", tmpdir), 0);
    close(fd);
    ck_assert_int_eq(sh("cd '%s' && " BIN " run --quiet q.json -o out", tmpdir), 0);
    remove_tmp();
}
END_TEST

/* ---- item 9: corrupt sweep files ---- */

START_TEST(test_sweep_corrupt_files)
{
    make_tmp();
    put("q.json", quick);
    expect(2, "dtsim sweep: error: --grid algorithm.lr: value 2 holds a control character "
              "(byte 0x0a); values are single-line text\n",
           BIN " sweep --quiet q.json --grid 'algorithm.lr=0.1,0.2\n' -o sw");
    char p[512];
    snprintf(p, sizeof p, "%s/sw", tmpdir);
    ck_assert(!exists(p));
    ck_assert_int_eq(sh("cd '%s' && " BIN " sweep --quiet q.json --grid algorithm.lr=0.1,0.2 "
                        "-o sw", tmpdir), 0);
    /* a NUL byte inside a run's metrics.csv */
    ck_assert_int_eq(sh("cd '%s' && cp -r sw a && rm a/sweep.csv a/summary.csv && "
                        "printf '1,2,3,4,5,6,7,\\0008\\n' >> a/runs/000_lr=0.1/metrics.csv",
                        tmpdir), 0);
    expect(2, "a/runs/000_lr=0.1/metrics.csv:203: error: holds a NUL byte (a corrupt file; "
              "remove the run's folder to run it again)\n", BIN " merge --quiet a");
    snprintf(p, sizeof p, "%s/a/sweep.csv", tmpdir);
    ck_assert(!exists(p));
    /* a row cut short (still ending in a newline), found by merge and by a
     * resumed sweep alike */
    ck_assert_int_eq(sh("cd '%s' && cp -r sw b && rm b/sweep.csv b/summary.csv && "
                        "printf '2.01,9,0.1\\n' >> b/runs/001_lr=0.2/metrics.csv", tmpdir), 0);
    expect(2, "b/runs/001_lr=0.2/metrics.csv:203: error: has 3 fields, the header has 8 (a "
              "corrupt file; remove the run's folder to run it again)\n", BIN " merge --quiet b");
    expect(2, "b/runs/001_lr=0.2/metrics.csv:203: error: has 3 fields, the header has 8 (a "
              "corrupt file; remove the run's folder to run it again)\n",
           BIN " sweep --quiet q.json --grid algorithm.lr=0.1,0.2 -o b");
    snprintf(p, sizeof p, "%s/b/sweep.csv", tmpdir);
    ck_assert(!exists(p));
    /* runs.csv naming a path */
    ck_assert_int_eq(sh("cd '%s' && cp -r sw c && sed -i 's|000_lr=0.1|../..|' c/runs.csv",
                        tmpdir), 0);
    expect(2, "c/runs.csv:2: error: run name \"../..\" is not one a sweep writes (a digit, then "
              "letters, digits and . + - = _)\n", BIN " merge --quiet c -o m");
    snprintf(p, sizeof p, "%s/m", tmpdir);
    ck_assert(!exists(p));
    remove_tmp();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("inputs");
    TCase *tc = tcase_create("inputs");
    tcase_set_timeout(tc, 30);   /* a FIFO that blocks fails here, not for ever */
    tcase_add_test(tc, test_not_regular_files);
    tcase_add_test(tc, test_long_lines);
    tcase_add_test(tc, test_schedule_rounds);
    tcase_add_test(tc, test_idx_not_finite);
    tcase_add_test(tc, test_scale_extremes);
    tcase_add_test(tc, test_rerun_replaces_folder);
    tcase_add_test(tc, test_full_disk_keeps_old_run);
    tcase_add_test(tc, test_second_writer_refused);
    tcase_add_test(tc, test_sweep_corrupt_files);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
