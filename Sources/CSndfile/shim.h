/* libsndfile for decoding audio clips (libsndfile1-dev). Only HapticsAudioFile links it: the core,
   hapticsd and the backends do not. */
#include <sndfile.h>
