#include "cvmrig.h"
