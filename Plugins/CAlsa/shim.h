/* alsa-lib for the alsa backend (libasound2-dev). Only Plugins/ALSA links it. */
#include <alsa/asoundlib.h>
