/// Every controller family the HID backend drives, in one list: the table the backend matches
/// enumerated devices against (like SDL's list of HIDAPI drivers).
public enum ControllerTable {
    /// The families, each with its own vendor/product ids; no id appears twice.
    public static let families: [any ControllerFamily.Type] = [
        DualShock4.self,
        DualSense.self,
        XboxOneBluetooth.self,
        SwitchPro.self,
    ]

    /// The family that drives this vendor/product id, or `nil` if none does.
    ///
    /// - Parameters:
    ///   - vendor: The USB vendor id.
    ///   - product: The USB product id.
    public static func family(vendor: UInt16, product: UInt16) -> (any ControllerFamily.Type)? {
        families.first { $0.model(vendor: vendor, product: product) != nil }
    }

    /// The model entry for this vendor/product id (name and transports), or `nil` if no family lists it.
    ///
    /// - Parameters:
    ///   - vendor: The USB vendor id.
    ///   - product: The USB product id.
    public static func model(vendor: UInt16, product: UInt16) -> ControllerModel? {
        for family in families {
            if let model = family.model(vendor: vendor, product: product) { return model }
        }
        return nil
    }

    /// The family and model for a device hidapi enumerated, or `nil` if it is not a supported
    /// controller on that transport (an Xbox id on USB, an unknown bus).
    ///
    /// - Parameters:
    ///   - vendor: `hid_device_info.vendor_id`.
    ///   - product: `hid_device_info.product_id`.
    ///   - transport: The transport from `hid_device_info.bus_type`.
    public static func match(vendor: UInt16, product: UInt16, transport: HIDTransport) -> (
        family: any ControllerFamily.Type, model: ControllerModel
    )? {
        for family in families {
            if let model = family.model(vendor: vendor, product: product), model.transports.contains(transport) {
                return (family, model)
            }
        }
        return nil
    }
}
