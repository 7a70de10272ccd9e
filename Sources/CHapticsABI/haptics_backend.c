/*
 * Compiles the contract header so an edit to it is rebuilt and checked, and pins the
 * layout of ABI version 1: a change that moves a field fails here, not in a user's plugin.
 */
#include "haptics_backend.h"

#define HAPTICS_PIN(cond) _Static_assert(cond, #cond ": the ABI v1 layout changed; bump HAPTICS_ABI_VERSION")

HAPTICS_PIN(sizeof(haptics_channel_v1) == 60);
HAPTICS_PIN(sizeof(haptics_device_v1) == 520);
HAPTICS_PIN(offsetof(haptics_device_v1, min_update_interval_ns) == 504);
HAPTICS_PIN(sizeof(haptics_frame_v1) == 48);
HAPTICS_PIN(sizeof(haptics_host_v1) == 8 + 4 * sizeof(void *));
HAPTICS_PIN(offsetof(haptics_backend_v1, enumerate) == 40 + sizeof(void *));
HAPTICS_PIN(HAPTICS_BACKEND_V1_MIN_SIZE == 40 + 10 * sizeof(void *));
/* 1.1 */
HAPTICS_PIN(offsetof(haptics_backend_v1, describe) == 40 + 10 * sizeof(void *));
HAPTICS_PIN(offsetof(haptics_device_info_v1, kick_max_ns) == 24);
HAPTICS_PIN(offsetof(haptics_device_info_v1, physical_id) == 48);
/* 1.2 */
HAPTICS_PIN(offsetof(haptics_device_info_v1, period_step_ns) == 560);
HAPTICS_PIN(offsetof(haptics_device_info_v1, sample_rate_hz) == 568);
/* 1.4 */
HAPTICS_PIN(offsetof(haptics_device_info_v1, sample_latency_ns) == 584);
HAPTICS_PIN(sizeof(haptics_device_info_v1) == 592);
HAPTICS_PIN(sizeof(haptics_samples_v1) == 24 + sizeof(void *));
HAPTICS_PIN(offsetof(haptics_samples_v1, delay_frames) == 16 + sizeof(void *));
HAPTICS_PIN(offsetof(haptics_backend_v1, write_samples) == 40 + 11 * sizeof(void *));
/* 1.5 */
HAPTICS_PIN(offsetof(haptics_backend_v1, wait_samples) == 40 + 12 * sizeof(void *));
/* 1.6 */
HAPTICS_PIN(sizeof(haptics_trigger_effect_v1) == 64);
HAPTICS_PIN(offsetof(haptics_backend_v1, set_triggers) == 40 + 13 * sizeof(void *));
/* 1.7 */
HAPTICS_PIN(offsetof(haptics_backend_v1, play_native) == 40 + 14 * sizeof(void *));
HAPTICS_PIN(offsetof(haptics_backend_v1, self_calibrate) == 40 + 15 * sizeof(void *));
HAPTICS_PIN(offsetof(haptics_backend_v1, restore_calibration) == 40 + 16 * sizeof(void *));
/* 1.8 */
HAPTICS_PIN(offsetof(haptics_backend_v1, native_feedback) == 40 + 17 * sizeof(void *));
HAPTICS_PIN(offsetof(haptics_backend_v1, start_native) == 40 + 18 * sizeof(void *));
/* 1.9 */
HAPTICS_PIN(sizeof(haptics_capture_format_v1) == 24);
HAPTICS_PIN(sizeof(haptics_capture_block_v1) == 24 + sizeof(void *));
HAPTICS_PIN(offsetof(haptics_capture_block_v1, time_ns) == 8 + sizeof(void *));
HAPTICS_PIN(offsetof(haptics_backend_v1, capture_open) == 40 + 19 * sizeof(void *));
HAPTICS_PIN(offsetof(haptics_backend_v1, capture_close) == 40 + 21 * sizeof(void *));
HAPTICS_PIN(sizeof(haptics_backend_v1) == 40 + 22 * sizeof(void *));
