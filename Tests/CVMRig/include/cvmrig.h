/* Kernel UAPI headers the VM rig's Swift helpers need (uhid, ioctl, mount). */
#include <linux/uhid.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
