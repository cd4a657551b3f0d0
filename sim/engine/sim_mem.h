/* sim_mem.h -- the allocation of a run's large arrays of 64-byte records
 * (cluster nodes, message slots, protocol states, event blocks): memory
 * aligned to a cache line and, from SIM_MEM_HUGE_MIN bytes on, advised to
 * the kernel as transparent huge pages, so that first touching the
 * gigabyte of a 10^6-node run faults 2 MiB at a time instead of 4 KiB (the
 * faults were half of such a run's set-up; docs/architecture.md, "Large
 * arrays on huge pages").  The advice changes no byte and no result: where
 * the kernel has no huge pages (THP "never", another OS) it is ignored.
 * It does not zero; free with free().
 */
#ifndef SIM_MEM_H
#define SIM_MEM_H

#include <stddef.h>

#define SIM_MEM_HUGE_MIN ((size_t)4 << 20)

/* aligned_alloc(64, bytes rounded up to 64), advised as above; NULL when out
 * of memory. */
void *sim_alloc_lines(size_t bytes);

#endif
