/*
 * gpiod_shim.c: gpiod_shim.h over libgpiod v1 (1.x) or v2 (2.x), chosen at compile time.
 *
 * The rule (see the header): <gpiod.h> defining GPIOD_LINE_BULK_MAX_LINES means v1.
 */
#include "gpiod_shim.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gpiod.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define GPIOD_SHIM_V1 1
#else
#define GPIOD_SHIM_V2 1
#endif

struct gpiod_shim_request {
    size_t count;
    int active_low[GPIOD_SHIM_MAX_LINES];
#ifdef GPIOD_SHIM_V1
    /* v1: the lines belong to the chip object, which must stay open while they are requested. */
    struct gpiod_chip *chip;
    struct gpiod_line_bulk bulk;
#else
    /* v2: the request is independent of the chip; the chip is closed right after the request. */
    struct gpiod_line_request *request;
#endif
};

/* A negative errno from the errno a failed libgpiod call left (EIO if it left none). */
static int failure(void)
{
    return errno > 0 ? -errno : -EIO;
}

static void copy_name(char *buffer, size_t size, const char *text)
{
    if (size == 0)
        return;
    if (!text)
        text = "";
    strncpy(buffer, text, size - 1);
    buffer[size - 1] = '\0';
}

int gpiod_shim_api_version(void)
{
#ifdef GPIOD_SHIM_V1
    return 1;
#else
    return 2;
#endif
}

size_t gpiod_shim_line_count(const gpiod_shim_request *request)
{
    return request->count;
}

int gpiod_shim_set_values_untyped(void *request, const int *values)
{
    return gpiod_shim_set_values((gpiod_shim_request *)request, values);
}

#ifdef GPIOD_SHIM_V1

int gpiod_shim_chip_info(const char *path, unsigned int *num_lines, char *label, size_t label_size)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return failure();
    *num_lines = gpiod_chip_num_lines(chip);
    copy_name(label, label_size, gpiod_chip_label(chip));
    gpiod_chip_close(chip);
    return 0;
}

int gpiod_shim_find_line(const char *path, const char *name)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return failure();
    errno = 0;
    struct gpiod_line *line = gpiod_chip_find_line(chip, name);
    int result = line ? (int)gpiod_line_offset(line) : (errno == 0 || errno == ENOENT ? -ENOENT : failure());
    gpiod_chip_close(chip);
    return result;
}

int gpiod_shim_line_consumer(const char *path, unsigned int offset, char *consumer, size_t consumer_size)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return failure();
    int result;
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
    if (!line) {
        result = failure();
    } else {
        result = gpiod_line_is_used(line) ? 1 : 0;
        copy_name(consumer, consumer_size, gpiod_line_consumer(line));
    }
    gpiod_chip_close(chip);
    return result;
}

int gpiod_shim_request_outputs(const char *path, const char *consumer, const unsigned int *offsets, const int *active_low,
                               const int *initial_values, size_t count, gpiod_shim_request **out)
{
    *out = NULL;
    if (count == 0 || count > GPIOD_SHIM_MAX_LINES)
        return -EINVAL;
    gpiod_shim_request *request = calloc(1, sizeof(*request));
    if (!request)
        return -ENOMEM;
    request->count = count;
    int physical[GPIOD_SHIM_MAX_LINES];
    for (size_t i = 0; i < count; i++) {
        request->active_low[i] = active_low[i] != 0;
        physical[i] = (initial_values[i] != 0) ^ request->active_low[i];
    }
    request->chip = gpiod_chip_open(path);
    if (!request->chip) {
        int error = failure();
        free(request);
        return error;
    }
    int error = 0;
    gpiod_line_bulk_init(&request->bulk);
    if (gpiod_chip_get_lines(request->chip, (unsigned int *)offsets, (unsigned int)count, &request->bulk) < 0)
        error = failure();
    else if (gpiod_line_request_bulk_output(&request->bulk, consumer, physical) < 0)
        error = failure();
    if (error) {
        gpiod_chip_close(request->chip);
        free(request);
        return error;
    }
    *out = request;
    return 0;
}

int gpiod_shim_set_values(gpiod_shim_request *request, const int *values)
{
    int physical[GPIOD_SHIM_MAX_LINES];
    for (size_t i = 0; i < request->count; i++)
        physical[i] = (values[i] != 0) ^ request->active_low[i];
    return gpiod_line_set_value_bulk(&request->bulk, physical) < 0 ? failure() : 0;
}

void gpiod_shim_release(gpiod_shim_request *request)
{
    if (!request)
        return;
    gpiod_line_release_bulk(&request->bulk);
    gpiod_chip_close(request->chip);
    free(request);
}

#else /* GPIOD_SHIM_V2 */

int gpiod_shim_chip_info(const char *path, unsigned int *num_lines, char *label, size_t label_size)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return failure();
    int result = 0;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) {
        result = failure();
    } else {
        *num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
        copy_name(label, label_size, gpiod_chip_info_get_label(info));
        gpiod_chip_info_free(info);
    }
    gpiod_chip_close(chip);
    return result;
}

int gpiod_shim_find_line(const char *path, const char *name)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return failure();
    errno = 0;
    int offset = gpiod_chip_get_line_offset_from_name(chip, name);
    int result = offset >= 0 ? offset : (errno == 0 || errno == ENOENT ? -ENOENT : failure());
    gpiod_chip_close(chip);
    return result;
}

int gpiod_shim_line_consumer(const char *path, unsigned int offset, char *consumer, size_t consumer_size)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return failure();
    int result;
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, offset);
    if (!info) {
        result = failure();
    } else {
        result = gpiod_line_info_is_used(info) ? 1 : 0;
        copy_name(consumer, consumer_size, gpiod_line_info_get_consumer(info));
        gpiod_line_info_free(info);
    }
    gpiod_chip_close(chip);
    return result;
}

int gpiod_shim_request_outputs(const char *path, const char *consumer, const unsigned int *offsets, const int *active_low,
                               const int *initial_values, size_t count, gpiod_shim_request **out)
{
    *out = NULL;
    if (count == 0 || count > GPIOD_SHIM_MAX_LINES)
        return -EINVAL;
    gpiod_shim_request *request = calloc(1, sizeof(*request));
    if (!request)
        return -ENOMEM;
    request->count = count;
    struct gpiod_chip *chip = gpiod_chip_open(path);
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    int error = 0;
    if (!chip || !settings || !line_config || !request_config) {
        error = failure();
        goto done;
    }
    if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) < 0) {
        error = failure();
        goto done;
    }
    /* One settings entry per line: each has its own initial value. add_line_settings copies the
     * settings, so the one object is reused (works on every 2.x, unlike
     * gpiod_line_config_set_output_values, which 2.0 lacks). */
    for (size_t i = 0; i < count; i++) {
        request->active_low[i] = active_low[i] != 0;
        int physical = (initial_values[i] != 0) ^ request->active_low[i];
        if (gpiod_line_settings_set_output_value(settings, physical ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) < 0 ||
            gpiod_line_config_add_line_settings(line_config, &offsets[i], 1, settings) < 0) {
            error = failure();
            goto done;
        }
    }
    gpiod_request_config_set_consumer(request_config, consumer);
    request->request = gpiod_chip_request_lines(chip, request_config, line_config);
    if (!request->request)
        error = failure();
done:
    if (request_config)
        gpiod_request_config_free(request_config);
    if (line_config)
        gpiod_line_config_free(line_config);
    if (settings)
        gpiod_line_settings_free(settings);
    if (chip)
        gpiod_chip_close(chip);
    if (error) {
        free(request);
        return error;
    }
    *out = request;
    return 0;
}

int gpiod_shim_set_values(gpiod_shim_request *request, const int *values)
{
    enum gpiod_line_value physical[GPIOD_SHIM_MAX_LINES];
    for (size_t i = 0; i < request->count; i++)
        physical[i] = ((values[i] != 0) ^ request->active_low[i]) ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
    return gpiod_line_request_set_values(request->request, physical) < 0 ? failure() : 0;
}

void gpiod_shim_release(gpiod_shim_request *request)
{
    if (!request)
        return;
    gpiod_line_request_release(request->request);
    free(request);
}

#endif
