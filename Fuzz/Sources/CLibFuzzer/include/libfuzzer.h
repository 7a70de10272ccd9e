// libFuzzer's entry for programs with their own main (compiler-rt's FuzzerInterface.h): runs the
// fuzzer over `callback` with the command line, exactly as libFuzzer's own main does.
#ifndef SWIFT_HAPTICS_LIBFUZZER_H
#define SWIFT_HAPTICS_LIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
