#!/usr/bin/python3
"""Play haptics through hapticsd from Python, with dbus-python (Debian: python3-dbus, python3-gi).

    haptics_play.py devices                          list the devices hapticsd owns
    haptics_play.py effect NAME [--intensity X]      play a vocabulary effect (impact.medium, selection, …)
    haptics_play.py pattern FILE.ahap [--loop]       play an AHAP file (looping until interrupted)
    haptics_play.py policy                           show the user's settings as hapticsd applies them

Common options: --device ID (default: hapticsd's default device), --app-id ID.
Each play waits for hapticsd's Ended signal and prints its reason.
"""
import argparse
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BUS_NAME = "org.swifthaptics.Haptics1"
PATH = "/org/swifthaptics/Haptics1"
INTERFACE = "org.swifthaptics.Haptics1"


def main():
    parser = argparse.ArgumentParser(description="Play haptics through hapticsd.")
    parser.add_argument("command", choices=["devices", "effect", "pattern", "policy"])
    parser.add_argument("what", nargs="?", help="the effect name or the AHAP file")
    parser.add_argument("--device", default="", help="device id (default: hapticsd's default device)")
    parser.add_argument("--intensity", type=float, default=1.0, help="0…1")
    parser.add_argument("--loop", action="store_true", help="loop the pattern until interrupted")
    parser.add_argument("--app-id", default="org.swifthaptics.examples.Python")
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    haptics = dbus.Interface(bus.get_object(BUS_NAME, PATH), INTERFACE)

    if args.command == "devices":
        for device_id, details in haptics.ListDevices():
            channels = ", ".join(f"{c['name']} ({c['actuator']})" for c in details["channels"])
            state = "" if details["available"] else f" — unavailable: {details['unavailable-reason']}"
            default = " [default]" if details["default"] else ""
            print(f"{device_id}: {details['name']}: {channels}{default}{state}")
        return 0
    if args.command == "policy":
        for key, value in haptics.GetAppPolicy(args.app_id).items():
            print(f"{key}: {value}")
        return 0
    if not args.what:
        parser.error(f"{args.command} needs a name or a file")

    loop = GLib.MainLoop()
    result = {}

    def ended(player, reason):
        if player == result.get("player"):
            result["reason"] = str(reason)
            loop.quit()

    # Ended is sent to the client that started the player only.
    bus.add_signal_receiver(ended, signal_name="Ended", dbus_interface=INTERFACE, path=PATH)
    try:
        if args.command == "effect":
            player, disposition = haptics.PlayEffect(args.app_id, args.device, args.what, args.intensity)
            print(f"{args.what}: {disposition} as {player}", flush=True)
        else:
            with open(args.what, encoding="utf-8") as file:
                ahap = file.read()
            options = {"loop": dbus.Boolean(True)} if args.loop else {}
            player = haptics.PlayPattern(args.app_id, args.device, ahap, args.intensity, dbus.Dictionary(options, signature="sv"))
            print(f"{args.what}: playing as {player}", flush=True)
    except dbus.exceptions.DBusException as error:
        print(f"error: {error.get_dbus_name()}: {error.get_dbus_message()}", file=sys.stderr)
        return 1
    result["player"] = player
    if player == "/":
        return 0
    loop.run()
    print(f"ended: {result['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
