// The declaration in include/libfuzzer.h is all this module provides: the definition is libFuzzer's
// (linked by -sanitize=fuzzer).
#include "libfuzzer.h"
