import CI2CShim
import DRV260x
import HapticsPluginKit

#if canImport(Glibc)
import Glibc
#endif

/// One chip on one I²C bus, through i2c-dev: the one owner of the `/dev/i2c-N` descriptor,
/// pointed at the chip's address. SMBus byte-data transfers only.
final class I2CChipLink: @unchecked Sendable {
    // The descriptor is only used under the owning device's lock (or before it exists) and closed once, in deinit.
    let path: String
    let address: UInt8
    private let fd: Int32

    /// Opens `path` and points it at `address`.
    /// - Throws: a failure naming the node and the fix: no node (I²C not enabled, i2c-dev not
    ///   loaded), no permission (the `i2c` group), an adapter without SMBus byte data, a chip a
    ///   kernel driver owns (EBUSY).
    init(path: String, address: UInt8) throws(BackendFailure) {
        self.path = path
        self.address = address
        let opened = i2c_shim_open(path)
        guard opened >= 0 else {
            let code = -opened
            let hint =
                switch code {
                case ENOENT: "no such bus: enable I2C (raspi-config, or dtparam=i2c_arm=on in config.txt) and load i2c-dev (`modprobe i2c-dev`); `i2cdetect -l` lists the buses"
                case EACCES, EPERM: "permission denied: add the user to the group owning it (`sudo usermod -aG i2c $USER` on Raspberry Pi OS, then log in again)"
                default: String(cString: strerror(code))
                }
            throw BackendFailure(code: code, "cannot open \(path): \(hint)")
        }
        fd = opened
        var funcs: UInt = 0
        let queried = i2c_shim_funcs(fd, &funcs)
        guard queried == 0, i2c_shim_has_byte_data(funcs) != 0 else {
            close(fd)
            throw BackendFailure(
                code: queried == 0 ? EOPNOTSUPP : -queried, "\(path): the adapter offers no SMBus byte-data transfers, which a DRV260x needs")
        }
        let addressed = i2c_shim_set_address(fd, UInt32(address))
        guard addressed == 0 else {
            close(fd)
            if -addressed == EBUSY {
                throw BackendFailure(
                    code: EBUSY,
                    "\(path) address \(hex(address)): a kernel driver owns this chip (drv260x-haptics): it is played through its evdev device (the evdev backend); unbind the driver to use the i2c backend")
            }
            throw BackendFailure(code: -addressed, "\(path): cannot address \(hex(address)): \(String(cString: strerror(-addressed)))")
        }
    }

    deinit { close(fd) }

    /// Reads a register.
    func read(_ register: DRV260x.Register) throws(BackendFailure) -> UInt8 {
        let value = i2c_shim_read_byte(fd, register.rawValue)
        guard value >= 0 else { throw failure(-value, "reading \(hex(register.rawValue))") }
        return UInt8(value)
    }

    /// Writes `writes` in order; stops at the first that fails.
    func write(_ writes: [DRV260x.Write]) throws(BackendFailure) {
        for write in writes {
            let status = i2c_shim_write_byte(fd, write.register, write.value)
            guard status == 0 else { throw failure(-status, "writing \(write)") }
        }
    }

    private func failure(_ code: Int32, _ what: String) -> BackendFailure {
        // ENXIO / EREMOTEIO: no acknowledge; ENODEV: the adapter went away.
        let hint =
            switch code {
            case ENXIO, EREMOTEIO: "the chip did not answer: check its power (VIN), SDA/SCL wiring and that EN is high"
            case ENODEV: "the bus went away"
            default: String(cString: strerror(code))
            }
        return BackendFailure(code: code == ENODEV ? ENODEV : code, "\(path) \(hex(address)): \(what) failed: \(hint)")
    }
}
