/* hidapi's hidraw backend (Debian: libhidapi-dev). Only the HID backend plugin and the VM rig link it. */
#include <hidapi/hidapi.h>
