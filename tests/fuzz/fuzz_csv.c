/* fuzz_csv.c -- libFuzzer harness: see fuzz_csv in fuzz_entry.h. */
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_csv(data, size);
    return 0;
}
