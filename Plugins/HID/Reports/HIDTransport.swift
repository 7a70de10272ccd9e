/// How a controller is connected to the host.
///
/// The same controller writes different reports over USB and over Bluetooth (different report ids,
/// lengths, and a CRC trailer on Sony pads over Bluetooth), so every encoder takes one of these.
public enum HIDTransport: String, Sendable, Hashable, CaseIterable {
    /// A USB cable (or a USB wireless adapter such as Sony's DualShock 4 dongle).
    case usb
    /// Bluetooth Classic or Bluetooth LE (HID over GATT); hidraw presents both the same way.
    case bluetooth

    /// The transport for a Linux input bus number, as `HIDIOCGRAWINFO` reports it in `hidraw_devinfo.bustype`.
    ///
    /// Linux numbers buses in `<linux/input.h>`: `BUS_USB` = 0x03, `BUS_BLUETOOTH` = 0x05; every other bus
    /// (I2C 0x18, SPI 0x1C, virtual 0x06, …) maps to `nil`.
    ///
    /// - Parameter linuxBus: The raw bus number.
    public init?(linuxBus: some BinaryInteger) {
        switch Int64(truncatingIfNeeded: linuxBus) {
        case 0x03: self = .usb
        case 0x05: self = .bluetooth
        default: return nil
        }
    }
}
