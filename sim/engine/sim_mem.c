/* sim_mem.c -- sim_alloc_lines (sim_mem.h): aligned_alloc, then
 * madvise(MADV_HUGEPAGE) over the whole pages of a large block.  It does
 * not decide what is large for a caller beyond SIM_MEM_HUGE_MIN, and keeps
 * no state.
 */
#define _DEFAULT_SOURCE   /* MADV_HUGEPAGE */
#include "sim_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void *sim_alloc_lines(size_t bytes)
{
    if (bytes > SIZE_MAX - 63)
        return NULL;
    bytes = (bytes + 63) & ~(size_t)63;   /* aligned_alloc wants a multiple */
    void *p = aligned_alloc(64, bytes ? bytes : 64);
#ifdef MADV_HUGEPAGE
    if (p && bytes >= SIM_MEM_HUGE_MIN) {
        long pg = sysconf(_SC_PAGESIZE);
        uintptr_t page = pg > 0 ? (uintptr_t)pg : 4096;
        uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
        uintptr_t e = ((uintptr_t)p + bytes) & ~(page - 1);
        if (e > a)
            (void)madvise((void *)a, e - a, MADV_HUGEPAGE);   /* advice: failure is harmless */
    }
#endif
    return p;
}
