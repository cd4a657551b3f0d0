/* fuzz_entry.h -- the entry points that libFuzzer harnesses (tests/fuzz/
 * fuzz_*.c) and the regression suite (tests/test_fuzz_regressions.c)
 * share, so a crash input found by fuzzing is replayed through exactly the
 * code that found it.  Each takes arbitrary bytes, feeds them to one of
 * dtsim's readers and returns 0 when the input was accepted, 1 when it was
 * rejected with an error message, and never crashes, leaks or reads out of
 * bounds on any input (that is what the sanitizers check).
 */
#ifndef FUZZ_ENTRY_H
#define FUZZ_ENTRY_H

#include <stddef.h>
#include <stdint.h>

/* The scenario loader on the input as JSON text (scn_load_string). */
int fuzz_scenario(const uint8_t *data, size_t size);
/* The input is "OVERRIDE\nOVERRIDE\n...\0JSON": up to 16 --set overrides
 * before the first NUL byte, then the scenario; without a NUL byte, the
 * overrides are applied to a fixed valid scenario. */
int fuzz_scenario_set(const uint8_t *data, size_t size);
/* The input as a slowdown trace file ("node,time_s,factor") and as an
 * availability trace ("node,time_s,state") of an 8-node scenario. */
int fuzz_trace(const uint8_t *data, size_t size);
/* The input as a LIBSVM file, then label compaction and min-max scaling
 * as the runner does. */
int fuzz_libsvm(const uint8_t *data, size_t size);
/* The input as a CSV data file: the first byte chooses the label column
 * (0..3) and whether there is a header; the rest is the file. */
int fuzz_csv(const uint8_t *data, size_t size);
/* The input as an IDX pair: the first two bytes (big-endian) give the
 * length of the image file, which follows; the rest is the label file. */
int fuzz_idx(const uint8_t *data, size_t size);

/* The input as an edge-list file: the first byte gives the node count
 * (1 + its low 6 bits) and, with bit 6, reads the rest as a file schedule
 * ("round u v", a few rounds built) instead of a static edge list ("u v",
 * built with its statistics). */
int fuzz_edges(const uint8_t *data, size_t size);

/* The harnesses by name ("scenario", "scenario_set", "trace", "libsvm",
 * "csv", "idx", "edges"), for the regression suite; NULL when unknown. */
typedef int (*fuzz_fn)(const uint8_t *data, size_t size);
fuzz_fn fuzz_entry_find(const char *name);

#endif
